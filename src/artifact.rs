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
