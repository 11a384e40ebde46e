//! TLS to PostgreSQL, against the test server (`scripts/postgres-test-server.sh start` gives it
//! a certificate for 127.0.0.1 from a CA of its own, `SIMHASH_TEST_POSTGRES_CA`, and a role
//! `simhash_tls` that the server lets in only over TLS):
//! - `sslmode=verify-full&sslrootcert=CA` connects over TLS (the TLS-only role gets in) and
//!   the index works;
//! - without `sslmode`, the connection is plain: the TLS-only role is refused;
//! - a certificate no trusted root signed is refused, naming the certificate;
//! - `sslrootcert` without TLS, or naming no readable file, is an error that says what to do.
#![cfg(feature = "postgres")]

mod common;

use common::postgres::fresh_database;
use simhash_store::postgres::PgIndex;
use simhash_store::{Entry, Fingerprint};

/// The test server's CA file.
fn ca() -> String {
    std::env::var("SIMHASH_TEST_POSTGRES_CA").unwrap_or_else(|_| {
        panic!(
            "SIMHASH_TEST_POSTGRES_CA is not set: start the test server with \
             `scripts/postgres-test-server.sh start`, then `. target/postgres-test-server.env`"
        )
    })
}

/// `url` as the TLS-only role, with `query` appended.
fn as_tls_role(url: &str, query: &str) -> String {
    let url = url.replacen("postgres://postgres@", "postgres://simhash_tls@", 1);
    assert!(
        url.contains("simhash_tls@"),
        "a URL of the test server: {url}"
    );
    format!("{url}{query}")
}

#[tokio::test]
async fn verify_full_connects_over_tls_and_plain_urls_stay_plain() {
    let url = fresh_database("tls").await;
    let tls = as_tls_role(&url, &format!("?sslmode=verify-full&sslrootcert={}", ca()));
    let index = PgIndex::open(&tls, None).await.expect("an index over TLS");
    index
        .insert_batch([
            Entry::new(1, Fingerprint(0xf0f0)),
            Entry::new(2, Fingerprint(0xf0f1)),
        ])
        .await
        .expect("writes over TLS");
    let found = index
        .query(Fingerprint(0xf0f0), 1)
        .await
        .expect("a query over TLS");
    let mut ids: Vec<u64> = found.iter().map(|m| m.id).collect();
    ids.sort_unstable();
    assert_eq!(ids, [1, 2]);

    // `require` verifies too (unlike libpq's): with the CA it connects.
    let require = as_tls_role(&url, &format!("?sslmode=require&sslrootcert={}", ca()));
    let again = PgIndex::open(&require, None)
        .await
        .expect("require with the CA");
    assert_eq!(again.len().await.expect("the count"), 2);

    // Without sslmode the connection is plain, which the server refuses this role.
    let plain = as_tls_role(&url, "");
    let error = PgIndex::open(&plain, None)
        .await
        .expect_err("plain is refused");
    assert!(error.to_string().contains("no encryption"), "{error}");
}

#[tokio::test]
async fn an_untrusted_certificate_and_bad_tls_options_are_refused() {
    let url = fresh_database("tls_refused").await;
    // The system's roots do not hold the test CA (or the system has none: then the URL must
    // name one): either way no connection, and the message says it is the certificate.
    let untrusted = as_tls_role(&url, "?sslmode=verify-full");
    let error = PgIndex::open(&untrusted, None)
        .await
        .expect_err("untrusted");
    assert!(error.to_string().contains("certificate"), "{error}");

    let error = PgIndex::open(&as_tls_role(&url, &format!("?sslrootcert={}", ca())), None)
        .await
        .expect_err("sslrootcert without sslmode");
    assert!(error.to_string().contains("sslmode=verify-full"), "{error}");

    let missing = as_tls_role(&url, "?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem");
    let error = PgIndex::open(&missing, None)
        .await
        .expect_err("a missing CA file");
    assert!(error.to_string().contains("/nonexistent/ca.pem"), "{error}");
}
