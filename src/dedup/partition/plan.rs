//! The partition plan: which tasks each document takes part in, from the number of
//! documents per group, and its rows.

use super::*;

/// Rows of exploded documents: `(task, side, fingerprint, id)`, column by column.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TaskRows {
    /// The task key (see the module documentation).
    pub task: Vec<i64>,
    /// [`SIDE_B`] and [`OLD`] bits.
    pub side: Vec<u8>,
    /// The document's fingerprint.
    pub fingerprint: Vec<u64>,
    /// The document's id.
    pub id: Vec<u64>,
}

impl TaskRows {
    fn push(&mut self, task: Task, side: u8, fp: u64, id: u64) {
        self.task.push(task.key());
        self.side.push(side);
        self.fingerprint.push(fp);
        self.id.push(id);
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.task.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.task.is_empty()
    }
}

/// Which tasks each document takes part in, made from the number of documents per group.
///
/// ```
/// use std::collections::BTreeMap;
/// use simhash_store::dedup::partition::{add_group_counts, PartitionPlan, TaskPairs, TaskRows, GROUPS};
///
/// let docs = [(1u64, 0x0123_4567_89ab_cdefu64), (2, 0x0123_4567_89ab_cdee), (3, 42)];
/// let fps: Vec<u64> = docs.iter().map(|d| d.1).collect();
/// let mut counts = vec![0u64; GROUPS];
/// add_group_counts(&mut counts, &fps)?;
/// let plan = PartitionPlan::new(&counts, 3, 20_000)?;
/// let mut rows = TaskRows::default();
/// for &(id, fp) in &docs {
///     plan.explode(id, fp, false, &mut rows)?;
/// }
/// // The engine shuffles the rows by task; here, one map.
/// let mut tasks: BTreeMap<i64, Vec<(u8, u64, u64)>> = BTreeMap::new();
/// for i in 0..rows.len() {
///     tasks.entry(rows.task[i]).or_default().push((rows.side[i], rows.fingerprint[i], rows.id[i]));
/// }
/// let runner = TaskPairs::new(3)?;
/// let mut pairs = Vec::new();
/// for (task, rows) in &tasks {
///     let (side, fp, id): (Vec<u8>, Vec<u64>, Vec<u64>) = rows.iter().fold(
///         (vec![], vec![], vec![]),
///         |(mut s, mut f, mut d), r| { s.push(r.0); f.push(r.1); d.push(r.2); (s, f, d) },
///     );
///     runner.run(*task, &side, &fp, &id, &mut |p| pairs.push(p))?;
/// }
/// assert_eq!(pairs, [simhash_store::Pair { a: 1, b: 2, distance: 1 }]);
/// # Ok::<_, simhash_store::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct PartitionPlan {
    pub(super) k: u32,
    layouts: Vec<Layout>,
    masks: &'static [u16],
    sub_masks: [Vec<u64>; BLOCKS],
    pub(super) old: Option<OldNeeded>,
}

impl PartitionPlan {
    /// The plan for documents whose number per group is `counts` ([`GROUPS`] entries, as
    /// [`add_group_counts`] makes them), for distance `k`, with chunks of about `chunk_size`
    /// documents.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `k` is over 64, `chunk_size` is 0 or `counts` does not
    /// have [`GROUPS`] entries.
    pub fn new(counts: &[u64], k: u32, chunk_size: u64) -> Result<PartitionPlan> {
        PartitionPlan::with_rule(counts, k, chunk_size, SplitRule::Cheaper)
    }

    /// The plan for `dedup_against`: `counts` counts all documents, old and new, and
    /// `new_counts` the new ones only. Old documents are sent only where they can meet a new
    /// one.
    ///
    /// # Errors
    /// As [`PartitionPlan::new`], and when `new_counts` does not have [`GROUPS`] entries.
    pub fn against(
        counts: &[u64],
        new_counts: &[u64],
        k: u32,
        chunk_size: u64,
    ) -> Result<PartitionPlan> {
        let mut plan = PartitionPlan::new(counts, k, chunk_size)?;
        check_table(new_counts, "new_counts")?;
        // Guests of every group, empty or not: new documents reach old ones there too.
        let new_guests = guest_counts(new_counts, plan.masks, false);
        plan.old = Some(OldNeeded {
            home: (0..GROUPS)
                .map(|g| new_counts[g] > 0 || new_guests[g] > 0)
                .collect(),
            guest: new_counts.iter().map(|&c| c > 0).collect(),
        });
        Ok(plan)
    }

