//! `bind()`: the module on a device, the function resolved, the architecture and the driver's own
//! parameter layout checked.

use std::sync::Arc;

use crate::artifact::Artifact;
use crate::device::{BackendFunction, ConfigLimits, Device, dims3};
use crate::error::Error;
use jitseam_ptx::{ImageKind, PerfDirective};

use crate::state::{FatbinChoice, LoadedData, LoadedImage};

/// Loads the module on `device`, resolves the entry, checks the architecture and cross-checks the
/// parameter layout with the driver where it reports one: what `bind()` proves. Also answers
/// what a launch configuration of the function must fit.
pub(super) fn resolve(
    artifact: &Artifact,
    loaded: &LoadedData,
    device: &Device,
) -> Result<(Arc<dyn BackendFunction>, ConfigLimits), Error> {
    let function = load_image(artifact, loaded, device)?;
    if let Some(reported) = function.param_info()? {
        let entry = &artifact.link.entry_point;
        // A guarded rewrite takes its hidden parameters after the declared ones.
        let layout = loaded
            .guarded()
            .map_or(loaded.layout(), |g| &g.layout)
            .params();
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
    let limits = config_limits(loaded, device, &*function)?;
    Ok((function, limits))
}

/// What a launch configuration of this kernel on `device` must fit: the device's limits, the
/// function's static shared memory, and the block directives of the PTX entry (`.maxntid`,
/// `.reqntid`) or, for a cubin loaded without PTX, what its `.nv.info` records of them.
fn config_limits(
    loaded: &LoadedData,
    device: &Device,
    function: &dyn BackendFunction,
) -> Result<ConfigLimits, Error> {
    let mut limits = ConfigLimits {
        device: device.properties().limits,
        maxntid: None,
        reqntid: None,
        static_shared_bytes: function.static_shared_bytes()?,
    };
    if let Some(entry) = loaded.entry() {
        for directive in &entry.directives {
            match directive {
                PerfDirective::MaxNtid(dims) => limits.maxntid = Some(dims3(dims)),
                PerfDirective::ReqNtid(dims) => limits.reqntid = Some(dims3(dims)),
                _ => {}
            }
        }
    } else if let LoadedImage::Cubin { entry, .. } = loaded.image() {
        limits.maxntid = entry.max_threads;
        limits.reqntid = entry.required_threads;
    }
    Ok(limits)
}

/// Loads `text`, the PTX `load()` read, handing on the module it parsed when it kept one.
fn load_ptx(
    loaded: &LoadedData,
    text: &str,
    symbol: &str,
    device: &Device,
) -> Result<Arc<dyn BackendFunction>, Error> {
    match &loaded.parsed {
        Some(parsed) => device
            .backend()
            .load_resolved(text, symbol, &parsed.module, &parsed.entry),
        None => device.backend().load_function(text, symbol),
    }
}

/// Loads the image `load()` settled on — or, for a fatbin, the one for this device — after
/// checking that the device can run it.
fn load_image(
    artifact: &Artifact,
    loaded: &LoadedData,
    device: &Device,
) -> Result<Arc<dyn BackendFunction>, Error> {
    let entry = &artifact.link.entry_point;
    let symbol = artifact.symbol();
    let backend = device.backend();
    let props = device.properties();
    // A body proven with guards runs its guarded rewrite, whatever image it came as (a
    // cubin's own code has no guards).
    if let Some(guarded) = loaded.guarded() {
        check_arch(entry, loaded.target(), device)?;
        return backend.load_function(guarded.ptx(), symbol);
    }
    match loaded.image() {
        LoadedImage::Ptx => {
            check_arch(entry, loaded.target(), device)?;
            // `load()` proved the bytes are UTF-8; re-validating costs one pass and keeps this
            // path free of unchecked conversions.
            let text = std::str::from_utf8(&artifact.bytes).map_err(|e| Error::InvalidUtf8 {
                entry: entry.clone(),
                valid_up_to: e.valid_up_to(),
            })?;
            load_ptx(loaded, text, symbol, device)
        }
        LoadedImage::Cubin {
            arch, linked_ptx, ..
        } => match props.compute_capability {
            Some((major, minor)) if arch.runs_on(major, minor) => {
                backend.load_image(&artifact.bytes, symbol)
            }
            Some((major, minor)) => Err(Error::CubinArch {
                entry: entry.clone(),
                cubin: arch.to_string(),
                device: major * 10 + minor,
                device_name: props.name.clone(),
            }),
            // A backend without an SM architecture runs PTX: the verified PTX of the same
            // compile is the same program.
            None => match artifact
                .provenance
                .as_ref()
                .and_then(|p| p.linked_ptx.as_ref())
            {
                Some(link) if *linked_ptx => load_ptx(loaded, &link.text, symbol, device),
                _ => Err(Error::ImageUnsupported {
                    entry: entry.clone(),
                    backend: props.name.clone(),
                }),
            },
        },
        LoadedImage::Fatbin { images } => {
            let device_sm = props
                .compute_capability
                .map(|(major, minor)| major * 10 + minor);
            let exact_cubin = images
                .iter()
                .find(|i| i.kind == ImageKind::Cubin && Some(i.sm) == device_sm);
            let ptx = images
                .iter()
                .filter(|i| i.kind == ImageKind::Ptx && device_sm.is_none_or(|sm| i.sm <= sm))
                .max_by_key(|i| i.sm);
            match (exact_cubin, ptx) {
                (Some(cubin), _) => backend.load_image(payload(artifact, cubin)?, symbol),
                (None, Some(ptx)) => {
                    let text = ptx_text(artifact, payload(artifact, ptx)?)?;
                    // The image's own `.target` may still be arch-specific (`sm_90a`).
                    if let Ok(index) = jitseam_ptx::scan_module(text) {
                        check_arch(entry, &index.target, device)?;
                    }
                    backend.load_function(text, symbol)
                }
                (None, None) => Err(Error::NoFatbinImage {
                    entry: entry.clone(),
                    wanted: match device_sm {
                        Some(sm) => format!("for sm_{sm}"),
                        None => format!("for {} (it runs ptx only)", props.name),
                    },
                    available: images
                        .iter()
                        .map(|i| match i.kind {
                            ImageKind::Ptx => format!("compute_{} ptx", i.sm),
                            _ => format!("sm_{} {}", i.sm, i.kind),
                        })
                        .collect(),
                }),
            }
        }
    }
}

fn payload<'a>(artifact: &'a Artifact, choice: &FatbinChoice) -> Result<&'a [u8], Error> {
    artifact
        .bytes
        .get(choice.payload.clone())
        .ok_or_else(|| Error::Fatbin {
            entry: artifact.link.entry_point.clone(),
            detail: jitseam_ptx::FatbinError::Truncated {
                offset: choice.payload.start,
                what: "image payload",
            },
        })
}

/// A fatbin's PTX image without its NUL padding.
fn ptx_text<'a>(artifact: &Artifact, bytes: &'a [u8]) -> Result<&'a str, Error> {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let bytes = bytes.get(..end).unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|e| Error::InvalidUtf8 {
        entry: artifact.link.entry_point.clone(),
        valid_up_to: e.valid_up_to(),
    })
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
