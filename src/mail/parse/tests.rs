//! The parser's tests: messages built here byte by byte, from clean to hostile.

use proptest::prelude::*;

use super::text::{fold_quotes, html_to_text};
use super::*;

/// A message from header lines and a body, joined with CR LF as on the wire.
fn mail(headers: &[&str], body: &str) -> Vec<u8> {
    let mut raw = headers.join("\r\n");
    raw.push_str("\r\n\r\n");
    raw.push_str(body);
    raw.into_bytes()
}

/// A plain message from Alice with `extra` headers and a UTF-8 body.
fn from_alice(extra: &[&str], body: &str) -> Message {
    let mut headers = vec![
        "From: Alice Example <alice@example.com>",
        "To: help@fernbrook.example",
        "Subject: The mug",
        "Message-ID: <m1@example.com>",
        "Date: Sat, 5 Dec 2026 10:14:00 +0100",
    ];
    headers.extend_from_slice(extra);
    parse(&mail(&headers, body))
}

/// A message whose one text part is `body`, sent in `charset` with `encoding`.
fn in_charset(charset: &str, encoding: &str, body: &[u8]) -> Message {
    let mut raw = format!(
        "From: a@example.com\r\nSubject: s\r\nMIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset={charset}\r\nContent-Transfer-Encoding: {encoding}\r\n\r\n"
    )
    .into_bytes();
    raw.extend_from_slice(body);
    parse(&raw)
}

// -----------------------------------------------------------------------------------------
// Headers

#[test]
fn a_plain_utf8_message_is_read_whole() {
    let raw = mail(
        &[
            "From: \"  Alice Example \" <Alice@Example.COM >",
            "Subject:   The mug\t arrived   broken ",
            "Message-ID:   < m1@example.com >  ",
            "Date: Sat, 5 Dec 2026 10:14:00 +0100",
            "Content-Type: text/plain; charset=utf-8",
        ],
        "Grüße aus Köln,\r\nthe mug arrived broken.\r\n\r\nAlice\r\n",
    );
    let message = parse(&raw);
    assert_eq!(message.message_id, "m1@example.com");
    assert_eq!(message.from.address, "alice@example.com");
    assert_eq!(message.from.name.as_deref(), Some("Alice Example"));
    assert_eq!(message.date.as_deref(), Some("2026-12-05T09:14:00Z"));
    assert_eq!(message.subject, "The mug arrived broken");
    assert_eq!(
        message.text,
        "Grüße aus Köln,\nthe mug arrived broken.\n\nAlice"
    );
    assert_eq!(message.quoted, None);
    assert!(message.attachments.is_empty());
    assert_eq!(message.automatic, None);
    assert_eq!(message.size, raw.len());
    assert!(message.problems.is_empty(), "{:?}", message.problems);
}

#[test]
fn a_missing_or_broken_date_is_none_and_a_broken_one_is_said() {
    assert_eq!(parse(b"From: a@example.com\r\n\r\nhi").date, None);
    let message = parse(b"From: a@example.com\r\nDate: the day after tomorrow\r\n\r\nhi");
    assert_eq!(message.date, None);
    assert_eq!(
        message.problems,
        ["the date \"the day after tomorrow\" could not be read"]
    );
}

#[test]
fn an_encoded_subject_and_sender_name_are_decoded() {
    let message = parse(&mail(
        &[
            "From: =?ISO-8859-1?Q?Andr=E9?= Pirard <PIRARD@vm1.ulg.ac.be>",
            "Subject: =?utf-8?B?UsO8Y2tlcnN0YXR0dW5n?= =?utf-8?q?_f=C3=BCr_O-1873?=",
        ],
        "hi",
    ));
    assert_eq!(message.from.name.as_deref(), Some("André Pirard"));
    assert_eq!(message.from.address, "pirard@vm1.ulg.ac.be");
    assert_eq!(message.subject, "Rückerstattung für O-1873");
}

