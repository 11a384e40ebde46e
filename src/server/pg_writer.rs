//! The writer of a service on PostgreSQL: one task per process takes every request queued
//! (as `writer.rs` does for a store) and commits the group in one transaction under the
//! index's writer lock ([`PgStagedBatch`]), so concurrent clients share commits. It takes
//! the lock before it takes the group, so that the requests that arrive while another
//! process commits join this group rather than wait for the next one. Several
//! service processes may write the same index: the lock orders their groups, and each group
//! reads the next free id under it, so new ids are unique across processes.
//!
//! Failures: an error that retrying may get past (the connection lost, a failover, the
//! server restarting: [`simhash_store::Error::is_unavailable`]) answers every request of the
//! group 503 `unavailable` with `Retry-After`. If the COMMIT itself failed, the group may be
//! committed or not; a client resending it by id or key replaces, never duplicates. The
//! writer never cancels a COMMIT, nor times one out: a COMMIT waiting for a synchronous
//! standby waits. A connection that failed is closed, and the pool opens a new one for the
//! next group. Any other error retries each request of the group alone, so that one
//! request's bad document does not fail the others.

use std::sync::Arc;

use simhash_store::postgres::{PgIndex, PgStagedBatch};
use simhash_store::{Fingerprint, IdAssigner};
use tokio::sync::mpsc;

use super::error::ApiError;
use super::metrics::Metrics;
use super::staging::{self, Decided, Reply, Request, Step};
use super::writer::{channel, take_group, WriteOp, WriterHandle};

/// Starts the writer task over `index` with a queue of `capacity` requests, on the current
/// runtime. The task ends once every [`WriterHandle`] is dropped and the queue is drained.
pub fn start(
    index: Arc<PgIndex>,
    capacity: usize,
    metrics: Arc<Metrics>,
) -> (WriterHandle, tokio::task::JoinHandle<()>) {
    let (handle, rx) = channel(capacity);
    let writer = PgWriter {
        index,
        ids: IdAssigner::starting_at(Some(0)),
        metrics,
    };
    (handle, tokio::spawn(writer.run(rx)))
}

struct PgWriter {
    index: Arc<PgIndex>,
    /// Past every id this process handed out; each group also moves it past every id stored.
    ids: IdAssigner,
    metrics: Arc<Metrics>,
}

impl PgWriter {
    async fn run(mut self, mut rx: mpsc::Receiver<WriteOp>) {
        let index = Arc::clone(&self.index);
        while let Some(first) = rx.recv().await {
            if matches!(first, WriteOp::Remove { .. }) {
                let ops = take_group(first, &mut rx);
                self.commit_ops(ops, None).await;
                continue;
            }
            // The group's transaction first, then the group: the requests that arrive while
            // another process holds the writer lock join this group instead of waiting for
            // the next one.
            let mut conn = match index.connection().await {
                Ok(conn) => conn,
                Err(e) => {
                    let ops = take_group(first, &mut rx);
                    self.commit_ops(ops, Some(Err(e))).await;
                    continue;
                }
            };
            let opened = index.staged_batch(&mut conn).await;
            let ops = take_group(first, &mut rx);
            self.commit_ops(ops, Some(opened)).await;
        }
    }

    /// Commits `ops` in order: each run of inserts as one group, removals between runs. The
    /// first run goes into `opened` if given (`ops` then starts with an insert).
    async fn commit_ops(
        &mut self,
        ops: Vec<WriteOp>,
        mut opened: Option<simhash_store::Result<PgStagedBatch<'_>>>,
    ) {
        let mut run = Vec::new();
        for op in ops {
            match Step::from(op) {
                Step::Insert(request, reply) => run.push((request, reply)),
                Step::Remove(id, reply) => {
                    self.commit_group(std::mem::take(&mut run), opened.take())
                        .await;
                    let removed = self.index.remove(id).await.map_err(ApiError::from);
                    if removed == Ok(true) {
                        self.metrics.committed(1);
                    }
                    let _ = reply.send(removed);
                }
            }
        }
        self.commit_group(run, opened.take()).await;
    }

    /// Commits a run of insert requests in one transaction (`opened`, if given); on an error
    /// that is not the database's unavailability, each request alone.
    async fn commit_group(
        &mut self,
        run: Vec<(Request, Reply)>,
        opened: Option<simhash_store::Result<PgStagedBatch<'_>>>,
    ) {
        if run.is_empty() {
            return;
        }
        let (requests, replies): (Vec<Request>, Vec<Reply>) = run.into_iter().unzip();
        let ids = self.ids;
        let committed = self.commit(&requests, opened).await;
        if committed.is_err() {
            self.ids = ids;
        }
        match committed {
            Ok(decided) => {
                for (reply, answer) in replies.into_iter().zip(decided) {
                    reply.send(Ok(answer));
                }
            }
            Err(e) if requests.len() > 1 && !e.is_unavailable() => {
                for pair in requests.into_iter().zip(replies) {
                    Box::pin(self.commit_group(vec![pair], None)).await;
                }
            }
            Err(e) => {
                let e = ApiError::from(e);
                for reply in replies {
                    reply.send(Err(e.clone()));
                }
            }
        }
    }

    /// Stages and commits `requests` in `opened`, or a batch of its own; returns each
    /// request's answer.
    async fn commit(
        &mut self,
        requests: &[Request],
        opened: Option<simhash_store::Result<PgStagedBatch<'_>>>,
    ) -> Result<Vec<Decided>, GroupError> {
        let index = Arc::clone(&self.index);
        let mut conn;
        let mut batch = match opened {
            Some(opened) => opened?,
            None => {
                conn = index.connection().await?;
                index.staged_batch(&mut conn).await?
            }
        };
        match batch.next_id() {
            Some(0) => {}
            Some(next) => self.ids.give(next - 1),
            None => self.ids.give(u64::MAX),
        }
        read_ahead(&mut batch, requests).await?;
        let decided =
            staging::stage(&mut self.ids, &mut batch, requests).map_err(GroupError::Api)?;
        let documents = batch.len() as u64;
        batch.commit().await?;
        self.metrics.committed(documents);
        Ok(decided)
    }
}

/// Reads ahead what deciding `requests` needs: the near-duplicates of the insert-if-new
/// documents and the holders of every key.
async fn read_ahead(
    batch: &mut PgStagedBatch<'_>,
    requests: &[Request],
) -> simhash_store::Result<()> {
    let mut fps: Vec<Fingerprint> = Vec::new();
    let mut k = 0;
    let mut keys: Vec<&str> = Vec::new();
    for request in requests {
        if let Request::IfNew(docs, dk) = request {
            k = k.max(*dk);
            fps.extend(docs.iter().map(|d| d.fingerprint));
        }
        keys.extend(request.docs().iter().filter_map(|d| d.key.as_deref()));
    }
    keys.sort_unstable();
    keys.dedup();
    batch.read_ahead(&fps, &keys, k).await
}

/// Why a group failed: the database, or a document the service refuses.
enum GroupError {
    Db(simhash_store::Error),
    Api(ApiError),
}

impl GroupError {
    fn is_unavailable(&self) -> bool {
        matches!(self, GroupError::Db(e) if e.is_unavailable())
    }
}

impl From<simhash_store::Error> for GroupError {
    fn from(e: simhash_store::Error) -> GroupError {
        GroupError::Db(e)
    }
}

impl From<GroupError> for ApiError {
    fn from(e: GroupError) -> ApiError {
        match e {
            GroupError::Db(e) => ApiError::from(e),
            GroupError::Api(e) => e,
        }
    }
}
