//! Telemetry: which kernels a runtime launched and where it fell back to generic ones, kept as
//! a histogram rather than one line per launch.
//!
//! - [`record`]: the versioned wire schema ([`DispatchRecord`], [`MissRecord`], ...).
//! - [`TelemetrySink`]: aggregates records into bounded per-cell counts from any number of
//!   threads, and flushes them with [`TelemetrySink::flush_all`] as `dispatches.jsonl`,
//!   `misses.jsonl`, `declines.jsonl` (refused launches per kernel and reason), `faults.jsonl`
//!   (launches that faulted on the device, per kernel and fault kind) and `overflow.json`: one set, in a generation directory that the manifest
//!   (`current.json`) names once it is complete, so readers see whole flushes only.
//! - [`DispatchHandle`] / [`MissHandle`]: a pre-interned cell for the launch path; recording
//!   through one is a single atomic add.
//! - [`reader`]: parse flushed files back and merge runs ([`TelemetryReport`]).
//!
//! The launch path records by itself once a sink is attached to the device
//! ([`Device::attach_telemetry`](crate::Device::attach_telemetry)): a dispatch per launch that
//! ran, a decline per refused launch (and per kernel refused at
//! [`Kernel::load_for`](crate::Kernel::load_for) or `bind`), a fault per launch that faulted on
//! the device (`faults.jsonl`; not a dispatch). Each kernel's cell is keyed by the artifact's
//! structure key ([`LinkEntry::structure_key`](crate::LinkEntry::structure_key), set with
//! [`Artifact::with_structure_key`](crate::Artifact::with_structure_key)), its implementation
//! and the device.
//!
//! Telemetry must never break a launch: recording cannot fail and does not panic; only
//! flushing, which the caller chooses to do, returns an error.
//!
//! ```
//! use std::sync::Arc;
//! use jitseam::telemetry::{DispatchRecord, HwStamp, ImplId, StructureKey, TelemetrySink};
//!
//! let sink = Arc::new(TelemetrySink::new());
//! let hw = HwStamp::cpu("emulator", "");
//! let add = ImplId::new("emulator", "add", ["f32", "f32", "f32"], "jitseam-elementwise", 0x2a);
//! let key = StructureKey::new("ew:add:f32:contiguous");
//!
//! // Once, when the kernel is bound:
//! let handle = sink.dispatch_handle(Some(&key), &add, &hw);
//! // On every launch:
//! handle.record();
//! // Or, from code that builds records:
//! sink.record_dispatch(&DispatchRecord::new(Some(key), add, hw));
//!
//! assert_eq!(sink.dispatch_records()[0].count, 2);
//! ```

mod aggregate;
mod cells;
mod handle;
mod keys;
mod layout;
pub mod reader;
pub mod record;
mod sink;

pub use handle::{DispatchHandle, MissHandle};
pub use layout::{MANIFEST_FILE, TELEMETRY_LAYOUT};
pub use reader::{ReadConfig, ReadError, RecordKind, TelemetryReport};
pub use record::{
    Candidate, DeclineRecord, DispatchRecord, FaultRecord, HwStamp, ImplId, MissRecord,
    OverflowRecord, StructureKey, TELEMETRY_SCHEMA,
};
pub use sink::{
    DECLINES_FILE, DISPATCHES_FILE, FAULTS_FILE, FlushStats, MISSES_FILE, OVERFLOW_FILE,
    SinkConfig, TelemetrySink,
};
