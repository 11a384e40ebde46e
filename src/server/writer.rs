//! The single writer: one thread owns every write to the store and commits group after group.
//!
//! Handlers fingerprint their documents and send them here through a bounded queue; the
//! writer takes everything waiting (up to [`MAX_GROUP_ITEMS`] documents) and commits it as one
//! atomic `insert_batch`, so one `fsync` (with `--durability sync`) serves many clients. A
//! full queue is answered 503 by the handler instead of growing.
//!
//! The writer assigns ids to documents that give none and stages each request's documents,
//! in queue order, in one [`StagedBatch`] of the library: upserts as upserts, insert-if-new
//! as check-then-insert against the store as the earlier documents of the group leave it, so
//! each is decided as if committed alone. The batch holds the store's write lock from the
//! first check to the commit.
//!
//! A full disk: RocksDB refuses every write of its open instance after one failed for want of
//! space, even once space is freed. So the writer answers that write, and every write after
//! it, 503 `disk_full` (with `Retry-After`), moves the readers to a read-only open of the
//! store (queries go on), closes its own instance once no request uses it, and tries every
//! [`RECOVERY_INTERVAL`] to open the store for writing again: once space is freed it succeeds
//! and writes resume, without a restart. Nothing acknowledged is lost: a write is
//! acknowledged after its commit, and the reopened store replays its write-ahead log.

use std::sync::Arc;
use std::time::Duration;

use simhash_store::{Fingerprint, IdAssigner, Match, Sketch, StagedBatch, Store};
use tokio::sync::{mpsc, oneshot};

use super::error::ApiError;
use super::metrics::Metrics;
use super::staging::{self, Decided, Reply, Request, Step};
use super::state::StoreSlot;

/// The most documents committed in one group.
pub const MAX_GROUP_ITEMS: usize = 200_000;

/// How often a writer stopped by a full disk tries to open the store for writing again.
pub const RECOVERY_INTERVAL: Duration = Duration::from_millis(500);

/// Opens the store for writing, as the server did at its start.
pub type Reopen = Box<dyn Fn() -> simhash_store::Result<Store> + Send>;

/// A document ready to store: fingerprinted, its key checked; the id is assigned by the
/// writer when the client gave none.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The id the client gave.
    pub id: Option<u64>,
    /// The external key.
    pub key: Option<String>,
    /// The fingerprint.
    pub fingerprint: Fingerprint,
    /// The text's length, for documents sent as text.
    pub text_len: Option<u64>,
    /// The text's sketch, in a store that keeps sketches.
    pub sketch: Option<Sketch>,
}

/// What insert-if-new did with one document.
#[derive(Debug)]
pub enum IfNew {
    /// Stored under this id.
    Inserted(u64),
    /// Not stored: these documents are within the distance.
    Duplicate(Vec<Match>),
}

/// One request's writes.
#[derive(Debug)]
pub enum WriteOp {
    /// Upserts, in order; the reply holds each document's id.
    Insert {
        /// The documents.
        docs: Vec<Prepared>,
        /// Where the ids go.
        reply: oneshot::Sender<Result<Vec<u64>, ApiError>>,
    },
    /// Check-then-insert of each document, in order.
    InsertIfNew {
        /// The documents.
        docs: Vec<Prepared>,
        /// The distance within which a stored document keeps one out.
        k: u32,
        /// Where the outcomes go.
        reply: oneshot::Sender<Result<Vec<IfNew>, ApiError>>,
    },
    /// A removal; the reply says whether the document was stored.
    Remove {
        /// The document id.
        id: u64,
        /// Where the answer goes.
        reply: oneshot::Sender<Result<bool, ApiError>>,
    },
}

impl WriteOp {
    /// The documents the request writes (a removal counts one).
    pub fn items(&self) -> usize {
        match self {
            WriteOp::Insert { docs, .. } | WriteOp::InsertIfNew { docs, .. } => docs.len(),
            WriteOp::Remove { .. } => 1,
        }
    }

    /// Answers the request with `error`, unwritten.
    fn refuse(self, error: ApiError) {
        match self {
            WriteOp::Insert { reply, .. } => drop(reply.send(Err(error))),
            WriteOp::InsertIfNew { reply, .. } => drop(reply.send(Err(error))),
            WriteOp::Remove { reply, .. } => drop(reply.send(Err(error))),
        }
    }
}

/// The handlers' end of the queue.
#[derive(Debug, Clone)]
pub struct WriterHandle {
    queue: mpsc::Sender<WriteOp>,
}

