//! Reading flushed telemetry back: parse JSONL with errors that name the file and line, and
//! merge several runs into one histogram.
//!
//! Unknown fields are ignored, so files from a newer writer that only added fields still read.
//! A record whose `schema` is not [`TELEMETRY_SCHEMA`] is refused with its own error rather than
//! half-understood. Blank lines are skipped, so hand-edited files stay readable.

use std::fmt;
use std::fs;
use std::io;
use std::path::Path;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::layout::{self, MANIFEST_FILE};
use super::record::{
    DeclineRecord, DispatchRecord, FaultRecord, MissRecord, OverflowRecord, TELEMETRY_SCHEMA,
};
use super::sink::{
    DECLINES_FILE, DISPATCHES_FILE, FAULTS_FILE, MISSES_FILE, OVERFLOW_FILE, SinkConfig,
    TelemetrySink,
};

/// Which kind of record a line was expected to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordKind {
    /// A [`DispatchRecord`].
    Dispatch,
    /// A [`MissRecord`].
    Miss,
    /// A [`DeclineRecord`].
    Decline,
    /// A [`FaultRecord`].
    Fault,
    /// An [`OverflowRecord`].
    Overflow,
}

impl fmt::Display for RecordKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Dispatch => "dispatch",
            Self::Miss => "miss",
            Self::Decline => "decline",
            Self::Fault => "fault",
            Self::Overflow => "overflow",
        })
    }
}

/// Why telemetry could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The file or directory could not be opened or read.
    #[error("cannot read {origin}: {detail}")]
    Io {
        /// The path (or name) of what was being read.
        origin: String,
        /// The underlying error (part of the message, so not also a `source()`).
        detail: io::Error,
    },
    /// A directory holds none of the telemetry files.
    #[error(
        "{origin} holds no telemetry ({MANIFEST_FILE}, {DISPATCHES_FILE}, {MISSES_FILE} or {OVERFLOW_FILE})"
    )]
    NoTelemetry {
        /// The directory.
        origin: String,
    },
    /// A line is not a valid record of the expected kind.
    #[error("{origin}:{line}:{column}: malformed {kind} record: {message}")]
    Malformed {
        /// The path (or name) of what was being read.
        origin: String,
        /// 1-based line number.
        line: usize,
        /// 1-based column within the line, as reported by the JSON parser.
        column: usize,
        /// The kind of record expected.
        kind: RecordKind,
        /// What was wrong.
        message: String,
    },
    /// A record declares a schema version this reader does not understand.
    #[error(
        "{origin}:{line}: unsupported {kind} record schema {found}, this reader knows {supported}"
    )]
    UnsupportedSchema {
        /// The path (or name) of what was being read.
        origin: String,
        /// 1-based line number.
        line: usize,
        /// The kind of record expected.
        kind: RecordKind,
        /// The version found.
        found: u32,
        /// The version this reader reads.
        supported: u32,
    },
}

/// What the line parser needs to know about each record type.
trait WireRecord: DeserializeOwned {
    const KIND: RecordKind;
    fn schema(&self) -> u32;
}

impl WireRecord for DispatchRecord {
    const KIND: RecordKind = RecordKind::Dispatch;
    fn schema(&self) -> u32 {
        self.schema
    }
}

impl WireRecord for MissRecord {
    const KIND: RecordKind = RecordKind::Miss;
    fn schema(&self) -> u32 {
        self.schema
    }
}

impl WireRecord for DeclineRecord {
    const KIND: RecordKind = RecordKind::Decline;
    fn schema(&self) -> u32 {
        self.schema
    }
}

impl WireRecord for FaultRecord {
    const KIND: RecordKind = RecordKind::Fault;
    fn schema(&self) -> u32 {
        self.schema
    }
}

impl WireRecord for OverflowRecord {
    const KIND: RecordKind = RecordKind::Overflow;
    fn schema(&self) -> u32 {
        self.schema
    }
}

/// Just the version, to tell "newer schema" from "broken line" when a record fails to parse.
#[derive(Deserialize)]
struct SchemaProbe {
    schema: u32,
}

