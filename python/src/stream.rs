//! Results streamed to a Python iterator from a scan on a background thread: batches through
//! a bounded channel (the scan waits when Python falls behind), the interpreter released
//! while waiting, Ctrl-C checked every 100 ms, and the scan stopped when the iterator is
//! closed, dropped or interrupted.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use simhash_store::Error;

use crate::errors::to_py;

/// Items travel in batches of this many.
const BATCH: usize = 4096;
/// Batches in flight: the scan waits when the consumer is this far behind.
const IN_FLIGHT: usize = 16;
const POLL: Duration = Duration::from_millis(100);

struct State<T> {
    buf: VecDeque<T>,
    rx: Option<Receiver<Vec<T>>>,
    handle: Option<JoinHandle<Result<(), Error>>>,
}

/// The Rust side of a streaming Python iterator.
pub(crate) struct Stream<T> {
    state: Mutex<State<T>>,
    stop: Arc<AtomicBool>,
}

/// What a scan calls with each item; an error means the consumer has gone.
pub(crate) type Emit<'a, T> = dyn FnMut(T) -> Result<(), Error> + 'a;

impl<T: Send + 'static> Stream<T> {
    /// Starts `scan(stop, emit)` on a thread. `scan` must return soon after `stop` is set,
    /// and pass on an error of `emit`.
    pub(crate) fn start<F>(scan: F) -> Stream<T>
    where
        F: FnOnce(&AtomicBool, &mut Emit<'_, T>) -> Result<(), Error> + Send + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = sync_channel::<Vec<T>>(IN_FLIGHT);
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let mut out = Vec::with_capacity(BATCH);
            let mut emit = |item: T| {
                out.push(item);
                if out.len() >= BATCH {
                    let full = std::mem::replace(&mut out, Vec::with_capacity(BATCH));
                    tx.send(full).map_err(|_| Error::Cancelled)?;
                }
                Ok(())
            };
            scan(&flag, &mut emit)?;
            if !out.is_empty() {
                tx.send(out).map_err(|_| Error::Cancelled)?;
            }
            Ok(())
        });
        Stream {
            state: Mutex::new(State {
                buf: VecDeque::new(),
                rx: Some(rx),
                handle: Some(handle),
            }),
            stop,
        }
    }

    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, State<T>>> {
        self.state
            .lock()
            .map_err(|_| PyValueError::new_err("the iterator's lock was poisoned"))
    }

    /// Waits for the scan to end; raises its error (not a cancellation).
    fn finish(state: &mut State<T>, py: Python<'_>) -> PyResult<()> {
        state.rx = None;
        if let Some(h) = state.handle.take() {
            match py.detach(|| h.join()) {
                Ok(Ok(())) | Ok(Err(Error::Cancelled)) => {}
                Ok(Err(e)) => return Err(to_py(e)),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Ok(())
    }

    /// The next item, or `None` at the end.
    pub(crate) fn next(&self, py: Python<'_>) -> PyResult<Option<T>> {
        let mut state = self.lock()?;
        loop {
            if let Some(item) = state.buf.pop_front() {
                return Ok(Some(item));
            }
            let Some(rx) = state.rx.take() else {
                return Ok(None);
            };
            // The receiver moves into the detached closure and back (it is not `Sync`).
            let (received, rx) = py.detach(move || (rx.recv_timeout(POLL), rx));
            state.rx = Some(rx);
            match received {
                Ok(batch) => state.buf.extend(batch),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        self.stop.store(true, Ordering::Relaxed);
                        let _ = Self::finish(&mut state, py);
                        return Err(e);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    Self::finish(&mut state, py)?;
                    return Ok(None);
                }
            }
        }
    }

    /// Stops the scan; the iterator then ends.
    pub(crate) fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.stop.store(true, Ordering::Relaxed);
        let mut state = self.lock()?;
        state.buf.clear();
        Self::finish(&mut state, py)
    }
}

impl<T> Drop for Stream<T> {
    /// Stops the scan and waits for it (it needs no interpreter lock, and its next send fails
    /// once the receiver is gone): an iterator dropped by an exception, such as Ctrl-C raised
    /// between two items, must not leave a scan running inside RocksDB while the process
    /// exits, which aborted it ("pthread lock: Invalid argument").
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Ok(state) = self.state.get_mut() {
            state.rx = None;
            if let Some(handle) = state.handle.take() {
                let _ = handle.join();
            }
        }
    }
}
