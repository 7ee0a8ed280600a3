//! The in-memory aggregator: records become per-cell counts, cells become JSONL on flush.
//!
//! A dispatch cell is `(structure_key, chosen, hw)` and a miss cell `(wanted, fallback, hw)`,
//! so a long run collapses into a histogram instead of one line per launch. Each record adds its
//! own `count` (a zero is taken as one), which lets pre-aggregated records, such as those read
//! back from an earlier flush, merge into the same cells.
//!
//! Recording must never break a launch: it cannot fail, does not panic (a poisoned lock is
//! recovered, not propagated), and never blocks on I/O. Flushing is the only fallible operation
//! and returns `io::Result` to whoever chose to flush.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use super::aggregate::{DispatchCell, MissCell, ReasonCounts};
use super::cells::{CellTable, Counter};
use super::handle::{DispatchHandle, MissHandle};
use super::keys::{CellHasher, DispatchKeyRef, FlatDispatchKey, Interners, MissKeyRef};
use super::layout;
use super::record::{
    DeclineLine, DeclineRecord, DispatchLine, DispatchRecord, FaultRecord, HwStamp, ImplId,
    MissLine, MissRecord, OverflowRecord, StructureKey, TELEMETRY_SCHEMA,
};
use crate::atomic_write::Durability;

/// File that [`TelemetrySink::flush_all`] writes dispatch cells to, one JSON object per line.
pub const DISPATCHES_FILE: &str = "dispatches.jsonl";
/// File that [`TelemetrySink::flush_all`] writes miss cells to, one JSON object per line.
pub const MISSES_FILE: &str = "misses.jsonl";
/// File that [`TelemetrySink::flush_all`] writes declined launches to, one JSON object per
/// line.
pub const DECLINES_FILE: &str = "declines.jsonl";
/// File that [`TelemetrySink::flush_all`] writes faulted launches to, one JSON object per line.
pub const FAULTS_FILE: &str = "faults.jsonl";
/// File that [`TelemetrySink::flush_all`] writes the [`OverflowRecord`] to.
pub const OVERFLOW_FILE: &str = "overflow.json";

/// How a [`TelemetrySink`] bounds its memory and how hard its flush insists on the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SinkConfig {
    /// Most dispatch cells, and separately most miss cells, the sink holds. Records that would
    /// need a further cell are counted in [`TelemetrySink::overflow`] instead.
    pub max_cells: usize,
    /// fsync each file before it replaces the old one and the directory after. Without it a
    /// flush still never leaves a torn file when the process dies, but may after power loss.
    pub fsync: bool,
}

impl SinkConfig {
    /// 65 536 cells of each kind, fsync on.
    pub const DEFAULT: Self = Self {
        max_cells: 65_536,
        fsync: true,
    };

    /// Sets the cell limit (per kind).
    #[must_use]
    pub fn with_max_cells(mut self, max_cells: usize) -> Self {
        self.max_cells = max_cells;
        self
    }

    /// Turns fsync on or off.
    #[must_use]
    pub fn with_fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
    }
}

impl Default for SinkConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What one [`TelemetrySink::flush_all`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FlushStats {
    /// Lines in `dispatches.jsonl`.
    pub dispatch_lines: usize,
    /// Lines in `misses.jsonl`.
    pub miss_lines: usize,
    /// Lines in `declines.jsonl`.
    pub decline_lines: usize,
    /// Lines in `faults.jsonl`.
    pub fault_lines: usize,
    /// The content of `overflow.json`.
    pub overflow: OverflowRecord,
}

/// Aggregates dispatch, miss, decline and fault records into bounded per-cell counts and flushes
/// them as JSONL.
///
/// Every method takes `&self`; share one sink as `Arc<TelemetrySink>` between devices and
/// threads. For the per-launch path, make a [`DispatchHandle`] once per bound kernel with
/// [`TelemetrySink::dispatch_handle`]: recording through it is a single atomic add.
pub struct TelemetrySink {
    config: SinkConfig,
    hasher: CellHasher,
    interners: Interners,
    dispatches: CellTable<DispatchCell>,
    misses: CellTable<MissCell>,
    dispatch_overflow: Arc<Counter>,
    miss_overflow: Arc<Counter>,
    decline_overflow: Arc<Counter>,
    // Serializes flushes from one sink so they commit in the order they snapshot.
    flush_lock: Mutex<()>,
}

impl Default for TelemetrySink {
    fn default() -> Self {
        Self::new()
    }
}

// Sizes, not contents: a sink may hold 100 k cells.
impl fmt::Debug for TelemetrySink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TelemetrySink")
            .field("config", &self.config)
            .field("dispatch_cells", &self.dispatch_cell_count())
            .field("miss_cells", &self.miss_cell_count())
            .field("overflow", &self.overflow())
            .finish_non_exhaustive()
    }
}

