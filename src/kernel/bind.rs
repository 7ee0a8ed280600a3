//! `bind()`: the module on a device, the function resolved, the architecture and the driver's own
//! parameter layout checked.

use std::sync::Arc;

use crate::artifact::Artifact;
use crate::device::{BackendFunction, Device};
use crate::error::Error;
use crate::state::LoadedData;

/// Loads the module on `device`, resolves the entry, checks the architecture and cross-checks the
/// parameter layout with the driver where it reports one: what `bind()` proves.
pub(super) fn resolve(
    artifact: &Artifact,
    loaded: &LoadedData,
    device: &Device,
) -> Result<Arc<dyn BackendFunction>, Error> {
    let entry = &artifact.link.entry_point;
    check_arch(entry, loaded.target(), device)?;
    // `load()` proved the bytes are UTF-8; re-validating costs one pass and keeps this path
    // free of unchecked conversions.
    let text = std::str::from_utf8(&artifact.bytes).map_err(|e| Error::InvalidUtf8 {
        entry: entry.clone(),
        valid_up_to: e.valid_up_to(),
    })?;
    let function = device.backend().load_function(text, artifact.symbol())?;
    if let Some(reported) = function.param_info()? {
        let layout = loaded.layout().params();
        if reported.len() != layout.len() {
            return Err(Error::DriverParamCount {
                entry: entry.clone(),
                expected: layout.len(),
                found: reported.len(),
            });
        }
        for (index, (placed, &(offset, size))) in layout.iter().zip(&reported).enumerate() {
            if placed.offset != offset || placed.class.size() != size {
                return Err(Error::DriverParamMismatch {
                    entry: entry.clone(),
                    index,
                    expected_offset: placed.offset,
                    expected_size: placed.class.size(),
                    found_offset: offset,
                    found_size: size,
                });
            }
        }
    }
    Ok(function)
}

/// Refuses PTX the device cannot run, before the driver's JIT fails with a vaguer message:
/// `sm_XY` needs compute capability ≥ X.Y; `sm_XYa` runs only on exactly X.Y; `sm_XYf` on the
/// same major version at X.Y or later. Devices without a compute capability (the emulator) and
/// targets without an SM number are left to the backend.
fn check_arch(entry: &str, target: &jitseam_ptx::Target, device: &Device) -> Result<(), Error> {
    let props = device.properties();
    let (Some((major, minor)), Some(required)) = (props.compute_capability, target.sm()) else {
        return Ok(());
    };
    let have = major * 10 + minor;
    let fits = match target.arch_suffix() {
        Some('a') => have == required,
        Some('f') => major == required / 10 && have >= required,
        _ => have >= required,
    };
    if fits {
        Ok(())
    } else {
        Err(Error::ArchTooNew {
            entry: entry.to_owned(),
            target: target.arch.clone(),
            device: have,
            device_name: props.name.clone(),
        })
    }
}