#[test]
fn a_subject_with_line_breaks_smuggled_in_stays_one_line() {
    let message = parse(&mail(
        &[
            "From: =?utf-8?q?Bob=0D=0ABcc:_x@evil?= <bob@example.com>",
            "Subject: =?utf-8?q?Hi=0D=0ABcc:_x@evil?=",
        ],
        "hi",
    ));
    assert_eq!(message.subject, "Hi Bcc: x@evil");
    assert_eq!(message.from.name.as_deref(), Some("Bob Bcc: x@evil"));

    // Raw C0 and C1 controls and tabs, and a subject far too long.
    let raw = "Subject: a\u{7}b\u{85}c\u{9b}d\te\r\nFrom: a@example.com\r\n\r\nhi";
    assert_eq!(parse(raw.as_bytes()).subject, "a b c d e");
    let long = format!("Subject: {}\r\n\r\nhi", "é".repeat(1000));
    let subject = parse(long.as_bytes()).subject;
    assert_eq!(subject.chars().count(), 300);
    assert!(subject.chars().all(|c| c == 'é'));
}

#[test]
fn a_message_without_a_sender_says_so() {
    let message = parse(b"Subject: who\r\n\r\nhi");
    assert_eq!(message.from.address, "");
    assert_eq!(message.from.name, None);
    assert_eq!(
        message.problems,
        ["the message has no sender (no From header)"]
    );
    let message = parse(b"From: Just A Name\r\n\r\nhi");
    assert_eq!(message.from.address, "");
    assert_eq!(
        message.problems,
        ["the sender's address could not be read from \"Just A Name\""]
    );
}

#[test]
fn replies_name_what_they_answer_oldest_reference_first() {
    let message = from_alice(
        &[
            "In-Reply-To: <m2@desk.example>",
            "References: <m0@example.com>\r\n <m1@desk.example>  <m2@desk.example>",
        ],
        "thanks",
    );
    assert_eq!(message.in_reply_to.as_deref(), Some("m2@desk.example"));
    assert_eq!(
        message.references,
        ["m0@example.com", "m1@desk.example", "m2@desk.example"]
    );
    assert_eq!(
        message.answers().collect::<Vec<_>>(),
        [
            "m2@desk.example",
            "m2@desk.example",
            "m1@desk.example",
            "m0@example.com"
        ]
    );
}

#[test]
fn a_message_without_an_id_gets_one_from_its_bytes() {
    let raw = b"From: a@example.com\r\nSubject: no id\r\n\r\nhello";
    let id = parse(raw).message_id;
    assert_eq!(id, parse(raw).message_id);
    assert!(
        id.starts_with("sha256-") && id.ends_with("@desk.invalid"),
        "{id}"
    );
    assert_eq!(id.len(), "sha256-".len() + 64 + "@desk.invalid".len());
    assert_ne!(
        id,
        parse(b"From: a@example.com\r\nSubject: no id\r\n\r\nhello!").message_id
    );
    assert_eq!(
        parse(b"").message_id,
        // sha256 of nothing
        "sha256-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855@desk.invalid"
    );
}

// -----------------------------------------------------------------------------------------
// Transfer encodings and charsets

#[test]
fn quoted_printable_and_base64_bodies_are_decoded() {
    let qp = in_charset(
        "utf-8",
        "quoted-printable",
        b"Gr=C3=BC=C3=9Fe, the mug is=\r\n broken =3D sad.\r\n",
    );
    assert_eq!(qp.text, "Grüße, the mug is broken = sad.");
    assert!(qp.problems.is_empty(), "{:?}", qp.problems);
    // "Grüße, the mug is broken." in base64, wrapped.
    let b64 = in_charset(
        "utf-8",
        "base64",
        b"R3LDvMOfZSwgdGhlIG11ZyBp\r\ncyBicm9rZW4u\r\n",
    );
    assert_eq!(b64.text, "Grüße, the mug is broken.");
    assert!(b64.problems.is_empty(), "{:?}", b64.problems);
}

#[test]
fn single_byte_charsets_are_decoded() {
    let latin1 = in_charset("ISO-8859-1", "8bit", b"Caf\xe9 cr\xe8me \xbd price");
    assert_eq!(latin1.text, "Café crème ½ price");
    assert!(latin1.problems.is_empty(), "{:?}", latin1.problems);
    let cp1252 = in_charset(
        "windows-1252",
        "quoted-printable",
        b"=80 24,90 =96 =93broken=94",
    );
    assert_eq!(cp1252.text, "€ 24,90 – “broken”");
    let koi8 = in_charset("koi8-r", "8bit", b"\xf0\xd2\xc9\xd7\xc5\xd4, \xcd\xc9\xd2");
    assert_eq!(koi8.text, "Привет, мир");
    assert!(koi8.problems.is_empty(), "{:?}", koi8.problems);
}

