//! The query pool: a fixed set of threads (`--threads`) that answers the large query batches,
//! sharing them fairly.
//!
//! A batch is split into slices of [`SLICE`] queries, and the threads take one slice at a
//! time from the batches in flight, round-robin: a batch that arrives while others run gets
//! its share of the cores at once instead of waiting behind their whole batches, so every
//! batch in flight advances at the same rate and a small one ends soon. (A FIFO queue, or
//! rayon's work stealing, runs batches one after another: latency then depends on the
//! position in the queue.)
//!
//! A batch whose client has gone (the request timed out or the connection closed) skips its
//! remaining slices. A query that panics fails its batch (the client gets a 500), not the
//! thread.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use simhash_store::{Fingerprint, Match, Store};
use tokio::sync::oneshot;

/// Queries in one slice: about 1 ms of work at k = 3, short enough that a new batch waits
/// for at most one slice per thread before it runs.
pub const SLICE: usize = 32;

type Answer = simhash_store::Result<Vec<Vec<Match>>>;

/// One batch in flight.
struct Batch {
    store: Arc<Store>,
    fps: Vec<Fingerprint>,
    k: u32,
    /// The next slice to hand out (changed only under the queue's lock).
    next: AtomicUsize,
    /// Slices not yet answered; the thread that answers the last one sends the answer.
    remaining: AtomicUsize,
    /// Each slice's answer, by slice.
    answers: Vec<Mutex<Option<Answer>>>,
    reply: Mutex<Option<oneshot::Sender<Answer>>>,
}

impl Batch {
    fn slices(&self) -> usize {
        self.answers.len()
    }

    fn abandoned(&self) -> bool {
        lock(&self.reply).as_ref().is_none_or(|tx| tx.is_closed())
    }

    /// Answers slice `i` (nothing when the client has gone); sends the batch's answer after
    /// the last slice.
    fn run(&self, i: usize) {
        let answer = if self.abandoned() {
            Ok(Vec::new())
        } else {
            let start = i * SLICE;
            let end = (start + SLICE).min(self.fps.len());
            self.fps[start..end]
                .iter()
                .map(|&fp| self.store.query(fp, self.k))
                .collect()
        };
        *lock(&self.answers[i]) = Some(answer);
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.finish();
        }
    }

    fn finish(&self) {
        let Some(tx) = lock(&self.reply).take() else {
            return;
        };
        let answer = self
            .answers
            .iter()
            .filter_map(|slot| lock(slot).take())
            .try_fold(Vec::with_capacity(self.fps.len()), |mut lists, part| {
                lists.extend(part?);
                Ok(lists)
            });
        let _ = tx.send(answer);
    }
}

struct Queue {
    batches: VecDeque<Arc<Batch>>,
    closed: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The pool; its threads end when it is dropped.
pub struct QueryPool {
    shared: Arc<Shared>,
}

impl QueryPool {
    /// Starts `threads` (at least one) threads.
    ///
    /// # Errors
    /// A thread cannot be started.
    pub fn start(threads: usize) -> std::io::Result<QueryPool> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                batches: VecDeque::new(),
                closed: false,
            }),
            ready: Condvar::new(),
        });
        for i in 0..threads.max(1) {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(format!("simhash-query-{i}"))
                .spawn(move || work(&shared))?;
        }
        Ok(QueryPool { shared })
    }

    /// Answers `fps` at distance `k`, in order, on the pool's threads: `None` when a query
    /// panicked or the pool has stopped, else the answers or the first error of any query.
    pub async fn query(&self, store: Arc<Store>, fps: Vec<Fingerprint>, k: u32) -> Option<Answer> {
        if fps.is_empty() {
            return Some(Ok(Vec::new()));
        }
        let slices = fps.len().div_ceil(SLICE);
        let (tx, rx) = oneshot::channel();
        let batch = Arc::new(Batch {
            store,
            fps,
            k,
            next: AtomicUsize::new(0),
            remaining: AtomicUsize::new(slices),
            answers: (0..slices).map(|_| Mutex::new(None)).collect(),
            reply: Mutex::new(Some(tx)),
        });
        lock(&self.shared.queue).batches.push_back(batch);
        self.shared.ready.notify_all();
        rx.await.ok()
    }
}

impl Drop for QueryPool {
    fn drop(&mut self) {
        lock(&self.shared.queue).closed = true;
        self.shared.ready.notify_all();
    }
}

/// A pool thread: takes the next slice of the batch at the front of the queue, puts the
/// batch back at the end if it has more, answers the slice.
fn work(shared: &Shared) {
    loop {
        let (batch, slice) = {
            let mut queue = lock(&shared.queue);
            let batch = loop {
                if let Some(batch) = queue.batches.pop_front() {
                    break batch;
                }
                if queue.closed {
                    return;
                }
                queue = shared
                    .ready
                    .wait(queue)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            };
            let slice = batch.next.fetch_add(1, Ordering::Relaxed);
            if slice + 1 < batch.slices() {
                queue.batches.push_back(Arc::clone(&batch));
            }
            (batch, slice)
        };
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| batch.run(slice)));
        if ran.is_err() {
            eprintln!("error: a query of a batch panicked: the batch fails");
            // Its client's answer is dropped: the handler answers 500.
            drop(lock(&batch.reply).take());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_answered_in_order_and_equal_single_queries() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Arc::new(Store::open(dir.path()).expect("open"));
        for id in 0..500u64 {
            store
                .insert(id, Fingerprint(id.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
                .expect("insert");
        }
        let pool = QueryPool::start(3).expect("pool");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let fps: Vec<Fingerprint> = (0..200u64)
            .map(|i| Fingerprint(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i % 4)))
            .collect();
        let (a, b, empty) = runtime.block_on(async {
            tokio::join!(
                pool.query(Arc::clone(&store), fps.clone(), 3),
                pool.query(Arc::clone(&store), fps[..7].to_vec(), 2),
                pool.query(Arc::clone(&store), Vec::new(), 3),
            )
        });
        let a = a.expect("running").expect("batch");
        let b = b.expect("running").expect("batch");
        assert_eq!(a.len(), fps.len());
        for (fp, got) in fps.iter().zip(&a) {
            assert_eq!(got, &store.query(*fp, 3).expect("query"));
        }
        for (fp, got) in fps[..7].iter().zip(&b) {
            assert_eq!(got, &store.query(*fp, 2).expect("query"));
        }
        assert!(empty.expect("running").expect("empty").is_empty());
    }
}
