//! The check of one global memory access: provenance, role, width, alignment and bounds.

use super::analyze::Analyzer;
use super::contract::{Extent, OperandRef, ParamContract};
use super::facts::Facts;
use super::ir::{Access, AddrBase, GENERIC, Ins, Kind, MemSpace, SHARED_BASE, SharedVar, VarSpace};
use super::poly::{Mono, Poly};
use super::proof::{AccessClaim, AccessKind, ClaimTarget};
use super::reject::RejectKind;
use super::value::{State, Val};

/// How a rejection says an access may pass a static variable's last byte: the one failure a
/// narrower block may mend (`attempt`'s block-shape search looks for it).
pub(crate) const PAST_ITS_SIZE: &str = "reach past its size";

/// Where an access goes, for the messages of its checks.
#[derive(Clone, Copy)]
struct AccessAt<'a> {
    what: &'a str,
    operand: OperandRef,
    name: &'a str,
}

impl Analyzer<'_> {
    pub(crate) fn access(&mut self, st: &State, idx: usize, ins: &Ins, final_run: bool) {
        let Kind::Mem {
            access,
            addr,
            offset,
            bytes,
            space,
            ..
        } = &ins.kind
        else {
            return;
        };
        // Accesses change no state: only the final pass checks them.
        if !final_run {
            return;
        }
        let verdict = match self.fault_record_access(st, *addr, *offset, *bytes, *space) {
            Some(verdict) => verdict,
            None => match self
                .check_access(st, *access, *addr, *offset, *bytes, *space)
                .map_err(|e| self.data_dependent(st, *access, *addr, e))
            {
                Ok(_) if self.guards.is_some() && self.forced.contains(&ins.line) => Err((
                    RejectKind::OutOfBounds,
                    "an access the guarded rewrite's re-proof does not prove".to_owned(),
                )),
                verdict => verdict,
            },
        };
        match verdict {
            Ok(param) => {
                let target = if let Some((var, _)) = self.var_of(param) {
                    let name = self.param_name(param);
                    match var.space {
                        VarSpace::Shared => ClaimTarget::Shared(name),
                        VarSpace::Local => ClaimTarget::Local(name),
                        VarSpace::Const | VarSpace::Global => ClaimTarget::Table(name),
                    }
                } else {
                    self.record_access(param, *access, *bytes);
                    ClaimTarget::Param(param)
                };
                self.claims.insert(AccessClaim {
                    line: ins.line,
                    target,
                    kind: match access {
                        Access::Load => AccessKind::Load,
                        Access::Store => AccessKind::Store,
                        Access::Atomic => AccessKind::Atomic,
                    },
                    bytes: *bytes,
                });
            }
            Err((kind, reason)) => self.guard_or_reject(st, idx, ins, kind, reason),
        }
    }

    /// The variable an address of provenance `param` points into, and whether the address
    /// is its generic one (else the one of the variable's own state space).
    fn var_of(&self, param: u32) -> Option<(&SharedVar, bool)> {
        let v = param.checked_sub(SHARED_BASE)?;
        let generic = v & GENERIC != 0;
        let var = self.body.shared.get((v & !GENERIC) as usize)?;
        Some((var, generic))
    }

    fn param_name(&self, param: u32) -> String {
        if let Some((var, _)) = self.var_of(param) {
            return var.name.clone();
        }
        self.param_names
            .get(param as usize)
            .cloned()
            .unwrap_or_default()
    }

    /// A failed bound or alignment of an access whose offset holds a loaded integer (or a
    /// value made from one) is data-dependent: its index comes from memory, and what the kernel
    /// tested of it, if anything, did not bound it.
    fn data_dependent(
        &self,
        st: &State,
        access: Access,
        addr: AddrBase,
        error: (RejectKind, String),
    ) -> (RejectKind, String) {
        let (
            AddrBase::Reg(r),
            RejectKind::OutOfBounds | RejectKind::MayWrap | RejectKind::Misaligned,
        ) = (addr, error.0)
        else {
            return error;
        };
        match st.get(r) {
            Val::Ptr { param, off } if off.atoms().any(|a| self.loaded_atoms.contains(&a)) => (
                RejectKind::DataDependentIndex,
                format!(
                    "{} through `{}` at an offset computed from loaded data or a runtime value",
                    access_word(access),
                    self.param_name(*param)
                ),
            ),
            _ => error,
        }
    }

    fn check_access(
        &mut self,
        st: &State,
        access: Access,
        addr: AddrBase,
        offset: i64,
        bytes: u32,
        space: MemSpace,
    ) -> Result<u32, (RejectKind, String)> {
        let what = access_word(access);
        let r = match addr {
            AddrBase::Reg(r) => r,
            AddrBase::Shared(var) => {
                let param = SHARED_BASE + var;
                self.check_var(st, param, &Poly::zero(), offset, bytes, access, space)?;
                return Ok(param);
            }
            AddrBase::Absolute => {
                return Err((
                    RejectKind::UnattributedAddress,
                    format!("{what} from a fixed address"),
                ));
            }
        };
        let (param, off) = match st.get(r) {
            Val::Ptr { param, off } => (*param, off.clone()),
            Val::PtrData { param } => {
                return Err((
                    RejectKind::DataDependentIndex,
                    format!(
                        "{what} through `{}` at an offset computed from loaded data or a runtime value",
                        self.param_name(*param)
                    ),
                ));
            }
            Val::Data => {
                return Err((
                    RejectKind::UnattributedAddress,
                    format!("{what} through an address loaded from memory or a runtime value"),
                ));
            }
            _ => {
                return Err((
                    RejectKind::UnattributedAddress,
                    format!("{what} through an address not derived from a pointer parameter"),
                ));
            }
        };
        // A variable's address is its own: checked against the variable, in the space the
        // access names (see `check_var`).
        if param >= SHARED_BASE {
            self.check_var(st, param, &off, offset, bytes, access, space)?;
            return Ok(param);
        }
        // A pointer parameter's address is a global one: it means nothing in the shared,
        // local or constant space (the same number names another byte there).
        if !matches!(space, MemSpace::Generic | MemSpace::Global) {
            return Err((
                RejectKind::UnattributedAddress,
                format!(
                    "{what} in the {} space through `{}`, which is not a variable of that space",
                    space_name(space),
                    self.param_name(param)
                ),
            ));
        }
        let name = self.param_name(param);
        let Some(ParamContract::Pointer {
            operand,
            access_bytes,
            elem_bytes,
            extent,
        }) = self.contract.params.get(param as usize).cloned()
        else {
            return Err((
                RejectKind::UnattributedAddress,
                format!("{what} through `{name}`, which is not a pointer parameter"),
            ));
        };
        if access != Access::Load && !operand.writable() {
            return Err((
                RejectKind::StoreThroughInput,
                format!("{what} through {operand} (`{name}`); inputs are read-only"),
            ));
        }
        let Some(total) = off.add_const(i128::from(offset)) else {
            return Err((
                RejectKind::OutOfBounds,
                format!("{what} at an unbounded offset"),
            ));
        };
        let total = st.facts.normalize(&total).unwrap_or(total);
        // An offset built from values the analysis lost track of says nothing about alignment.
        let inexact = total.atoms().any(|a| self.atoms.is_opaque(a));
        if let Extent::Declared(_) = extent
            && bytes != access_bytes
        {
            let at = AccessAt {
                what,
                operand,
                name: &name,
            };
            self.check_wide(&st.facts, &total, bytes, access_bytes, param, inexact, &at)?;
            return Ok(param);
        }
        let unit = i128::from(access_bytes.max(1));
        let inner = total.constant_term().rem_euclid(unit);
        let index = total.add_const(-inner).and_then(|t| t.div_exact(unit));
        if bytes != access_bytes {
            // A narrower piece of whole elements inside one vector (NVRTC splits unaligned
            // structs this way); anything else is the wrong width.
            let piece = bytes < access_bytes
                && bytes >= elem_bytes
                && elem_bytes > 0
                && bytes.is_multiple_of(elem_bytes)
                && access_bytes.is_multiple_of(bytes)
                && inner % i128::from(bytes) == 0
                && inner + i128::from(bytes) <= unit
                && index.is_some();
            if !piece {
                return Err((
                    RejectKind::WrongWidth,
                    format!(
                        "{what} of {bytes} bytes through {operand} (`{name}`), whose accesses are {access_bytes} bytes"
                    ),
                ));
            }
        }
        let index = match index {
            Some(index) if inner == 0 || bytes != access_bytes => index,
            _ if inexact => {
                return Err((
                    self.bound_failure(&total),
                    format!(
                        "{what} through {operand} (`{name}`) at an offset that cannot be bounded"
                    ),
                ));
            }
            _ => {
                return Err((
                    RejectKind::Misaligned,
                    format!(
                        "{what} through {operand} (`{name}`) at an offset that is not a multiple of {access_bytes} bytes"
                    ),
                ));
            }
        };
        match extent {
            Extent::Dense => self.check_dense(&st.facts, &index, what, operand, &name)?,
            Extent::Declared(_) => {
                self.check_declared(&st.facts, &index, param, what, operand, &name)?;
            }
            Extent::Strided { .. } => {
                let per = i128::from((access_bytes / elem_bytes.max(1)).max(1));
                let index = index.scale(per).unwrap_or(index);
                self.check_strided(&st.facts, &index, what, operand, &name)?;
            }
        }
        Ok(param)
    }

    /// An access of `bytes` at `off + offset` from the start of variable `param − SHARED_BASE`
    /// (a `.shared` variable, a thread's `.local` frame, or a module `.const` or `.global`
    /// table). Each variable is its own object: a static one of `B` bytes is in bounds iff
    /// `0 ≤ o` and `o + bytes ≤ B`, so no access through one variable reaches another, whatever
    /// the layout; the dynamic shared arrays all start where the dynamic shared memory does,
    /// so one is in bounds iff `o + bytes ≤ D`, the launch's dynamic shared bytes (a symbol
    /// bounded only by the launch conditions the proof states). A `.local` frame is the
    /// thread's own, so its bounds are per thread. The access must name the space the address
    /// is one of: the variable's own (`ld.shared`, `ld.local`, `ld.const`; a `.global` table's
    /// is the generic one too) or, for the generic address `cvta.local` gives a `.local`
    /// variable, none. Tables are only read; a `.local` frame takes no atomics. The width must
    /// be a power of two no wider than the variable's alignment (a wider one may straddle the
    /// alignment the variable is placed at) and `o` a multiple of it, so the hardware never
    /// sees a misaligned address.
    #[allow(clippy::too_many_arguments)]
    fn check_var(
        &mut self,
        st: &State,
        param: u32,
        off: &Poly,
        offset: i64,
        bytes: u32,
        access: Access,
        space: MemSpace,
    ) -> Result<(), (RejectKind, String)> {
        let what = access_word(access);
        let name = self.param_name(param);
        let Some((var, generic)) = self.var_of(param).map(|(v, g)| (v.clone(), g)) else {
            return Err((
                RejectKind::UnattributedAddress,
                format!("{what} through an unknown variable"),
            ));
        };
        let noun = var_noun(var.space);
        let fits = match (var.space, generic) {
            (VarSpace::Local, true) => space == MemSpace::Generic,
            (VarSpace::Shared, _) => space == MemSpace::Shared,
            (VarSpace::Local, false) => space == MemSpace::Local,
            (VarSpace::Const, _) => space == MemSpace::Const,
            (VarSpace::Global, _) => matches!(space, MemSpace::Global | MemSpace::Generic),
        };
        if !fits {
            return Err((
                RejectKind::UnattributedAddress,
                format!(
                    "{what} in the {} space through the {} address of {noun} `{name}`",
                    space_name(space),
                    if generic {
                        "generic".to_owned()
                    } else {
                        format!("{} space", var.space.name())
                    }
                ),
            ));
        }
        let refused = match (var.space, access) {
            (VarSpace::Const | VarSpace::Global, Access::Store | Access::Atomic) => {
                Some("tables are only read")
            }
            (VarSpace::Local, Access::Atomic) => Some("local memory takes no atomics"),
            _ => None,
        };
        if let Some(why) = refused {
            return Err((
                RejectKind::Unsupported,
                format!("{what} to {noun} `{name}`: {why}"),
            ));
        }
        if var.space == VarSpace::Shared && !self.contract.three_dimensional() {
            return Err((
                RejectKind::Unsupported,
                "shared memory is not verified".to_owned(),
            ));
        }
        if !bytes.is_power_of_two() || bytes > 16 || u64::from(bytes) > var.align {
            return Err((
                RejectKind::WrongWidth,
                format!(
                    "{what} of {bytes} bytes in {noun} `{name}`, aligned to {} bytes",
                    var.align
                ),
            ));
        }
        let Some(total) = off.add_const(i128::from(offset)) else {
            return Err((
                RejectKind::OutOfBounds,
                format!("{what} at an unbounded offset"),
            ));
        };
        let total = st.facts.normalize(&total).unwrap_or(total);
        let unit = i128::from(bytes);
        let inner = total.constant_term().rem_euclid(unit);
        let whole = total.add_const(-inner).and_then(|t| t.div_exact(unit));
        if inner != 0 || whole.is_none() {
            if total.atoms().any(|a| self.atoms.is_opaque(a)) {
                return Err((
                    self.bound_failure(&total),
                    format!("{what} in {noun} `{name}` at an offset that cannot be bounded"),
                ));
            }
            return Err((
                RejectKind::Misaligned,
                format!(
                    "{what} in {noun} `{name}` at an offset that is not a multiple of {bytes} bytes"
                ),
            ));
        }
        let size = match var.bytes {
            Some(b) => Poly::constant(i128::from(b)),
            None => match self.dynamic_shared.clone() {
                Some(d) => d,
                None => {
                    return Err((
                        RejectKind::Unsupported,
                        format!(
                            "{what} in dynamic shared array `{name}`, whose size is not modeled"
                        ),
                    ));
                }
            },
        };
        if !self.prove_access(&st.facts, &total) {
            return Err((
                self.bound_failure(&total),
                format!("{what} in {noun} `{name}` at an offset that may be negative"),
            ));
        }
        let upper = size.add_const(-unit).and_then(|c| c.sub(&total));
        if !upper.is_some_and(|u| self.prove_access(&st.facts, &u)) {
            let limit = if var.bytes.is_some() {
                PAST_ITS_SIZE
            } else {
                "reach past the launch's dynamic shared bytes"
            };
            return Err((
                self.bound_failure(&total),
                format!("{what} in {noun} `{name}` that may {limit}"),
            ));
        }
        Ok(())
    }

    /// An access of `bytes` through a pointer with a declared extent of `E` elements of
    /// `elem` bytes each, at byte offset `total` from the operand's base: a power of two of at
    /// most 16 bytes, at a multiple of itself, within the extent's bytes (`0 ≤ total` and
    /// `total + bytes ≤ E · elem`). The operand's base must be aligned to the width, which the
    /// launch checks (the proof's summary names the widest access through each pointer), so
    /// the address the hardware sees is aligned too. Proven in units of the narrower of the
    /// two widths, where both sides are whole numbers: `q = total / u ≥ 0` and
    /// `q + bytes/u ≤ E · elem/u`.
    #[allow(clippy::too_many_arguments)]
    fn check_wide(
        &mut self,
        facts: &Facts,
        total: &Poly,
        bytes: u32,
        elem: u32,
        param: u32,
        inexact: bool,
        at: &AccessAt<'_>,
    ) -> Result<(), (RejectKind, String)> {
        let AccessAt {
            what,
            operand,
            name,
        } = *at;
        if !bytes.is_power_of_two() || bytes > 16 || !elem.is_power_of_two() {
            return Err((
                RejectKind::WrongWidth,
                format!(
                    "{what} of {bytes} bytes through {operand} (`{name}`): an access moves 1, 2, 4, 8 or 16 bytes"
                ),
            ));
        }
        let aligned = (total.constant_term().rem_euclid(i128::from(bytes)) == 0)
            .then(|| total.div_exact(i128::from(bytes)))
            .flatten();
        if aligned.is_none() {
            if inexact {
                return Err((
                    self.bound_failure(total),
                    format!(
                        "{what} through {operand} (`{name}`) at an offset that cannot be bounded"
                    ),
                ));
            }
            return Err((
                RejectKind::Misaligned,
                format!(
                    "{what} of {bytes} bytes through {operand} (`{name}`) at an offset that is not a multiple of {bytes} bytes"
                ),
            ));
        }
        let Some(extent) = self.declared.get(param as usize).cloned().flatten() else {
            return Err((
                RejectKind::Unsupported,
                format!(
                    "{what} through {operand} (`{name}`), whose declared extent is not modeled"
                ),
            ));
        };
        let unit = bytes.min(elem);
        let Some(q) = total.div_exact(i128::from(unit)) else {
            return Err((
                RejectKind::Misaligned,
                format!(
                    "{what} of {bytes} bytes through {operand} (`{name}`) at an offset that is not a multiple of {unit} bytes"
                ),
            ));
        };
        if !self.prove_access(facts, &q) {
            return Err((
                self.bound_failure(&q),
                format!(
                    "{what} of {bytes} bytes through {operand} (`{name}`) at an offset that may be negative"
                ),
            ));
        }
        let span = i128::from(bytes / unit);
        let per = i128::from(elem / unit);
        let upper = extent
            .scale(per)
            .and_then(|e| e.add_const(-span))
            .and_then(|e| e.sub(&q));
        if !upper.is_some_and(|u| self.prove_access(facts, &u)) {
            return Err((
                self.bound_failure(&q),
                format!(
                    "{what} of {bytes} bytes through {operand} (`{name}`) that may reach past its declared extent"
                ),
            ));
        }
        Ok(())
    }

    fn bound_failure(&self, index: &Poly) -> RejectKind {
        if index.atoms().any(|a| self.wrap_atoms.contains(&a)) {
            RejectKind::MayWrap
        } else {
            RejectKind::OutOfBounds
        }
    }

    fn check_dense(
        &mut self,
        facts: &Facts,
        index: &Poly,
        what: &str,
        operand: OperandRef,
        name: &str,
    ) -> Result<(), (RejectKind, String)> {
        let count = self.atoms.count.clone().unwrap_or_default();
        if !self.prove_access(facts, index) {
            return Err((
                self.bound_failure(index),
                format!("{what} through {operand} (`{name}`) at an index that may be negative"),
            ));
        }
        let upper = count.add_const(-1).and_then(|c| c.sub(index));
        if !upper.is_some_and(|u| self.prove_access(facts, &u)) {
            return Err((
                self.bound_failure(index),
                format!("{what} through {operand} (`{name}`) at an index that may reach n"),
            ));
        }
        Ok(())
    }

    /// `0 ≤ index ≤ E − 1` for the pointer's declared extent `E` (a polynomial over the
    /// params and the launch geometry, exact at every launch: see `declared_extent`).
    fn check_declared(
        &mut self,
        facts: &Facts,
        index: &Poly,
        param: u32,
        what: &str,
        operand: OperandRef,
        name: &str,
    ) -> Result<(), (RejectKind, String)> {
        let Some(extent) = self.declared.get(param as usize).cloned().flatten() else {
            return Err((
                RejectKind::Unsupported,
                format!(
                    "{what} through {operand} (`{name}`), whose declared extent is not modeled"
                ),
            ));
        };
        if !self.prove_access(facts, index) {
            return Err((
                self.bound_failure(index),
                format!("{what} through {operand} (`{name}`) at an index that may be negative"),
            ));
        }
        let upper = extent.add_const(-1).and_then(|c| c.sub(index));
        if !upper.is_some_and(|u| self.prove_access(facts, &u)) {
            return Err((
                self.bound_failure(index),
                format!(
                    "{what} through {operand} (`{name}`) at an index that may reach its declared extent"
                ),
            ));
        }
        Ok(())
    }

    fn check_strided(
        &mut self,
        facts: &Facts,
        index: &Poly,
        what: &str,
        operand: OperandRef,
        name: &str,
    ) -> Result<(), (RejectKind, String)> {
        // Σ_axis c_axis · stride(operand, axis): group monomials by their stride atom.
        let mut coeffs: Vec<Vec<(Mono, i128)>> = vec![Vec::new(); self.shape_atoms.len()];
        for &(m, c) in index.terms() {
            let strides: Vec<(OperandRef, u8, Mono)> = m
                .atoms()
                .iter()
                .filter_map(|a| {
                    self.stride_atoms
                        .iter()
                        .find(|s| s.0 == *a)
                        .map(|s| (s.1, s.2, m.without(*a).unwrap_or(Mono::ONE)))
                })
                .collect();
            match strides.as_slice() {
                [(op, axis, rest)] if *op == operand => {
                    if let Some(slot) = coeffs.get_mut(usize::from(*axis)) {
                        slot.push((*rest, c));
                    }
                }
                [(op, _, _)] => {
                    return Err((
                        RejectKind::CrossedStride,
                        format!("{what} through {operand} (`{name}`) scaled by a stride of {op}"),
                    ));
                }
                _ => {
                    return Err((
                        self.bound_failure(index),
                        format!(
                            "{what} through {operand} (`{name}`) at an offset that is not a sum of coordinates times its strides"
                        ),
                    ));
                }
            }
        }
        for (axis, terms) in coeffs.iter().enumerate() {
            let Some(c) = Poly::from_terms(terms.clone()) else {
                return Err((
                    RejectKind::OutOfBounds,
                    format!("{what} at an unbounded offset"),
                ));
            };
            let Some(&shape) = self.shape_atoms.get(axis) else {
                continue;
            };
            if c.is_zero() {
                // Coordinate 0 on an axis the offset does not name is an element of the view
                // only if the axis is not empty: a launch checks nothing of an empty view.
                let nonempty = Poly::atom(shape).add_const(-1);
                if nonempty.is_some_and(|u| self.prove_access(facts, &u)) {
                    continue;
                }
                return Err((
                    RejectKind::OutOfBounds,
                    format!(
                        "{what} through {operand} (`{name}`) at coordinate 0 of axis {axis}, which may be empty"
                    ),
                ));
            }
            let within = |this: &mut Self, s: u32| {
                let upper = Poly::atom(s).add_const(-1).and_then(|u| u.sub(&c));
                this.prove(facts, &c) && upper.is_some_and(|u| this.prove(facts, &u))
            };
            if within(self, shape) {
                continue;
            }
            let shapes = self.shape_atoms.clone();
            if shapes
                .iter()
                .enumerate()
                .any(|(other, &s)| other != axis && within(self, s))
            {
                return Err((
                    RejectKind::CrossedStride,
                    format!(
                        "{what} through {operand} (`{name}`): the stride of axis {axis} is scaled by another axis's coordinate"
                    ),
                ));
            }
            return Err((
                self.bound_failure(&c),
                format!(
                    "{what} through {operand} (`{name}`) with a coordinate on axis {axis} that may leave [0, shape{axis})"
                ),
            ));
        }
        Ok(())
    }
}

fn access_word(access: Access) -> &'static str {
    match access {
        Access::Load => "a load",
        Access::Store => "a store",
        Access::Atomic => "an atomic",
    }
}

/// What a variable of `space` is called in messages.
fn var_noun(space: VarSpace) -> &'static str {
    match space {
        VarSpace::Shared => "shared variable",
        VarSpace::Local => "local variable",
        VarSpace::Const => "constant table",
        VarSpace::Global => "global table",
    }
}

/// The state space an access names, for messages.
fn space_name(space: MemSpace) -> &'static str {
    match space {
        MemSpace::Generic => "generic",
        MemSpace::Global => "global",
        MemSpace::Shared => "shared",
        MemSpace::Local => "local",
        MemSpace::Const => "constant",
    }
}