/// mail-parser decodes multi-byte charsets (Shift_JIS, ISO-2022-JP, EUC, GBK, Big5) only
/// with its `full_encoding` feature, which the desk leaves off: such text comes through as
/// its bytes read as UTF-8, and the problem says so.
#[test]
fn multi_byte_charsets_are_decoded() {
    // "こんにちは" in Shift_JIS, in ISO-2022-JP, and as an encoded word in the subject.
    let sjis = in_charset(
        "Shift_JIS",
        "8bit",
        b"\x82\xb1\x82\xf1\x82\xc9\x82\xbf\x82\xcd",
    );
    assert_eq!(sjis.text, "こんにちは");
    assert!(sjis.problems.is_empty(), "{:?}", sjis.problems);
    let jis = in_charset("iso-2022-jp", "7bit", b"\x1b$B$3$s$K$A$O\x1b(B");
    assert_eq!(jis.text, "こんにちは");
    assert!(jis.problems.is_empty(), "{:?}", jis.problems);
    let subject =
        parse(b"From: a@example.com\r\nSubject: =?shift_jis?b?grGC8YLJgr+CzQ==?=\r\n\r\nhi");
    assert_eq!(subject.subject, "こんにちは");
    assert!(subject.problems.is_empty(), "{:?}", subject.problems);
}

#[test]
fn an_unknown_charset_is_shown_as_it_came_and_said() {
    let message = in_charset("x-unknown", "8bit", "plain words, é".as_bytes());
    assert_eq!(message.text, "plain words, é");
    assert_eq!(
        message.problems,
        ["the text was in an unknown charset (x-unknown) and is shown as it came"]
    );
    let broken = in_charset("utf-8", "8bit", b"caf\xe9!");
    assert_eq!(broken.text, "caf\u{fffd}!");
    assert_eq!(
        broken.problems,
        ["some characters of the text (utf-8) could not be read and are shown as �"]
    );
    let binary = in_charset("x-foo", "8bit", b"caf\xe9\x00\x01");
    assert_eq!(binary.text, "caf\u{fffd}");
    assert_eq!(
        binary.problems,
        ["the text was in an unknown charset (x-foo) and is shown as it came"]
    );
}

// -----------------------------------------------------------------------------------------
// Structure

const ALTERNATIVE: &str = "From: a@example.com\r\n\
    Content-Type: multipart/alternative; boundary=\"b1\"\r\n\r\n\
    preamble\r\n\
    --b1\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>the <b>html</b> one</p>\r\n\
    --b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nthe plain one\r\n\
    --b1--\r\n";

#[test]
fn multipart_alternative_gives_its_plain_part() {
    let message = parse(ALTERNATIVE.as_bytes());
    assert_eq!(message.text, "the plain one");
    assert!(message.attachments.is_empty(), "{:?}", message.attachments);
    assert!(message.problems.is_empty(), "{:?}", message.problems);
}

#[test]
fn an_html_only_message_is_turned_into_text_without_its_scripts_and_styles() {
    let html = "<!DOCTYPE html><html><head><title>T</title><style>p { color: red }</style></head>\
        <body><script>alert('pwned')</script><!-- a <p>comment</p> -->\
        <h1>Order&nbsp;O-1873</h1><p>Fish &amp; chips &lt;3 &quot;hot&quot; &#39;now&#39; \
        &#8364;5 &#x263A;</p><div>line one<br>line two</div>\
        <ul><li>mug</li><li>plate</li></ul><SCRIPT type=\"x\">document.write(1)</SCRIPT >\
        <table><tr><td>a</td><td>b</td></tr></table></body></html>";
    let message = parse(&mail(
        &[
            "From: a@example.com",
            "Content-Type: text/html; charset=utf-8",
        ],
        html,
    ));
    assert_eq!(
        message.text,
        "Order O-1873\n\nFish & chips <3 \"hot\" 'now' €5 ☺\n\nline one\nline two\nmug\nplate\na b"
    );
    for gone in ["alert", "pwned", "color", "comment", "document"] {
        assert!(!message.text.contains(gone), "{gone} in {:?}", message.text);
    }
    assert!(message.problems.is_empty(), "{:?}", message.problems);
}

