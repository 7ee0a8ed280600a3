//! `load()`: the host-side proof that an artifact's entry exists and takes exactly the parameters
//! its ABI implies. No driver is involved.
//!
//! PTX is verified directly. A cubin's body cannot be read, so it is proven through the PTX of
//! the same compile (sealed in its provenance) — the same [`load_ptx`] every PTX goes through —
//! and its own recorded parameter offsets and sizes are checked against the layout. A fatbin's
//! PTX images go through [`load_ptx`] as well.

use jitseam_ptx::{CubinEntry, ImageKind, parse_cubin, parse_fatbin};
use std::sync::Arc;

use jitseam_verify::{ClaimTarget, Coverage, Proof, verify_entry, verify_guarded_entry};

use super::params::verify_entry_params;
use crate::abi::{AbiContract, ExpectedParam, ParamLayout};
use crate::artifact::{Artifact, ArtifactKind};
use crate::device::{GuardSite, GuardTable};
use crate::error::{Error, MangledEntry, ParamLists};
use crate::seal;
use crate::state::{FatbinChoice, GuardedEntry, LoadedData, LoadedImage};

/// Whether the body must be proven, or the caller vouched for it (`Kernel::load_unverified`).
/// Only the body proof is skipped under [`Trust::Vouched`]; every parameter check still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trust {
    /// `load()`: proven, or proven with run-time guards on the accesses the proof leaves.
    Verify,
    /// `load_proven()`: every access proven, no guard.
    Proven,
    /// `load_unverified()`.
    Vouched,
}

/// What verifying one PTX module proved about the entry.
struct PtxFacts {
    version: jitseam_ptx::Version,
    target: jitseam_ptx::Target,
    address_size: Option<u32>,
    entry: jitseam_ptx::Entry,
    /// The packet layout, with the pointee alignments the entry's `.ptr .align N` declare.
    layout: ParamLayout,
    /// What the body verifier proved; `None` under [`Trust::Vouched`].
    proof: Option<Proof>,
    /// What a body proven with guards launches with.
    guarded: Option<Arc<GuardedEntry>>,
}

/// What `load()` proves, for every kind of artifact.
/// `names` are the signature's declared names, which a guard failure prints.
pub(super) fn verify(
    artifact: &Artifact,
    trust: Trust,
    names: &[&str],
) -> Result<LoadedData, Error> {
    let expected = artifact.abi.expected_params();
    match artifact.kind {
        ArtifactKind::Ptx => {
            let text = utf8(artifact, &artifact.bytes)?;
            let facts = load_ptx(artifact, text, &expected, trust, names)?;
            Ok(loaded(
                Some(facts),
                None,
                &expected,
                LoadedImage::Ptx,
                trust,
            ))
        }
        ArtifactKind::Cubin => load_cubin(artifact, &expected, trust, names),
        ArtifactKind::Fatbin => load_fatbin(artifact, &expected, trust),
    }
}

fn utf8<'a>(artifact: &Artifact, bytes: &'a [u8]) -> Result<&'a str, Error> {
    std::str::from_utf8(bytes).map_err(|e| Error::InvalidUtf8 {
        entry: artifact.link.entry_point.clone(),
        valid_up_to: e.valid_up_to(),
    })
}

fn loaded(
    ptx: Option<PtxFacts>,
    cubin_arch: Option<jitseam_ptx::SmArch>,
    expected: &[ExpectedParam],
    image: LoadedImage,
    trust: Trust,
) -> LoadedData {
    let target = match (&ptx, cubin_arch) {
        (_, Some(arch)) => jitseam_ptx::Target {
            arch: arch.to_string(),
            modifiers: Vec::new(),
        },
        (Some(facts), None) => facts.target.clone(),
        (None, None) => jitseam_ptx::Target {
            arch: String::new(),
            modifiers: Vec::new(),
        },
    };
    match ptx {
        Some(facts) => LoadedData {
            version: Some(facts.version),
            target,
            address_size: facts.address_size,
            entry: Some(facts.entry),
            layout: facts.layout,
            image,
            body_verified: trust != Trust::Vouched,
            proof: facts.proof,
            guarded: facts.guarded,
        },
        None => LoadedData {
            version: None,
            target,
            address_size: None,
            entry: None,
            layout: ParamLayout::new(expected),
            image,
            body_verified: false,
            proof: None,
            guarded: None,
        },
    }
}

