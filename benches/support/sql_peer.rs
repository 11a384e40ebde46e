//! The index a user would write by hand in PostgreSQL, as the peer of `PgIndex`: one row per
//! document with its four 16-bit blocks in columns, a B-tree on each, and the pigeonhole
//! rule (k <= 3: a match shares at least one block) as an `OR` of the four, filtered by
//! `bit_count` of the XOR:
//!
//! ```sql
//! CREATE TABLE peer_docs (id bigint, fp bigint NOT NULL,
//!                         b0 smallint NOT NULL, b1 smallint NOT NULL, b2 smallint NOT NULL, b3 smallint NOT NULL);
//! -- COPY, then:
//! ALTER TABLE peer_docs ADD PRIMARY KEY (id);
//! CREATE INDEX ON peer_docs (b0); -- and b1, b2, b3
//! SELECT id FROM peer_docs WHERE (b0 = $1 OR b1 = $2 OR b2 = $3 OR b3 = $4)
//!                            AND bit_count((fp # $5)::bit(64)) <= 3;
//! ```
//!
//! A block is stored as the `smallint` of its 16 bits (block 0 is bits 63..48). A batch is
//! one statement: the fingerprints as arrays, `unnest`ed, each joined `LATERAL` to the query.

use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Statement};

const SINGLE: &str = "SELECT id FROM peer_docs \
     WHERE (b0 = $1 OR b1 = $2 OR b2 = $3 OR b3 = $4) AND bit_count((fp # $5)::bit(64)) <= 3";

const BATCH: &str = "SELECT q.i, d.id \
     FROM unnest($1::bigint[], $2::smallint[], $3::smallint[], $4::smallint[], $5::smallint[]) \
          WITH ORDINALITY AS q(fp, b0, b1, b2, b3, i) \
     CROSS JOIN LATERAL (SELECT id FROM peer_docs d \
          WHERE (d.b0 = q.b0 OR d.b1 = q.b1 OR d.b2 = q.b2 OR d.b3 = q.b3) \
            AND bit_count((d.fp # q.fp)::bit(64)) <= 3) d";

/// The four blocks of `fp` as the peer stores them.
fn blocks(fp: u64) -> [i16; 4] {
    [48, 32, 16, 0].map(|shift| (fp >> shift) as u16 as i16)
}

/// Makes the table in the database of `client`, loads `fps` (id = position) with binary
/// COPY, then builds the primary key and the four block indexes.
pub async fn load(client: &Client, fps: &[u64]) {
    client
        .batch_execute(
            "CREATE TABLE peer_docs (id bigint NOT NULL, fp bigint NOT NULL, \
             b0 smallint NOT NULL, b1 smallint NOT NULL, b2 smallint NOT NULL, b3 smallint NOT NULL)",
        )
        .await
        .expect("create peer_docs");
    let sink = client
        .copy_in("COPY peer_docs (id, fp, b0, b1, b2, b3) FROM STDIN BINARY")
        .await
        .expect("copy into peer_docs");
    let types = [
        Type::INT8,
        Type::INT8,
        Type::INT2,
        Type::INT2,
        Type::INT2,
        Type::INT2,
    ];
    let mut writer = std::pin::pin!(BinaryCopyInWriter::new(sink, &types));
    for (id, &fp) in fps.iter().enumerate() {
        let [b0, b1, b2, b3] = blocks(fp);
        writer
            .as_mut()
            .write(&[&(id as i64), &(fp as i64), &b0, &b1, &b2, &b3])
            .await
            .expect("copy a row");
    }
    writer.finish().await.expect("finish the copy");
    client
        .batch_execute(
            "ALTER TABLE peer_docs ADD PRIMARY KEY (id); \
             CREATE INDEX peer_b0 ON peer_docs (b0); CREATE INDEX peer_b1 ON peer_docs (b1); \
             CREATE INDEX peer_b2 ON peer_docs (b2); CREATE INDEX peer_b3 ON peer_docs (b3)",
        )
        .await
        .expect("index peer_docs");
}

/// The prepared statements of the peer on one connection.
pub struct Peer {
    single: Statement,
    batch: Statement,
}

impl Peer {
    pub async fn prepare(client: &Client) -> Peer {
        Peer {
            single: client.prepare(SINGLE).await.expect("prepare the query"),
            batch: client.prepare(BATCH).await.expect("prepare the batch"),
        }
    }

    /// The ids within 3 bits of `fp`, ascending.
    pub async fn query(&self, client: &Client, fp: u64) -> Vec<u64> {
        let [b0, b1, b2, b3] = blocks(fp);
        let rows = client
            .query(&self.single, &[&b0, &b1, &b2, &b3, &(fp as i64)])
            .await
            .expect("peer query");
        let mut ids: Vec<u64> = rows.iter().map(|r| r.get::<_, i64>(0) as u64).collect();
        ids.sort_unstable();
        ids
    }

    /// The ids within 3 bits of each of `fps`, each list ascending, in input order.
    pub async fn query_many(&self, client: &Client, fps: &[u64]) -> Vec<Vec<u64>> {
        let signed: Vec<i64> = fps.iter().map(|&f| f as i64).collect();
        let columns: Vec<Vec<i16>> = (0..4)
            .map(|b| fps.iter().map(|&f| blocks(f)[b]).collect())
            .collect();
        let rows = client
            .query(
                &self.batch,
                &[&signed, &columns[0], &columns[1], &columns[2], &columns[3]],
            )
            .await
            .expect("peer batch");
        let mut out = vec![Vec::new(); fps.len()];
        for row in rows {
            let i: i64 = row.get(0);
            out[i as usize - 1].push(row.get::<_, i64>(1) as u64);
        }
        for ids in &mut out {
            ids.sort_unstable();
        }
        out
    }
}

/// Bytes of the peer's table with its TOAST and indexes.
pub async fn size(client: &Client) -> i64 {
    client
        .query_one("SELECT pg_total_relation_size('peer_docs')", &[])
        .await
        .expect("peer size")
        .get(0)
}
