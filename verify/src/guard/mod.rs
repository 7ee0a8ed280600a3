//! Proven or guarded: the accesses the proof cannot show safe, checked at run time instead.
//!
//! An access whose provenance (one pointer parameter, one `.shared` variable, or the thread's
//! `.local` frame through its local-space address) and role the analysis establishes, but
//! whose bounds or alignment it cannot, is a [`Guard`] rather than a rejection when the
//! analysis runs in guard mode. [`rewrite`] puts a guard before each
//! such access in the entry's PTX, on the access's own line: the access's byte offset from
//! its operand's base, recomputed as `address − base`, must be a multiple of the access's
//! width `w` and below the slots the launch lets the operand reach (a hidden parameter, see
//! [`GuardParam::Limit`]); otherwise the access does not happen (a load's or atomic's
//! destinations get 0) and the first failing guard of the launch fills the fault record
//! ([`FaultRecord`]). The rewritten entry is verified again, strictly, with each hidden
//! parameter's role as a fact: a guard the rewrite got wrong is a rejection, never a hole.
//!
//! What no guard can mend stays a rejection naming its line: an address of no single
//! provenance, a store or atomic through an input, an access of another width than a dense
//! view's element (a custom pointer's declared extent takes any width), an access through a
//! strided view, a module table's, an access inside a `.func` (its text serves every call).

pub(crate) mod rewrite;

use std::collections::btree_map::Entry as Slot;
use std::sync::Arc;

use super::analyze::Analyzer;
use super::atoms::Atoms;
use super::contract::{EntryContract, Extent, ParamContract};
use super::ir::{Access, AddrBase, Ins, Kind, MemSpace, SHARED_BASE, VarSpace};
use super::poly::{Atom, Poly};
use super::proof::{AccessKind, ClaimTarget, Guard, GuardParam, Limit, Proof};
use super::reject::{RejectKind, Rejection};
use super::value::{State, Val};

/// Bytes of the fault record a guarded launch writes at most once (see [`FaultRecord`]).
pub const FAULT_RECORD_BYTES: usize = 64;

/// Where each field of the fault record lives (bytes from its start).
pub(crate) mod at {
    /// `u32`: 0 until a guard fails; the first failing guard swaps in 1.
    pub(crate) const CLAIMED: u32 = 0;
    /// `u32`: the failing guard's index in [`crate::Proof::guards`].
    pub(crate) const GUARD: u32 = 4;
    /// `u64`: tag word 0.
    pub(crate) const TAG0: u32 = 8;
    /// `u32` × 3: `%ctaid.x`, `.y`, `.z`.
    pub(crate) const BLOCK: u32 = 16;
    /// `u32` × 3: `%tid.x`, `.y`, `.z`.
    pub(crate) const THREAD: u32 = 28;
    /// `u64`: the access's byte offset from its operand's base.
    pub(crate) const OFFSET: u32 = 40;
    /// `u64`: the slots the launch let the operand reach.
    pub(crate) const LIMIT: u32 = 48;
    /// `u64`: tag word 1.
    pub(crate) const TAG1: u32 = 56;
}

/// What the first failing guard of a launch wrote into its fault record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FaultRecord {
    /// The guard's index in [`Proof::guards`].
    pub guard: u32,
    /// The launch's tag words (its [`GuardParam::Tag`] params).
    pub tags: [u64; 2],
    /// `%ctaid` of the failing thread.
    pub block: [u32; 3],
    /// `%tid` of the failing thread.
    pub thread: [u32; 3],
    /// The access's byte offset from its operand's base (two's complement: an address below
    /// the base is a huge offset).
    pub offset: u64,
    /// The slots of the guard's width the launch let the operand reach: the access was
    /// allowed at offsets `0, w, …, (limit − 1)·w`.
    pub limit: u64,
}

