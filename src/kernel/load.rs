//! `load()`: the host-side proof that an artifact's entry exists and takes exactly the parameters
//! its ABI implies. No driver is involved.
//!
//! PTX is verified directly. A cubin's body cannot be read, so it is proven through the PTX of
//! the same compile (sealed in its provenance) — the same [`load_ptx`] every PTX goes through —
//! and its own recorded parameter offsets and sizes are checked against the layout. A fatbin's
//! PTX images go through [`load_ptx`] as well.

use std::sync::Arc;

use jitseam_ptx::{
    CubinEntry, ImageKind, PerfDirective, parse_cubin, parse_fatbin, parse_module,
    resolve::{ResolvedEntry, ResolvedModule},
};
use jitseam_verify::{
    Coverage, EntryContract, ParamContract, Proof, RejectKind, Rejection, verify_guarded,
    verify_resolved,
};

use super::params::verify_entry_params;
use super::proof_cache::ProofCache;
use crate::abi::HiddenWords;
use crate::abi::{AbiContract, AbiKind, AbiSpec, ExpectedParam, ParamLayout};
use crate::artifact::{Artifact, ArtifactKind};
use crate::device::{GuardSite, GuardTable, RecordCache};
use crate::error::{Error, MangledEntry, ParamLists};
use crate::seal;
use crate::state::{FatbinChoice, GuardedEntry, LoadedData, LoadedImage, ParsedPtx};

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
    /// The module and entry the verifier read, for `bind()` to hand on; `None` under
    /// [`Trust::Vouched`], which only scans the header.
    parsed: Option<Arc<ParsedPtx>>,
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
            let facts = load_ptx(artifact, text, &expected, trust, Directives::Checked, names)?;
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
            parsed: facts.parsed,
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
            parsed: None,
            guarded: None,
        },
    }
}

/// What [`Kernel::load`](super::Kernel::load) proves of the entry `entry` of a PTX module
/// already parsed and resolved from `text`, under `abi`: the spec is valid, the entry exists,
/// its `.param` list is exactly the ABI's, and its body is proven, or proven with run-time
/// guards ([`Proof::guards`]) — with `load()`'s errors.
///
/// For a tool that reports on every entry of one large module (`jitseam inspect --abi`): the
/// module is read once, and no kernel is built (a kernel keeps its own copy of the text).
pub fn prove_entry(
    text: &str,
    module: &ResolvedModule,
    entry: &str,
    abi: &AbiSpec,
) -> Result<Proof, Error> {
    abi.validate().map_err(|problem| Error::InvalidSpec {
        entry: entry.to_owned(),
        problem,
    })?;
    let Some(header) = module.entry_header(entry) else {
        return Err(Error::EntryNotFound {
            entry: entry.to_owned(),
            available: module
                .module
                .entries
                .iter()
                .map(|e| e.name.clone())
                .collect(),
            mangled: None,
        });
    };
    verify_entry_params(header, &abi.expected_params())
        .map_err(|error| error.with_declared_names(abi, &[]))?;
    let mut contract = abi.contract();
    contract.block = launch_shape(entry, abi, header, Directives::Checked)?;
    let (_, proof) = prove_body(text, module, header, abi, &contract, Trust::Verify)?;
    Ok(named(proof, abi, &abi.expected_params(), &[]))
}

/// The body proof of `header`'s entry in `module` under `contract` — strictly under
/// [`Trust::Proven`], else proven or guarded — and the entry resolved for it; a decline in the
/// words of `abi`'s declaration.
fn prove_body(
    text: &str,
    module: &ResolvedModule,
    header: &jitseam_ptx::Entry,
    abi: &AbiSpec,
    contract: &EntryContract,
    trust: Trust,
) -> Result<(ResolvedEntry, Proof), Error> {
    let symbol = header.name.as_str();
    let entry = module
        .entry(text, symbol)
        .map_err(|e| unparsed(symbol, &e))?;
    let proved = match trust {
        Trust::Proven => verify_resolved(text, module, &entry, contract),
        Trust::Verify | Trust::Vouched => verify_guarded(text, module, &entry, contract),
    };
    let proof = proved.map_err(|rejection| declined(symbol, header, abi, rejection))?;
    Ok((entry, proof))
}

