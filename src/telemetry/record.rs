//! The wire schema: what one JSONL line of `dispatches.jsonl` / `misses.jsonl` holds.
//!
//! These are plain data. Field order here is the field order on the wire, and the golden tests
//! in `tests/telemetry_wire.rs` pin every byte, so a change to this file is a change to the
//! schema: additive optional fields keep [`TELEMETRY_SCHEMA`]; anything a v1 reader would
//! misread bumps it.
//!
//! Absent values are left off the wire rather than written as `null`: a CPU has no compute
//! capability, a runtime without a structure-key provider has no key, a coarse observation has
//! no candidates. Readers ignore fields they do not know, so older readers survive additions.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The schema version stamped on every record this crate writes.
pub const TELEMETRY_SCHEMA: u32 = 1;

/// An opaque structural key: the runtime's name for "the shape of work" a kernel was wanted for
/// (op class, layout facts, dtypes). jitseam never interprets it; it only groups by it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StructureKey(pub String);

impl StructureKey {
    /// Wraps a token.
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// The token text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StructureKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which implementation ran (or was a candidate): enough to tell two builds of the same kernel
/// apart, so a histogram never pools a fixed kernel with its buggy predecessor.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ImplId {
    /// Backend name, e.g. `cuda` or `emulator`.
    pub backend: String,
    /// Operation name, e.g. `add` or `fused_elementwise`.
    pub op: String,
    /// Element kinds of the operands, in ABI order (inputs, then outputs).
    pub dtypes: Vec<String>,
    /// Where the kernel came from, e.g. a synthesizer name or a library kernel name.
    pub kernel_source: String,
    /// Hash of the kernel revision (artifact bytes or generator version). On the wire it is a
    /// 16-digit lowercase hex string, because JSON numbers above 2^53 lose bits in many readers.
    #[serde(with = "hex_u64")]
    pub kernel_revision_hash: u64,
}

impl ImplId {
    /// Builds an id from its parts.
    pub fn new(
        backend: impl Into<String>,
        op: impl Into<String>,
        dtypes: impl IntoIterator<Item = impl Into<String>>,
        kernel_source: impl Into<String>,
        kernel_revision_hash: u64,
    ) -> Self {
        Self {
            backend: backend.into(),
            op: op.into(),
            dtypes: dtypes.into_iter().map(Into::into).collect(),
            kernel_source: kernel_source.into(),
            kernel_revision_hash,
        }
    }
}

impl fmt::Display for ImplId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}(", self.backend, self.op)?;
        for (i, dtype) in self.dtypes.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(dtype)?;
        }
        write!(
            f,
            ") {}@{:016x}",
            self.kernel_source, self.kernel_revision_hash
        )
    }
}

/// The hardware a record was observed on. Part of every cell's identity, so rows from different
/// silicon or driver versions never pool.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct HwStamp {
    /// `(major, minor)` for a CUDA device; `None` for a CPU or the emulator (omitted on the wire).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<(u32, u32)>,
    /// Device or CPU model name.
    pub hardware_sku: String,
    /// Driver version (empty when there is none).
    pub driver_version: String,
}

impl HwStamp {
    /// A CUDA device stamp.
    pub fn gpu(
        compute_capability: (u32, u32),
        hardware_sku: impl Into<String>,
        driver_version: impl Into<String>,
    ) -> Self {
        Self {
            compute_capability: Some(compute_capability),
            hardware_sku: hardware_sku.into(),
            driver_version: driver_version.into(),
        }
    }

    /// A host (CPU or emulator) stamp: no compute capability.
    pub fn cpu(hardware_sku: impl Into<String>, driver_version: impl Into<String>) -> Self {
        Self {
            compute_capability: None,
            hardware_sku: hardware_sku.into(),
            driver_version: driver_version.into(),
        }
    }
}

impl fmt::Display for HwStamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hardware_sku)?;
        if let Some((major, minor)) = self.compute_capability {
            write!(f, " sm_{major}{minor}")?;
        }
        if !self.driver_version.is_empty() {
            write!(f, " driver {}", self.driver_version)?;
        }
        Ok(())
    }
}

/// One implementation that was considered for a dispatch, with its measured latency when the
/// runtime timed it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Candidate {
    /// The candidate implementation.
    pub impl_id: ImplId,
    /// Measured latency; omitted on the wire when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<u64>,
}

