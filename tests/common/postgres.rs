//! A fresh database per test on the PostgreSQL server that `SIMHASH_TEST_POSTGRES_URL` names
//! (`scripts/postgres-test-server.sh start` writes it), so tests run in parallel.

use std::sync::atomic::{AtomicU32, Ordering};

/// The variable that names the test server.
pub const URL_VARIABLE: &str = "SIMHASH_TEST_POSTGRES_URL";
/// The variable that names the test server's streaming hot standby.
pub const STANDBY_URL_VARIABLE: &str = "SIMHASH_TEST_POSTGRES_STANDBY_URL";

/// The test server's URL. Panics with what to run when it is not set: a test of the
/// `postgres` feature never passes without a server.
pub fn server_url() -> String {
    std::env::var(URL_VARIABLE).unwrap_or_else(|_| {
        panic!(
            "{URL_VARIABLE} is not set: start a test server with `scripts/postgres-test-server.sh start`, \
             then `. target/postgres-test-server.env` and run the tests again"
        )
    })
}

/// The database of `url` (one of [`fresh_database`]'s) on the test server's hot standby.
/// Panics with what to run when the standby's variable is not set.
pub fn on_standby(url: &str) -> String {
    let standby = std::env::var(STANDBY_URL_VARIABLE).unwrap_or_else(|_| {
        panic!(
            "{STANDBY_URL_VARIABLE} is not set: `scripts/postgres-test-server.sh start` makes the \
             standby; run `. target/postgres-test-server.env` and the tests again"
        )
    });
    let name = url
        .split('?')
        .next()
        .and_then(|base| base.rsplit_once('/'))
        .map_or("", |(_, name)| name);
    with_database(&standby, name)
}

/// `url` naming database `name` instead of its own.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (url, String::new()),
    };
    let base = base.rsplit_once('/').map_or(base, |(b, _)| b);
    format!("{base}/{name}{query}")
}

/// Makes an empty database for test `test` (dropping one left by an earlier run) and
/// returns its URL.
pub async fn fresh_database(test: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "simhash_{test}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let url = server_url();
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("connect to the test server {url}: {e}"));
    tokio::spawn(connection);
    // Two statements: a multi-statement string would run as one transaction, which
    // CREATE DATABASE refuses.
    for statement in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        client
            .batch_execute(&statement)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e:?}"));
    }
    with_database(&url, &name)
}

/// A plain connection to the database `url` names, for tests that change the tables by hand.
pub async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
    tokio::spawn(connection);
    client
}