impl TelemetrySink {
    /// An empty sink with [`SinkConfig::DEFAULT`].
    pub fn new() -> Self {
        Self::with_config(SinkConfig::DEFAULT)
    }

    /// An empty sink with `config`.
    pub fn with_config(config: SinkConfig) -> Self {
        Self {
            config,
            hasher: CellHasher::default(),
            interners: Interners::default(),
            dispatches: CellTable::new(config.max_cells),
            misses: CellTable::new(config.max_cells),
            dispatch_overflow: Arc::new(Counter::default()),
            miss_overflow: Arc::new(Counter::default()),
            decline_overflow: Arc::new(Counter::default()),
            flush_lock: Mutex::new(()),
        }
    }

    /// The configuration the sink was made with.
    pub fn config(&self) -> SinkConfig {
        self.config
    }

    /// Adds `record.count` (at least 1) to the `(structure_key, chosen, hw)` cell and, when the
    /// record carries candidates, makes them the cell's candidates. Never fails; when the sink
    /// is full and the cell is new, the count goes to [`Self::overflow`].
    ///
    /// Repeats are cheap at any number of cells: the key is hashed once, and the cell found
    /// in the shared table without a lock, by comparing the record's key with the cell's
    /// flattened copy of it (one buffer, every field and byte). Only a new cell takes a lock.
    pub fn record_dispatch(&self, record: &DispatchRecord) {
        let key = DispatchKeyRef {
            structure_key: record.structure_key.as_ref(),
            chosen: &record.chosen,
            hw: &record.hw,
        };
        let hash = key.hash_with(&self.hasher);
        let recorded = self.dispatches.with_existing(
            hash,
            |cell| key.matches_flat(&cell.flat),
            |cell| cell.record(record.count, &record.candidates),
        );
        if recorded.is_none() {
            self.record_dispatch_new(key, hash, record);
        }
    }

    /// `record_dispatch` for a cell the table did not hold a moment ago.
    #[cold]
    #[inline(never)]
    fn record_dispatch_new(&self, key: DispatchKeyRef<'_>, hash: u64, record: &DispatchRecord) {
        match self.new_dispatch_cell(hash, key) {
            Some(cell) => cell.record(record.count, &record.candidates),
            None => self.dispatch_overflow.add(record.count.max(1)),
        }
    }

    /// Adds `record.count` (at least 1) to the `(wanted, fallback, hw)` cell. Never fails; when
    /// the sink is full and the cell is new, the count goes to [`Self::overflow`].
    pub fn record_miss(&self, record: &MissRecord) {
        let key = MissKeyRef {
            wanted: &record.wanted,
            fallback: &record.fallback,
            hw: &record.hw,
        };
        let hash = key.hash_with(&self.hasher);
        let matches = |cell: &MissCell| key.matches(&cell.key);
        let recorded = self
            .misses
            .with_existing(hash, matches, |cell| cell.record(record.count));
        if recorded.is_some() {
            return;
        }
        match self.miss_cell(hash, key) {
            Some(cell) => cell.record(record.count),
            None => self.miss_overflow.add(record.count.max(1)),
        }
    }

    /// Adds `record.count` (at least 1) declines for `record.reason` to the kernel's
    /// `(structure_key, chosen, hw)` cell. Never fails; when the sink is full and the cell is
    /// new, the count goes to [`Self::overflow`].
    pub fn record_decline(&self, record: &DeclineRecord) {
        let key = DispatchKeyRef {
            structure_key: record.structure_key.as_ref(),
            chosen: &record.chosen,
            hw: &record.hw,
        };
        let hash = key.hash_with(&self.hasher);
        match self.dispatch_cell(hash, key) {
            Some(cell) => cell.record_decline(Cow::Owned(record.reason.clone()), record.count),
            None => self.decline_overflow.add(record.count.max(1)),
        }
    }