/// A kernel was launched: which implementation was chosen for which structure, how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DispatchRecord {
    /// Wire schema version ([`TELEMETRY_SCHEMA`]).
    pub schema: u32,
    /// The structure the launch served; `None` when no key provider is attached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structure_key: Option<StructureKey>,
    /// The implementation that ran.
    pub chosen: ImplId,
    /// The implementations considered; empty (and omitted) for a coarse observation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
    /// Number of launches this record stands for (at least 1 when recorded).
    pub count: u64,
    /// Where it ran.
    pub hw: HwStamp,
}

impl DispatchRecord {
    /// One launch of `chosen`, with no candidates.
    pub fn new(structure_key: Option<StructureKey>, chosen: ImplId, hw: HwStamp) -> Self {
        Self {
            schema: TELEMETRY_SCHEMA,
            structure_key,
            chosen,
            candidates: Vec::new(),
            count: 1,
            hw,
        }
    }

    /// Sets the candidates considered.
    #[must_use]
    pub fn with_candidates(mut self, candidates: Vec<Candidate>) -> Self {
        self.candidates = candidates;
        self
    }

    /// Sets how many launches the record stands for.
    #[must_use]
    pub fn with_count(mut self, count: u64) -> Self {
        self.count = count;
        self
    }
}

/// A structure had no specialized kernel, so a generic fallback ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissRecord {
    /// Wire schema version ([`TELEMETRY_SCHEMA`]).
    pub schema: u32,
    /// The structure a specialized kernel was wanted for.
    pub wanted: StructureKey,
    /// The implementation that ran instead.
    pub fallback: ImplId,
    /// Number of launches this record stands for (at least 1 when recorded).
    pub count: u64,
    /// Where it ran.
    pub hw: HwStamp,
}

impl MissRecord {
    /// One fallback launch.
    pub fn new(wanted: StructureKey, fallback: ImplId, hw: HwStamp) -> Self {
        Self {
            schema: TELEMETRY_SCHEMA,
            wanted,
            fallback,
            count: 1,
            hw,
        }
    }

    /// Sets how many launches the record stands for.
    #[must_use]
    pub fn with_count(mut self, count: u64) -> Self {
        self.count = count;
        self
    }
}

/// The records counted per (kernel, reason): the same fields, each in its own file.
macro_rules! reason_records {
    ($(
        $(#[$doc:meta])*
        $name:ident {
            chosen: $chosen:literal,
            reason: $reason:literal,
            count: $count:literal,
            hw: $hw:literal,
            new: $new:literal,
        }
    )*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        pub struct $name {
            /// Wire schema version ([`TELEMETRY_SCHEMA`]).
            pub schema: u32,
            /// The structure the kernel serves; `None` when it has no key.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub structure_key: Option<StructureKey>,
            #[doc = $chosen]
            pub chosen: ImplId,
            #[doc = $reason]
            pub reason: String,
            #[doc = $count]
            pub count: u64,
            #[doc = $hw]
            pub hw: HwStamp,
        }

        impl $name {
            #[doc = $new]
            pub fn new(
                structure_key: Option<StructureKey>,
                chosen: ImplId,
                reason: impl Into<String>,
                hw: HwStamp,
            ) -> Self {
                Self::from_parts(structure_key, chosen, reason.into(), 1, hw)
            }

            /// Sets how many launches the record stands for.
            #[must_use]
            pub fn with_count(mut self, count: u64) -> Self {
                self.count = count;
                self
            }

            /// The record of a cell's counts, as the sink reads them.
            pub(crate) fn from_parts(
                structure_key: Option<StructureKey>,
                chosen: ImplId,
                reason: String,
                count: u64,
                hw: HwStamp,
            ) -> Self {
                Self {
                    schema: TELEMETRY_SCHEMA,
                    structure_key,
                    chosen,
                    reason,
                    count,
                    hw,
                }
            }
        }
    )*};
}

