//! [`Artifact`]: what a synthesizer or compiler hands to jitseam. Pure data, serde.
//!
//! An artifact holds PTX text, a cubin or a fatbin ([`ArtifactKind`]). One made by
//! [`crate::nvrtc`] also records how it was made ([`Provenance`]); a cubin from NVRTC carries the
//! PTX of the same program ([`LinkedPtx`]), which is what lets `load()` prove the cubin's body
//! through its PTX.

use serde::{Deserialize, Serialize};

use crate::abi::AbiSpec;

/// A kernel artifact: its bytes, what they are, where to enter, and the ABI it claims.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    /// PTX text or a cubin image.
    pub bytes: Vec<u8>,
    /// What `bytes` hold.
    pub kind: ArtifactKind,
    /// The entry point and provenance.
    pub link: LinkEntry,
    /// The calling convention the artifact claims; `load()` verifies it against the bytes.
    pub abi: AbiSpec,
    /// Which region value feeds each runtime param, in param order. Explicit so a launcher never
    /// has to guess the synthesizer's numbering (the seeds filled pre-order what was numbered
    /// post-order).
    #[serde(default)]
    pub param_map: Vec<ParamSource>,
    /// How the artifact was made, when a compiler recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

impl Artifact {
    /// A PTX artifact whose entry point and symbol are both `entry`.
    pub fn ptx(text: impl Into<String>, entry: impl Into<String>, abi: AbiSpec) -> Self {
        let entry = entry.into();
        Self {
            bytes: text.into().into_bytes(),
            kind: ArtifactKind::Ptx,
            link: LinkEntry {
                entry_point: entry.clone(),
                symbol: entry,
                structure_key: None,
                revision_hash: None,
            },
            abi,
            param_map: Vec::new(),
            provenance: None,
        }
    }

    /// The same artifact with `key` as its structure key ([`LinkEntry::structure_key`]): what
    /// its telemetry is grouped by.
    #[must_use]
    pub fn with_structure_key(mut self, key: impl Into<String>) -> Self {
        self.link.structure_key = Some(key.into());
        self
    }

    /// A cubin artifact whose entry point and symbol are both `entry`, with no provenance: its
    /// body cannot be proven, so it loads only through `Kernel::load_unverified`.
    pub fn cubin(image: impl Into<Vec<u8>>, entry: impl Into<String>, abi: AbiSpec) -> Self {
        Self {
            kind: ArtifactKind::Cubin,
            ..Self::ptx(String::new(), entry, abi).with_bytes(image.into())
        }
    }

    /// A fatbin artifact whose entry point and symbol are both `entry`.
    pub fn fatbin(image: impl Into<Vec<u8>>, entry: impl Into<String>, abi: AbiSpec) -> Self {
        Self {
            kind: ArtifactKind::Fatbin,
            ..Self::ptx(String::new(), entry, abi).with_bytes(image.into())
        }
    }

    fn with_bytes(mut self, bytes: Vec<u8>) -> Self {
        self.bytes = bytes;
        self
    }

    /// The symbol the module is entered by.
    pub fn symbol(&self) -> &str {
        &self.link.symbol
    }

    /// A stable 64-bit revision: the link's `revision_hash` when it is a hex number (what
    /// synthesizers record), else a hash of the bytes — so telemetry can tell two revisions of
    /// one kernel apart across runs.
    pub fn revision(&self) -> u64 {
        self.link
            .revision_hash
            .as_deref()
            .and_then(|h| u64::from_str_radix(h.trim_start_matches("0x"), 16).ok())
            .unwrap_or_else(|| fnv1a(&self.bytes))
    }
}

/// FNV-1a: a stable 64-bit hash (std's `DefaultHasher` may change between releases; names and
/// revisions must not).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The format of [`Artifact::bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactKind {
    /// PTX assembly text.
    Ptx,
    /// A cubin (an ELF image for one SM architecture). Its body cannot be read, so it loads on
    /// the safe path only with [`LinkedPtx`] from the same compile.
    Cubin,
    /// A fatbin: cubins and PTX for several architectures; the image is chosen at `bind()`.
    Fatbin,
}

/// How an artifact was made.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Provenance {
    /// The compiler and its version, e.g. `nvrtc 12.9`.
    pub compiler: String,
    /// The target architecture it compiled for, e.g. `sm_90` or `compute_80`.
    pub target: String,
    /// Every option passed to the compiler, in order.
    pub options: Vec<String>,
    /// SHA-256 of the source text, in hex.
    pub source_sha256: String,
    /// For a cubin: the PTX the same compiler program produced, and the seal that proves the
    /// pair came out of one program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linked_ptx: Option<LinkedPtx>,
}

/// The PTX of the compile that produced a cubin artifact.
///
/// `load()` proves the cubin through this PTX only when `seal` verifies: jitseam seals a link
/// only where it saw both come out of one NVRTC program, with a key private to the process. A
/// link written by hand, or carried in from another process, does not verify, and the cubin then
/// loads only through `Kernel::load_unverified`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LinkedPtx {
    /// The PTX text.
    pub text: String,
    /// Hex SHA-256 over a per-process key, the PTX and the cubin.
    pub seal: String,
}

/// Where to enter the artifact, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LinkEntry {
    /// The kernel's name as its author knows it.
    pub entry_point: String,
    /// The symbol in the module (for `extern "C"` kernels, the same as `entry_point`).
    pub symbol: String,
    /// The structure key: your runtime's name for the shape of work the kernel serves (op class,
    /// dtypes, layout; `ew:add:f32:contiguous`), which jitseam never interprets. Telemetry
    /// groups by it: it is the `structure_key` of every dispatch, decline and fault record of
    /// the kernel (see [`Device::attach_telemetry`](crate::Device::attach_telemetry)), and the
    /// op of its implementation id; without one, records have no key and the entry point is
    /// the op. The reference synthesizer sets it; set your own with
    /// [`Artifact::with_structure_key`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structure_key: Option<String>,
    /// A hash identifying the synthesizer revision that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_hash: Option<String>,
}

/// The region value that feeds one runtime param.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ParamSource {
    /// The region node, numbered in the synthesizer's recorded order.
    pub node: u32,
    /// Which of that node's scalars.
    pub scalar: u32,
}