impl FaultRecord {
    /// The record in `bytes` (the [`FAULT_RECORD_BYTES`] bytes of a fault record, as the
    /// device left them), or `None` when no guard failed (or `bytes` is short).
    pub fn read(bytes: &[u8]) -> Option<Self> {
        let u32_at = |at: u32| {
            let at = at as usize;
            let word = bytes.get(at..at + 4)?;
            Some(u32::from_le_bytes(word.try_into().ok()?))
        };
        let u64_at = |at: u32| {
            let at = at as usize;
            let word = bytes.get(at..at + 8)?;
            Some(u64::from_le_bytes(word.try_into().ok()?))
        };
        if u32_at(at::CLAIMED)? == 0 {
            return None;
        }
        Some(Self {
            guard: u32_at(at::GUARD)?,
            tags: [u64_at(at::TAG0)?, u64_at(at::TAG1)?],
            block: [
                u32_at(at::BLOCK)?,
                u32_at(at::BLOCK + 4)?,
                u32_at(at::BLOCK + 8)?,
            ],
            thread: [
                u32_at(at::THREAD)?,
                u32_at(at::THREAD + 4)?,
                u32_at(at::THREAD + 8)?,
            ],
            offset: u64_at(at::OFFSET)?,
            limit: u64_at(at::LIMIT)?,
        })
    }
}

/// The rejection kinds a guard can take the place of: the bounds or the alignment of an
/// access whose provenance and role are known.
pub(crate) fn guardable(kind: RejectKind) -> bool {
    matches!(
        kind,
        RejectKind::OutOfBounds
            | RejectKind::MayWrap
            | RejectKind::Misaligned
            | RejectKind::DataDependentIndex
    )
}

type Failure = (RejectKind, String);