reason_records! {
    /// A launch of a kernel was declined: which kernel (its dispatch cell's identity), why (the
    /// error's [`kind_name`](crate::Error::kind_name)), how often. Written to `declines.jsonl`
    /// beside the dispatches.
    DeclineRecord {
        chosen: "The kernel whose launch was declined.",
        reason: "The kind of refusal: [`Error::kind_name`](crate::Error::kind_name), e.g. `element_count`.",
        count: "Number of declined launches this record stands for (at least 1 when recorded).",
        hw: "Where it was to run.",
        new: "One declined launch of `chosen` for `reason`.",
    }

    /// Launches of a kernel that faulted on the device after they were queued (a memory fault,
    /// a trap or a spent instruction budget on the emulator; a sticky driver error on CUDA):
    /// which kernel (its dispatch cell's identity), which fault (the error's
    /// [`kind_name`](crate::Error::kind_name)), how often. Written to `faults.jsonl`; a faulted
    /// launch is not counted among the cell's dispatches.
    FaultRecord {
        chosen: "The kernel whose launches faulted.",
        reason: "The kind of fault: [`Error::kind_name`](crate::Error::kind_name), e.g. `memory_fault` or `driver`.",
        count: "Number of faulted launches this record stands for (at least 1 when recorded).",
        hw: "Where it ran.",
        new: "One faulted launch of `chosen` for `reason`.",
    }
}

/// Records that found no cell because the sink was full. Written as `overflow.json` beside the
/// JSONL files so a reader knows the histogram is incomplete and by how much.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverflowRecord {
    /// Wire schema version ([`TELEMETRY_SCHEMA`]).
    pub schema: u32,
    /// Dispatch launches (summed counts) that were not given a cell.
    pub dispatch_records: u64,
    /// Miss launches (summed counts) that were not given a cell.
    pub miss_records: u64,
    /// Declined launches (summed counts) that were not given a cell; omitted when zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub decline_records: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl OverflowRecord {
    /// Nothing overflowed.
    pub fn empty() -> Self {
        Self {
            schema: TELEMETRY_SCHEMA,
            dispatch_records: 0,
            miss_records: 0,
            decline_records: 0,
        }
    }
}

/// `u64` as a fixed-width hex string; also accepts a JSON integer, for hand-written files.
mod hex_u64 {
    use std::fmt;

    use serde::de::{self, Visitor};

    use super::{Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("{value:016x}"))
    }

    struct HexVisitor;

    impl Visitor<'_> for HexVisitor {
        type Value = u64;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a hex string of 1 to 16 digits or an unsigned integer")
        }

        fn visit_u64<E: de::Error>(self, value: u64) -> Result<u64, E> {
            Ok(value)
        }

        fn visit_str<E: de::Error>(self, text: &str) -> Result<u64, E> {
            let digits = text.strip_prefix("0x").unwrap_or(text);
            let well_formed =
                (1..=16).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_hexdigit());
            if !well_formed {
                return Err(E::invalid_value(de::Unexpected::Str(text), &self));
            }
            u64::from_str_radix(digits, 16)
                .map_err(|_| E::invalid_value(de::Unexpected::Str(text), &self))
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        deserializer.deserialize_any(HexVisitor)
    }
}

/// Twin of [`DispatchRecord`] for the flush path: borrows instead of cloning, and takes any
/// serializable stand-in for the key components (the sink passes its interned, pre-encoded
/// ones). Kept here, beside the owned type, so the two cannot drift apart in field names or
/// order; the golden tests compare their bytes.
#[derive(Serialize)]
pub(crate) struct DispatchLine<'a, K, I, H> {
    pub(crate) schema: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) structure_key: Option<&'a K>,
    pub(crate) chosen: &'a I,
    #[serde(skip_serializing_if = "<[Candidate]>::is_empty")]
    pub(crate) candidates: &'a [Candidate],
    pub(crate) count: u64,
    pub(crate) hw: &'a H,
}

/// Twin of [`MissRecord`] for the flush path; see [`DispatchLine`].
#[derive(Serialize)]
pub(crate) struct MissLine<'a, K, I, H> {
    pub(crate) schema: u32,
    pub(crate) wanted: &'a K,
    pub(crate) fallback: &'a I,
    pub(crate) count: u64,
    pub(crate) hw: &'a H,
}

/// Twin of [`DeclineRecord`] and of [`FaultRecord`] (the same fields) for the flush path; see
/// [`DispatchLine`].
#[derive(Serialize)]
pub(crate) struct DeclineLine<'a, K, I, H> {
    pub(crate) schema: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) structure_key: Option<&'a K>,
    pub(crate) chosen: &'a I,
    pub(crate) reason: &'a str,
    pub(crate) count: u64,
    pub(crate) hw: &'a H,
}