impl WriterHandle {
    /// Queues `op`.
    ///
    /// # Errors
    /// 503 `overloaded` when the queue is full, 503 `shutting_down` when the writer has
    /// stopped.
    pub fn submit(&self, op: WriteOp, metrics: &Metrics) -> Result<(), ApiError> {
        match self.queue.try_send(op) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(_)) => {
                metrics.rejected_writes();
                Err(ApiError::overloaded())
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Err(ApiError::shutting_down()),
        }
    }

    /// Requests waiting in the queue.
    pub fn queued(&self) -> usize {
        self.queue.max_capacity() - self.queue.capacity()
    }
}

/// Starts the writer thread over the writable store in `slot`, with a queue of `capacity`
/// requests; `reopen` opens the store for writing again after a full disk. The thread ends
/// once every [`WriterHandle`] is dropped and the queue is drained: everything acknowledged
/// is then committed.
///
/// # Errors
/// A read error finding the next free id, or the thread cannot be started.
pub fn start(
    slot: Arc<StoreSlot>,
    reopen: Reopen,
    capacity: usize,
    metrics: Arc<Metrics>,
) -> anyhow::Result<(WriterHandle, std::thread::JoinHandle<()>)> {
    let (handle, rx) = channel(capacity);
    let store = slot.get();
    let ids = IdAssigner::for_store(&store)?;
    let mut writer = Writer {
        store,
        ids,
        metrics,
        recovery: Recovery {
            slot,
            reopen,
            closing: None,
            disk_full: false,
        },
    };
    let thread = std::thread::Builder::new()
        .name("simhash-writer".into())
        .spawn(move || writer.run(rx))?;
    Ok((handle, thread))
}

/// A writer's queue of `capacity` requests: the handlers' end and the writer's.
pub fn channel(capacity: usize) -> (WriterHandle, mpsc::Receiver<WriteOp>) {
    let (queue, rx) = mpsc::channel(capacity.max(1));
    (WriterHandle { queue }, rx)
}

struct Writer {
    /// The store written to; while the disk is full, the read-only open the readers use.
    store: Arc<Store>,
    /// The ids of documents that give none.
    ids: IdAssigner,
    metrics: Arc<Metrics>,
    recovery: Recovery,
}

/// What the writer needs to get past a full disk.
struct Recovery {
    /// Where the handlers find the store.
    slot: Arc<StoreSlot>,
    reopen: Reopen,
    /// The writable open that the disk stopped, until the last request using it ends.
    closing: Option<Arc<Store>>,
    /// Whether a write failed for want of space and the store is not writable again yet.
    disk_full: bool,
}

/// `first` and the operations queued behind it, up to about [`MAX_GROUP_ITEMS`] documents:
/// one group, committed together.
pub fn take_group(first: WriteOp, rx: &mut mpsc::Receiver<WriteOp>) -> Vec<WriteOp> {
    let mut items = first.items();
    let mut ops = vec![first];
    while items < MAX_GROUP_ITEMS {
        match rx.try_recv() {
            Ok(op) => {
                items += op.items();
                ops.push(op);
            }
            Err(_) => break,
        }
    }
    ops
}

impl Writer {
    fn run(&mut self, mut rx: mpsc::Receiver<WriteOp>) {
        while let Some(first) = rx.blocking_recv() {
            if self.recovery.disk_full {
                self.recover(first, &mut rx);
                continue;
            }
            let ops = take_group(first, &mut rx);
            self.commit_ops(ops);
        }
    }

    /// While the disk is full: answers `first` and every request queued 503 `disk_full` and
    /// tries to open the store for writing again, until that succeeds or the queue closes.
    fn recover(&mut self, first: WriteOp, rx: &mut mpsc::Receiver<WriteOp>) {
        first.refuse(ApiError::disk_full());
        loop {
            while let Ok(op) = rx.try_recv() {
                op.refuse(ApiError::disk_full());
            }
            if self.try_reopen() {
                eprintln!("simhash-store serve: the store takes writes again");
                return;
            }
            if rx.is_closed() && rx.is_empty() {
                return;
            }
            std::thread::sleep(RECOVERY_INTERVAL);
        }
    }

    /// One step towards a writable store after a full disk; true once it is writable again.
    fn try_reopen(&mut self) -> bool {
        let recovery = &mut self.recovery;
        if !self.store.is_read_only() {
            // Queries move to a read-only open, so that the stopped instance can close.
            let Ok(reader) = Store::builder().read_only(true).open(self.store.path()) else {
                return false;
            };
            let reader = Arc::new(reader);
            recovery.slot.replace(Arc::clone(&reader));
            recovery.closing = Some(std::mem::replace(&mut self.store, reader));
        }
        if let Some(stopped) = recovery.closing.take() {
            // RocksDB takes its lock once per process: the stopped instance must close
            // before the store opens again.
            match Arc::try_unwrap(stopped) {
                Ok(stopped) => drop(stopped),
                Err(in_use) => {
                    recovery.closing = Some(in_use);
                    return false;
                }
            }
        }
        let store = match (recovery.reopen)() {
            Ok(store) => Arc::new(store),
            Err(_) => return false,
        };
        match IdAssigner::for_store(&store) {
            Ok(ids) => self.ids = ids,
            Err(_) => return false,
        }
        recovery.slot.replace(Arc::clone(&store));
        self.store = store;
        recovery.disk_full = false;
        true
    }

