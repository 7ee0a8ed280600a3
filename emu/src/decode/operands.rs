//! Operands become slots: registers by scope lookup, immediates as constant slots (one per
//! distinct bit pattern), special registers (`%tid.x`, …) as their fixed slots.

use super::class::{Class, class};
use super::decoder::{Ctx, DResult, Decoder, Scope, Sym, lookup};
use super::mods::Mods;
use super::{
    DecodeError, F_SIGNED, Inst, Op, SPECIAL_CLOCK, SPECIAL_CLOCK64, SPECIAL_GLOBALTIMER,
    SPECIAL_LANEID, SPECIAL_LANEMASK_EQ, SPECIAL_LANEMASK_GE, SPECIAL_LANEMASK_GT,
    SPECIAL_LANEMASK_LE, SPECIAL_LANEMASK_LT, SPECIAL_NWARPID, SPECIAL_ONE, SPECIAL_WARPID,
    SPECIAL_ZERO,
};
use jitseam_ptx::FloatValue;
use jitseam_ptx::ScalarType;
use jitseam_ptx::body::Operand;
use jitseam_ptx::{ParseErrorKind, excerpt};

/// An emission failure: a full error, or just the reason something is unsupported (the caller
/// adds the instruction and line).
pub(super) type EResult<T> = Result<T, Result<DecodeError, &'static str>>;

pub(super) fn bad<T>(reason: &'static str) -> EResult<T> {
    Err(Err(reason))
}

impl<'a> Decoder<'a> {
    pub(super) fn reg(&self, scopes: &[Scope<'a>], name: &str, offset: usize) -> DResult<u32> {
        match lookup(scopes, name) {
            Some(Sym::Reg(slot)) => Ok(slot),
            Some(_) => Err(self.parse_error(
                offset,
                ParseErrorKind::InvalidInstruction {
                    instruction: excerpt(name),
                    reason: "a parameter used as a register",
                },
            )),
            None => Err(self.parse_error(
                offset,
                ParseErrorKind::Undeclared {
                    name: excerpt(name),
                },
            )),
        }
    }

    pub(super) fn invalid(
        &self,
        ctx: &Ctx<'_, 'a, '_>,
        reason: &'static str,
    ) -> Result<DecodeError, &'static str> {
        Ok(self.parse_error(
            ctx.instruction.range.start,
            ParseErrorKind::InvalidInstruction {
                instruction: excerpt(&ctx.instruction.full_opcode()),
                reason,
            },
        ))
    }

