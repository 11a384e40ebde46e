//! Long calls run on a worker thread with the interpreter released, while the calling thread
//! checks for signals every 100 ms: Ctrl-C raises `KeyboardInterrupt` within a fraction of a
//! second, after the work has been told to stop (through the flag it is given) and has
//! stopped, so nothing is left running and the store is left as the work leaves it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use pyo3::prelude::*;

const POLL: Duration = Duration::from_millis(100);

/// Runs `work(stop)` on a scoped thread; on a signal (Ctrl-C), sets `stop`, waits for `work`
/// to return and raises the signal's exception. `work` must return soon after `stop` is set.
pub(crate) fn run<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(&AtomicBool) -> T + Send,
{
    run_with_ticks(py, work, |_| Ok(()))
}

/// [`run`], calling `tick` on the calling thread (interpreter attached) every 100 ms and once
/// at the end, for progress reports; an error of `tick` stops the work like a signal.
pub(crate) fn run_with_ticks<T, F, K>(py: Python<'_>, work: F, mut tick: K) -> PyResult<T>
where
    T: Send,
    F: FnOnce(&AtomicBool) -> T + Send,
    K: FnMut(Python<'_>) -> PyResult<()>,
{
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<()>();
        let stop_ref = &stop;
        let handle = s.spawn(move || {
            let out = work(stop_ref);
            let _ = tx.send(());
            out
        });
        let mut interrupted = None;
        let mut rx = rx;
        loop {
            // The receiver moves into the detached closure and back (it is not `Sync`).
            let (done, back) = py.detach(move || {
                let done = match rx.recv_timeout(POLL) {
                    Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => true,
                    Err(mpsc::RecvTimeoutError::Timeout) => false,
                };
                (done, rx)
            });
            rx = back;
            if done {
                break;
            }
            if let Err(e) = py.check_signals().and_then(|()| tick(py)) {
                stop.store(true, Ordering::Relaxed);
                interrupted = Some(e);
                // Wait for the work to notice, with the interpreter released.
                py.detach(move || {
                    let _ = rx.recv();
                });
                break;
            }
        }
        let out = py.detach(|| handle.join());
        if interrupted.is_none() {
            interrupted = tick(py).err();
        }
        match (interrupted, out) {
            (Some(e), _) => Err(e),
            (None, Ok(v)) => Ok(v),
            (None, Err(panic)) => std::panic::resume_unwind(panic),
        }
    })
}