    pub(super) fn with_rule(
        counts: &[u64],
        k: u32,
        chunk_size: u64,
        rule: SplitRule,
    ) -> Result<PartitionPlan> {
        crate::distance::checked(k)?;
        check_table(counts, "counts")?;
        if chunk_size == 0 {
            return Err(Error::InvalidArgument(
                "chunk_size must be at least 1".into(),
            ));
        }
        let masks = pigeonhole::neighbour_masks(radius(k));
        let guests = guest_counts(counts, masks, true);
        let can_split = k < MAX_SUB_BLOCKS;
        let chunks = |c: u64| c.div_ceil(chunk_size).min(MAX_CHUNKS - 1);
        let layouts = counts
            .iter()
            .zip(&guests)
            .map(|(&c, &gc)| {
                if c == 0 {
                    return Layout::Empty;
                }
                let (home, guest) = (chunks(c), chunks(gc));
                if home == 1 && guest <= 1 {
                    return Layout::Whole;
                }
                let chunked_rows = c * (home + guest) + gc * home;
                let split_rows = (c + gc) * u64::from(k + 1);
                let split = can_split
                    && match rule {
                        SplitRule::Cheaper => split_rows < chunked_rows,
                        #[cfg(test)]
                        SplitRule::NeverSubBlocks => false,
                        #[cfg(test)]
                        SplitRule::AlwaysSubBlocks => true,
                    };
                if split {
                    Layout::SubBlocks
                } else {
                    Layout::Chunked { home, guest }
                }
            })
            .collect();
        Ok(PartitionPlan {
            k,
            layouts,
            masks,
            sub_masks: std::array::from_fn(|f| sub_block_masks(k, f)),
            old: None,
        })
    }

    /// The distance planned for.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Groups split into chunks and groups split on sub-blocks.
    pub fn split_groups(&self) -> (usize, usize) {
        let chunked = self
            .layouts
            .iter()
            .filter(|l| matches!(l, Layout::Chunked { .. }))
            .count();
        let sub = self
            .layouts
            .iter()
            .filter(|l| matches!(l, Layout::SubBlocks))
            .count();
        (chunked, sub)
    }

    /// Appends the rows of document `id` with fingerprint `fp` to `rows`: per block family,
    /// one row per task of its group it takes part in, and for `k >= 4` its copies sent as a
    /// guest to the non-empty higher groups within `k / 4` bits. `old` marks an old document
    /// of a plan made by [`PartitionPlan::against`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the plan counts no document in one of the document's
    /// groups (the plan was made for other documents), or `old` is set on a plan not made by
    /// [`PartitionPlan::against`].
    pub fn explode(&self, id: u64, fp: u64, old: bool, rows: &mut TaskRows) -> Result<()> {
        let old_needed = match (&self.old, old) {
            (_, false) => None,
            (Some(needed), true) => Some(needed),
            (None, true) => {
                return Err(Error::InvalidArgument(
                    "an old document needs a plan made by PartitionPlan::against".into(),
                ))
            }
        };
        let flag = if old { OLD } else { 0 };
        for family in 0..BLOCKS {
            let v = block(fp, family);
            let g = family * VALUES + v;
            if old_needed.is_none_or(|n| n.home[g]) {
                self.explode_home(g, family, id, fp, flag, rows)?;
            }
            for &m in self.masks {
                let w = v ^ m as usize;
                if w <= v {
                    continue;
                }
                let gw = family * VALUES + w;
                if old_needed.is_none_or(|n| n.guest[gw]) {
                    self.explode_guest(gw, family, id, fp, flag, rows);
                }
            }
        }
        Ok(())
    }

    fn explode_home(
        &self,
        g: usize,
        family: usize,
        id: u64,
        fp: u64,
        flag: u8,
        rows: &mut TaskRows,
    ) -> Result<()> {
        match self.layouts[g] {
            Layout::Empty => {
                return Err(Error::InvalidArgument(format!(
                    "document {id} is in block group {g}, which the partition plan counts as \
                     empty: make the plan from the counts of the same documents"
                )))
            }
            Layout::Whole => rows.push(Task::Whole { group: g }, SIDE_B | flag, fp, id),
            Layout::Chunked { home, guest } => {
                let j = mix(id ^ ((g as u64) << 32)) % home;
                for l in 0..home {
                    let side = if j < l { 0 } else { SIDE_B };
                    let (x, y) = (j.min(l), j.max(l));
                    rows.push(Task::Home { group: g, x, y }, side | flag, fp, id);
                }
                for x in 0..guest {
                    rows.push(Task::Guest { group: g, x, y: j }, SIDE_B | flag, fp, id);
                }
            }
            Layout::SubBlocks => self.explode_sub_blocks(g, family, SIDE_B | flag, fp, id, rows),
        }
        Ok(())
    }

    fn explode_guest(
        &self,
        gw: usize,
        family: usize,
        id: u64,
        fp: u64,
        flag: u8,
        rows: &mut TaskRows,
    ) {
        match self.layouts[gw] {
            Layout::Empty => {}
            Layout::Whole => rows.push(Task::Whole { group: gw }, flag, fp, id),
            Layout::Chunked { home, guest } => {
                let x = mix(id ^ ((gw as u64) << 32) ^ 0x5bd1_e995) % guest.max(1);
                for y in 0..home {
                    rows.push(Task::Guest { group: gw, x, y }, flag, fp, id);
                }
            }
            Layout::SubBlocks => self.explode_sub_blocks(gw, family, flag, fp, id, rows),
        }
    }

    fn explode_sub_blocks(
        &self,
        group: usize,
        family: usize,
        side: u8,
        fp: u64,
        id: u64,
        rows: &mut TaskRows,
    ) {
        for (t, &m) in self.sub_masks[family].iter().enumerate() {
            let bucket = mix(fp & m) & BUCKET_MASK;
            let t = t as u32;
            rows.push(Task::SubBlock { group, t, bucket }, side, fp, id);
        }
    }
}