#[test]
fn the_html_converter_keeps_text_and_drops_markup() {
    // `</head>` left out: the body still shows.
    assert_eq!(
        html_to_text("<head><title>x</title><body>Hello</body>"),
        "Hello"
    );
    assert_eq!(html_to_text("a < b && c > d"), "a < b && c > d");
    assert_eq!(
        html_to_text("&bogus; &#; &#xZZ; &#0; &#x110000; &amp"),
        "&bogus; &#; &#xZZ; � � &amp"
    );
    assert_eq!(
        html_to_text("<p>one</p><p></p><p></p><p>two</p>"),
        "one\n\ntwo"
    );
    assert_eq!(html_to_text("<br><br><br>x<br><br><br><br>y"), "x\n\ny");
    assert_eq!(
        html_to_text("<pre>  indented\n    more</pre>after"),
        "  indented\n    more\nafter"
    );
    assert_eq!(
        html_to_text("<a href=\"x>y\" title='>'>link</a> text"),
        "link text"
    );
    assert_eq!(html_to_text("unterminated <a href=\"x"), "unterminated");
    assert_eq!(html_to_text("<script>never closed"), "");
    assert_eq!(html_to_text("<!-- never closed"), "");
    assert_eq!(
        html_to_text(
            "Thanks!<div>On Mon, Bob wrote:<blockquote>old <b>words</b><br>more</blockquote></div>"
        ),
        "Thanks!\nOn Mon, Bob wrote:\n> old words\n> more"
    );
}

#[test]
fn broken_mime_still_gives_a_message() {
    // The closing boundary is missing.
    let unclosed = parse(
        b"From: a@example.com\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n\
          --zz\r\nContent-Type: text/plain\r\n\r\nthe words\r\n",
    );
    assert_eq!(unclosed.text, "the words");
    assert!(!unclosed.problems.is_empty());

    // A boundary that never comes.
    let never = parse(
        b"From: a@example.com\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\nthe words\r\n",
    );
    assert_eq!(never.text, "the words");
    assert!(never.attachments.is_empty(), "{:?}", never.attachments);
    assert_eq!(never.problems, [MALFORMED]);

    // Garbage headers, a header without a colon, headers without a body.
    let garbage = parse(
        b"From: a@example.com\r\n\x01\x02: \xff\xfe\r\nthis line has no colon\r\n\
          : empty name\r\nSubject: still read\r\n\r\nbody",
    );
    assert_eq!(garbage.from.address, "a@example.com");
    assert_eq!(garbage.text, "body");
    let headers_only = parse(b"From: a@example.com\r\nSubject: s\r\n");
    assert_eq!(headers_only.subject, "s");
    assert_eq!(headers_only.text, "");

    // Binary junk and nothing at all.
    let junk: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
    let junk = parse(&junk);
    assert!(!junk.problems.is_empty());
    assert!(
        junk.text
            .chars()
            .all(|c| !c.is_control() || c == '\n' || c == '\t')
    );
    let empty = parse(b"");
    assert_eq!(empty.size, 0);
    assert_eq!(empty.text, "");
    assert_eq!(empty.problems, ["the message was empty"]);
}

