//! A service on PostgreSQL (`serve --postgres URL`): its `POST /v1/insert` against the
//! reference model of ids and keys (`common/id_model.rs`), as `server_ids_model.rs` checks a
//! service on a store directory: requests of documents with and without ids and keys, one
//! after another on one server. Each answer gives the model's ids (a new id never takes an id given
//! in the same request, and never wraps past 2^64-1), and after the server stops the index
//! holds exactly the model's documents: every document is stored or was superseded.
//! Needs the test server: `scripts/postgres-test-server.sh start`.
#![cfg(all(feature = "server", feature = "postgres"))]

mod common;
mod server_support;

use proptest::prelude::*;
use serde_json::{json, Value};
use simhash_store::postgres::PgIndex;

use common::id_model::{adds, each_stored_or_superseded, Assigned, Assigner, Doc, InputDoc, Model};
use common::postgres::fresh_database;
use server_support::Server;

fn an_id() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![
        3 => Just(None),
        3 => (0u64..8).prop_map(Some),
        1 => Just(Some(u64::MAX)),
    ]
}

fn a_doc() -> impl Strategy<Value = (Option<u64>, Option<u8>)> {
    (
        an_id(),
        prop_oneof![1 => Just(None), 2 => (0u8..4).prop_map(Some)],
    )
}

fn body(docs: &[InputDoc]) -> Value {
    let documents: Vec<Value> = docs
        .iter()
        .map(|d| {
            let mut v = json!({ "fingerprint": format!("{:016x}", d.fingerprint) });
            if let Some(id) = d.id {
                v["id"] = json!(id);
            }
            if let Some(key) = &d.key {
                v["key"] = json!(key);
            }
            v
        })
        .collect();
    json!({ "documents": documents })
}

fn stored(runtime: &tokio::runtime::Runtime, url: &str) -> Model {
    runtime.block_on(async {
        let index = PgIndex::open(url, None).await.expect("open the index");
        let mut model = Model::default();
        for (id, doc) in index.documents().await.expect("documents") {
            if let Some(key) = &doc.key {
                model.keys.insert(key.clone(), id);
            }
            model.docs.insert(
                id,
                Doc {
                    key: doc.key,
                    fingerprint: doc.fingerprint.0,
                },
            );
        }
        model
    })
}

fn check_requests(requests: &[Vec<(Option<u64>, Option<u8>)>]) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let url = runtime.block_on(fresh_database("svc_ids"));
    let server = Server::start_postgres(&url, &[]);
    let mut model = Model::default();
    let mut assigner = Assigner::new(&model);
    let mut seq = 0u64;
    for (n, request) in requests.iter().enumerate() {
        let docs: Vec<InputDoc> = request
            .iter()
            .map(|(id, key)| {
                seq += 1;
                InputDoc {
                    id: *id,
                    key: key.map(|k| format!("https://example.com/{k}")),
                    fingerprint: seq.wrapping_mul(0xd6e8_feb8_6659_fd93) ^ 0xaaaa,
                }
            })
            .collect();
        let before = assigner.clone();
        let answer = server.call("POST", "/v1/insert", Some(&body(&docs)));
        match assigner.assign(&model, &docs, true) {
            Assigned::All(ids) => {
                assert_eq!(answer.status, 200, "request {n}: {}", answer.text());
                let got: Vec<u64> = answer.json()["ids"]
                    .as_array()
                    .expect("ids")
                    .iter()
                    .map(|v| v.as_u64().expect("an id"))
                    .collect();
                assert_eq!(got, ids, "request {n}: {request:?}");
                let added = adds(&docs, &ids);
                model.apply(&added);
                each_stored_or_superseded(&model, &added);
            }
            Assigned::NoIdLeft { .. } => {
                assert_eq!(answer.status, 409, "request {n}: {}", answer.text());
                assert_eq!(answer.error_kind(), "no_id_left");
                assigner = before;
            }
            Assigned::StoppedAt { .. } => unreachable!("a request never stops at a given id"),
        }
    }
    assert_eq!(server.terminate().code(), Some(0));
    assert_eq!(stored(&runtime, &url), model);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn every_inserted_document_is_stored_or_superseded(
        requests in proptest::collection::vec(proptest::collection::vec(a_doc(), 1..6), 1..8)
    ) {
        check_requests(&requests);
    }
}

/// A document without an id in the same request as `"id": 0` gets another id, and nothing
/// is replaced: the request's given ids are reserved first.
#[test]
fn a_new_id_never_takes_an_id_given_in_the_same_request() {
    check_requests(&[vec![(None, None), (Some(0), None), (Some(1), Some(0))]]);
}

/// After id 2^64-1 an insert without an id is refused (409), it does not overwrite it.
#[test]
fn no_id_saturates_into_the_largest() {
    check_requests(&[
        vec![(Some(u64::MAX), None)],
        vec![(None, None)],
        vec![(None, Some(1))],
    ]);
}