    /// Notes an error answered to a write: a full disk stops the writer (see [`Self::recover`]).
    fn note(&mut self, error: &ApiError) {
        if error.is_disk_full() && !self.recovery.disk_full {
            eprintln!(
                "error: the disk holding the store is full: writes are answered 503 disk_full \
                 until space is freed, queries go on"
            );
            self.recovery.disk_full = true;
        }
    }

    /// Commits `ops` in order: each run of inserts as one group, removals between runs.
    fn commit_ops(&mut self, ops: Vec<WriteOp>) {
        let mut run = Vec::new();
        for op in ops {
            match Step::from(op) {
                Step::Insert(request, reply) => run.push((request, reply)),
                Step::Remove(id, reply) => {
                    self.commit_group(std::mem::take(&mut run));
                    if self.recovery.disk_full {
                        let _ = reply.send(Err(ApiError::disk_full()));
                        continue;
                    }
                    let removed = self.store.remove(id).map_err(ApiError::from);
                    if let Err(e) = &removed {
                        self.note(e);
                    }
                    if removed == Ok(true) {
                        self.metrics.committed(1);
                    }
                    let _ = reply.send(removed);
                }
            }
        }
        self.commit_group(run);
    }

    /// Commits a run of insert requests as one atomic batch. If that fails, each request is
    /// tried alone, so that one request's bad document does not fail the others.
    fn commit_group(&mut self, run: Vec<(Request, Reply)>) {
        if run.is_empty() {
            return;
        }
        let (requests, replies): (Vec<Request>, Vec<Reply>) = run.into_iter().unzip();
        if self.recovery.disk_full {
            for reply in replies {
                reply.send(Err(ApiError::disk_full()));
            }
            return;
        }
        let ids = self.ids;
        let store = Arc::clone(&self.store);
        let committed = self.stage(&store, &requests).and_then(|(batch, decided)| {
            let documents = batch.len() as u64;
            batch.commit()?;
            self.metrics.committed(documents);
            Ok(decided)
        });
        if let Err(e) = &committed {
            // Nothing of the group is stored: the ids it gave out are free again.
            self.ids = ids;
            self.note(e);
        }
        match committed {
            Ok(decided) => {
                for (reply, answer) in replies.into_iter().zip(decided) {
                    reply.send(Ok(answer));
                }
            }
            Err(_) if requests.len() > 1 && !self.recovery.disk_full => {
                for pair in requests.into_iter().zip(replies) {
                    self.commit_group(vec![pair]);
                }
            }
            Err(e) => {
                for reply in replies {
                    reply.send(Err(e.clone()));
                }
            }
        }
    }

