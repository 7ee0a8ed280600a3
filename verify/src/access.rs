//! The check of one global memory access: provenance, role, width, alignment and bounds.

use super::analyze::Analyzer;
use super::contract::{Extent, OperandRef, ParamContract};
use super::facts::Facts;
use super::ir::{Access, AddrBase, Ins, Kind, SHARED_BASE};
use super::poly::{Mono, Poly};
use super::proof::{AccessClaim, AccessKind, ClaimTarget};
use super::reject::RejectKind;
use super::value::{State, Val};

impl Analyzer<'_> {
    pub(crate) fn access(&mut self, st: &State, idx: usize, ins: &Ins, final_run: bool) {
        let Kind::Mem {
            access,
            addr,
            offset,
            bytes,
            shared,
            ..
        } = &ins.kind
        else {
            return;
        };
        // Accesses change no state: only the final pass checks them.
        if !final_run {
            return;
        }
        let verdict = match self.fault_record_access(st, *addr, *offset, *bytes, *shared) {
            Some(verdict) => verdict,
            None => self.check_access(st, *access, *addr, *offset, *bytes, *shared),
        };
        match verdict {
            Ok(param) => {
                let target = if param >= SHARED_BASE {
                    ClaimTarget::Shared(self.param_name(param))
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

    fn param_name(&self, param: u32) -> String {
        if let Some(var) = param
            .checked_sub(SHARED_BASE)
            .and_then(|v| self.body.shared.get(v as usize))
        {
            return var.name.clone();
        }
        self.param_names
            .get(param as usize)
            .cloned()
            .unwrap_or_default()
    }

    fn check_access(
        &mut self,
        st: &State,
        access: Access,
        addr: AddrBase,
        offset: i64,
        bytes: u32,
        shared: bool,
    ) -> Result<u32, (RejectKind, String)> {
        let what = match access {
            Access::Load => "a load",
            Access::Store => "a store",
            Access::Atomic => "an atomic",
        };
        let r = match addr {
            AddrBase::Reg(r) => r,
            AddrBase::Shared(var) if shared => {
                let param = SHARED_BASE + var;
                self.check_shared(st, param, &Poly::zero(), offset, bytes, what)?;
                return Ok(param);
            }
            AddrBase::Shared(_) | AddrBase::Absolute => {
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
        // A shared-space address means nothing as a global or generic one (the same number
        // names another byte there), and a global pointer nothing in the shared space.
        match (shared, param >= SHARED_BASE) {
            (true, true) => {
                self.check_shared(st, param, &off, offset, bytes, what)?;
                return Ok(param);
            }
            (true, false) => {
                return Err((
                    RejectKind::UnattributedAddress,
                    format!(
                        "{what} in the shared space through `{}`, which is not a shared variable's address",
                        self.param_name(param)
                    ),
                ));
            }
            (false, true) => {
                return Err((
                    RejectKind::UnattributedAddress,
                    format!(
                        "{what} outside the shared space through the shared-space address of `{}`",
                        self.param_name(param)
                    ),
                ));
            }
            (false, false) => {}
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
        let unit = i128::from(access_bytes.max(1));
        // An offset built from values the analysis lost track of says nothing about alignment.
        let inexact = total.atoms().any(|a| self.atoms.is_opaque(a));
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

    /// A `.shared` access of `bytes` at `off + offset` from the start of shared variable
    /// `param − SHARED_BASE`. Each variable is its own object: a static one of `B` bytes is
    /// in bounds iff `0 ≤ o` and `o + bytes ≤ B`, so no access through one variable reaches
    /// another, whatever the layout; the dynamic arrays all start where the dynamic shared
    /// memory does, so one is in bounds iff `o + bytes ≤ D`, the launch's dynamic shared bytes
    /// (a symbol bounded only by the launch conditions the proof states). The width must be a
    /// power of two no wider than the variable's alignment (a wider one may straddle the
    /// alignment the variable is placed at) and `o` a multiple of it, so the hardware never
    /// sees a misaligned shared address.
    fn check_shared(
        &mut self,
        st: &State,
        param: u32,
        off: &Poly,
        offset: i64,
        bytes: u32,
        what: &str,
    ) -> Result<(), (RejectKind, String)> {
        let name = self.param_name(param);
        let Some(var) = self
            .body
            .shared
            .get((param - SHARED_BASE) as usize)
            .cloned()
        else {
            return Err((
                RejectKind::UnattributedAddress,
                format!("{what} through an unknown shared variable"),
            ));
        };
        if !self.contract.three_dimensional() {
            return Err((
                RejectKind::Unsupported,
                "shared memory is not verified".to_owned(),
            ));
        }
        if !bytes.is_power_of_two() || bytes > 16 || u64::from(bytes) > var.align {
            return Err((
                RejectKind::WrongWidth,
                format!(
                    "{what} of {bytes} bytes in shared variable `{name}`, aligned to {} bytes",
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
                    format!(
                        "{what} in shared variable `{name}` at an offset that cannot be bounded"
                    ),
                ));
            }
            return Err((
                RejectKind::Misaligned,
                format!(
                    "{what} in shared variable `{name}` at an offset that is not a multiple of {bytes} bytes"
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
        if !self.prove(&st.facts, &total) {
            return Err((
                self.bound_failure(&total),
                format!("{what} in shared variable `{name}` at an offset that may be negative"),
            ));
        }
        let upper = size.add_const(-unit).and_then(|c| c.sub(&total));
        if !upper.is_some_and(|u| self.prove(&st.facts, &u)) {
            let limit = if var.bytes.is_some() {
                "its size"
            } else {
                "the launch's dynamic shared bytes"
            };
            return Err((
                self.bound_failure(&total),
                format!("{what} in shared variable `{name}` that may reach past {limit}"),
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
        if !self.prove(facts, index) {
            return Err((
                self.bound_failure(index),
                format!("{what} through {operand} (`{name}`) at an index that may be negative"),
            ));
        }
        let upper = count.add_const(-1).and_then(|c| c.sub(index));
        if !upper.is_some_and(|u| self.prove(facts, &u)) {
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
        if !self.prove(facts, index) {
            return Err((
                self.bound_failure(index),
                format!("{what} through {operand} (`{name}`) at an index that may be negative"),
            ));
        }
        let upper = extent.add_const(-1).and_then(|c| c.sub(index));
        if !upper.is_some_and(|u| self.prove(facts, &u)) {
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
                if nonempty.is_some_and(|u| self.prove(facts, &u)) {
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