fn parse_lines<T: WireRecord>(bytes: &[u8], origin: &str) -> Result<Vec<T>, ReadError> {
    let mut records = Vec::new();
    for (index, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = index + 1;
        let text = raw.strip_suffix(b"\r").unwrap_or(raw);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let unsupported = |found| ReadError::UnsupportedSchema {
            origin: origin.to_owned(),
            line,
            kind: T::KIND,
            found,
            supported: TELEMETRY_SCHEMA,
        };
        match serde_json::from_slice::<T>(text) {
            Ok(record) if record.schema() == TELEMETRY_SCHEMA => records.push(record),
            Ok(record) => return Err(unsupported(record.schema())),
            Err(error) => {
                // A newer schema may have changed shape; say so rather than "malformed".
                if let Ok(SchemaProbe { schema }) = serde_json::from_slice(text)
                    && schema != TELEMETRY_SCHEMA
                {
                    return Err(unsupported(schema));
                }
                return Err(malformed::<T>(origin, line, &error));
            }
        }
    }
    Ok(records)
}

fn malformed<T: WireRecord>(origin: &str, line: usize, error: &serde_json::Error) -> ReadError {
    // Each line is parsed on its own, so the parser's own "at line 1" would only mislead: keep
    // its column and drop its position suffix.
    let full = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    let message = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
    ReadError::Malformed {
        origin: origin.to_owned(),
        line,
        column: error.column(),
        kind: T::KIND,
        message,
    }
}

/// Parses dispatch JSONL; `origin` names the source in errors.
pub fn parse_dispatches(
    bytes: impl AsRef<[u8]>,
    origin: &str,
) -> Result<Vec<DispatchRecord>, ReadError> {
    parse_lines(bytes.as_ref(), origin)
}

/// Parses miss JSONL; `origin` names the source in errors.
pub fn parse_misses(bytes: impl AsRef<[u8]>, origin: &str) -> Result<Vec<MissRecord>, ReadError> {
    parse_lines(bytes.as_ref(), origin)
}

/// Parses decline JSONL; `origin` names the source in errors.
pub fn parse_declines(
    bytes: impl AsRef<[u8]>,
    origin: &str,
) -> Result<Vec<DeclineRecord>, ReadError> {
    parse_lines(bytes.as_ref(), origin)
}

/// Parses fault JSONL; `origin` names the source in errors.
pub fn parse_faults(bytes: impl AsRef<[u8]>, origin: &str) -> Result<Vec<FaultRecord>, ReadError> {
    parse_lines(bytes.as_ref(), origin)
}

/// Parses an overflow file; several records (e.g. concatenated files) are summed.
pub fn parse_overflow(bytes: impl AsRef<[u8]>, origin: &str) -> Result<OverflowRecord, ReadError> {
    let records: Vec<OverflowRecord> = parse_lines(bytes.as_ref(), origin)?;
    Ok(records.iter().fold(OverflowRecord::empty(), add_overflow))
}

fn add_overflow(total: OverflowRecord, more: &OverflowRecord) -> OverflowRecord {
    OverflowRecord {
        schema: TELEMETRY_SCHEMA,
        dispatch_records: total.dispatch_records.saturating_add(more.dispatch_records),
        miss_records: total.miss_records.saturating_add(more.miss_records),
        decline_records: total.decline_records.saturating_add(more.decline_records),
    }
}

/// The bytes of `path`, or `None` if it does not exist.
fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, ReadError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(detail) => Err(ReadError::Io {
            origin: path.display().to_string(),
            detail,
        }),
    }
}

fn read_required(path: &Path) -> Result<Vec<u8>, ReadError> {
    fs::read(path).map_err(|detail| ReadError::Io {
        origin: path.display().to_string(),
        detail,
    })
}

/// Reads a `dispatches.jsonl` file.
pub fn read_dispatches(path: &Path) -> Result<Vec<DispatchRecord>, ReadError> {
    parse_dispatches(read_required(path)?, &path.display().to_string())
}

/// Reads a `misses.jsonl` file.
pub fn read_misses(path: &Path) -> Result<Vec<MissRecord>, ReadError> {
    parse_misses(read_required(path)?, &path.display().to_string())
}