#[test]
fn attachments_are_listed_and_never_read() {
    let pdf_bytes = "%PDF-1.4 secret invoice bytes";
    let raw = format!(
        "From: a@example.com\r\nContent-Type: multipart/mixed; boundary=\"mix\"\r\n\r\n\
         --mix\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSee the photo and the invoice.\r\n\
         --mix\r\nContent-Type: application/PDF; name=\"ignored.pdf\"\r\n\
         Content-Disposition: attachment; filename=\"Invoice\u{7} 1873.pdf\"\r\n\
         Content-Transfer-Encoding: base64\r\n\r\n{}\r\n\
         --mix\r\nContent-Type: image/png; name=\"=?utf-8?q?Bruch=C3=A4?=.png\"\r\n\
         Content-Disposition: inline\r\nContent-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo=\r\n\
         --mix\r\nContent-Type: application/octet-stream\r\n\r\nraw\r\n\
         --mix--\r\n",
        "JVBERi0xLjQgc2VjcmV0IGludm9pY2UgYnl0ZXM=",
    );
    let message = parse(raw.as_bytes());
    assert_eq!(message.text, "See the photo and the invoice.");
    let listed: Vec<_> = message
        .attachments
        .iter()
        .map(|a| (a.name.as_str(), a.mime_type.as_str(), a.size))
        .collect();
    assert_eq!(
        listed,
        [
            ("Invoice 1873.pdf", "application/pdf", pdf_bytes.len()),
            ("Bruchä.png", "image/png", 8),
            ("unnamed", "application/octet-stream", 3),
        ]
    );
    assert!(!message.text.contains("PDF") && !message.text.contains("PNG"));
    assert!(message.problems.is_empty(), "{:?}", message.problems);
}

// -----------------------------------------------------------------------------------------
// Quoted history

#[test]
fn quoted_lines_under_the_new_text_are_folded() {
    let message = from_alice(
        &[],
        "Yes, the blue one.\r\n\r\n> Which mug was it?\r\n>\r\n> > Mine broke.\r\n",
    );
    assert_eq!(message.text, "Yes, the blue one.");
    assert_eq!(
        message.quoted.as_deref(),
        Some("> Which mug was it?\n>\n> > Mine broke.")
    );
}

#[test]
fn an_attribution_goes_with_the_quote_it_opens() {
    let (new, quoted) = fold_quotes(
        "Thanks!\n\nOn Sat, 5 Dec 2026 at 10:14, Fernbrook <help@fernbrook.example> wrote:\n> Your refund is on its way.\n",
    );
    assert_eq!(new, "Thanks!");
    assert_eq!(
        quoted.as_deref(),
        Some(
            "On Sat, 5 Dec 2026 at 10:14, Fernbrook <help@fernbrook.example> wrote:\n> Your refund is on its way."
        )
    );
    // Wrapped over two lines by the writer's client, in German.
    let (new, quoted) = fold_quotes(
        "Danke!\nAm Sa., 5. Dez. 2026 um 10:14 Uhr schrieb Fernbrook <\nhelp@fernbrook.example>:\n> Ihre Erstattung\n",
    );
    assert_eq!(new, "Danke!");
    assert!(quoted.is_some_and(|q| q.starts_with("Am Sa.")));
    let (new, _) = fold_quotes("Merci\n\nLe sam. 5 déc. 2026, Fernbrook a écrit :\n> Bonjour\n");
    assert_eq!(new, "Merci");
}

#[test]
fn outlook_separators_start_the_history() {
    let (new, quoted) = fold_quotes(
        "New words\n\n-----Original Message-----\nFrom: Fernbrook\nSent: Saturday\n\nOld words",
    );
    assert_eq!(new, "New words");
    assert!(quoted.is_some_and(|q| q.starts_with("-----Original Message-----\nFrom:")));
    let (new, quoted) = fold_quotes(&format!(
        "New words\n{}\nFrom: Fernbrook\nOld words",
        "_".repeat(32)
    ));
    assert_eq!(new, "New words");
    assert!(quoted.is_some());
}

#[test]
fn history_that_is_answered_inline_or_is_everything_stays() {
    // Answers between the quotes are new text: nothing is folded away.
    let inline = "> Which mug?\nThe blue one.\n> When?\nMonday.";
    assert_eq!(fold_quotes(inline), (inline.to_owned(), None));
    // A message that is all quote keeps it as its text.
    let all = "> only\n> quoted\n";
    assert_eq!(fold_quotes(all), ("> only\n> quoted".to_owned(), None));
    // A line ending in ':' above a quote is no attribution without an address in it.
    let note = "On Monday I called.\nThe details:\n> order O-1873";
    assert_eq!(fold_quotes(note).0, "On Monday I called.\nThe details:");
    // "wrote:" with no quote under it folds nothing.
    let plain = "My colleague wrote:\nplease call me";
    assert_eq!(fold_quotes(plain), (plain.to_owned(), None));
}

// -----------------------------------------------------------------------------------------
// Written by machines