/// `proof` with its guards naming their operands as the kernel declares them (`names`: a
/// typed kernel's; a custom signature's own), else by the ABI's roles (`in0`). Applied to each
/// load's proof, after the cache: two declarations of one contract may name it differently.
fn named(proof: Proof, abi: &AbiSpec, expected: &[ExpectedParam], names: &[&str]) -> Proof {
    let declared: Vec<String> = expected
        .iter()
        .map(|p| {
            crate::error::declared_name(abi, names, p.role).unwrap_or_else(|| p.role.short_name())
        })
        .collect();
    let declared: Vec<&str> = declared.iter().map(String::as_str).collect();
    proof.with_declared_names(&declared)
}

/// Each expected parameter's name as `spec` declares it: a custom signature's names, another
/// ABI's roles (`in0`, `n`).
fn declared_names(spec: &AbiSpec) -> Vec<String> {
    match &spec.abi {
        AbiKind::Custom(custom) => custom.params.iter().map(|p| p.name.to_string()).collect(),
        _ => spec
            .expected_params()
            .iter()
            .map(|p| p.role.short_name())
            .collect(),
    }
}

/// The refusal of a module whose body (or module-scope variables) the verifier cannot read.
fn unparsed(symbol: &str, error: &jitseam_ptx::ParseError) -> Error {
    Error::BodyRejected {
        entry: symbol.to_owned(),
        rejection: Box::new(Rejection::unparsed(error)),
        fix: None,
    }
}

/// Whose block directives every launch checks: those of the PTX being loaded
/// ([`Directives::Checked`]: the artifact's own PTX, a cubin's linked PTX, whose entry `bind()`
/// reads them from), or possibly another image's (a fatbin's PTX images, of which `bind()`
/// picks one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Directives {
    Checked,
    Unchecked,
}

/// Parses PTX text, finds the entry named by the link's symbol and verifies its `.param` list
/// against the spec. Every PTX jitseam loads passes here — the artifact's own, a cubin's linked
/// PTX, a fatbin's PTX images — so a check added here covers them all; the body proof, which
/// `load_unverified` skips, belongs here under [`Trust::Verify`] and [`Trust::Proven`].
fn load_ptx(
    artifact: &Artifact,
    text: &str,
    expected: &[ExpectedParam],
    trust: Trust,
    directives: Directives,
    names: &[&str],
) -> Result<PtxFacts, Error> {
    let ptx_error = |detail| Error::Ptx {
        entry: artifact.link.entry_point.clone(),
        detail,
    };
    let symbol = artifact.symbol();
    let no_entry = |names: &mut dyn Iterator<Item = &str>| {
        let available: Vec<String> = names.map(str::to_owned).collect();
        let mangled = available.iter().find_map(|name| demangles_to(name, symbol));
        Error::EntryNotFound {
            entry: symbol.to_owned(),
            available,
            mangled,
        }
    };
    match trust {
        Trust::Verify | Trust::Proven => {
            // Parsed and resolved once: the parameter check, the body proof and a backend that
            // runs PTX itself (the emulator's decoder, at `bind()`) all read this one module.
            let header = parse_module(text).map_err(ptx_error)?;
            let Some(found) = header.entry(symbol).cloned() else {
                return Err(no_entry(
                    &mut header.entries.iter().map(|e| e.name.as_str()),
                ));
            };
            let mut layout = verify_entry_params(&found, expected)?;
            require_vector_alignment(&mut layout, &artifact.abi);
            let mut contract = artifact.abi.contract();
            contract.block = launch_shape(
                &artifact.link.entry_point,
                &artifact.abi,
                &found,
                directives,
            )?;
            let module =
                ResolvedModule::with_module(text, header).map_err(|e| unparsed(symbol, &e))?;
            // A proof this process made of the same text, entry and contract spares the proof;
            // the module is still resolved, for `bind()` to hand on. The cache keeps proofs of
            // either trust: one without guards is the strict proof (a guarded proof is tried
            // strictly first), so `load_proven()` takes only those.
            let cache = ProofCache::global();
            let cached = cache
                .get(text, symbol, &contract)
                .filter(|proof| trust == Trust::Verify || proof.guards().is_empty());
            let (entry, proof) = match cached {
                Some(proof) => (
                    module
                        .entry(text, symbol)
                        .map_err(|e| unparsed(symbol, &e))?,
                    proof,
                ),
                None => {
                    let (entry, proof) =
                        prove_body(text, &module, &found, &artifact.abi, &contract, trust)?;
                    cache.insert(text, symbol, &contract, proof.clone());
                    (entry, proof)
                }
            };
            let proof = named(proof, &artifact.abi, expected, names);
            require_access_alignment(&mut layout, &contract, &proof);
            let guarded = guarded_entry(artifact, &layout, &proof);
            let (version, target, address_size) = (
                module.module.version,
                module.module.target.clone(),
                module.module.address_size,
            );
            // A guarded body binds its rewrite: the module resolved here is not what runs.
            let parsed = guarded
                .is_none()
                .then(|| Arc::new(ParsedPtx { module, entry }));
            Ok(PtxFacts {
                version,
                target,
                address_size,
                entry: found,
                layout,
                proof: Some(proof),
                parsed,
                guarded,
            })
        }
        Trust::Vouched => {
            // The borrowed scan validates the whole module like `parse_module`, but only the
            // one entry this kernel needs is converted into owned data.
            let index = jitseam_ptx::scan_module(text).map_err(ptx_error)?;
            let Some(entry) = index.entry(symbol).map(|entry| entry.to_owned()) else {
                return Err(no_entry(&mut index.entry_names()));
            };
            let mut layout = verify_entry_params(&entry, expected)?;
            require_vector_alignment(&mut layout, &artifact.abi);
            // Under either trust: a declared block the entry's directives contradict would be
            // refused at every launch.
            launch_shape(
                &artifact.link.entry_point,
                &artifact.abi,
                &entry,
                directives,
            )?;
            Ok(PtxFacts {
                version: index.version,
                target: index.target,
                address_size: index.address_size,
                entry,
                layout,
                proof: None,
                parsed: None,
                guarded: None,
            })
        }
    }
}

