//! Two service processes on one PostgreSQL index, clients racing insert-if-new of planted
//! near-duplicates through both: no two documents within 3 bits are ever admitted, each
//! cluster gets exactly one, and the ids the services hand out are unique across them.
//! Needs the test server: `scripts/postgres-test-server.sh start`.
#![cfg(all(feature = "server", feature = "postgres"))]

mod common;
mod server_support;

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::json;
use simhash_store::postgres::PgIndex;

use common::postgres::fresh_database;
use common::{brute_pairs, Rng};
use server_support::Server;

#[test]
fn two_services_racing_admit_one_per_cluster() {
    const K: u32 = 3;
    const CENTRES: usize = 40;
    const CLIENTS: u64 = 12;
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let url = runtime.block_on(fresh_database("svc_race"));
    // The first service makes the tables; the second opens them.
    let first = Server::start_postgres(&url, &[]);
    let servers = Arc::new([first, Server::start_postgres(&url, &[])]);
    let mut rng = Rng::new(21);
    let centres: Vec<u64> = (0..CENTRES).map(|_| rng.next_u64()).collect();
    let mut clients = Vec::new();
    for c in 0..CLIENTS {
        let servers = Arc::clone(&servers);
        let centres = centres.clone();
        clients.push(std::thread::spawn(move || {
            let server = &servers[c as usize % 2];
            let mut rng = Rng::new(100 + c);
            let mut order: Vec<usize> = (0..centres.len()).collect();
            rng.shuffle(&mut order);
            let mut admitted = Vec::new();
            for chunk in order.chunks(1 + c as usize % 3) {
                // Within one bit of the centre: any two of a cluster are within 2 bits.
                let documents: Vec<_> = chunk
                    .iter()
                    .map(|&i| {
                        let d = rng.below(2) as u32;
                        let fp = rng.flip(centres[i], d);
                        json!({"fingerprint": format!("{fp:016x}")})
                    })
                    .collect();
                let answer = server.post_ok(
                    "/v1/insert-if-new",
                    &json!({"documents": documents, "k": K}),
                );
                for (item, &i) in answer["results"]
                    .as_array()
                    .expect("results")
                    .iter()
                    .zip(chunk)
                {
                    if item["inserted"] == json!(true) {
                        admitted.push((i, item["id"].as_u64().expect("an id")));
                    } else {
                        assert!(
                            !item["matches"].as_array().expect("matches").is_empty(),
                            "{item}"
                        );
                    }
                }
            }
            admitted
        }));
    }
    let admitted: Vec<(usize, u64)> = clients
        .into_iter()
        .flat_map(|c| c.join().expect("a client"))
        .collect();
    let clusters: HashSet<usize> = admitted.iter().map(|a| a.0).collect();
    assert_eq!(clusters.len(), CENTRES, "every cluster admitted");
    assert_eq!(
        admitted.len(),
        CENTRES,
        "no cluster admitted twice: {admitted:?}"
    );
    let ids: HashSet<u64> = admitted.iter().map(|a| a.1).collect();
    assert_eq!(ids.len(), admitted.len(), "ids unique across the services");
    let stored = runtime.block_on(async {
        let index = PgIndex::open(&url, None).await.expect("open");
        let report = index.verify().await.expect("verify");
        assert!(report.is_ok(), "{:?}", report.problems);
        index.documents().await.expect("documents")
    });
    let docs: Vec<(u64, u64)> = stored
        .iter()
        .map(|(id, d)| (*id, d.fingerprint.0))
        .collect();
    assert_eq!(docs.len(), CENTRES);
    assert_eq!(
        brute_pairs(&docs, K),
        Vec::new(),
        "two admitted within {K} bits"
    );
}