#[test]
fn automatic_replies_bulk_and_bounces_are_told_apart() {
    let auto = from_alice(&["Auto-Submitted: auto-replied"], "I am away.");
    assert_eq!(auto.automatic, Some(Automatic::AutoReply));
    let person = from_alice(&["Auto-Submitted: no"], "I am here.");
    assert_eq!(person.automatic, None);
    let oof = from_alice(&["X-Autoreply: yes"], "away");
    assert_eq!(oof.automatic, Some(Automatic::AutoReply));
    let outlook = parse(&mail(
        &[
            "From: a@example.com",
            "Subject: Automatic reply: The mug",
            "X-Auto-Response-Suppress: All",
        ],
        "away",
    ));
    assert_eq!(outlook.automatic, Some(Automatic::AutoReply));
    let bulk = from_alice(&["Precedence: bulk"], "news");
    assert_eq!(bulk.automatic, Some(Automatic::Bulk));
    let list = from_alice(&["List-Id: <shop.lists.example>"], "news");
    assert_eq!(list.automatic, Some(Automatic::Bulk));
    // An automatic reply from a list is still an automatic reply.
    let both = from_alice(&["Precedence: list", "Auto-Submitted: auto-generated"], "x");
    assert_eq!(both.automatic, Some(Automatic::AutoReply));
}

#[test]
fn a_delivery_status_notification_is_a_bounce() {
    let dsn = parse(
        b"From: Mail Delivery System <MAILER-DAEMON@mx.example>\r\n\
          Auto-Submitted: auto-replied\r\n\
          Subject: Undelivered Mail Returned to Sender\r\n\
          Content-Type: multipart/report; report-type=delivery-status; boundary=\"r\"\r\n\r\n\
          --r\r\nContent-Type: text/plain\r\n\r\nThis is the mail system. I'm sorry.\r\n\
          --r\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n\
          Action: failed\r\n\
          --r--\r\n",
    );
    assert_eq!(dsn.automatic, Some(Automatic::Bounce));
    assert_eq!(dsn.text, "This is the mail system. I'm sorry.");
    assert_eq!(dsn.attachments.len(), 1, "{:?}", dsn.attachments);
    let report_only = parse(
        b"From: a@example.com\r\nContent-Type: multipart/report; report-type=\"Delivery-Status\"; boundary=r\r\n\r\n--r\r\n\r\nx\r\n--r--\r\n",
    );
    assert_eq!(report_only.automatic, Some(Automatic::Bounce));
    let null_sender = parse(
        b"Return-Path: <>\r\nFrom: mail@mx.example\r\nSubject: Delivery Status Notification (Failure)\r\n\r\nx",
    );
    assert_eq!(null_sender.automatic, Some(Automatic::Bounce));
}

// -----------------------------------------------------------------------------------------
// Size

