//! Memory: `ld` and `st` (scalar and vector) in every state space the emulator holds, and on
//! `.param` variables by name. The state space travels in the instruction's `k` (see
//! [`crate::space::Space`]); the interpreter resolves it to a window per access.

use super::decoder::{Ctx, Decoder, Sym};
use super::operands::{EResult, bad};
use super::{Inst, Op};
use crate::space::Space;
use jitseam_ptx::inst::{Flag, Modifiers, Operand};

/// The ordering modifiers a load or store may carry: the emulator performs every access at
/// once, in program order, so each is already as ordered as any of them asks.
const ORDERING: [Flag; 4] = [Flag::Acquire, Flag::Release, Flag::AcqRel, Flag::Sc];

impl Decoder<'_> {
    pub(super) fn load(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let m = &ins.mods;
        let ty = self.one_type(ctx)?;
        if !m.flags_within(&ORDERING) {
            return bad("this modifier on ld");
        }
        self.expect_count(ctx, 2)?;
        let Operand::Address { base, offset } = *self.operand(ctx, 1)? else {
            return Err(self.invalid(ctx, "the source of ld must be an address"));
        };
        let base = self.base_sym(ctx, base)?;
        let size = ty.bytes();
        if size > 8 {
            return bad("128-bit loads");
        }
        let space = self.param_in_frame(ctx, m, base, offset, size)?;
        let named_param = space == Space::Param
            && matches!(base, Some(Sym::KParam { .. } | Sym::ParamSlot { .. }));
        match (space, named_param) {
            (Space::Param, true) if m.vector != 1 => {
                let Some(Sym::KParam {
                    offset: at,
                    size: psize,
                }) = base
                else {
                    return bad("vector loads of call parameters");
                };
                let Some(parts) = self.vector_parts(self.operand(ctx, 0)?) else {
                    return Err(self.invalid(ctx, "a vector load needs a vector destination"));
                };
                if parts.len() != m.vector as usize {
                    return Err(self.invalid(ctx, "vector length differs from .v"));
                }
                let Ok(off) = usize::try_from(offset) else {
                    return bad("negative parameter offsets");
                };
                let size = size as usize;
                if off + size * parts.len() > psize {
                    return Err(self.invalid(ctx, "a load past the end of a parameter"));
                }
                for (i, part) in parts.iter().enumerate() {
                    if *part == Operand::Sink {
                        continue;
                    }
                    let d = self.dst_operand(ctx, part)?;
                    let mut inst = Inst::new(Op::LdKParam);
                    inst.d = d;
                    inst.imm = (at + off + i * size) as i64;
                    inst.w = size as u8;
                    self.push(ctx, inst);
                    self.sign_extend_dst(ctx, d, ty);
                }
                Ok(())
            }
            (Space::Param, true) => {
                let d = self.dst(ctx, 0)?;
                match base {
                    Some(Sym::KParam {
                        offset: at,
                        size: psize,
                    }) => {
                        let Ok(off) = usize::try_from(offset) else {
                            return bad("negative parameter offsets");
                        };
                        if off + size as usize > psize {
                            return Err(self.invalid(ctx, "a load past the end of a parameter"));
                        }
                        let mut inst = Inst::new(Op::LdKParam);
                        inst.d = d;
                        inst.imm = (at + off) as i64;
                        inst.w = size as u8;
                        self.push(ctx, inst);
                        self.sign_extend_dst(ctx, d, ty);
                        Ok(())
                    }
                    Some(Sym::ParamSlot { slot, size: psize }) => {
                        if offset != 0 || size > psize.max(1) {
                            return bad("parameter accesses at an offset");
                        }
                        let mut inst = Inst::new(Op::MovMask);
                        inst.d = d;
                        inst.a = slot;
                        inst.w = (size * 8) as u8;
                        self.push(ctx, inst);
                        self.sign_extend_dst(ctx, d, ty);
                        Ok(())
                    }
                    _ => bad("parameter-space loads through registers"),
                }
            }
            _ => {
                let a = self.base_slot(ctx, space, base)?;
                if m.vector == 1 {
                    let mut inst = Inst::new(Op::LdGlobal);
                    let d = self.dst(ctx, 0)?;
                    inst.d = d;
                    inst.a = a;
                    inst.k = space.code();
                    inst.imm = offset;
                    inst.w = size as u8;
                    self.push(ctx, inst);
                    self.sign_extend_dst(ctx, d, ty);
                } else {
                    let Some(parts) = self.vector_parts(self.operand(ctx, 0)?) else {
                        return Err(self.invalid(ctx, "a vector load needs a vector destination"));
                    };
                    if parts.len() != m.vector as usize {
                        return Err(self.invalid(ctx, "vector length differs from .v"));
                    }
                    let start = self.lanes.len() as u32;
                    for part in parts {
                        let slot = self.dst_operand(ctx, part)?;
                        self.lanes.push(slot);
                    }
                    let mut inst = Inst::new(Op::LdGlobalV);
                    inst.d = start;
                    inst.c = u32::from(m.vector);
                    inst.a = a;
                    inst.k = space.code();
                    inst.imm = offset;
                    inst.w = size as u8;
                    self.push(ctx, inst);
                    let parts = self
                        .lanes
                        .get(start as usize..)
                        .map(<[u32]>::to_vec)
                        .unwrap_or_default();
                    for part in parts {
                        self.sign_extend_dst(ctx, part, ty);
                    }
                }
                Ok(())
            }
        }
    }

    /// The instruction's state space, except that a `.param` array held in the local frame
    /// (a function's or a call's, see [`Sym::ParamMem`]) is accessed as the local memory it is,
    /// once the access is known to stay inside it.
    fn param_in_frame(
        &self,
        ctx: &Ctx<'_>,
        m: &Modifiers,
        base: Option<Sym>,
        offset: i64,
        size: u32,
    ) -> EResult<Space> {
        let space = Space::of(m.space).ok_or(Err("this state space"))?;
        if space != Space::Param {
            return Ok(space);
        }
        let Some(Sym::ParamMem { size: psize, .. }) = base else {
            return Ok(space);
        };
        let end = u64::try_from(offset)
            .ok()
            .and_then(|o| o.checked_add(u64::from(size) * u64::from(m.vector)));
        match end {
            Some(end) if end <= u64::from(psize) => Ok(Space::Local),
            _ => Err(self.invalid(ctx, "an access outside the parameter")),
        }
    }

    pub(super) fn store(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let m = &ins.mods;
        let ty = self.one_type(ctx)?;
        if !m.flags_within(&ORDERING) {
            return bad("this modifier on st");
        }
        self.expect_count(ctx, 2)?;
        let Operand::Address { base, offset } = *self.operand(ctx, 0)? else {
            return Err(self.invalid(ctx, "the destination of st must be an address"));
        };
        let base = self.base_sym(ctx, base)?;
        let size = ty.bytes();
        if size > 8 {
            return bad("128-bit stores");
        }
        let space = self.param_in_frame(ctx, m, base, offset, size)?;
        match space {
            Space::Param => {
                if m.vector != 1 {
                    return bad("vector parameter stores");
                }
                let Some(base) = base else {
                    return Err(self.invalid(ctx, "a parameter store needs a parameter name"));
                };
                match base {
                    Sym::ParamSlot { slot, size: psize } => {
                        if offset != 0 || size > psize.max(1) {
                            return bad("parameter accesses at an offset");
                        }
                        let mut inst = Inst::new(Op::MovMask);
                        inst.d = slot;
                        inst.a = self.src(ctx, 1, ty)?;
                        inst.w = (size * 8) as u8;
                        self.push(ctx, inst);
                        Ok(())
                    }
                    Sym::KParam { .. } | Sym::Reg(_) => bad("stores to kernel parameters"),
                    _ => Err(self.invalid(ctx, "a parameter store needs a parameter name")),
                }
            }
            Space::Const => Err(self.invalid(ctx, "a store to the constant space")),
            _ => {
                let a = self.base_slot(ctx, space, base)?;
                if m.vector == 1 {
                    let mut inst = Inst::new(Op::StGlobal);
                    inst.a = a;
                    inst.k = space.code();
                    inst.b = self.src(ctx, 1, ty)?;
                    inst.imm = offset;
                    inst.w = size as u8;
                    self.push(ctx, inst);
                } else {
                    let Some(parts) = self.vector_parts(self.operand(ctx, 1)?) else {
                        return Err(self.invalid(ctx, "a vector store needs a vector source"));
                    };
                    if parts.len() != m.vector as usize {
                        return Err(self.invalid(ctx, "vector length differs from .v"));
                    }
                    let mut slots = Vec::with_capacity(parts.len());
                    for part in parts {
                        slots.push(self.src_operand(ctx, part, ty)?);
                    }
                    let start = self.lanes.len() as u32;
                    self.lanes.extend(slots);
                    let mut inst = Inst::new(Op::StGlobalV);
                    inst.a = a;
                    inst.k = space.code();
                    inst.b = start;
                    inst.c = u32::from(m.vector);
                    inst.imm = offset;
                    inst.w = size as u8;
                    self.push(ctx, inst);
                }
                Ok(())
            }
        }
    }
}