impl Analyzer<'_> {
    /// An access whose check failed with `kind`: a guard in its place when the analysis is
    /// guarding and one can stand there, else the rejection.
    pub(crate) fn guard_or_reject(
        &mut self,
        st: &State,
        idx: usize,
        ins: &Ins,
        kind: RejectKind,
        reason: String,
    ) {
        if self.guards.is_none() || !guardable(kind) {
            return self.reject(idx, kind, reason);
        }
        match self.guard_site(st, idx, ins, kind, reason) {
            Ok(guard) => {
                let Some(guards) = self.guards.as_mut() else {
                    return;
                };
                match guards.entry(idx) {
                    Slot::Vacant(slot) => {
                        slot.insert(guard);
                    }
                    Slot::Occupied(held) if held.get().target == guard.target => {}
                    Slot::Occupied(_) => self.reject(
                        idx,
                        RejectKind::UnattributedAddress,
                        "an access whose address reaches two operands on different paths"
                            .to_owned(),
                    ),
                }
            }
            Err((kind, reason)) => self.reject(idx, kind, reason),
        }
    }

    /// The guard for the access at `idx`, or why none can stand there.
    fn guard_site(
        &mut self,
        st: &State,
        idx: usize,
        ins: &Ins,
        kind: RejectKind,
        why: String,
    ) -> Result<Guard, Failure> {
        let Kind::Mem {
            access,
            addr: AddrBase::Reg(r),
            bytes,
            space,
            ..
        } = &ins.kind
        else {
            return Err((kind, why));
        };
        // Guards stand before global, shared and local accesses; the module's tables are
        // proven or refused.
        let (bytes, var_space) = match space {
            MemSpace::Shared => (*bytes, Some(VarSpace::Shared)),
            MemSpace::Local => (*bytes, Some(VarSpace::Local)),
            MemSpace::Global | MemSpace::Generic => (*bytes, None),
            MemSpace::Const => return Err((kind, why)),
        };
        let param = match st.get(*r) {
            Val::Ptr { param, .. } | Val::PtrData { param } => *param,
            _ => return Err((kind, why)),
        };
        let Some(span) = self.body.spans.get(idx).copied().flatten() else {
            return Err((
                kind,
                format!("{why}; the access is inside a `.func`, where no guard can reach it"),
            ));
        };
        let access_kind = match access {
            Access::Load => AccessKind::Load,
            Access::Store => AccessKind::Store,
            Access::Atomic => AccessKind::Atomic,
        };
        let what = match access {
            Access::Load => "a load",
            Access::Store => "a store",
            Access::Atomic => "an atomic",
        };
        let (target, name, limit) = match var_space {
            Some(space) => self.var_limit(param, space, bytes, what, kind, &why)?,
            None => self.pointer_limit(param, *access, bytes, what, kind, &why)?,
        };
        Ok(Guard {
            line: ins.line,
            target,
            name,
            kind: access_kind,
            bytes,
            reason: kind,
            why,
            span,
            limit,
        })
    }

    /// The limit of an access in a `.shared` variable or in the thread's `.local` frame, named
    /// by its own space's address (the generic address of a local variable is not guarded:
    /// its offset from the frame is not what a generic access reads).
    fn var_limit(
        &self,
        param: u32,
        space: VarSpace,
        bytes: u32,
        what: &str,
        kind: RejectKind,
        why: &str,
    ) -> Result<(ClaimTarget, String, Limit), Failure> {
        let Some(var) = param
            .checked_sub(SHARED_BASE)
            .and_then(|v| self.body.shared.get(v as usize))
            .filter(|var| var.space == space)
        else {
            return Err((kind, why.to_owned()));
        };
        if space == VarSpace::Shared && !self.contract.three_dimensional() {
            return Err((
                RejectKind::Unsupported,
                "shared memory is not verified".to_owned(),
            ));
        }
        let noun = match space {
            VarSpace::Local => "local variable",
            _ => "shared variable",
        };
        if !bytes.is_power_of_two() || bytes > 16 || u64::from(bytes) > var.align {
            return Err((
                RejectKind::WrongWidth,
                format!(
                    "{what} of {bytes} bytes in {noun} `{}`, aligned to {} bytes",
                    var.name, var.align
                ),
            ));
        }
        let target = match space {
            VarSpace::Local => ClaimTarget::Local(var.name.clone()),
            _ => ClaimTarget::Shared(var.name.clone()),
        };
        let limit = match var.bytes {
            Some(size) => Limit::Const(size / u64::from(bytes)),
            None if self.dynamic_shared.is_some() => Limit::Param(GuardParam::Limit {
                target: target.clone(),
                bytes,
            }),
            None => {
                return Err((
                    RejectKind::Unsupported,
                    format!(
                        "{what} in dynamic shared array `{}`, whose size is not modeled",
                        var.name
                    ),
                ));
            }
        };
        Ok((target, var.name.clone(), limit))
    }

    fn pointer_limit(
        &self,
        param: u32,
        access: Access,
        bytes: u32,
        what: &str,
        kind: RejectKind,
        why: &str,
    ) -> Result<(ClaimTarget, String, Limit), Failure> {
        let name = self
            .param_names
            .get(param as usize)
            .cloned()
            .unwrap_or_default();
        let Some(ParamContract::Pointer {
            operand,
            access_bytes,
            extent,
            ..
        }) = self.contract.params.get(param as usize)
        else {
            return Err((kind, why.to_owned()));
        };
        if access != Access::Load && !operand.writable() {
            return Err((
                RejectKind::StoreThroughInput,
                format!("{what} through {operand} (`{name}`); inputs are read-only"),
            ));
        }
        if !bytes.is_power_of_two() {
            return Err((
                kind,
                format!("{why}; an access of {bytes} bytes (not a power of two) is not guarded"),
            ));
        }
        // A declared extent is bytes: any width the proof takes there (1 to 16 bytes, see
        // `check_wide`) is guarded in slots of its own width, and the re-proof's summary makes
        // every launch check the base alignment it needs. A dense view's accesses are its
        // element (or vector) wide.
        let any_width = matches!(extent, Extent::Declared(_)) && bytes <= 16;
        if bytes != *access_bytes && !any_width {
            return Err((
                RejectKind::WrongWidth,
                format!(
                    "{what} of {bytes} bytes through {operand} (`{name}`), whose accesses are {access_bytes} bytes"
                ),
            ));
        }
        match extent {
            Extent::Dense => {}
            Extent::Declared(_)
                if self
                    .declared
                    .get(param as usize)
                    .is_some_and(Option::is_some) => {}
            Extent::Declared(_) => {
                return Err((
                    RejectKind::Unsupported,
                    format!(
                        "{what} through {operand} (`{name}`), whose declared extent is not modeled"
                    ),
                ));
            }
            Extent::Strided { .. } => {
                return Err((
                    kind,
                    format!("{why}; an access through a strided view is not guarded"),
                ));
            }
        }
        let target = ClaimTarget::Param(param);
        let limit = Limit::Param(GuardParam::Limit {
            target: target.clone(),
            bytes,
        });
        Ok((target, name, limit))
    }

    /// The check of an access through the fault record of a guarded entry (the hidden
    /// parameter [`GuardParam::FaultRecord`]): `None` when the address is not the record's;
    /// otherwise a 4- or 8-byte word at a fixed offset inside it, or why not.
    pub(crate) fn fault_record_access(
        &self,
        st: &State,
        addr: AddrBase,
        offset: i64,
        bytes: u32,
        space: MemSpace,
    ) -> Option<Result<u32, Failure>> {
        let AddrBase::Reg(r) = addr else {
            return None;
        };
        let (param, off) = match st.get(r) {
            Val::Ptr { param, off } => (*param, Some(off)),
            Val::PtrData { param } => (*param, None),
            _ => return None,
        };
        if !matches!(
            self.contract.params.get(param as usize),
            Some(ParamContract::Guard(GuardParam::FaultRecord))
        ) {
            return None;
        }
        let at = off
            .and_then(|o| o.as_const())
            .and_then(|c| c.checked_add(i128::from(offset)));
        let fits = |at: i128| {
            matches!(space, MemSpace::Global | MemSpace::Generic)
                && (bytes == 4 || bytes == 8)
                && at >= 0
                && at % i128::from(bytes) == 0
                && at + i128::from(bytes) <= FAULT_RECORD_BYTES as i128
        };
        Some(match at {
            Some(at) if fits(at) => Ok(param),
            _ => Err((
                RejectKind::OutOfBounds,
                "an access of the fault record that is not one of its words".to_owned(),
            )),
        })
    }
}

