//! The one integration-test binary: a module per topic, all driving real parts
//! (the built binary over stdio, in-process servers over duplex pipes, SQLite files,
//! HTTP on 127.0.0.1).

mod adversary;
mod approvals;
mod cli_edges;
mod cli_run;
mod desk_day;
mod desk_pty;
mod faults;
mod fixture;
mod fuzz;
mod host;
mod interop;
mod invariants;
mod judgment;
mod lane;
mod mail_day;
mod mail_imap;
mod mail_intake;
mod mail_servers;
mod mail_team;
mod mail_wire;
mod mock_model;
mod no_labels;
mod oauth;
mod partner;
mod person_calls;
mod pg_cluster;
mod postgres;
mod record_kill;
mod recorded_run;
mod resume;
mod shop_data;
mod shop_http;
mod shop_replicas;
mod shop_server;
mod shop_store;
mod streaming;
mod support;
mod team;
mod tls;
mod ui_approvals;
mod ui_desk;
mod ui_due;
mod ui_mail;
mod ui_sign_in;
