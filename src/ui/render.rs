//! Drawing the desk: the layout (status bar, queue and ticket panes, footer) and whichever
//! modal is open on top. Each pane and modal draws itself; everything here only reads the
//! `App`.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

use super::app::{App, Modal};
use super::panes::{
    completions, footer, help, picker, queue, resource, servers, sign_in, status, ticket, trust,
};

pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    if let Some(review) = &app.review {
        review.render(frame, area);
        return;
    }
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(5),
        Constraint::Length(1),
    ])
    .areas(area);
    status::render(app, frame, top);
    let [queue_pane, ticket_pane] = Layout::horizontal([
        Constraint::Length(queue::width(area.width)),
        Constraint::Min(20),
    ])
    .areas(body);
    queue::render(app, frame, queue_pane);
    ticket::render(app, frame, ticket_pane);
    footer::render(app, frame, bottom);
    completions::render(app, frame, bottom);
    if let Some(modal) = &app.modal {
        match modal {
            Modal::Consent(view, _) => view.render(frame, area),
            Modal::Form(view, _) | Modal::PromptArgs(view, _) | Modal::CallArgs(view, _) => {
                view.render(frame, area)
            }
            Modal::Draft(editor, _) => editor.render(frame, area),
            Modal::Note(input, _)
            | Modal::TakeOver(input, _)
            | Modal::Withdraw(input, _)
            | Modal::Solve(input, _) => input.render(frame, area),
            Modal::Picker(choice) => picker::render(app, choice, frame, area),
            Modal::Help { scroll } => help::render(app, *scroll, frame, area),
            Modal::SignIn { server, url } => sign_in::render(server, url, frame, area),
            Modal::Trust { selected } => trust::render(&app.trust, *selected, frame, area),
            Modal::Servers { scroll } => servers::render(&app.servers, *scroll, frame, area),
            Modal::Report => crate::ui::report::render_on_desk(app.report.as_deref(), frame, area),
            Modal::Resource {
                server,
                uri,
                text,
                scroll,
            } => {
                let view = resource::ResourceView { server, uri, text };
                resource::render(&view, *scroll, frame, area)
            }
        }
    }
}

/// The queue pane's rectangle for a frame of this size (for mouse clicks).
pub fn queue_area(area: Rect) -> Rect {
    Rect::new(
        area.x,
        area.y + 1,
        queue::width(area.width),
        area.height.saturating_sub(2),
    )
}