/// For each hidden limit of `contract`, what every launch guarantees of it: `reach − bytes·L
/// ≥ 0` for the limit's atom `L` (`param_atoms[i]`), where `reach` is the bytes the launch
/// lets its target reach — `n · access bytes` (dense), the declared extent times the access
/// bytes, the launch's dynamic shared bytes. `L ≥ 0` is the atom's own range.
pub(crate) fn limit_facts(
    atoms: &Atoms,
    contract: &EntryContract,
    param_atoms: &[Option<Atom>],
    declared: &[Option<Poly>],
    dynamic: Option<&Poly>,
) -> Vec<Poly> {
    let mut out = Vec::new();
    for (i, p) in contract.params.iter().enumerate() {
        let ParamContract::Guard(GuardParam::Limit { target, bytes }) = p else {
            continue;
        };
        let Some(l) = param_atoms.get(i).copied().flatten() else {
            continue;
        };
        let reach = match target {
            ClaimTarget::Param(q) => match contract.params.get(*q as usize) {
                Some(ParamContract::Pointer {
                    access_bytes,
                    extent,
                    ..
                }) => {
                    let elements = match extent {
                        Extent::Dense => atoms.count.clone(),
                        Extent::Declared(_) => declared.get(*q as usize).cloned().flatten(),
                        Extent::Strided { .. } => None,
                    };
                    elements.and_then(|e| e.scale(i128::from(*access_bytes)))
                }
                _ => None,
            },
            ClaimTarget::Shared(_) => dynamic.cloned(),
            ClaimTarget::Local(_) | ClaimTarget::Table(_) => None,
        };
        if let Some(fact) = reach.and_then(|r| r.sub(&Poly::atom(l).scale(i128::from(*bytes))?)) {
            out.push(fact);
        }
    }
    out
}

/// The rewrite of a proof found in guard mode, verified: the entry's PTX with its guards, and
/// the proof of that PTX under `contract` and the hidden parameters' roles, listing the
/// guards. A rewrite the verifier does not prove is a rejection naming the line. `reprove`
/// proves a rewrite (its text, entry name and contract with the hidden parameters).
pub(crate) fn seal(
    text: &str,
    entry_name: &str,
    module: &jitseam_ptx::resolve::ResolvedModule,
    entry: &jitseam_ptx::resolve::ResolvedEntry,
    contract: &EntryContract,
    found: Proof,
    reprove: impl FnOnce(&str, &str, &EntryContract) -> Result<Proof, Rejection>,
) -> Result<Proof, Rejection> {
    let guards = found.guards;
    let rewritten = rewrite::rewrite(text, module, entry, &guards)?;
    let mut hidden = contract.clone();
    hidden
        .params
        .extend(rewritten.params.iter().cloned().map(ParamContract::Guard));
    let reproof = reprove(&rewritten.ptx, entry_name, &hidden).map_err(|r| Rejection {
        reason: format!("the guarded rewrite is not proven: {}", r.reason),
        ..r
    })?;
    Ok(Proof {
        guards,
        guarded: Some(Arc::new(rewritten)),
        ..reproof
    })
}