#[test]
fn a_thirty_megabyte_message_parses_to_its_short_text() {
    // 30 MiB of attachment: lines of 76 `A`s, 57 zero bytes each.
    let lines = 30 * 1024 * 1024 / 57 + 1;
    let mut raw = b"From: a@example.com\r\nMessage-ID: <big@example.com>\r\n\
        Content-Type: multipart/mixed; boundary=\"big\"\r\n\r\n\
        --big\r\nContent-Type: text/plain\r\n\r\nThe logs are attached.\r\n\
        --big\r\nContent-Type: application/zip; name=logs.zip\r\n\
        Content-Transfer-Encoding: base64\r\n\r\n"
        .to_vec();
    let line = [b'A'; 76];
    raw.reserve(lines * 78 + 16);
    for _ in 0..lines {
        raw.extend_from_slice(&line);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(b"--big--\r\n");
    assert!(raw.len() > 30_000_000);

    let message = parse(&raw);
    assert_eq!(message.text, "The logs are attached.");
    assert_eq!(message.size, raw.len());
    assert_eq!(
        message.attachments,
        [Attachment {
            name: "logs.zip".into(),
            mime_type: "application/zip".into(),
            size: lines * 57,
        }]
    );
    assert!(message.problems.is_empty(), "{:?}", message.problems);
}

#[test]
fn a_long_text_is_cut_at_sixty_four_kib() {
    let body = "Ünïcödé lines that go on and on.\r\n".repeat(200 * 1024 / 36);
    let message = from_alice(&[], &body);
    let whole = body.replace("\r\n", "\n").trim().len();
    assert_eq!(whole.div_ceil(1024), 206);
    assert!(message.text.len() <= TEXT_LIMIT);
    assert!(message.text.len() > TEXT_LIMIT - 40);
    assert!(message.text.starts_with("Ünïcödé lines"));
    assert_eq!(message.problems, ["the text was cut at 64 KiB of 206 KiB"]);
}

#[test]
fn hostile_html_and_quotes_take_time_in_proportion_to_their_length() {
    // Each would be quadratic in a converter that searched to the end for every tag.
    for piece in [
        "<head><body>",
        "<script>",
        "<!--",
        "<a href=\"",
        "&#x",
        "<blockquote>",
        "<",
    ] {
        let html = piece.repeat(400_000 / piece.len());
        let _ = html_to_text(&html);
    }
    let quotes = "> x\nnew\n".repeat(100_000);
    assert_eq!(fold_quotes(&quotes).1, None);
    let wrote = "On a day Bob wrote:\n".repeat(100_000);
    let _ = fold_quotes(&wrote);
}

// -----------------------------------------------------------------------------------------
// Anything at all

/// Header lines and a body pieced from what steers the parser: MIME headers, boundaries,
/// encodings, encoded words and stray bytes.
fn mail_like() -> impl Strategy<Value = Vec<u8>> {
    let header = prop_oneof![
        Just("Content-Type: multipart/mixed; boundary=b".to_owned()),
        Just("Content-Type: multipart/alternative; boundary=\"b\"".to_owned()),
        Just("Content-Type: text/html; charset=x-unknown".to_owned()),
        Just("Content-Type: message/rfc822".to_owned()),
        Just("Content-Transfer-Encoding: base64".to_owned()),
        Just("Content-Transfer-Encoding: quoted-printable".to_owned()),
        Just("Subject: =?utf-8?q?a=0D=0Ab?= =?bogus?x?zz?=".to_owned()),
        Just("From: \"x\" <>".to_owned()),
        Just("Date: Mon, 31 Feb 1800 25:61:61 +9999".to_owned()),
        "[A-Za-z-]{1,12}: [ -~]{0,40}",
        any::<String>(),
    ];
    let body = prop_oneof![
        Just("--b\r\n".to_owned()),
        Just("--b--\r\n".to_owned()),
        Just("\r\n".to_owned()),
        Just("=C3=\r\n".to_owned()),
        Just("<script><!--<head>&#x1F600;&amp".to_owned()),
        Just("> quoted\r\nOn x wrote:\r\n".to_owned()),
        "[A-Za-z0-9+/=]{0,80}",
        any::<String>(),
    ];
    (
        prop::collection::vec(header, 0..8),
        prop::collection::vec(body, 0..16),
    )
        .prop_map(|(headers, body)| {
            let mut raw = headers.join("\r\n");
            raw.push_str("\r\n\r\n");
            raw.push_str(&body.concat());
            raw.into_bytes()
        })
}

/// What every parsed message keeps to, whatever it came from.
fn well_formed(message: &Message, raw: &[u8]) -> Result<(), TestCaseError> {
    prop_assert_eq!(message.size, raw.len());
    prop_assert!(!message.message_id.is_empty());
    prop_assert!(!message.subject.chars().any(char::is_control));
    prop_assert!(message.subject.chars().count() <= 300);
    prop_assert!(message.text.len() <= TEXT_LIMIT);
    prop_assert!(
        message
            .text
            .chars()
            .all(|c| !c.is_control() || c == '\n' || c == '\t')
    );
    Ok(())
}

proptest! {
    #[test]
    fn any_bytes_give_a_message(raw in prop::collection::vec(any::<u8>(), 0..2048)) {
        well_formed(&parse(&raw), &raw)?;
    }

    #[test]
    fn any_headers_and_body_give_a_message(raw in mail_like()) {
        well_formed(&parse(&raw), &raw)?;
    }

    #[test]
    fn any_html_gives_text_with_at_most_one_blank_line_in_a_row(html in any::<String>()) {
        let text = html_to_text(&html);
        prop_assert!(!text.contains("\n\n\n"), "{:?}", text);
    }
}
