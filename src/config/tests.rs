use super::*;

#[test]
fn a_later_file_that_gives_a_server_a_url_moves_it_off_its_command() {
    let user =
        "[servers.shop]\nurl = \"http://127.0.0.1:8931/mcp\"\nbearer_token_env = \"SHOP_TOKEN\"\n";
    let config = DeskConfig::from_layers(&[
        ("config/desk.toml", DEFAULT_TOML),
        ("/home/ana/.config/support-desk/desk.toml", user),
    ])
    .expect("the shop moves to a URL");
    let shop = &config.servers["shop"];
    assert_eq!(
        (
            shop.command.as_deref(),
            shop.args.len(),
            shop.url.as_deref()
        ),
        (None, 0, Some("http://127.0.0.1:8931/mcp"))
    );
    assert!(
        shop.attach_resources,
        "what is not about the transport stays"
    );
    assert_eq!(
        shop.defined_in.as_deref(),
        Some("/home/ana/.config/support-desk/desk.toml")
    );
    assert_eq!(
        config.servers["partner"].defined_in.as_deref(),
        Some("config/desk.toml")
    );
}

#[test]
fn the_built_in_default_has_the_chapters_limits_and_two_servers() {
    let config = DeskConfig::bundled();
    assert_eq!(config.limits.model_calls_per_ticket, 4);
    assert_eq!(config.limits.request_timeout(), Duration::from_secs(10));
    assert_eq!(config.limits.call_max(), Duration::from_secs(300));
    assert_eq!(config.limits.input_rounds, 10);
    assert_eq!(config.limits.attach_priority, 0.8);
    assert_eq!(
        config.servers.keys().collect::<Vec<_>>(),
        ["partner", "shop"]
    );
    assert_eq!(
        config.servers["partner"].transport("partner").ok(),
        Some(Transport::InProcess("partner".into()))
    );
    assert!(
        !config
            .consent
            .allow
            .contains(&"shop.issue_refund".to_owned())
    );
}

#[test]
fn a_stdio_servers_pipe_is_polled_for_100_us_unless_a_file_says_otherwise() {
    let bundled = DeskConfig::bundled();
    assert_eq!(
        bundled.servers["shop"].busy_poll(),
        Duration::from_micros(100)
    );
    let user = "[servers.shop]\nbusy_poll_us = 0\n";
    let config = DeskConfig::from_layers(&[
        ("config/desk.toml", DEFAULT_TOML),
        ("/home/ana/.config/support-desk/desk.toml", user),
    ])
    .expect("a window is a number of microseconds");
    let shop = &config.servers["shop"];
    assert_eq!(shop.busy_poll(), Duration::ZERO, "0 turns polling off");
    assert_eq!(shop.command.as_deref(), Some("@self"), "the rest stays");
}

#[test]
fn a_later_file_overrides_table_by_table() {
    let over = "[model]\nsource = \"openai:http://127.0.0.1:9/v1\"\nname = \"m\"\nrecipe = \"text_calls\"\n[limits]\nconcurrency = 4\n";
    let config =
        DeskConfig::from_layers(&[("default", DEFAULT_TOML), ("mine", over)]).expect("valid");
    assert_eq!(config.model.source, "openai:http://127.0.0.1:9/v1");
    assert_eq!(config.model.recipe, Recipe::TextCalls);
    assert_eq!(config.limits.concurrency, 4);
    assert_eq!(
        config.limits.model_calls_per_ticket, 4,
        "untouched keys keep the default"
    );
    assert_eq!(config.servers.len(), 2);
}

#[test]
fn a_limits_table_without_call_max_secs_lets_a_call_run_five_minutes() {
    let older = DEFAULT_TOML.replace("call_max_secs = 300\n", "");
    assert!(!older.contains("call_max_secs ="), "the key is gone");
    let config = DeskConfig::from_layers(&[("older", &older)]).expect("valid");
    assert_eq!(config.limits.call_max(), Duration::from_secs(300));
}

#[test]
fn a_server_with_two_transports_or_a_bad_prefix_is_refused_with_what_to_fix() {
    let both = "[servers.x]\ncommand = \"a\"\nurl = \"http://127.0.0.1:1/mcp\"\n";
    let error = DeskConfig::from_layers(&[("d", DEFAULT_TOML), ("mine", both)])
        .expect_err("two transports");
    assert!(
        error
            .to_string()
            .contains("server 'x' needs exactly one of")
    );
    let dotted = "[servers.\"a.b\"]\nin_process = \"partner\"\n";
    let error =
        DeskConfig::from_layers(&[("d", DEFAULT_TOML), ("mine", dotted)]).expect_err("bad prefix");
    assert!(matches!(error, ConfigError::Prefix(p) if p == "a.b"));
}

