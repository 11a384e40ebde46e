//! `Store.disk_usage` and `Store.stats`: what the store takes on disk, and how its documents
//! spread over the block families' groups.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::IntoPy;
use crate::store::PyStore;

#[pymethods]
impl PyStore {
    /// Bytes on disk per column family.
    fn disk_usage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let store = self.store()?;
        let usage = py.detach(|| store.disk_usage()).py()?;
        let dict = PyDict::new(py);
        for (family, bytes) in usage {
            dict.set_item(family, bytes)?;
        }
        Ok(dict)
    }

    /// How the documents spread over the groups of the four block families, and what that
    /// costs a query (one pass over the documents), as a dict:
    ///
    /// - ``documents``; ``format_version``, the store's on-disk format; ``disk_bytes``, the
    ///   bytes of its live SST files (``disk_usage`` summed);
    /// - ``blocks``: per block family, ``family``, ``largest`` (the ``top`` largest groups,
    ///   ``(block value, documents)``), ``max_share`` (the largest group's share of the
    ///   documents), ``shared_block_factor`` (how much more often two documents share the
    ///   block's value than two uniformly random fingerprints: about 1 for those),
    ///   ``expected_scan`` (the entries of the family a new query drawn like the documents
    ///   scans, on average; a group written split counts about 4/4096 of itself) and
    ///   ``split_groups`` (how many groups are written split, format 9);
    /// - ``expected_scan_per_query``: the four together, what a ``k <= 3`` query scans;
    ///   ``uniform_scan_per_query``: the same for uniformly random fingerprints
    ///   (``4 * documents / 65536``); ``scan_vs_uniform``: their ratio.
    #[pyo3(signature = (top = 5))]
    fn stats<'py>(&self, py: Python<'py>, top: usize) -> PyResult<Bound<'py, PyDict>> {
        let store = self.store()?;
        let (groups, usage) = py
            .detach(|| {
                let groups = simhash_store::groups::BlockGroups::of_store(&store)?;
                Ok::<_, simhash_store::Error>((groups, store.disk_usage()?))
            })
            .py()?;
        let blocks = PyList::empty(py);
        for b in 0..simhash_store::BLOCKS {
            let block = PyDict::new(py);
            block.set_item("family", format!("block{b}"))?;
            block.set_item("largest", groups.largest(b, top))?;
            block.set_item("max_share", groups.largest_share(b))?;
            block.set_item("shared_block_factor", groups.shared_block_factor(b))?;
            block.set_item("expected_scan", groups.expected_scan(b))?;
            block.set_item("split_groups", groups.split_groups(b))?;
            blocks.append(block)?;
        }
        let scan = groups.expected_scan_per_query();
        let uniform = groups.uniform_scan_per_query();
        let dict = PyDict::new(py);
        dict.set_item("documents", groups.documents())?;
        dict.set_item("format_version", store.format_version())?;
        dict.set_item("disk_bytes", usage.iter().map(|(_, b)| b).sum::<u64>())?;
        dict.set_item("blocks", blocks)?;
        dict.set_item("expected_scan_per_query", scan)?;
        dict.set_item("uniform_scan_per_query", uniform)?;
        dict.set_item(
            "scan_vs_uniform",
            if uniform > 0.0 { scan / uniform } else { 0.0 },
        )?;
        Ok(dict)
    }
}
