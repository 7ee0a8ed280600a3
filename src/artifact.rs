//! [`Artifact`]: what a synthesizer or compiler hands to jitseam. Pure data, serde.

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
        }
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
    /// A compiled cubin (not verifiable yet: `load()` refuses it).
    Cubin,
}

/// Where to enter the artifact, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LinkEntry {
    /// The kernel's name as its author knows it.
    pub entry_point: String,
    /// The symbol in the module (for `extern "C"` kernels, the same as `entry_point`).
    pub symbol: String,
    /// The structure key of the region the kernel implements, for telemetry.
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