    /// Adds `record.count` (at least 1) faults for `record.reason` to the kernel's
    /// `(structure_key, chosen, hw)` cell, as read back from a flush: the faulted launches are
    /// not among the dispatches recorded for the cell. (A launch a [`DispatchHandle`] counted
    /// that then faults is moved with [`DispatchHandle::record_fault`].) Never fails; when the
    /// sink is full and the cell is new, the record is dropped.
    pub fn record_fault(&self, record: &FaultRecord) {
        let key = DispatchKeyRef {
            structure_key: record.structure_key.as_ref(),
            chosen: &record.chosen,
            hw: &record.hw,
        };
        let hash = key.hash_with(&self.hasher);
        if let Some(cell) = self.dispatch_cell(hash, key) {
            cell.record_fault(Cow::Owned(record.reason.clone()), record.count, false);
        }
    }

    /// A handle to the `(structure_key, chosen, hw)` cell for recording launches without
    /// hashing or comparing keys each time. Creates the cell (with count 0, which is not
    /// flushed) if needed; if the sink is full, the handle records into the overflow count.
    pub fn dispatch_handle(
        &self,
        structure_key: Option<&StructureKey>,
        chosen: &ImplId,
        hw: &HwStamp,
    ) -> DispatchHandle {
        let key = DispatchKeyRef {
            structure_key,
            chosen,
            hw,
        };
        let hash = key.hash_with(&self.hasher);
        match self.dispatch_cell(hash, key) {
            Some(cell) => DispatchHandle::cell(cell),
            None => DispatchHandle::overflow(
                Arc::clone(&self.dispatch_overflow),
                Arc::clone(&self.decline_overflow),
            ),
        }
    }

    /// A handle to the `(wanted, fallback, hw)` miss cell; see [`Self::dispatch_handle`].
    pub fn miss_handle(
        &self,
        wanted: &StructureKey,
        fallback: &ImplId,
        hw: &HwStamp,
    ) -> MissHandle {
        let key = MissKeyRef {
            wanted,
            fallback,
            hw,
        };
        let hash = key.hash_with(&self.hasher);
        match self.miss_cell(hash, key) {
            Some(cell) => MissHandle::cell(cell),
            None => MissHandle::overflow(Arc::clone(&self.miss_overflow)),
        }
    }

    /// The existing cell (found without a lock), else a new one; `None` when the sink is full.
    fn dispatch_cell(&self, hash: u64, key: DispatchKeyRef<'_>) -> Option<Arc<DispatchCell>> {
        if let Some(cell) = self
            .dispatches
            .get(hash, |cell| key.matches_flat(&cell.flat))
        {
            return Some(cell);
        }
        self.new_dispatch_cell(hash, key)
    }

    /// A new cell, unless another thread just made it (then that one); `None` when the sink
    /// is full.
    fn new_dispatch_cell(&self, hash: u64, key: DispatchKeyRef<'_>) -> Option<Arc<DispatchCell>> {
        self.dispatches.get_or_insert(
            hash,
            |cell| key.matches_flat(&cell.flat),
            || {
                let mut flat = FlatDispatchKey::default();
                key.flatten_into(&mut flat);
                DispatchCell {
                    hash,
                    key: key.intern(&self.hasher, &self.interners),
                    flat,
                    count: Counter::default(),
                    faulted: Counter::default(),
                    candidates: Mutex::new(Vec::new()),
                    declines: ReasonCounts::default(),
                    faults: ReasonCounts::default(),
                }
            },
        )
    }

    fn miss_cell(&self, hash: u64, key: MissKeyRef<'_>) -> Option<Arc<MissCell>> {
        self.misses.get_or_insert(
            hash,
            |cell| key.matches(&cell.key),
            || MissCell {
                hash,
                key: key.intern(&self.hasher, &self.interners),
                count: Counter::default(),
            },
        )
    }

    /// Number of dispatch cells held (including any created by a handle but not yet recorded).
    pub fn dispatch_cell_count(&self) -> usize {
        self.dispatches.len()
    }

    /// Number of miss cells held.
    pub fn miss_cell_count(&self) -> usize {
        self.misses.len()
    }

