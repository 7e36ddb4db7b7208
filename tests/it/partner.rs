//! The partner's tracking server, in-process and over stdio.

use serde_json::json;
use support_desk::partner::Parcels;

use crate::support::*;

#[tokio::test]
async fn a_known_parcel_is_tracked_with_its_scans() {
    let client = in_process_partner().await;
    let parcel = Parcels::bundled()
        .iter()
        .next()
        .cloned()
        .expect("the partner has parcels");
    let written = parcel.tracking_number.to_lowercase();
    let tracked = json(&call(&client, "track_parcel", json!({"tracking_number": written})).await);
    assert_eq!(tracked["tracking_number"], parcel.tracking_number.as_str());
    assert_eq!(tracked["carrier"], "Kestrel Parcel");
    assert_eq!(
        tracked["events"].as_array().map(Vec::len),
        Some(parcel.events.len())
    );
}

#[tokio::test]
async fn an_unknown_or_malformed_number_is_a_tool_error_saying_so() {
    let client = in_process_partner().await;
    let unknown = call(
        &client,
        "track_parcel",
        json!({"tracking_number": "KP000000000"}),
    )
    .await;
    assert!(tool_error(&unknown).starts_with("Kestrel Parcel has no parcel KP000000000."));
    let malformed = call(
        &client,
        "track_parcel",
        json!({"tracking_number": "FX-48213377"}),
    )
    .await;
    assert!(tool_error(&malformed).contains("is not a Kestrel Parcel tracking number"));
}

#[tokio::test]
async fn the_partner_serves_over_stdio_as_partner_tracking() {
    let client = stdio_child(&["serve", "partner", "--stdio"], Lead::default()).await;
    let info = client.peer_info().expect("peer info");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("partner-tracking")
    );
    let tools = client.list_all_tools().await.expect("tools");
    assert_eq!(
        tools.iter().map(|t| t.name.as_ref()).collect::<Vec<&str>>(),
        ["track_parcel"]
    );
    let description = tools[0].description.as_deref().unwrap_or_default();
    assert!(
        Parcels::bundled()
            .iter()
            .all(|p| !description.contains(&p.tracking_number))
    );
    client.cancel().await.expect("close");
}
