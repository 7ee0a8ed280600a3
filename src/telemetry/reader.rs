//! Reading flushed telemetry back: parse JSONL with errors that name the file and line, and
//! merge several runs into one histogram.
//!
//! Unknown fields are ignored, so files from a newer writer that only added fields still read.
//! A record whose `schema` is not [`TELEMETRY_SCHEMA`] is refused with its own error rather than
//! half-understood. Blank lines are skipped, so hand-edited files stay readable.
//!
//! Reading is bounded: a file is read only if it is a regular file of at most
//! [`ReadConfig::max_file_bytes`], so a FIFO, a device such as `/dev/zero` or an oversized file in
//! place of a data file is a typed error naming it, never a blocked or unbounded read.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::layout::{self, MANIFEST_FILE, Manifest};
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
    /// What stands where a telemetry file belongs is not a regular file (a FIFO, a device, a
    /// directory), so it is not read: it could block or never end.
    #[error("{origin} is {found}, not a regular file")]
    NotAFile {
        /// The path.
        origin: String,
        /// What it is: `a fifo`, `a character device`, `a directory`, ….
        found: &'static str,
    },
    /// A file larger than the reader's limit ([`ReadConfig::max_file_bytes`]).
    #[error("{origin} holds more than {limit} bytes, the most this reader reads from one file")]
    TooLarge {
        /// The path.
        origin: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// The manifest names a generation (or a file in it) that does not exist, and no flush
    /// replaced the manifest meanwhile: the directory was damaged, not updated.
    #[error("{manifest} names generation `{generation}`, but {missing} does not exist")]
    MissingGeneration {
        /// The manifest's path.
        manifest: String,
        /// The generation it names.
        generation: String,
        /// The path that is missing: the generation's directory or one of its files.
        missing: String,
    },
}

/// Limits on what reading telemetry may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadConfig {
    /// The most bytes one data file may hold (default 256 MiB); a larger one is
    /// [`ReadError::TooLarge`].
    pub max_file_bytes: u64,
}

impl ReadConfig {
    /// 256 MiB per file: far more than a sink's cells flush to, far less than a machine holds.
    pub const DEFAULT: Self = Self {
        max_file_bytes: 256 << 20,
    };

    /// The same limits with at most `bytes` per data file.
    #[must_use]
    pub const fn with_max_file_bytes(self, bytes: u64) -> Self {
        Self {
            max_file_bytes: bytes,
        }
    }
}

impl Default for ReadConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The most bytes a manifest may hold: it names a generation and a handful of files.
const MANIFEST_MAX_BYTES: u64 = 64 * 1024;

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

/// The bytes of `path` if it is a regular file of at most `limit` bytes; `None` if it does not
/// exist.
///
/// The path is checked before it is opened (opening a FIFO for reading waits for a writer, and
/// opening a device can have effects), but it may be replaced between that check and the open:
/// so it is opened without waiting and the file actually opened is checked again, and read with
/// a cap in case it grows.
fn read_bounded(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, ReadError> {
    let io_error = |detail| ReadError::Io {
        origin: path.display().to_string(),
        detail,
    };
    match fs::metadata(path) {
        Ok(meta) => check_file(&meta, path, limit)?,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io_error(error)),
    }
    let file = match open_without_waiting(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io_error(error)),
    };
    let meta = file.metadata().map_err(io_error)?;
    check_file(&meta, path, limit)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len().min(limit)).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, limit));
    }
    Ok(Some(bytes))
}

/// Opens `path` for reading; a FIFO opens at once instead of waiting for a writer.
#[cfg(unix)]
fn open_without_waiting(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        // `O_NONBLOCK` is a small positive flag on every unix: it fits an `i32`.
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
}