    /// Counts recorded while the sink was full, which no cell holds.
    pub fn overflow(&self) -> OverflowRecord {
        OverflowRecord {
            schema: TELEMETRY_SCHEMA,
            dispatch_records: self.dispatch_overflow.get(),
            miss_records: self.miss_overflow.get(),
            decline_records: self.decline_overflow.get(),
        }
    }

    /// Whether nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.dispatches
            .snapshot()
            .iter()
            .all(|cell| cell.count() == 0)
            && self.misses.snapshot().iter().all(|cell| cell.count() == 0)
            && self.reason_cells(|cell| &cell.declines).is_empty()
            && self.reason_cells(|cell| &cell.faults).is_empty()
            && self.overflow() == OverflowRecord::empty()
    }

    /// One record per recorded dispatch cell, in the order `flush_all` writes them.
    pub fn dispatch_records(&self) -> Vec<DispatchRecord> {
        self.dispatch_records_sorted()
            .into_iter()
            .map(|(cell, count)| DispatchRecord {
                schema: TELEMETRY_SCHEMA,
                structure_key: cell.key.structure_key.as_ref().map(|k| k.value.clone()),
                chosen: cell.key.chosen.value.clone(),
                candidates: cell
                    .candidates
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone(),
                count,
                hw: cell.key.hw.value.clone(),
            })
            .collect()
    }

    /// One record per recorded miss cell, in the order `flush_all` writes them.
    pub fn miss_records(&self) -> Vec<MissRecord> {
        self.miss_records_sorted()
            .into_iter()
            .map(|(cell, count)| MissRecord {
                schema: TELEMETRY_SCHEMA,
                wanted: cell.key.wanted.value.clone(),
                fallback: cell.key.fallback.value.clone(),
                count,
                hw: cell.key.hw.value.clone(),
            })
            .collect()
    }

    /// One record per (kernel, reason) with declines, in the order `flush_all` writes them.
    pub fn decline_records(&self) -> Vec<DeclineRecord> {
        self.reason_records(|cell| &cell.declines, DeclineRecord::from_parts)
    }

    /// One record per (kernel, reason) with faulted launches, in the order `flush_all` writes
    /// them.
    pub fn fault_records(&self) -> Vec<FaultRecord> {
        self.reason_records(|cell| &cell.faults, FaultRecord::from_parts)
    }

    /// One record per (cell, reason) of the counts `of` selects, made by `make`.
    fn reason_records<R>(
        &self,
        of: fn(&DispatchCell) -> &ReasonCounts,
        make: impl Fn(Option<StructureKey>, ImplId, String, u64, HwStamp) -> R,
    ) -> Vec<R> {
        self.reason_cells(of)
            .into_iter()
            .flat_map(|(cell, counts)| {
                counts
                    .into_iter()
                    .map(|(reason, count)| {
                        make(
                            cell.key.structure_key.as_ref().map(|k| k.value.clone()),
                            cell.key.chosen.value.clone(),
                            reason.into_owned(),
                            count,
                            cell.key.hw.value.clone(),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The cells with counts in `of`, in key order, each with its counts read once.
    fn reason_cells(&self, of: fn(&DispatchCell) -> &ReasonCounts) -> Vec<ReasonCell> {
        self.dispatches
            .snapshot()
            .into_iter()
            .filter_map(|cell| {
                let counts = of(&cell).sorted();
                (!counts.is_empty()).then_some((cell, counts))
            })
            .collect()
    }

    // Key order makes the output deterministic, and a diff between two flushes shows count
    // changes rather than reordering.
    fn dispatch_records_sorted(&self) -> Vec<(Arc<DispatchCell>, u64)> {
        recorded(self.dispatches.snapshot(), DispatchCell::count)
    }

    fn miss_records_sorted(&self) -> Vec<(Arc<MissCell>, u64)> {
        recorded(self.misses.snapshot(), MissCell::count)
    }

    /// Writes `dispatches.jsonl`, `misses.jsonl`, `declines.jsonl`, `faults.jsonl` and
    /// `overflow.json` into
    /// `dir` (created if needed) as one set: one compact JSON object per line, sorted by cell key.
    ///
    /// The set is a new generation directory, named current by the manifest
    /// ([`MANIFEST_FILE`](super::MANIFEST_FILE)) only once every file is written (and, with
    /// fsync, durable): a reader ([`TelemetryReport::read_dir`](super::TelemetryReport)) sees
    /// this flush's files or the previous flush's, never some of each, even if the process dies
    /// at any instant. On error the previous set stays current. The flush then removes the
    /// generations no longer current and whatever a killed writer left. Counts are cumulative:
    /// every flush writes the whole histogram so far.
    pub fn flush_all(&self, dir: &Path) -> io::Result<FlushStats> {
        let _serialized = self
            .flush_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let durability = if self.config.fsync {
            Durability::Fsync
        } else {
            Durability::RenameOnly
        };

        let dispatches = self.dispatch_records_sorted();
        let misses = self.miss_records_sorted();
        let declines = self.reason_cells(|cell| &cell.declines);
        let faults = self.reason_cells(|cell| &cell.faults);
        let overflow = self.overflow();

        layout::write_set(
            dir,
            durability,
            &[
                (DISPATCHES_FILE, &|out| {
                    write_dispatch_lines(&dispatches, out)
                }),
                (MISSES_FILE, &|out| write_miss_lines(&misses, out)),
                (DECLINES_FILE, &|out| write_reason_lines(&declines, out)),
                (FAULTS_FILE, &|out| write_reason_lines(&faults, out)),
                (OVERFLOW_FILE, &|out| write_line(out, &overflow)),
            ],
        )?;
        Ok(FlushStats {
            dispatch_lines: dispatches.len(),
            miss_lines: misses.len(),
            decline_lines: declines.iter().map(|(_, d)| d.len()).sum(),
            fault_lines: faults.iter().map(|(_, f)| f.len()).sum(),
            overflow,
        })
    }
}

/// The cells that hold counts, in key order, each with its count read once: a line written and
/// a total reported agree while other threads keep recording.
fn recorded<C>(cells: Vec<Arc<C>>, count: impl Fn(&C) -> u64) -> Vec<(Arc<C>, u64)> {
    cells
        .into_iter()
        .filter_map(|cell| {
            let count = count(&cell);
            (count > 0).then_some((cell, count))
        })
        .collect()
}

fn write_line<W: Write>(out: &mut W, value: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

fn write_dispatch_lines<W: Write>(
    cells: &[(Arc<DispatchCell>, u64)],
    out: &mut W,
) -> io::Result<()> {
    // Each line is encoded into memory while the cell's candidates are locked and written out
    // after the lock is released, so a recording thread never waits behind a write syscall.
    let mut line_buf = Vec::with_capacity(1024);
    for (cell, count) in cells {
        line_buf.clear();
        {
            let candidates = cell
                .candidates
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let line = DispatchLine {
                schema: TELEMETRY_SCHEMA,
                structure_key: cell.key.structure_key.as_deref(),
                chosen: &*cell.key.chosen,
                candidates: &candidates,
                count: *count,
                hw: &*cell.key.hw,
            };
            write_line(&mut line_buf, &line)?;
        }
        out.write_all(&line_buf)?;
    }
    Ok(())
}

fn write_miss_lines<W: Write>(cells: &[(Arc<MissCell>, u64)], out: &mut W) -> io::Result<()> {
    for (cell, count) in cells {
        let line = MissLine {
            schema: TELEMETRY_SCHEMA,
            wanted: &*cell.key.wanted,
            fallback: &*cell.key.fallback,
            count: *count,
            hw: &*cell.key.hw,
        };
        write_line(out, &line)?;
    }
    Ok(())
}

/// A dispatch cell and its declines (or faults) by reason.
type ReasonCell = (Arc<DispatchCell>, Vec<(Cow<'static, str>, u64)>);

/// One line per (cell, reason): `declines.jsonl` and `faults.jsonl` have the same fields.
fn write_reason_lines<W: Write>(cells: &[ReasonCell], out: &mut W) -> io::Result<()> {
    for (cell, counts) in cells {
        for (reason, count) in counts {
            let line = DeclineLine {
                schema: TELEMETRY_SCHEMA,
                structure_key: cell.key.structure_key.as_deref(),
                chosen: &*cell.key.chosen,
                reason,
                count: *count,
                hw: &*cell.key.hw,
            };
            write_line(out, &line)?;
        }
    }
    Ok(())
}