    pub(super) fn operand<'o>(
        &self,
        ctx: &'o Ctx<'_, 'a, '_>,
        i: usize,
    ) -> EResult<&'o Operand<'a>> {
        ctx.instruction
            .operands
            .get(i)
            .ok_or_else(|| self.invalid(ctx, "too few operands"))
    }

    pub(super) fn expect_count(&self, ctx: &Ctx<'_, 'a, '_>, n: usize) -> EResult<()> {
        if ctx.instruction.operands.len() == n {
            Ok(())
        } else {
            Err(self.invalid(ctx, "wrong number of operands"))
        }
    }

    /// A destination register.
    pub(super) fn dst(&self, ctx: &Ctx<'_, 'a, '_>, i: usize) -> EResult<u32> {
        let operand = self.operand(ctx, i)?;
        self.dst_operand(ctx, operand)
    }

    /// A destination register (or a vector register's component, or the sink `_`).
    pub(super) fn dst_operand(&self, ctx: &Ctx<'_, 'a, '_>, operand: &Operand<'a>) -> EResult<u32> {
        match operand {
            Operand::Name("_") => Ok(self.sink),
            Operand::Name(name) => self
                .reg(ctx.scopes, name, ctx.instruction.range.start)
                .map_err(Ok),
            Operand::Special(name, dim) => match self.component(ctx, name, *dim)? {
                Some(slot) => Ok(slot),
                None => Err(self.invalid(ctx, "the destination must be a register")),
            },
            _ => Err(self.invalid(ctx, "the destination must be a register")),
        }
    }

    /// The slot of component `dim` (`.x` = 0, …) of `name` if it is a vector register.
    fn component(&self, ctx: &Ctx<'_, 'a, '_>, name: &str, dim: u8) -> EResult<Option<u32>> {
        match lookup(ctx.scopes, name) {
            Some(Sym::VecReg { base, len }) if dim < len => Ok(Some(base + u32::from(dim))),
            Some(Sym::VecReg { .. }) => Err(self.invalid(ctx, "a component the vector lacks")),
            _ => Ok(None),
        }
    }

    /// The elements of a vector operand: `{a, b, …}` as written, or a vector register's
    /// components; `None` for anything else.
    pub(super) fn vector_parts(
        &self,
        ctx: &Ctx<'_, 'a, '_>,
        operand: &Operand<'a>,
    ) -> Option<Vec<Operand<'a>>> {
        match operand {
            Operand::Vector(parts) => Some(parts.clone()),
            Operand::Name(name) => match lookup(ctx.scopes, name) {
                Some(Sym::VecReg { len, .. }) => {
                    Some((0..len).map(|i| Operand::Special(name, i)).collect())
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// A source operand of type `ty`: a register, an immediate or a special register.
    pub(super) fn src(&mut self, ctx: &Ctx<'_, 'a, '_>, i: usize, ty: ScalarType) -> EResult<u32> {
        let operand = self.operand(ctx, i)?.clone();
        self.src_operand(ctx, &operand, ty)
    }

    pub(super) fn src_operand(
        &mut self,
        ctx: &Ctx<'_, 'a, '_>,
        operand: &Operand<'a>,
        ty: ScalarType,
    ) -> EResult<u32> {
        match operand {
            Operand::Name(name) if lookup(ctx.scopes, name).is_none() => match special_kind(name) {
                Some(Special::Constant(v)) => self.const_slot(v).map_err(Ok),
                Some(Special::PerThread(kind)) => {
                    let slot = self.alloc(1).map_err(Ok)?;
                    let mut inst = Inst::new(Op::Special);
                    inst.k = kind;
                    inst.d = slot;
                    self.pre.push(inst);
                    Ok(slot)
                }
                None => self
                    .reg(ctx.scopes, name, ctx.instruction.range.start)
                    .map_err(Ok),
            },
            Operand::Name(name) => self
                .reg(ctx.scopes, name, ctx.instruction.range.start)
                .map_err(Ok),
            Operand::Int(_) | Operand::Float(_) => {
                let bits = imm_bits(operand, ty)
                    .ok_or_else(|| self.invalid(ctx, "an immediate that does not fit the type"))?;
                self.const_slot(bits).map_err(Ok)
            }
            Operand::Special(name, dim) => {
                if let Some(slot) = self.component(ctx, name, *dim)? {
                    return Ok(slot);
                }
                let group = match *name {
                    "%tid" => 0,
                    "%ntid" => 1,
                    "%ctaid" => 2,
                    "%nctaid" => 3,
                    // One cluster of one block: the cluster registers mirror the grid's.
                    "%cluster_ctaid" | "%cluster_nctaid" => {
                        let v = u64::from(*name == "%cluster_nctaid");
                        return self.const_slot(v).map_err(Ok);
                    }
                    _ => return bad("this special register"),
                };
                if *dim > 2 {
                    return Err(self.invalid(ctx, "a special register has no component .w"));
                }
                Ok(group * 3 + u32::from(*dim))
            }
            _ => Err(self.invalid(ctx, "unexpected operand kind")),
        }
    }

    pub(super) fn pred_src(&mut self, ctx: &Ctx<'_, 'a, '_>, i: usize) -> EResult<(u32, bool)> {
        match self.operand(ctx, i)?.clone() {
            Operand::Not(name) => Ok((
                self.reg(ctx.scopes, name, ctx.instruction.range.start)
                    .map_err(Ok)?,
                true,
            )),
            other => Ok((self.src_operand(ctx, &other, ScalarType::Pred)?, false)),
        }
    }

    pub(super) fn push(&mut self, ctx: &mut Ctx<'_, 'a, '_>, inst: Inst) {
        ctx.code.insts.push(inst);
    }

    /// A signed integer result of type `ty` written to register `d` that is wider than `ty` is
    /// sign-extended to the register's width, as the PTX rules for destination operands wider
    /// than the instruction type say (`ld`, `cvt`, `mov`). Every other result is already
    /// zero-extended (registers hold their value in the low bits, the rest zero).
    pub(super) fn sign_extend_dst(&mut self, ctx: &mut Ctx<'_, 'a, '_>, d: u32, ty: ScalarType) {
        let bits = (ty.bytes() * 8) as u8;
        let signed = matches!(
            ty,
            ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64
        );
        let width = self.reg_width(d);
        if signed && width > bits {
            let mut inst = Inst::new(Op::CvtInt);
            inst.d = d;
            inst.a = d;
            inst.w = bits;
            inst.imm = i64::from(width);
            inst.f |= F_SIGNED;
            self.push(ctx, inst);
        }
    }

    pub(super) fn one_type(&self, ctx: &Ctx<'_, 'a, '_>, m: &Mods<'a>) -> EResult<ScalarType> {
        match m.types.as_slice() {
            [ty] => Ok(*ty),
            _ => Err(self.invalid(ctx, "expected exactly one type")),
        }
    }
}

fn mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The bits of an immediate used as type `ty`.
fn imm_bits(operand: &Operand<'_>, ty: ScalarType) -> Option<u64> {
    let bits = (ty.bytes() * 8) as u8;
    match (operand, class(ty)) {
        (Operand::Int(v), Class::F32) => Some(u64::from((*v as i64 as f32).to_bits())),
        (Operand::Int(v), Class::F64) => Some((*v as i64 as f64).to_bits()),
        (Operand::Int(v), Class::Pred) => Some(u64::from(*v != 0)),
        (Operand::Int(v), _) => Some(v & mask(bits)),
        (Operand::Float(FloatValue::F32(f)), Class::F64) => Some(f64::from(*f).to_bits()),
        (Operand::Float(FloatValue::F32(f)), _) if bits == 32 => Some(u64::from(f.to_bits())),
        (Operand::Float(FloatValue::F64(f)), Class::F32) => Some(u64::from((*f as f32).to_bits())),
        (Operand::Float(FloatValue::F64(f)), _) if bits == 64 => Some(f.to_bits()),
        (Operand::Float(FloatValue::F64(f)), Class::F16) => {
            Some(u64::from(half::f16::from_f64(*f).to_bits()))
        }
        (Operand::Float(FloatValue::F64(f)), Class::BF16) => {
            Some(u64::from(half::bf16::from_f64(*f).to_bits()))
        }
        _ => None,
    }
}

/// A special register that is not `%tid`-like: a constant, or computed per thread.
enum Special {
    Constant(u64),
    PerThread(u8),
}

/// Whether `name` is a special register or constant that is not a `%tid`-like vector.
pub(super) fn is_special(name: &str) -> bool {
    special_kind(name).is_some()
}

fn special_kind(name: &str) -> Option<Special> {
    use Special::{Constant, PerThread};
    Some(match name {
        "WARP_SZ" => Constant(32),
        "%laneid" => PerThread(SPECIAL_LANEID),
        "%warpid" => PerThread(SPECIAL_WARPID),
        "%nwarpid" => PerThread(SPECIAL_NWARPID),
        "%lanemask_eq" => PerThread(SPECIAL_LANEMASK_EQ),
        "%lanemask_lt" => PerThread(SPECIAL_LANEMASK_LT),
        "%lanemask_le" => PerThread(SPECIAL_LANEMASK_LE),
        "%lanemask_gt" => PerThread(SPECIAL_LANEMASK_GT),
        "%lanemask_ge" => PerThread(SPECIAL_LANEMASK_GE),
        "%clock" => PerThread(SPECIAL_CLOCK),
        "%clock64" => PerThread(SPECIAL_CLOCK64),
        "%globaltimer" => PerThread(SPECIAL_GLOBALTIMER),
        // The emulator is one SM running one grid.
        "%smid" | "%gridid" => PerThread(SPECIAL_ZERO),
        "%nsmid" => PerThread(SPECIAL_ONE),
        _ => return None,
    })
}
