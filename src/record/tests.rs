use super::*;

#[test]
fn times_are_written_as_rfc3339_in_utc() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(1_796_112_563_000), "2026-12-01T08:09:23Z");
    assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
}