/// The directory that holds the files of `dir`'s current set: the generation its manifest
/// names, or `dir` itself when it has no manifest. A snapshot: a flush may replace it (and
/// remove the generation) at any time; [`TelemetryReport::read_dir`] reads a set safely.
pub fn current_set(dir: &Path) -> Result<std::path::PathBuf, ReadError> {
    match layout::current(dir) {
        Ok(Some((_, set))) => Ok(set),
        Ok(None) => Ok(dir.to_path_buf()),
        Err(detail) => Err(ReadError::Io {
            origin: dir.join(MANIFEST_FILE).display().to_string(),
            detail,
        }),
    }
}

/// Everything one flush directory (or a merge of several) holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelemetryReport {
    /// Dispatch cells.
    pub dispatches: Vec<DispatchRecord>,
    /// Miss cells.
    pub misses: Vec<MissRecord>,
    /// Declined launches, per kernel and reason.
    pub declines: Vec<DeclineRecord>,
    /// Launches that faulted on the device, per kernel and fault kind (none before the
    /// writer knew faults).
    pub faults: Vec<FaultRecord>,
    /// Counts that found no cell in the writing sink.
    pub overflow: OverflowRecord,
}

impl Default for TelemetryReport {
    fn default() -> Self {
        Self {
            dispatches: Vec::new(),
            misses: Vec::new(),
            declines: Vec::new(),
            faults: Vec::new(),
            overflow: OverflowRecord::empty(),
        }
    }
}

impl TelemetryReport {
    /// Reads the set of files [`TelemetrySink::flush_all`] last completed in `dir`: the
    /// generation its manifest names, read whole, or (a directory without a manifest, written
    /// before sets had one) the files directly in `dir`. A file the set does not hold reads as
    /// empty, but a directory must hold some telemetry. Records are returned as written; use
    /// [`TelemetryReport::merge`] to combine repeated cells.
    ///
    /// A flush that replaces the set while it is being read removes the old generation; the
    /// read then starts over from the new manifest, so it never mixes two flushes.
    pub fn read_dir(dir: &Path) -> Result<Self, ReadError> {
        if let Err(detail) = fs::read_dir(dir) {
            return Err(ReadError::Io {
                origin: dir.display().to_string(),
                detail,
            });
        }
        for _ in 0..layout::READ_ATTEMPTS {
            let (manifest, set) = match layout::current(dir) {
                Ok(Some(current)) => current,
                Ok(None) => return Self::read_flat(dir),
                Err(detail) => {
                    return Err(ReadError::Io {
                        origin: dir.join(MANIFEST_FILE).display().to_string(),
                        detail,
                    });
                }
            };
            if let Some(report) = Self::read_set(&set, &manifest.files)? {
                return Ok(report);
            }
            std::thread::sleep(layout::READ_RETRY);
        }
        Err(ReadError::Io {
            origin: dir.display().to_string(),
            detail: io::Error::new(
                io::ErrorKind::NotFound,
                "every generation the manifest named was replaced before it could be read",
            ),
        })
    }

    /// The files of one generation; `None` when it vanished (a later flush removed it).
    fn read_set(set: &Path, files: &[String]) -> Result<Option<Self>, ReadError> {
        let mut report = Self::default();
        for name in files {
            let path = set.join(name);
            let Some(bytes) = read_optional(&path)? else {
                return Ok(None);
            };
            let origin = path.display().to_string();
            match name.as_str() {
                DISPATCHES_FILE => report.dispatches = parse_dispatches(bytes, &origin)?,
                MISSES_FILE => report.misses = parse_misses(bytes, &origin)?,
                DECLINES_FILE => report.declines = parse_declines(bytes, &origin)?,
                FAULTS_FILE => report.faults = parse_faults(bytes, &origin)?,
                OVERFLOW_FILE => report.overflow = parse_overflow(bytes, &origin)?,
                // A file a newer writer added: not this reader's to understand.
                _ => {}
            }
        }
        Ok(Some(report))
    }