#[test]
fn mcp_servers_json_from_other_hosts_is_read() {
    let json = r#"{"mcpServers": {
        "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"TOKEN": "${EVERYTHING_TOKEN}"}},
        "remote.api": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "${REMOTE_AUTH}"}}
    }}"#;
    let servers = servers_from_mcp_json(json).expect("valid");
    assert_eq!(
        servers.keys().collect::<Vec<_>>(),
        ["everything", "remote_api"]
    );
    assert_eq!(
        servers["everything"].origin(),
        "npx -y @modelcontextprotocol/server-everything"
    );
    assert_eq!(
        servers["remote_api"].url.as_deref(),
        Some("https://mcp.example.com/mcp")
    );
    assert!(servers_from_mcp_json(r#"{"mcpServers": {"x": {}}}"#).is_err());
}

/// An imported server named like a configured one is refused, never put in its place: the
/// allow list (`shop.find_orders`) would otherwise let the import's same-named tool run unasked.
#[test]
fn an_imported_server_with_a_configured_servers_name_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("mcp.json");
    std::fs::write(
        &json,
        r#"{"mcpServers": {"shop": {"url": "https://elsewhere.example/mcp"}, "docs": {"command": "docs-server"}}}"#,
    )
    .expect("json");
    let toml = dir.path().join("desk.toml");
    std::fs::write(
        &toml,
        format!("mcp_servers_json = [{:?}]\n", json.display().to_string()),
    )
    .expect("toml");
    let error = DeskConfig::load(&[toml]).expect_err("a clash");
    let said = error.to_string();
    assert!(
        said.starts_with(&format!(
            "{} names a server 'shop', which the config already has (from config/desk.toml)",
            json.display()
        )),
        "{said}"
    );

    std::fs::write(
        &json,
        r#"{"mcpServers": {"docs": {"command": "docs-server"}}}"#,
    )
    .expect("json");
    let toml = dir.path().join("desk.toml");
    let config = DeskConfig::load(&[toml]).expect("no clash");
    assert_eq!(config.servers["docs"].origin(), "docs-server");
    assert!(
        config.servers["shop"].url.is_none(),
        "the bundled shop stays"
    );
}

#[test]
fn a_ca_file_is_read_for_url_servers_and_the_model_and_refused_elsewhere() {
    let mine = "[model]\nca_file = \"/etc/ssl/model-ca.pem\"\n\
                [servers.remote]\nurl = \"https://mcp.example.com/mcp\"\nca_file = \"/etc/ssl/shop-ca.pem\"\n";
    let config = DeskConfig::from_layers(&[("d", DEFAULT_TOML), ("mine", mine)]).expect("ok");
    assert_eq!(
        config.model.ca_file.as_deref(),
        Some(Path::new("/etc/ssl/model-ca.pem"))
    );
    assert!(matches!(
        config.servers["remote"].transport("remote"),
        Ok(Transport::Http { ca_file: Some(path), .. }) if path == Path::new("/etc/ssl/shop-ca.pem")
    ));
    let stdio = "[servers.shop]\nca_file = \"/etc/ssl/shop-ca.pem\"\n";
    let error = DeskConfig::from_layers(&[("d", DEFAULT_TOML), ("mine", stdio)])
        .expect_err("ca_file without url");
    assert_eq!(
        error.to_string(),
        "server 'shop' has a ca_file but no url: ca_file is for https:// servers only; remove it"
    );
    let json = r#"{"mcpServers": {"r": {"url": "https://r.example/mcp", "ca_file": "/ca.pem"}}}"#;
    let servers = servers_from_mcp_json(json).expect("valid");
    assert_eq!(servers["r"].ca_file.as_deref(), Some(Path::new("/ca.pem")));
}

#[test]
fn env_references_are_resolved_and_literals_kept() {
    assert_eq!(resolve_value("plain"), Ok("plain".to_owned()));
    assert!(resolve_value("${SUPPORT_DESK_SURELY_UNSET_VARIABLE}").is_err());
}

#[test]
fn sla_tag_tables_are_read_and_one_that_cannot_be_is_refused_naming_it() {
    const SLA: &str = "[sla]\nfirst_response = \"4h\"\nnext_reply = \"8h\"\nbusiness_hours = \"Mon-Fri 09:00-17:00\"\ntime_zone = \"Europe/Berlin\"\n";
    let with = |tags: &str| {
        DeskConfig::from_layers(&[("d", DEFAULT_TOML), ("mine", &format!("{SLA}{tags}"))])
    };
    let config =
        with("[sla.tags.refund]\nfirst_response = \"1h\"\n[sla.tags.vip]\nnext_reply = \"2h\"\n")
            .expect("valid");
    let sla = config.sla.expect("[sla]").build().expect("targets");
    let hour = Duration::from_secs(3600);
    assert_eq!(
        sla.targets(&["refund".to_owned(), "vip".to_owned()]),
        crate::sla::Targets {
            first_response: hour,
            next_reply: 2 * hour,
        }
    );

    let refused = |tags: &str| with(tags).expect_err("refused").to_string();
    assert_eq!(
        refused("[sla.tags.refund]\nfirst_response = \"an hour\"\n"),
        "[sla.tags.refund] first_response \"an hour\" is not a duration; write it as 30m, 4h, 1h30m or 2d"
    );
    assert!(
        refused("[sla.tags.\"late parcel\"]\nnext_reply = \"1h\"\n")
            .starts_with("[sla.tags.late parcel] is not a tag: a tag is letters, digits, - and _")
    );
    assert!(
        refused("[sla.tags.refund]\nfirst_reply = \"1h\"\n").contains("first_reply"),
        "a misspelt key is not ignored"
    );
}
