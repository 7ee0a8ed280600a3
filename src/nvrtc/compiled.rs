//! [`Compiled`]: what one NVRTC program produced, and the artifacts made from it.

use crate::abi::AbiSpec;
use crate::artifact::{Artifact, ArtifactKind, LinkedPtx, Provenance};
use crate::seal;

/// Where a [`Compiled`] came from: only NVRTC output seen by this process, directly or through a
/// cache entry whose MAC verifies under the cache's per-user secret, may seal a cubin to its PTX.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    /// `nvrtc::compile` in this process, or a cache entry one of this user's processes wrote
    /// after such a compile (its MAC verified).
    Nvrtc,
    /// Built by the caller with [`Compiled::from_parts`].
    External,
}

/// The output of one NVRTC program: PTX, the cubin when the target was `sm_XY`, the log, and the
/// NVRTC version — plus what went in (target, options, a hash of the source), recorded as the
/// artifacts' [`Provenance`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    pub(super) ptx: String,
    pub(super) cubin: Option<Vec<u8>>,
    pub(super) log: String,
    pub(super) version: (u32, u32),
    pub(super) target: String,
    pub(super) options: Vec<String>,
    pub(super) source_sha256: String,
    pub(super) origin: Origin,
}

impl Compiled {
    /// A `Compiled` from parts made elsewhere (another compiler, a test). Its cubin is never
    /// sealed to its PTX: jitseam did not see them come out of one program, so a cubin artifact
    /// made from it loads only through `Kernel::load_unverified`.
    pub fn from_parts(
        ptx: impl Into<String>,
        cubin: Option<Vec<u8>>,
        log: impl Into<String>,
        version: (u32, u32),
        target: impl Into<String>,
    ) -> Self {
        Self {
            ptx: ptx.into(),
            cubin,
            log: log.into(),
            version,
            target: target.into(),
            options: Vec::new(),
            source_sha256: String::new(),
            origin: Origin::External,
        }
    }

    /// The PTX text.
    pub fn ptx(&self) -> &str {
        &self.ptx
    }

    /// The cubin, when the target was `sm_XY`.
    pub fn cubin(&self) -> Option<&[u8]> {
        self.cubin.as_deref()
    }

    /// NVRTC's log (warnings; empty for a clean compile).
    pub fn log(&self) -> &str {
        &self.log
    }

    /// NVRTC's `(major, minor)` version.
    pub fn nvrtc_version(&self) -> (u32, u32) {
        self.version
    }

    /// The target, e.g. `sm_90`.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The arguments NVRTC was given.
    pub fn options(&self) -> &[String] {
        &self.options
    }

    /// Whether this came from NVRTC in this process (or from a compile-cache entry this user's
    /// processes wrote, its MAC verified), so that its cubin artifact carries a sealed link to the
    /// PTX.
    pub fn is_from_nvrtc(&self) -> bool {
        self.origin == Origin::Nvrtc
    }

    fn provenance(&self, linked_ptx: Option<LinkedPtx>) -> Provenance {
        Provenance {
            compiler: format!("nvrtc {}.{}", self.version.0, self.version.1),
            target: self.target.clone(),
            options: self.options.clone(),
            source_sha256: self.source_sha256.clone(),
            linked_ptx,
        }
    }

    /// The PTX as an artifact for kernel `entry` with ABI `abi`.
    pub fn ptx_artifact(&self, entry: &str, abi: AbiSpec) -> Artifact {
        let mut artifact = Artifact::ptx(self.ptx.clone(), entry, abi);
        artifact.provenance = Some(self.provenance(None));
        artifact
    }

    /// The cubin as an artifact for kernel `entry`, linked to the PTX of the same program
    /// (sealed when it came from NVRTC, see [`Compiled::is_from_nvrtc`]); `None` without a
    /// cubin.
    pub fn cubin_artifact(&self, entry: &str, abi: AbiSpec) -> Option<Artifact> {
        let cubin = self.cubin.as_ref()?;
        let linked = LinkedPtx {
            text: self.ptx.clone(),
            seal: match self.origin {
                Origin::Nvrtc => seal::seal(&self.ptx, cubin),
                Origin::External => String::new(),
            },
        };
        let mut artifact = Artifact::ptx(String::new(), entry, abi);
        artifact.bytes = cubin.clone();
        artifact.kind = ArtifactKind::Cubin;
        artifact.provenance = Some(self.provenance(Some(linked)));
        Some(artifact)
    }

    /// The best artifact: the cubin (linked to its PTX) when there is one, else the PTX.
    pub fn artifact(&self, entry: &str, abi: AbiSpec) -> Artifact {
        self.cubin_artifact(entry, abi.clone())
            .unwrap_or_else(|| self.ptx_artifact(entry, abi))
    }
}