    /// A directory of the first layout: the files directly in it, each optional.
    fn read_flat(dir: &Path) -> Result<Self, ReadError> {
        let dispatch_path = dir.join(DISPATCHES_FILE);
        let miss_path = dir.join(MISSES_FILE);
        let overflow_path = dir.join(OVERFLOW_FILE);
        let dispatches = read_optional(&dispatch_path)?;
        let misses = read_optional(&miss_path)?;
        let overflow = read_optional(&overflow_path)?;
        if dispatches.is_none() && misses.is_none() && overflow.is_none() {
            return Err(ReadError::NoTelemetry {
                origin: dir.display().to_string(),
            });
        }
        Ok(Self {
            dispatches: match dispatches {
                Some(bytes) => parse_dispatches(bytes, &dispatch_path.display().to_string())?,
                None => Vec::new(),
            },
            misses: match misses {
                Some(bytes) => parse_misses(bytes, &miss_path.display().to_string())?,
                None => Vec::new(),
            },
            // The first layout had no declines or faults.
            declines: Vec::new(),
            faults: Vec::new(),
            overflow: match overflow {
                Some(bytes) => parse_overflow(bytes, &overflow_path.display().to_string())?,
                None => OverflowRecord::empty(),
            },
        })
    }

    /// Combines reports cell by cell: counts of the same cell add, a cell keeps the candidates
    /// of the last report that had any, overflow counts add. The result is sorted like a flush.
    pub fn merge(reports: impl IntoIterator<Item = Self>) -> Self {
        // The sink already defines what "the same cell" means; reuse it, unbounded.
        let sink = TelemetrySink::with_config(SinkConfig::DEFAULT.with_max_cells(usize::MAX));
        let mut overflow = OverflowRecord::empty();
        for report in reports {
            for record in &report.dispatches {
                sink.record_dispatch(record);
            }
            for record in &report.misses {
                sink.record_miss(record);
            }
            for record in &report.declines {
                sink.record_decline(record);
            }
            for record in &report.faults {
                sink.record_fault(record);
            }
            overflow = add_overflow(overflow, &report.overflow);
        }
        Self {
            dispatches: sink.dispatch_records(),
            misses: sink.miss_records(),
            declines: sink.decline_records(),
            faults: sink.fault_records(),
            overflow,
        }
    }

    /// Sum of all dispatch counts (saturating).
    pub fn total_dispatches(&self) -> u64 {
        self.dispatches
            .iter()
            .fold(0u64, |sum, record| sum.saturating_add(record.count))
    }

    /// Sum of all miss counts (saturating).
    pub fn total_misses(&self) -> u64 {
        self.misses
            .iter()
            .fold(0u64, |sum, record| sum.saturating_add(record.count))
    }

    /// Sum of all decline counts (saturating).
    pub fn total_declines(&self) -> u64 {
        self.declines
            .iter()
            .fold(0u64, |sum, record| sum.saturating_add(record.count))
    }

    /// Sum of all fault counts (saturating).
    pub fn total_faults(&self) -> u64 {
        self.faults
            .iter()
            .fold(0u64, |sum, record| sum.saturating_add(record.count))
    }

    /// The `n` (kernel, reason) decline cells with the highest counts; ties keep file order.
    pub fn top_declines(&self, n: usize) -> Vec<&DeclineRecord> {
        top_by_count(&self.declines, n, |record| record.count)
    }

    /// The `n` (kernel, reason) fault cells with the highest counts; ties keep file order.
    pub fn top_faults(&self, n: usize) -> Vec<&FaultRecord> {
        top_by_count(&self.faults, n, |record| record.count)
    }

    /// The `n` dispatch cells with the highest counts; ties keep file order.
    pub fn top_dispatches(&self, n: usize) -> Vec<&DispatchRecord> {
        top_by_count(&self.dispatches, n, |record| record.count)
    }

    /// The `n` miss cells with the highest counts; ties keep file order.
    pub fn top_misses(&self, n: usize) -> Vec<&MissRecord> {
        top_by_count(&self.misses, n, |record| record.count)
    }
}

fn top_by_count<T>(records: &[T], n: usize, count: impl Fn(&T) -> u64) -> Vec<&T> {
    let mut ranked: Vec<&T> = records.iter().collect();
    ranked.sort_by_key(|record| std::cmp::Reverse(count(record)));
    ranked.truncate(n);
    ranked
}
