//! Many clients at once: answers over the service equal brute force after concurrent inserts
//! and removals from 8 clients, and insert-if-new lets exactly one member of each cluster of
//! near-duplicates in when 8 clients race.
#![cfg(feature = "server")]

mod common;
mod server_support;

use std::collections::BTreeMap;

use common::{brute_force, Rng};
use serde_json::{json, Value};
use server_support::{matches, Server};

const CLIENTS: u64 = 8;

#[test]
fn concurrent_inserts_and_removes_then_queries_equal_brute_force() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let addr = server.addr;
    // Each client owns the ids c * 1_000_000 + i, so the final state is known per client
    // whatever the interleaving; fingerprints are planted near shared centres so queries
    // find documents of several clients.
    let mut centres = Rng::new(7);
    let centres: Vec<u64> = (0..64).map(|_| centres.next_u64()).collect();
    let finals: Vec<BTreeMap<u64, u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let centres = &centres;
                s.spawn(move || {
                    let mut rng = Rng::new(100 + c);
                    let mut model = BTreeMap::new();
                    for round in 0..60 {
                        if round % 4 == 3 && !model.is_empty() {
                            let ids: Vec<u64> = model.keys().copied().collect();
                            let id = ids[rng.below(ids.len() as u64) as usize];
                            let r = server_support::request(
                                addr,
                                "DELETE",
                                &format!("/v1/documents/{id}"),
                                None,
                                None,
                            );
                            assert_eq!(r.status, 200, "{}", r.text());
                            assert_eq!(r.json()["removed"], true);
                            model.remove(&id);
                            continue;
                        }
                        let docs: Vec<Value> = (0..1 + rng.below(20))
                            .map(|_| {
                                let id = c * 1_000_000 + rng.below(400);
                                let centre = centres[rng.below(centres.len() as u64) as usize];
                                let d = rng.below(8) as u32;
                                let fp = rng.flip(centre, d);
                                model.insert(id, fp);
                                json!({"id": id, "fingerprint": format!("{fp:016x}")})
                            })
                            .collect();
                        let body = json!({ "documents": docs }).to_string();
                        let r = server_support::request(
                            addr,
                            "POST",
                            "/v1/insert",
                            Some(body.as_bytes()),
                            None,
                        );
                        assert_eq!(r.status, 200, "{}", r.text());
                    }
                    model
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("client"))
            .collect()
    });
    let docs: Vec<(u64, u64)> = finals
        .iter()
        .flat_map(|m| m.iter().map(|(&id, &fp)| (id, fp)))
        .collect();
    assert_eq!(
        server.call("GET", "/v1/stats", None).json()["documents"],
        docs.len() as u64
    );

    let mut rng = Rng::new(1);
    let queries: Vec<u64> = (0..200)
        .map(|i| {
            if i % 2 == 0 {
                let d = rng.below(6) as u32;
                rng.flip(centres[i % centres.len()], d)
            } else {
                rng.next_u64()
            }
        })
        .collect();
    for k in [0, 3, 4, 7, 10] {
        let body = json!({"fingerprints": queries.iter().map(|q| format!("{q:x}")).collect::<Vec<_>>(), "k": k});
        let r = server.post_ok("/v1/query", &body);
        for (q, list) in queries
            .iter()
            .zip(r["results"].as_array().expect("results"))
        {
            assert_eq!(
                matches(list),
                brute_force(&docs, *q, k),
                "query {q:016x} k={k}"
            );
        }
    }
}

#[test]
fn insert_if_new_race_lets_exactly_one_per_cluster_in() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let addr = server.addr;
    const CLUSTERS: usize = 60;
    let mut rng = Rng::new(42);
    let centres: Vec<u64> = (0..CLUSTERS).map(|_| rng.next_u64()).collect();
    // Every client sends one member of every cluster (within 1 bit of its centre, so any two
    // members are within k = 3), in its own order, some alone, some in batches.
    let inserted: Vec<Vec<(u64, u64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let centres = &centres;
                s.spawn(move || {
                    let mut rng = Rng::new(1000 + c);
                    let mut order: Vec<usize> = (0..CLUSTERS).collect();
                    rng.shuffle(&mut order);
                    let mut inserted = Vec::new();
                    for chunk in order.chunks(1 + (c as usize % 4)) {
                        let docs: Vec<Value> = chunk
                            .iter()
                            .map(|&i| {
                                let d = rng.below(2) as u32;
                                let fp = rng.flip(centres[i], d);
                                json!({"id": c * 1000 + i as u64, "fingerprint": fp})
                            })
                            .collect();
                        let body = json!({"documents": docs, "k": 3}).to_string();
                        let r = server_support::request(
                            addr,
                            "POST",
                            "/v1/insert-if-new",
                            Some(body.as_bytes()),
                            None,
                        );
                        assert_eq!(r.status, 200, "{}", r.text());
                        for (outcome, &i) in r.json()["results"]
                            .as_array()
                            .expect("results")
                            .iter()
                            .zip(chunk)
                        {
                            if outcome["inserted"] == true {
                                inserted.push((i as u64, outcome["id"].as_u64().expect("id")));
                            } else {
                                assert!(!outcome["matches"]
                                    .as_array()
                                    .expect("matches")
                                    .is_empty());
                            }
                        }
                    }
                    inserted
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("client"))
            .collect()
    });
    let mut per_cluster = vec![0; CLUSTERS];
    for (cluster, _) in inserted.iter().flatten() {
        per_cluster[*cluster as usize] += 1;
    }
    assert_eq!(
        per_cluster,
        vec![1; CLUSTERS],
        "inserted members per cluster"
    );
    assert_eq!(
        server.call("GET", "/v1/stats", None).json()["documents"],
        CLUSTERS as u64
    );
    let body = json!({"fingerprints": centres, "k": 1});
    for list in server.post_ok("/v1/query", &body)["results"]
        .as_array()
        .expect("results")
    {
        assert_eq!(list.as_array().expect("list").len(), 1);
    }
}
