use super::*;

#[test]
fn dates_are_civil_utc() {
    assert_eq!(date(0), "1970-01-01 00:00 UTC");
    assert_eq!(date(951_782_400), "2000-02-29 00:00 UTC");
    assert_eq!(date(1_798_761_599), "2026-12-31 23:59 UTC");
}

#[test]
fn an_unknown_issuer_says_to_add_the_ca_under_the_right_table() {
    let problem = CertProblem::from_rustls(&rustls::Error::InvalidCertificate(
        CertificateError::UnknownIssuer,
    ));
    assert_eq!(problem, CertProblem::Untrusted);
    let with = problem.advice("[servers.shop]", Some(Path::new("/etc/shop-ca.pem")));
    assert!(
        with.contains("even with ca_file = \"/etc/shop-ca.pem\""),
        "{with}"
    );
}

#[test]
fn a_name_mismatch_names_both_sides() {
    let problem = CertProblem::from_rustls(&rustls::Error::InvalidCertificate(
        CertificateError::NotValidForNameContext {
            expected: ServerName::try_from("shop.example.com").expect("name"),
            presented: vec!["other.example.com".into()],
        },
    ));
    assert_eq!(
        problem.advice("[servers.shop]", None),
        "its certificate is not valid for the name shop.example.com (it is for \
         other.example.com); check the URL: it must use a name the certificate is for"
    );
}

#[test]
fn a_rustls_error_is_found_inside_an_io_error() {
    let io = std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        rustls::Error::InvalidCertificate(CertificateError::Revoked),
    );
    assert_eq!(CertProblem::find(&io), Some(CertProblem::Revoked));
}

#[test]
fn a_missing_ca_file_names_the_path() {
    let error = client_config(Some(Path::new("/nonexistent/ca.pem"))).expect_err("no such file");
    assert!(
        error
            .to_string()
            .starts_with("cannot read the CA file /nonexistent/ca.pem"),
        "{error}"
    );
}