/// Parses PTX text, finds the entry named by the link's symbol and verifies its `.param` list
/// against the spec. Every PTX jitseam loads passes here — the artifact's own, a cubin's linked
/// PTX, a fatbin's PTX images — so a check added here covers them all; the body proof, which
/// `load_unverified` skips, belongs here under [`Trust::Verify`].
fn load_ptx(
    artifact: &Artifact,
    text: &str,
    expected: &[ExpectedParam],
    trust: Trust,
    names: &[&str],
) -> Result<PtxFacts, Error> {
    // The borrowed scan validates the whole module like `parse_module`, but only the one
    // entry this kernel needs is converted into owned data.
    let index = jitseam_ptx::scan_module(text).map_err(|detail| Error::Ptx {
        entry: artifact.link.entry_point.clone(),
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
    let layout = verify_entry_params(&entry, expected)?;
    let rejected = |rejection| Error::BodyRejected {
        entry: symbol.to_owned(),
        rejection: Box::new(rejection),
    };
    let contract = artifact.abi.contract();
    let proof = match trust {
        Trust::Verify => Some(verify_guarded_entry(text, symbol, &contract).map_err(rejected)?),
        Trust::Proven => Some(verify_entry(text, symbol, &contract).map_err(rejected)?),
        Trust::Vouched => None,
    };
    let guarded = proof
        .as_ref()
        .and_then(|proof| guarded_entry(artifact, &layout, proof, names));
    Ok(PtxFacts {
        version: index.version,
        target: index.target,
        address_size: index.address_size,
        entry,
        layout,
        proof,
        guarded,
    })
}

/// What the launches of a body proven with guards need: the rewritten PTX, the packet with
/// the hidden parameters, and each guard's line and operand (by its declared name where the
/// signature has one). `None` for a body proven as written.
fn guarded_entry(
    artifact: &Artifact,
    layout: &ParamLayout,
    proof: &Proof,
    names: &[&str],
) -> Option<Arc<GuardedEntry>> {
    let rewritten = proof.guarded()?;
    let sites = proof
        .guards()
        .iter()
        .map(|guard| {
            let declared = match &guard.target {
                ClaimTarget::Param(q) => layout.params().get(*q as usize).and_then(|placed| {
                    crate::error::declared_name(&artifact.abi, names, placed.role)
                }),
                ClaimTarget::Shared(_) => None,
            };
            GuardSite {
                line: guard.line,
                operand: declared.unwrap_or_else(|| guard.name.clone()),
                bytes: guard.bytes,
            }
        })
        .collect();
    Some(Arc::new(GuardedEntry {
        ptx: rewritten.ptx.clone(),
        hidden: rewritten.params.clone(),
        layout: layout.with_hidden_words(rewritten.params.len()),
        table: Arc::new(GuardTable {
            entry: artifact.link.entry_point.clone(),
            sites,
        }),
    }))
}

/// A cubin: its recorded parameters against the layout, and its body through the sealed PTX of
/// the same compile — or, vouched for by the caller, without.
fn load_cubin(
    artifact: &Artifact,
    expected: &[ExpectedParam],
    trust: Trust,
    names: &[&str],
) -> Result<LoadedData, Error> {
    let cubin = parse_cubin(&artifact.bytes).map_err(|detail| Error::Cubin {
        entry: artifact.link.entry_point.clone(),
        detail,
    })?;
    let entry = cubin_entry(artifact, &cubin)?;
    check_cubin_params(artifact, entry, expected)?;
    let linked = artifact
        .provenance
        .as_ref()
        .and_then(|p| p.linked_ptx.as_ref())
        .filter(|link| seal::verify(&link.text, &artifact.bytes, &link.seal));
    let facts = match (linked, trust) {
        (Some(link), _) => Some(load_ptx(artifact, &link.text, expected, trust, names)?),
        (None, Trust::Verify | Trust::Proven) => {
            return Err(Error::CubinUnverified {
                entry: artifact.link.entry_point.clone(),
            });
        }
        (None, Trust::Vouched) => None,
    };
    let image = LoadedImage::Cubin {
        arch: cubin.arch,
        entry: entry.clone(),
        linked_ptx: facts.is_some(),
    };
    Ok(loaded(facts, Some(cubin.arch), expected, image, trust))
}

fn cubin_entry<'c>(
    artifact: &Artifact,
    cubin: &'c jitseam_ptx::Cubin,
) -> Result<&'c CubinEntry, Error> {
    cubin
        .entry(artifact.symbol())
        .ok_or_else(|| Error::EntryNotFound {
            entry: artifact.symbol().to_owned(),
            available: cubin.entry_names().map(str::to_owned).collect(),
            mangled: cubin
                .entry_names()
                .find_map(|name| demangles_to(name, artifact.symbol())),
        })
}

