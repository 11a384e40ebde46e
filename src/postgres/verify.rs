//! The index's integrity check in PostgreSQL: every document in its four groups and nothing
//! else there, keys and documents naming each other, the recorded count.

use std::collections::{HashMap, HashSet};

use super::groups::{entries_of, GroupsRead};
use super::{col, connection, document_from_row, pg_error, PgIndex, DOC_COLUMNS};
use crate::error::Result;
use crate::pigeonhole::{BLOCKS, GROUPS};

/// What [`PgIndex::verify`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PgVerifyReport {
    /// Documents in `simhash_docs`.
    pub documents: u64,
    /// Rows of `simhash_keys`.
    pub keys: u64,
    /// Block entries in each family.
    pub entries: [u64; BLOCKS],
    /// Each inconsistency found (the first 100), in words.
    pub problems: Vec<String>,
}

impl PgVerifyReport {
    /// Whether the index is consistent.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    fn problem(&mut self, message: String) {
        if self.problems.len() < 100 {
            self.problems.push(message);
        }
    }
}

impl PgIndex {
    /// Reads the whole index in one repeatable-read transaction and checks it: each document
    /// is in its four groups, each group entry is a document's, each key names a document
    /// that has it and each document's key names it, and the recorded count is the number
    /// of documents. Reads everything into memory: for tests and small indexes.
    ///
    /// # Errors
    /// [`Error::Postgres`](crate::Error::Postgres); [`Error::Decode`](crate::Error::Decode) for
    /// a damaged chunk or document.
    pub async fn verify(&self) -> Result<PgVerifyReport> {
        let mut conn = connection(&self.pool).await?;
        let tx = conn
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(pg_error("begin the check"))?;
        let mut report = PgVerifyReport::default();
        let docs: HashMap<u64, (u64, Option<String>)> = tx
            .query(&format!("SELECT {DOC_COLUMNS} FROM simhash_docs"), &[])
            .await
            .map_err(pg_error("read documents"))?
            .iter()
            .map(|row| document_from_row(row).map(|(id, d)| (id, (d.fingerprint.0, d.key))))
            .collect::<Result<_>>()?;
        report.documents = docs.len() as u64;
        let recorded: i64 = tx
            .query_one("SELECT documents FROM simhash_meta", &[])
            .await
            .map_err(pg_error("read the document count"))?
            .try_get(0)
            .map_err(pg_error("read the document count"))?;
        if recorded as u64 != report.documents {
            report.problem(format!(
                "the recorded count is {recorded}, {} documents are stored",
                report.documents
            ));
        }

        let keys = tx
            .query("SELECT key, id FROM simhash_keys", &[])
            .await
            .map_err(pg_error("read keys"))?;
        report.keys = keys.len() as u64;
        for row in &keys {
            let (key, id): (Vec<u8>, i64) = (col(row, 0)?, col(row, 1)?);
            let key = String::from_utf8_lossy(&key);
            match docs.get(&(id as u64)) {
                Some((_, Some(k))) if *k == key => {}
                _ => report.problem(format!(
                    "key {key:?} names document {id}, which does not have it"
                )),
            }
        }
        let owned: HashSet<(Vec<u8>, u64)> = keys
            .iter()
            .map(|row| Ok((col::<Vec<u8>>(row, 0)?, col::<i64>(row, 1)? as u64)))
            .collect::<Result<_>>()?;
        for (&id, (_, key)) in &docs {
            if let Some(key) = key {
                if !owned.contains(&(key.as_bytes().to_vec(), id)) {
                    report.problem(format!(
                        "document {id} has key {key:?}, which names another"
                    ));
                }
            }
        }

        let all: Vec<i32> = (0..GROUPS as i32).collect();
        let read = GroupsRead::read(&tx, &all).await?;
        let mut expected: HashSet<(i32, u64, u64)> = HashSet::with_capacity(docs.len() * BLOCKS);
        for (&id, &(fp, _)) in &docs {
            for (grp, remainder) in entries_of(fp) {
                expected.insert((grp, remainder, id));
            }
        }
        let mut seen = 0usize;
        for grp in all {
            for (remainder, id) in read.entries(grp)? {
                report.entries[grp as usize / crate::pigeonhole::BLOCK_VALUES] += 1;
                if expected.contains(&(grp, remainder, id)) {
                    seen += 1;
                } else {
                    report.problem(format!(
                        "group {grp} holds document {id} with remainder {remainder:#x}, which is not stored so"
                    ));
                }
            }
        }
        if seen != expected.len() {
            report.problem(format!(
                "{} block entries of stored documents are missing",
                expected.len() - seen
            ));
        }
        tx.commit().await.map_err(pg_error("end the check"))?;
        Ok(report)
    }
}