/// Opens `path` for reading (what stands there was checked to be a regular file).
#[cfg(not(unix))]
fn open_without_waiting(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// Refuses anything but a regular file of at most `limit` bytes.
fn check_file(meta: &fs::Metadata, path: &Path, limit: u64) -> Result<(), ReadError> {
    if !meta.is_file() {
        return Err(ReadError::NotAFile {
            origin: path.display().to_string(),
            found: file_kind(meta),
        });
    }
    if meta.len() > limit {
        return Err(too_large(path, limit));
    }
    Ok(())
}

fn too_large(path: &Path, limit: u64) -> ReadError {
    ReadError::TooLarge {
        origin: path.display().to_string(),
        limit,
    }
}

/// What a path that is not a regular file is, for a message.
fn file_kind(meta: &fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a fifo";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

fn read_required(path: &Path) -> Result<Vec<u8>, ReadError> {
    read_bounded(path, ReadConfig::DEFAULT.max_file_bytes)?.ok_or_else(|| ReadError::Io {
        origin: path.display().to_string(),
        detail: io::Error::from(io::ErrorKind::NotFound),
    })
}

/// Reads a `dispatches.jsonl` file (a regular file within [`ReadConfig::DEFAULT`]'s limit).
pub fn read_dispatches(path: &Path) -> Result<Vec<DispatchRecord>, ReadError> {
    parse_dispatches(read_required(path)?, &path.display().to_string())
}

/// Reads a `misses.jsonl` file (a regular file within [`ReadConfig::DEFAULT`]'s limit).
pub fn read_misses(path: &Path) -> Result<Vec<MissRecord>, ReadError> {
    parse_misses(read_required(path)?, &path.display().to_string())
}

/// The directory that holds the files of `dir`'s current set: the generation its manifest
/// names, or `dir` itself when it has no manifest. A snapshot: a flush may replace it (and
/// remove the generation) at any time; [`TelemetryReport::read_dir`] reads a set safely.
pub fn current_set(dir: &Path) -> Result<PathBuf, ReadError> {
    Ok(current(dir)?.map_or_else(|| dir.to_path_buf(), |(_, set)| set))
}

/// `dir`'s manifest (read within [`MANIFEST_MAX_BYTES`]) and the generation it names; `None`
/// when it has none.
fn current(dir: &Path) -> Result<Option<(Manifest, PathBuf)>, ReadError> {
    let path = dir.join(MANIFEST_FILE);
    let Some(bytes) = read_bounded(&path, MANIFEST_MAX_BYTES)? else {
        return Ok(None);
    };
    layout::parse_manifest(dir, &bytes)
        .map(Some)
        .map_err(|detail| ReadError::Io {
            origin: path.display().to_string(),
            detail,
        })
}

/// How reading one generation went.
enum SetRead {
    /// Every file it names.
    Whole(TelemetryReport),
    /// This path of it (the directory or one of its files) does not exist.
    Missing(PathBuf),
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
    /// [`TelemetryReport::merge`] to combine repeated cells. Files are read within
    /// [`ReadConfig::DEFAULT`]'s limits ([`TelemetryReport::read_dir_with`] sets others).
    ///
    /// A flush that replaces the set while it is being read removes the old generation; the
    /// read then starts over from the new manifest, so it never mixes two flushes. A generation
    /// that is missing while the manifest still names it was never replaced:
    /// [`ReadError::MissingGeneration`].
    pub fn read_dir(dir: &Path) -> Result<Self, ReadError> {
        Self::read_dir_with(dir, ReadConfig::DEFAULT)
    }

    /// [`TelemetryReport::read_dir`] within `config`'s limits.
    pub fn read_dir_with(dir: &Path, config: ReadConfig) -> Result<Self, ReadError> {
        if let Err(detail) = fs::read_dir(dir) {
            return Err(ReadError::Io {
                origin: dir.display().to_string(),
                detail,
            });
        }
        // The generation found missing by the attempt before, if any.
        let mut missing_before: Option<String> = None;
        for _ in 0..layout::READ_ATTEMPTS {
            let Some((manifest, set)) = current(dir)? else {
                return Self::read_flat(dir, config);
            };
            match Self::read_set(&set, &manifest.files, config)? {
                SetRead::Whole(report) => return Ok(report),
                // A flush names its generation only once it is complete and removes it only
                // after naming another, so a generation still named after it went missing was
                // not replaced.
                SetRead::Missing(missing)
                    if missing_before.as_ref() == Some(&manifest.generation) =>
                {
                    return Err(ReadError::MissingGeneration {
                        manifest: dir.join(MANIFEST_FILE).display().to_string(),
                        generation: manifest.generation,
                        missing: missing.display().to_string(),
                    });
                }
                SetRead::Missing(_) => missing_before = Some(manifest.generation),
            }
            std::thread::sleep(layout::READ_RETRY);
        }
        Err(ReadError::Io {
            origin: dir.display().to_string(),
            detail: io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "flushes replaced the generation {MANIFEST_FILE} named {} times in a row while it was being read",
                    layout::READ_ATTEMPTS
                ),
            ),
        })
    }

    /// The files of one generation that this reader knows, each read once; unknown names (a
    /// newer writer's files) are left unopened.
    fn read_set(set: &Path, files: &[String], config: ReadConfig) -> Result<SetRead, ReadError> {
        match fs::metadata(set) {
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Ok(SetRead::Missing(set.to_path_buf()));
            }
            Err(detail) => {
                return Err(ReadError::Io {
                    origin: set.display().to_string(),
                    detail,
                });
            }
        }
        let mut report = Self::default();
        let mut read: Vec<&str> = Vec::new();
        for name in files {
            let name = name.as_str();
            let known = [
                DISPATCHES_FILE,
                MISSES_FILE,
                DECLINES_FILE,
                FAULTS_FILE,
                OVERFLOW_FILE,
            ];
            if !known.contains(&name) || read.contains(&name) {
                continue;
            }
            read.push(name);
            let path = set.join(name);
            let Some(bytes) = read_bounded(&path, config.max_file_bytes)? else {
                return Ok(SetRead::Missing(path));
            };
            let origin = path.display().to_string();
            match name {
                DISPATCHES_FILE => report.dispatches = parse_dispatches(bytes, &origin)?,
                MISSES_FILE => report.misses = parse_misses(bytes, &origin)?,
                DECLINES_FILE => report.declines = parse_declines(bytes, &origin)?,
                FAULTS_FILE => report.faults = parse_faults(bytes, &origin)?,
                OVERFLOW_FILE => report.overflow = parse_overflow(bytes, &origin)?,
                _ => {}
            }
        }
        Ok(SetRead::Whole(report))
    }

    /// A directory of the first layout: the files directly in it, each optional.
    fn read_flat(dir: &Path, config: ReadConfig) -> Result<Self, ReadError> {
        let dispatch_path = dir.join(DISPATCHES_FILE);
        let miss_path = dir.join(MISSES_FILE);
        let overflow_path = dir.join(OVERFLOW_FILE);
        let dispatches = read_bounded(&dispatch_path, config.max_file_bytes)?;
        let misses = read_bounded(&miss_path, config.max_file_bytes)?;
        let overflow = read_bounded(&overflow_path, config.max_file_bytes)?;
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

    /// Sum of all dispatch counts; `None` when it overflows (see [`total`]).
    pub fn total_dispatches(&self) -> Option<u64> {
        total(self.dispatches.iter().map(|record| record.count))
    }

    /// Sum of all miss counts; `None` when it overflows (see [`total`]).
    pub fn total_misses(&self) -> Option<u64> {
        total(self.misses.iter().map(|record| record.count))
    }

    /// Sum of all decline counts; `None` when it overflows (see [`total`]).
    pub fn total_declines(&self) -> Option<u64> {
        total(self.declines.iter().map(|record| record.count))
    }

    /// Sum of all fault counts; `None` when it overflows (see [`total`]).
    pub fn total_faults(&self) -> Option<u64> {
        total(self.faults.iter().map(|record| record.count))
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

/// The sum of `counts`, or `None` when it overflows: when it exceeds `u64::MAX`, or when one count
/// is `u64::MAX` itself — counters stop there instead of wrapping, so such a count stands for at
/// least that many and any sum with it, or share of it, would be a guess.
pub fn total(counts: impl IntoIterator<Item = u64>) -> Option<u64> {
    counts.into_iter().try_fold(0u64, |sum, count| {
        if count == u64::MAX {
            None
        } else {
            sum.checked_add(count)
        }
    })
}

fn top_by_count<T>(records: &[T], n: usize, count: impl Fn(&T) -> u64) -> Vec<&T> {
    let mut ranked: Vec<&T> = records.iter().collect();
    ranked.sort_by_key(|record| std::cmp::Reverse(count(record)));
    ranked.truncate(n);
    ranked
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// The check before opening can be raced: the path swapped for a FIFO after it was checked.
    /// The open must then neither wait for a writer nor let the FIFO be read: it opens at once,
    /// and the opened file's own metadata refuses it.
    #[test]
    fn a_fifo_swapped_in_after_the_check_opens_at_once_and_is_refused() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let fifo = dir.path().join("dispatches.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|status| status.success()));
        let (done, result) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let checked = open_without_waiting(&path)
                .and_then(|file| file.metadata())
                .map(|meta| check_file(&meta, &path, u64::MAX));
            let _ = done.send(checked);
        });
        let checked = result
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("opening a fifo waited for a writer"));
        assert!(
            matches!(
                checked,
                Ok(Err(ReadError::NotAFile {
                    found: "a fifo",
                    ..
                }))
            ),
            "{checked:?}"
        );
    }
}