    /// Stages every document of `requests` in order, with its id, in one batch of `store`;
    /// the library decides insert-if-new. Returns the batch and each request's answer.
    fn stage<'s>(
        &mut self,
        store: &'s Store,
        requests: &[Request],
    ) -> Result<(StagedBatch<'s>, Vec<Decided>), ApiError> {
        let mut batch = store.staged_batch()?;
        let decided = staging::stage(&mut self.ids, &mut batch, requests)?;
        Ok((batch, decided))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simhash_store::Entry;

    fn doc(id: Option<u64>, key: Option<&str>, fp: u64) -> Prepared {
        Prepared {
            id,
            key: key.map(str::to_owned),
            fingerprint: Fingerprint(fp),
            text_len: None,
            sketch: None,
        }
    }

    fn writer(store: &Arc<Store>) -> Writer {
        let path = store.path().to_path_buf();
        Writer {
            store: Arc::clone(store),
            ids: IdAssigner::for_store(store).expect("next id"),
            metrics: Arc::new(Metrics::default()),
            recovery: Recovery {
                slot: Arc::new(StoreSlot::new(Arc::clone(store))),
                reopen: Box::new(move || Store::open(&path)),
                closing: None,
                disk_full: false,
            },
        }
    }

    /// Commits `ops` as one group of the writer.
    fn commit(w: &mut Writer, ops: Vec<WriteOp>) {
        w.commit_ops(ops);
    }

    #[test]
    fn a_group_decides_as_if_each_request_were_committed_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Arc::new(Store::open(dir.path()).expect("open"));
        store
            .insert_entry(Entry::new(5, Fingerprint(0xf0f0)).with_key("a"))
            .expect("insert");
        let mut w = writer(&store);

        let (r1, mut a1) = oneshot::channel();
        let (r2, mut a2) = oneshot::channel();
        let (r3, mut a3) = oneshot::channel();
        commit(
            &mut w,
            vec![
                // Key "a" keeps id 5 and moves far away from 0xf0f0.
                WriteOp::Insert {
                    docs: vec![
                        doc(None, Some("a"), 0xffff_0000_0000_0000),
                        doc(None, None, 0x1),
                    ],
                    reply: r1,
                },
                // 0xf0f1 is near what document 5 was, not what it is now: inserted. 0xf0f3 is
                // near 0xf0f1, inserted just before in the same request: refused.
                WriteOp::InsertIfNew {
                    docs: vec![doc(None, None, 0xf0f1), doc(None, None, 0xf0f3)],
                    k: 1,
                    reply: r2,
                },
                WriteOp::Remove { id: 6, reply: r3 },
            ],
        );
        assert_eq!(a1.try_recv().expect("reply").expect("ok"), vec![5, 6]);
        let outcomes = a2.try_recv().expect("reply").expect("ok");
        assert!(matches!(outcomes[0], IfNew::Inserted(7)), "{outcomes:?}");
        assert!(
            matches!(&outcomes[1], IfNew::Duplicate(m) if m.len() == 1 && m[0].id == 7 && m[0].distance == 1),
            "{outcomes:?}"
        );
        assert!(a3.try_recv().expect("reply").expect("ok"));
        assert_eq!(
            store.get(5).expect("get"),
            Some(Fingerprint(0xffff_0000_0000_0000))
        );
        assert_eq!(store.id_for_key("a").expect("key"), Some(5));
        assert_eq!(store.get(6).expect("get"), None);
        assert_eq!(store.get(7).expect("get"), Some(Fingerprint(0xf0f1)));
        assert_eq!(store.len(), 2);
    }

    /// A document without an id whose key an earlier request of the group gave to id 3 takes
    /// a new id when its own request gives id 3 to another document, as it would with the
    /// earlier request committed alone before it.
    #[test]
    fn a_key_held_by_an_earlier_request_follows_the_rules_of_a_stored_key() {
        let grouped_dir = tempfile::tempdir().expect("tempdir");
        let alone_dir = tempfile::tempdir().expect("tempdir");
        let mut answers = Vec::new();
        for (dir, grouped) in [(&grouped_dir, true), (&alone_dir, false)] {
            let store = Arc::new(Store::open(dir.path()).expect("open"));
            let mut w = writer(&store);
            let (r1, mut a1) = oneshot::channel();
            let (r2, mut a2) = oneshot::channel();
            let first = WriteOp::Insert {
                docs: vec![doc(Some(3), Some("a"), 0x1)],
                reply: r1,
            };
            let second = WriteOp::Insert {
                docs: vec![doc(None, Some("a"), 0x2), doc(Some(3), None, 0x3)],
                reply: r2,
            };
            if grouped {
                commit(&mut w, vec![first, second]);
            } else {
                commit(&mut w, vec![first]);
                commit(&mut w, vec![second]);
            }
            assert_eq!(a1.try_recv().expect("reply").expect("ok"), vec![3]);
            let ids = a2.try_recv().expect("reply").expect("ok");
            let docs: Vec<_> = store
                .documents()
                .expect("docs")
                .map(|d| d.expect("doc"))
                .collect();
            answers.push((
                ids,
                docs.into_iter()
                    .map(|(id, d)| (id, d.key, d.fingerprint))
                    .collect::<Vec<_>>(),
            ));
        }
        assert_eq!(answers[0], answers[1]);
        assert_eq!(answers[0].0, vec![4, 3]);
    }

    #[test]
    fn a_failing_request_does_not_fail_the_others_of_its_group() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Arc::new(Store::open(dir.path()).expect("open"));
        let mut w = writer(&store);
        let (r1, mut a1) = oneshot::channel();
        let (r2, mut a2) = oneshot::channel();
        let too_long = "k".repeat(simhash_store::MAX_EXTERNAL_KEY_LEN + 1);
        commit(
            &mut w,
            vec![
                WriteOp::Insert {
                    docs: vec![doc(Some(1), None, 0x1)],
                    reply: r1,
                },
                WriteOp::Insert {
                    docs: vec![doc(Some(2), Some(&too_long), 0x2)],
                    reply: r2,
                },
            ],
        );
        assert_eq!(a1.try_recv().expect("reply").expect("ok"), vec![1]);
        assert!(a2.try_recv().expect("reply").is_err());
        assert_eq!(store.len(), 1);
    }
}
