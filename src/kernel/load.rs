//! `load()`: the host-side proof that an artifact's entry exists and takes exactly the parameters
//! its ABI implies. No driver is involved.

use super::params::verify_entry_params;
use crate::artifact::{Artifact, ArtifactKind};
use crate::error::{Error, MangledEntry};
use crate::state::LoadedData;

/// Parses the PTX on the host, finds the entry named by the link's symbol and verifies its
/// `.param` list against the spec: what `load()` proves.
pub(super) fn verify(artifact: &Artifact) -> Result<LoadedData, Error> {
    let entry_name = &artifact.link.entry_point;
    if artifact.kind == ArtifactKind::Cubin {
        return Err(Error::CubinUnsupported {
            entry: entry_name.clone(),
        });
    }
    let text = std::str::from_utf8(&artifact.bytes).map_err(|e| Error::InvalidUtf8 {
        entry: entry_name.clone(),
        valid_up_to: e.valid_up_to(),
    })?;
    // The borrowed scan validates the whole module like `parse_module`, but only the one
    // entry this kernel needs is converted into owned data.
    let index = jitseam_ptx::scan_module(text).map_err(|detail| Error::Ptx {
        entry: entry_name.clone(),
        detail,
    })?;
    let symbol = artifact.symbol();
    let Some(entry) = index.entry(symbol).map(|entry| entry.to_owned()) else {
        return Err(Error::EntryNotFound {
            entry: symbol.to_owned(),
            available: index.entry_names().map(str::to_owned).collect(),
            mangled: index
                .entry_names()
                .find_map(|name| demangles_to(name, symbol)),
        });
    };
    let expected = artifact.abi.expected_params();
    let layout = verify_entry_params(&entry, &expected)?;
    Ok(LoadedData {
        layout,
        entry,
        version: index.version,
        target: index.target,
        address_size: index.address_size,
    })
}

/// `name` and what it demangles to, when it is a C++-mangled function whose unqualified name is
/// `symbol`: the kernel was compiled without `extern "C"`.
fn demangles_to(name: &str, symbol: &str) -> Option<Box<MangledEntry>> {
    if !name.starts_with("_Z") {
        return None;
    }
    let demangled = cpp_demangle::Symbol::new(name.as_bytes())
        .ok()?
        .demangle()
        .ok()?;
    let function = demangled.split('(').next()?;
    let unqualified = function.rsplit("::").next()?;
    (unqualified == symbol).then(|| {
        Box::new(MangledEntry {
            mangled: name.to_owned(),
            demangled,
        })
    })
}