/// A cubin records offsets and sizes only (no types): count, then each offset and size.
fn check_cubin_params(
    artifact: &Artifact,
    entry: &CubinEntry,
    expected: &[ExpectedParam],
) -> Result<(), Error> {
    let name = &artifact.link.entry_point;
    if entry.params.len() != expected.len() {
        return Err(Error::ParamCount {
            entry: name.clone(),
            expected: expected.len(),
            found: entry.params.len(),
            lists: Box::new(ParamLists::new(
                expected.to_vec(),
                // A cubin records no types: each parameter's size and offset.
                entry
                    .params
                    .iter()
                    .map(|p| format!("{} bytes at {}", p.size, p.offset))
                    .collect(),
            )),
        });
    }
    let layout = ParamLayout::new(expected);
    for (index, (placed, found)) in layout.params().iter().zip(&entry.params).enumerate() {
        let (offset, size) = (found.offset as usize, found.size as usize);
        if placed.offset != offset || placed.class.size() != size {
            return Err(Error::CubinParamMismatch {
                entry: name.clone(),
                index,
                expected_offset: placed.offset,
                expected_size: placed.class.size(),
                found_offset: offset,
                found_size: size,
            });
        }
    }
    Ok(())
}

/// A fatbin: every readable PTX image verified like any PTX; under [`Trust::Vouched`] also its
/// cubins, by their recorded parameters. `bind()` loads whichever image suits the device, so the
/// facts a launch checks hold for each PTX image: every proof's conditions, and for each pointer
/// the strictest alignment any image declares for it.
fn load_fatbin(
    artifact: &Artifact,
    expected: &[ExpectedParam],
    trust: Trust,
) -> Result<LoadedData, Error> {
    let entry_name = &artifact.link.entry_point;
    let bytes = &artifact.bytes;
    let fatbin = parse_fatbin(bytes).map_err(|detail| Error::Fatbin {
        entry: entry_name.clone(),
        detail,
    })?;
    let fatbin_error = |detail| Error::Fatbin {
        entry: entry_name.clone(),
        detail,
    };
    let mut choices = Vec::new();
    let mut lowest_ptx: Option<(u32, PtxFacts)> = None;
    // `bind()` may pick any of the PTX images, so what a launch must check is what any of their
    // proofs needs: every condition of every image, and one thread per element if any needs it;
    // and what any of their parameter lists declares: the strictest pointee alignment.
    let mut needs: Option<Proof> = None;
    let mut aligned: Option<ParamLayout> = None;
    let mut first_cubin = None;
    for image in fatbin.images.iter().filter(|i| i.compression.is_none()) {
        match image.kind {
            ImageKind::Ptx => {
                let text = image.ptx_text(bytes).map_err(fatbin_error)?;
                // `bind()` picks an image by the device: each is proven as written, so that
                // whichever it picks runs with what every launch checks.
                let strict = match trust {
                    Trust::Verify => Trust::Proven,
                    other => other,
                };
                let facts = load_ptx(artifact, text, expected, strict, &[])?;
                aligned = Some(match aligned.take() {
                    None => facts.layout.clone(),
                    Some(both) => strictest_alignment(both, &facts.layout),
                });
                if let Some(proof) = &facts.proof {
                    needs = Some(match needs.take() {
                        None => proof.clone(),
                        Some(both) => strictest(both, proof),
                    });
                }
                if lowest_ptx.as_ref().is_none_or(|(sm, _)| image.sm < *sm) {
                    lowest_ptx = Some((image.sm, facts));
                }
            }
            ImageKind::Cubin if trust == Trust::Vouched => {
                let payload = image.payload(bytes).map_err(fatbin_error)?;
                let cubin = parse_cubin(payload).map_err(|detail| Error::Cubin {
                    entry: entry_name.clone(),
                    detail,
                })?;
                check_cubin_params(artifact, cubin_entry(artifact, &cubin)?, expected)?;
                first_cubin.get_or_insert(cubin.arch);
            }
            // On the safe path a cubin's body cannot be proven; other kinds are not code we run.
            _ => continue,
        }
        choices.push(FatbinChoice {
            kind: image.kind,
            sm: image.sm,
            payload: image.payload.clone(),
        });
    }
    if choices.is_empty() {
        let wanted = match trust {
            Trust::Verify | Trust::Proven => {
                "with readable ptx (its cubins load only through `Kernel::load_unverified`)"
            }
            Trust::Vouched => "that jitseam can read",
        };
        return Err(Error::NoFatbinImage {
            entry: entry_name.clone(),
            wanted: wanted.to_owned(),
            available: fatbin
                .images
                .iter()
                .map(|i| match i.compression {
                    Some(c) => format!("{} {} ({c:?}-compressed)", i.arch_name(), i.kind),
                    None => format!("{} {}", i.arch_name(), i.kind),
                })
                .collect(),
        });
    }
    let facts = lowest_ptx.map(|(_, mut facts)| {
        facts.proof = needs;
        if let Some(layout) = aligned {
            facts.layout = layout;
        }
        facts
    });
    let cubin_arch = if facts.is_none() { first_cubin } else { None };
    let image = LoadedImage::Fatbin { images: choices };
    Ok(loaded(facts, cubin_arch, expected, image, trust))
}

