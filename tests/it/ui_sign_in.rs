//! A server that asks for a sign-in, at the desk: the status bar says so with the key, the
//! key asks the host to sign in, and the address to open is shown whole until the browser
//! comes back.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use support_desk::host::api::{Command, ServerSummary};
use support_desk::host::events::HostEvent;
use support_desk::ui::app::{App, Modal};

use crate::ui_desk::{key, screen};

/// The desk of `ui_desk`, its shop now asking for a sign-in.
fn desk_with_a_server_asking_for_a_sign_in() -> App {
    let mut app = crate::ui_desk::app();
    let shop = app
        .servers
        .iter_mut()
        .find(|s| s.prefix == "shop")
        .expect("the shop");
    *shop = ServerSummary {
        origin: "https://shop.example/mcp".into(),
        name: None,
        instructions: None,
        revision: None,
        tools: vec![],
        error: Some("server 'shop' (https://shop.example/mcp) asks you to sign in: run `support-desk login shop`, then start again".into()),
        sign_in: Some("support-desk login shop".into()),
        ..shop.clone()
    };
    app
}

#[test]
fn a_server_asking_for_a_sign_in_says_so_with_the_key_and_the_key_starts_it() {
    let mut app = desk_with_a_server_asking_for_a_sign_in();
    insta::assert_snapshot!("desk_sign_in_needed_80x24", screen(&app, 80, 24));
    let shifted = KeyEvent::new(KeyCode::Char('L'), KeyModifiers::SHIFT);
    assert_eq!(
        app.on_key(shifted),
        Some(Command::SignIn {
            server: "shop".into()
        })
    );
    let url = "https://login.shop.example/authorize?response_type=code&client_id=support-desk&state=Hn_y0livUoMOiuBb92Pe4Q&code_challenge=4Z_WxgWve3E6hGOW5cs3a6ZsaaKCEKtnUjMQVzLyI28&code_challenge_method=S256&redirect_uri=http%3A%2F%2F127.0.0.1%3A43259%2Fcallback&scope=shop";
    app.on_host(HostEvent::SignInOpen {
        server: "shop".into(),
        url: url.into(),
    });
    let shown = screen(&app, 80, 24);
    insta::assert_snapshot!("desk_sign_in_address_80x24", shown);
    // The modal's rows, inside its borders, read back as one string.
    let joined: String = shown
        .lines()
        .filter_map(|line| line.split('│').nth(2))
        .map(str::trim_end)
        .collect();
    assert!(joined.contains(url), "the whole address is shown");
    app.on_key(key(KeyCode::Esc));
    assert!(app.modal.is_none());
}

#[test]
fn with_no_server_asking_the_key_says_so() {
    let mut app = desk_with_a_server_asking_for_a_sign_in();
    app.on_host(HostEvent::Servers(vec![]));
    assert_eq!(app.on_key(key(KeyCode::Char('L'))), None);
    assert_eq!(app.message.as_deref(), Some("no server asks for a sign-in"));
    assert!(!matches!(app.modal, Some(Modal::SignIn { .. })));
}
