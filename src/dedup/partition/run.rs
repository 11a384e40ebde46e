//! The pairs of the rows of one task.

use super::*;

/// What [`TaskPairs::run`] compared in one task.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TaskWork {
    /// Pairs of documents looked at.
    pub comparisons: u64,
}

/// The pairs of the rows of one task: the crate's [`PairKernel`] (the code of
/// [`Store::pairs`]) over the task's sides, each pair reported by exactly one task of a
/// [`PartitionPlan`] for the same `k`.
#[derive(Debug, Clone)]
pub struct TaskPairs {
    kernels: Vec<PairKernel>,
    sub_masks: [Vec<u64>; BLOCKS],
}

impl TaskPairs {
    /// The runner for distance `k`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `k` is over 64.
    pub fn new(k: u32) -> Result<TaskPairs> {
        crate::distance::checked(k)?;
        Ok(TaskPairs {
            kernels: (0..BLOCKS)
                .map(|f| PairKernel::new(k, f))
                .collect::<Result<_>>()?,
            sub_masks: std::array::from_fn(|f| sub_block_masks(k, f)),
        })
    }

    /// Calls `emit` with every pair that task `task` reports, from its rows (`side`,
    /// `fingerprint`, `id`, the same length, in any order).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a task key no plan makes, columns of different lengths,
    /// or one id given to two documents within `k` of each other.
    pub fn run(
        &self,
        task: i64,
        side: &[u8],
        fingerprint: &[u64],
        id: &[u64],
        emit: &mut impl FnMut(Pair),
    ) -> Result<TaskWork> {
        if side.len() != fingerprint.len() || side.len() != id.len() {
            return Err(Error::InvalidArgument(format!(
                "a task's columns differ in length: {} sides, {} fingerprints, {} ids",
                side.len(),
                fingerprint.len(),
                id.len()
            )));
        }
        let task = Task::from_key(task)?;
        let family = task.group() / VALUES;
        let kernel = &self.kernels[family];
        let (mut a_new, mut a_old, mut b_new, mut b_old) = (vec![], vec![], vec![], vec![]);
        for ((&s, &fp), &id) in side.iter().zip(fingerprint).zip(id) {
            let doc = (fp, id);
            match (s & SIDE_B != 0, s & OLD != 0) {
                (false, false) => a_new.push(doc),
                (false, true) => a_old.push(doc),
                (true, false) => b_new.push(doc),
                (true, true) => b_old.push(doc),
            }
        }
        // In a sub-block task, a pair is reported only if this is its first equal sub-block.
        let sub_block = match task {
            Task::SubBlock { t, .. } => {
                let fps: HashMap<u64, u64> = id
                    .iter()
                    .copied()
                    .zip(fingerprint.iter().copied())
                    .collect();
                Some((t as usize, fps))
            }
            _ => None,
        };
        let masks = &self.sub_masks[family];
        let mut duplicate = None;
        let mut sink = |p: Pair| {
            if p.a == p.b {
                duplicate = Some(p.a);
                return ControlFlow::Break(());
            }
            if let Some((t, fps)) = &sub_block {
                let (x, y) = (fps.get(&p.a), fps.get(&p.b));
                let first = x
                    .zip(y)
                    .and_then(|(&x, &y)| first_equal_sub_block(masks, x, y));
                if first != Some(*t) {
                    return ControlFlow::Continue(());
                }
            }
            emit(p);
            ControlFlow::Continue(())
        };
        let with_self = match task {
            Task::Whole { .. } | Task::SubBlock { .. } => true,
            Task::Home { x, y, .. } => x == y,
            Task::Guest { .. } => false,
        };
        let (an, ao, bn, bo) = (
            a_new.len() as u64,
            a_old.len() as u64,
            b_new.len() as u64,
            b_old.len() as u64,
        );
        // Pairs of two old documents are never compared.
        let mut comparisons = (an + ao) * bn + an * bo;
        let _ = (|| {
            if with_self {
                comparisons += bn * bn.saturating_sub(1) / 2 + bn * bo;
                kernel.self_pairs(&b_new, &mut sink)?;
                kernel.cross_pairs(&b_new, &b_old, &mut sink)?;
            }
            kernel.cross_pairs(&a_new, &b_new, &mut sink)?;
            kernel.cross_pairs(&a_new, &b_old, &mut sink)?;
            kernel.cross_pairs(&a_old, &b_new, &mut sink)
        })();
        if let Some(id) = duplicate {
            return Err(Error::InvalidArgument(format!(
                "id {id} is given to more than one document: ids must be unique"
            )));
        }
        Ok(TaskWork { comparisons })
    }

    /// Runs every task of rows sorted by task (the rows of one partition of the shuffle, or a
    /// part of it), calling `emit` with their pairs and `done` with each task's work. Unless
    /// `last`, the final task's rows may continue in the next part, so it is left: returns
    /// the number of rows consumed.
    ///
    /// # Errors
    /// As [`TaskPairs::run`], and when the rows are not sorted by task.
    pub fn run_sorted(
        &self,
        rows: RowsRef<'_>,
        last: bool,
        emit: &mut impl FnMut(Pair),
        done: &mut impl FnMut(TaskWork),
    ) -> Result<usize> {
        let RowsRef {
            task,
            side,
            fingerprint,
            id,
        } = rows;
        let n = task.len();
        if side.len() != n || fingerprint.len() != n || id.len() != n {
            return Err(Error::InvalidArgument(format!(
                "the row columns differ in length: {n} tasks, {} sides, {} fingerprints, {} ids",
                side.len(),
                fingerprint.len(),
                id.len()
            )));
        }
        let mut start = 0;
        while start < n {
            let t = task[start];
            let end = start + task[start..].iter().take_while(|&&x| x == t).count();
            if end < n && task[end] < t {
                return Err(Error::InvalidArgument(format!(
                    "rows are not sorted by task (row {end} after row {})",
                    end - 1
                )));
            }
            if end == n && !last {
                break;
            }
            let r = start..end;
            let work = self.run(t, &side[r.clone()], &fingerprint[r.clone()], &id[r], emit)?;
            done(work);
            start = end;
        }
        Ok(start)
    }
}

/// Borrowed row columns, for [`TaskPairs::run_sorted`].
#[derive(Debug, Clone, Copy)]
pub struct RowsRef<'a> {
    /// Task keys, ascending.
    pub task: &'a [i64],
    /// [`SIDE_B`] and [`OLD`] bits.
    pub side: &'a [u8],
    /// Fingerprints.
    pub fingerprint: &'a [u64],
    /// Ids.
    pub id: &'a [u64],
}