/// The exact block every launch of `entry` uses, if one is known: the block the signature
/// declares, else — where every launch checks this entry's directives — its `.reqntid`. A
/// declared block the entry's `.reqntid` or `.maxntid` contradicts is refused: no launch could
/// satisfy both.
fn launch_shape(
    name: &str,
    abi: &AbiSpec,
    entry: &jitseam_ptx::Entry,
    directives: Directives,
) -> Result<Option<[u32; 3]>, Error> {
    let declared = abi.abi.custom().and_then(|custom| custom.block);
    let dims = |dims: &[u32]| {
        let mut out = [1u32; 3];
        for (to, &from) in out.iter_mut().zip(dims) {
            *to = from;
        }
        out
    };
    let conflict = |declared: [u32; 3], directive: String| Error::BlockConflict {
        entry: name.to_owned(),
        declared,
        directive,
    };
    let spell = |dims: &[u32]| {
        dims.iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut required = None;
    for directive in &entry.directives {
        match directive {
            PerfDirective::ReqNtid(found) => {
                let found3 = dims(found);
                if let Some(declared) = declared
                    && declared != found3
                {
                    return Err(conflict(declared, format!(".reqntid {}", spell(found))));
                }
                required = Some(found3);
            }
            PerfDirective::MaxNtid(found) => {
                let most: u64 = found.iter().map(|&d| u64::from(d)).product();
                if let Some(declared) = declared
                    && declared.iter().map(|&d| u64::from(d)).product::<u64>() > most
                {
                    return Err(conflict(declared, format!(".maxntid {}", spell(found))));
                }
            }
            _ => {}
        }
    }
    Ok(match directives {
        Directives::Checked => declared.or(required),
        Directives::Unchecked => declared,
    })
}

/// The body's decline in the user's words: each parameter by its declared name (`bias`, not
/// `k_param_2`; `in0`, `n` for the fixed ABIs' roles), and what to change where the kind of
/// violation says.
fn declined(
    symbol: &str,
    entry: &jitseam_ptx::Entry,
    spec: &AbiSpec,
    mut rejection: jitseam_verify::Rejection,
) -> Error {
    let declared = declared_names(spec);
    let mut named = None;
    for (param, name) in entry.params.iter().zip(&declared) {
        let ptx = format!("`{}`", param.name);
        if rejection.reason.contains(&ptx) {
            rejection.reason = rejection.reason.replace(&ptx, &format!("`{name}`"));
            named = named.or(Some(name.as_str()));
        }
    }
    let custom = matches!(spec.abi, AbiKind::Custom(_));
    // A strided body's bounds are its coordinates', which no one guard mends.
    let fix = match spec.abi {
        AbiKind::Strided { .. } if rejection.kind == RejectKind::OutOfBounds => None,
        _ => fix_for(rejection.kind, named, custom),
    };
    Error::BodyRejected {
        entry: symbol.to_owned(),
        rejection: Box::new(rejection),
        fix,
    }
}

/// What to change for a decline of `kind` through parameter `name` (if the reason names one).
fn fix_for(kind: RejectKind, name: Option<&str>, custom: bool) -> Option<String> {
    let it = name.map_or_else(|| "the pointer".to_owned(), |n| format!("`{n}`"));
    Some(match kind {
        RejectKind::StoreThroughInput if custom => format!("declare {it} as `out`"),
        RejectKind::StoreThroughInput => "write only through outputs".to_owned(),
        RejectKind::OutOfBounds if custom => format!(
            "guard the access by its bound (`if (i < n)`), or, if {it} holds more, declare its extent larger"
        ),
        RejectKind::OutOfBounds => "guard the access by its bound (`if (i < n)`)".to_owned(),
        RejectKind::DataDependentIndex => {
            "check the loaded index against its operand's extent before the access (`if (k < n)`)"
                .to_owned()
        }
        RejectKind::MayWrap => {
            "bound the index by a guard before it grows, or compute it in 64 bits".to_owned()
        }
        RejectKind::WrongWidth | RejectKind::Misaligned if custom => format!(
            "access {it} at a multiple of the access's width, or declare it with the vector type it is read as (`f32x4`)"
        ),
        RejectKind::CrossedStride => {
            "pair each axis's coordinate with that operand's stride on that axis".to_owned()
        }
        _ => return None,
    })
}

/// A pointer to vectors (`x: in f32x4[n]`) has a base aligned to its vector, as the kernel's
/// `float4*` assumes: each launch checks the operand's address, proven body or not.
fn require_vector_alignment(layout: &mut ParamLayout, spec: &AbiSpec) {
    let AbiKind::Custom(custom) = &spec.abi else {
        return;
    };
    for (index, param) in custom.params.iter().enumerate() {
        let align = u32::try_from(param.elem_bytes()).unwrap_or(u32::MAX);
        if param.lanes > 1 && align > layout.pointee_align(index) {
            layout.require_pointee_align(index, align);
        }
    }
}

/// Every pointer the proof reads or writes wider than its element (a `float4` access of an
/// `f32` pointer) must have a base aligned to its widest access, as every access is at a
/// multiple of its own width from the base: each launch checks the operand's address then.
fn require_access_alignment(layout: &mut ParamLayout, contract: &EntryContract, proof: &Proof) {
    for summary in &proof.accesses {
        let index = summary.param as usize;
        // The ABI's own unit (a vectorized ABI's whole vector) is aligned by the ABI's launch
        // check already, which names the misalignment in its own terms.
        let Some(ParamContract::Pointer { access_bytes, .. }) = contract.params.get(index) else {
            continue;
        };
        if summary.align > *access_bytes && summary.align > layout.pointee_align(index) {
            layout.require_pointee_align(index, summary.align);
        }
    }
}

/// What the launches of a body proven with guards need: the rewritten PTX, the packet with
/// the hidden parameters, and each guard's line and operand (as [`named`] named it). `None`
/// for a body proven as written.
fn guarded_entry(
    artifact: &Artifact,
    layout: &ParamLayout,
    proof: &Proof,
) -> Option<Arc<GuardedEntry>> {
    let rewritten = proof.guarded()?;
    let sites = proof
        .guards()
        .iter()
        .map(|guard| GuardSite {
            line: guard.line,
            operand: guard.name.clone(),
            bytes: guard.bytes,
        })
        .collect();
    let with_hidden = layout.with_hidden_words(rewritten.params.len());
    let words = HiddenWords::of(
        &rewritten.params,
        &with_hidden,
        layout,
        artifact.abi.abi.is_custom(),
    );
    Some(Arc::new(GuardedEntry {
        ptx: rewritten.ptx.clone(),
        layout: with_hidden,
        table: Arc::new(GuardTable {
            entry: artifact.link.entry_point.clone(),
            sites,
        }),
        words,
        cache: RecordCache::default(),
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
        (Some(link), _) => Some(load_ptx(
            artifact,
            &link.text,
            expected,
            trust,
            Directives::Checked,
            names,
        )?),
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
                let facts = load_ptx(artifact, text, expected, strict, Directives::Unchecked, &[])?;
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
                    // `bind()` picks the image for the device, not necessarily this one.
                    let facts = PtxFacts {
                        parsed: None,
                        ..facts
                    };
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
