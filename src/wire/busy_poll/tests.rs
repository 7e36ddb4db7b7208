use std::io::Write;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::wire::busy_poll::{Polled, Watch, Watches, Watching};

const LONG: Duration = Duration::from_secs(60);

fn watch(watches: &Watches, pipe: &std::io::PipeReader, window: Duration) -> Watch {
    Watch::pipe_among(watches, pipe, window)
        .expect("the pipe's descriptor is copied")
        .expect("a window above zero makes a watch")
}

#[test]
fn a_pipe_that_holds_bytes_ends_the_poll_at_its_first_look() {
    let watches = Watches::new();
    let (reader, mut writer) = std::io::pipe().expect("a pipe");
    let watch = watch(&watches, &reader, LONG);
    writer.write_all(b"{}\n").expect("written");
    watch.expect();
    assert_eq!(watches.poll(), Polled::Readable { looks: 1 });
}

#[test]
fn bytes_written_while_the_pipe_is_polled_end_the_poll() {
    let watches = Watches::new();
    let (reader, mut writer) = std::io::pipe().expect("a pipe");
    let watch = watch(&watches, &reader, LONG);
    watch.expect();
    let peer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        writer.write_all(b"{}\n").expect("written");
        writer
    });
    // Expired would mean a minute of polling that never saw the bytes.
    assert!(matches!(watches.poll(), Polled::Readable { .. }));
    drop(peer.join().expect("the writer"));
}

#[test]
fn an_armed_pipe_with_nothing_in_it_is_polled_until_its_window_closes() {
    let watches = Watches::new();
    let (reader, _writer) = std::io::pipe().expect("a pipe");
    let watch = watch(&watches, &reader, Duration::from_millis(2));
    watch.expect();
    assert!(watch.is_polled());
    assert!(matches!(watches.poll(), Polled::Expired { looks } if looks > 0));
    assert!(!watch.is_polled());
    assert_eq!(watches.poll(), Polled::Idle);
}

#[test]
fn nothing_is_polled_unless_an_answer_is_expected() {
    let watches = Watches::new();
    let (reader, mut writer) = std::io::pipe().expect("a pipe");
    let watch = watch(&watches, &reader, LONG);
    assert_eq!(watches.poll(), Polled::Idle, "registered, not armed");
    watch.expect();
    watch.arrived();
    writer.write_all(b"{}\n").expect("written");
    assert_eq!(
        watches.poll(),
        Polled::Idle,
        "the answer came: nothing to wait for"
    );
}

#[test]
fn a_window_of_zero_makes_no_watch() {
    let (reader, _writer) = std::io::pipe().expect("a pipe");
    let none = Watch::pipe_among(&Watches::new(), &reader, Duration::ZERO).expect("no error");
    assert!(none.is_none());
}

#[test]
fn a_polled_answer_later_than_the_window_stops_polling_and_one_within_twice_it_starts_again() {
    let watches = Watches::new();
    let (reader, _writer) = std::io::pipe().expect("a pipe");
    let window = Duration::from_millis(200);
    let watch = watch(&watches, &reader, window);

    watch.expect();
    std::thread::sleep(window + window / 4);
    watch.arrived();
    watch.expect();
    assert!(
        !watch.is_polled(),
        "a peer slower than the window is not polled for"
    );
    assert_eq!(watches.poll(), Polled::Idle);

    // Waited for asleep, that answer came a little late: a poll would have caught it.
    std::thread::sleep(window + window / 4);
    watch.arrived();
    watch.expect();
    assert!(
        watch.is_polled(),
        "a peer back near the window is polled for again"
    );
}

#[test]
fn an_answer_waited_for_asleep_that_took_over_twice_the_window_keeps_the_watch_asleep() {
    let watches = Watches::new();
    let (reader, _writer) = std::io::pipe().expect("a pipe");
    let window = Duration::from_millis(100);
    let watch = watch(&watches, &reader, window);

    watch.expect();
    std::thread::sleep(window * 2);
    watch.arrived();
    watch.expect();
    assert!(!watch.is_polled());
    std::thread::sleep(window * 3);
    watch.arrived();
    watch.expect();
    assert!(!watch.is_polled(), "still too slow to poll for");
    watch.arrived();
    watch.expect();
    assert!(watch.is_polled(), "an answer at once: polled for again");
}

#[test]
fn a_dropped_watch_leaves_the_set_and_closes_its_copy_of_the_pipe() {
    let watches = Watches::new();
    let (reader, mut writer) = std::io::pipe().expect("a pipe");
    let watch = watch(&watches, &reader, LONG);
    drop(reader);
    writer
        .write_all(b"still read by the watch's copy\n")
        .expect("the watch keeps the pipe open");
    drop(watch);
    assert_eq!(watches.poll(), Polled::Idle);
    assert!(watches.lock().is_empty(), "the dropped watch was forgotten");
    let error = writer.write_all(b"x").expect_err("no read end is left");
    assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe);
}

#[tokio::test]
async fn a_servers_pipe_ends_arm_the_watch_when_they_answer_and_end_it_when_a_request_comes() {
    let watches = Watches::new();
    let (reader, _writer) = std::io::pipe().expect("a pipe");
    let watch = watch(&watches, &reader, LONG);
    let (client, server) = tokio::io::duplex(64);
    let (server_read, server_write) = tokio::io::split(server);
    let (mut client_read, mut client_write) = tokio::io::split(client);
    let mut requests = Watching::new(server_read, watch.clone());
    let mut answers = Watching::new(server_write, watch.clone());

    answers.write_all(b"answer\n").await.expect("written");
    assert!(
        watch.is_polled(),
        "an answer written: the next request is expected"
    );
    let mut answer = [0u8; 7];
    client_read.read_exact(&mut answer).await.expect("read");

    client_write.write_all(b"request\n").await.expect("written");
    let mut request = [0u8; 8];
    requests.read_exact(&mut request).await.expect("read");
    assert!(!watch.is_polled(), "the request came: nothing is polled");
}