/// How deep the demangler may recurse: kernels' names nest a few levels (a template's
/// arguments, a pointer's pointee); the demangler's own defaults (96 and 128) need more stack
/// than a small thread has in an unoptimized build.
#[cfg(feature = "demangle")]
const DEMANGLE_DEPTH: u32 = 16;

/// `name` and what it demangles to, when it is a C++-mangled function whose unqualified name is
/// `symbol`: the kernel was compiled without `extern "C"`.
///
/// Only a name that spells `symbol` as a source name (`<length><symbol>`) can demangle to it, so
/// others are not demangled at all; and the demangler, which recurses once per level of nesting
/// in the name, is held to [`DEMANGLE_DEPTH`] levels so that a caller's small stack suffices.
#[cfg(feature = "demangle")]
fn demangles_to(name: &str, symbol: &str) -> Option<Box<MangledEntry>> {
    if !name.starts_with("_Z") || !name.contains(&format!("{}{symbol}", symbol.len())) {
        return None;
    }
    let parse = cpp_demangle::ParseOptions::default().recursion_limit(DEMANGLE_DEPTH);
    let print = cpp_demangle::DemangleOptions::new().recursion_limit(DEMANGLE_DEPTH);
    let demangled = cpp_demangle::Symbol::new_with_options(name.as_bytes(), &parse)
        .ok()?
        .demangle_with_options(&print)
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

/// `one` with each pointer's pointee alignment the larger of its own and `other`'s (the same
/// parameter list, verified against the same spec, of another image): alignments are powers of
/// two, so an address the larger divides, the smaller divides too.
fn strictest_alignment(mut one: ParamLayout, other: &ParamLayout) -> ParamLayout {
    for index in 0..one.params().len() {
        let align = other.pointee_align(index);
        if align > one.pointee_align(index) {
            one.require_pointee_align(index, align);
        }
    }
    one
}

/// Without the demangler no name is recognized as mangled: the hint is left out.
#[cfg(not(feature = "demangle"))]
fn demangles_to(_name: &str, _symbol: &str) -> Option<Box<MangledEntry>> {
    None
}

/// A proof whose launch requirements are those of `one` and of `other` together.
fn strictest(mut one: Proof, other: &Proof) -> Proof {
    if other.coverage == Coverage::OneThreadPerElement {
        one.coverage = Coverage::OneThreadPerElement;
    }
    for condition in &other.conditions {
        if !one.conditions.contains(condition) {
            one.conditions.push(*condition);
        }
    }
    one
}
