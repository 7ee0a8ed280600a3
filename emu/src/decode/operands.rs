//! Operands become slots: registers through the body's table, immediates as constant slots (one
//! per distinct bit pattern), special registers (`%tid.x`, …) as their fixed slots or computed
//! just before the instruction.

use super::class::{Class, class};
use super::decoder::{Ctx, DResult, Decoder, Sym, parse_error};
use super::{
    DecodeError, F_SIGNED, Inst, Op, SPECIAL_CLOCK, SPECIAL_CLOCK64, SPECIAL_GLOBALTIMER,
    SPECIAL_LANEID, SPECIAL_LANEMASK_EQ, SPECIAL_LANEMASK_GE, SPECIAL_LANEMASK_GT,
    SPECIAL_LANEMASK_LE, SPECIAL_LANEMASK_LT, SPECIAL_NWARPID, SPECIAL_ONE, SPECIAL_WARPID,
    SPECIAL_ZERO,
};
use jitseam_ptx::inst::{AddrBase, Name, Operand, RegId, Special};
use jitseam_ptx::{FloatValue, ParseErrorKind, ScalarType, excerpt};

/// An emission failure: a full error, or just the reason something is unsupported (the caller
/// adds the instruction and line).
pub(super) type EResult<T> = Result<T, Result<DecodeError, &'static str>>;

pub(super) fn bad<T>(reason: &'static str) -> EResult<T> {
    Err(Err(reason))
}

impl Decoder<'_> {
    /// The instruction is not valid PTX: `reason` says why.
    pub(super) fn invalid(
        &self,
        ctx: &Ctx<'_>,
        reason: &'static str,
    ) -> Result<DecodeError, &'static str> {
        Ok(DecodeError::Parse(parse_error(
            ctx.ins,
            ParseErrorKind::InvalidInstruction {
                instruction: excerpt(ctx.ins.opcode_text()),
                reason,
            },
        )))
    }

    /// Operand `i` of the instruction (borrowed from the instruction, not from `ctx`).
    pub(super) fn operand<'o>(&self, ctx: &Ctx<'o>, i: usize) -> EResult<&'o Operand> {
        let ins: &'o jitseam_ptx::inst::Instruction = ctx.ins;
        ins.operands
            .get(i)
            .ok_or_else(|| self.invalid(ctx, "too few operands"))
    }

    pub(super) fn expect_count(&self, ctx: &Ctx<'_>, n: usize) -> EResult<()> {
        if ctx.ins.operands.len() == n {
            Ok(())
        } else {
            Err(self.invalid(ctx, "wrong number of operands"))
        }
    }

    /// The slot of register `r`.
    pub(super) fn reg_slot(&self, ctx: &Ctx<'_>, r: RegId) -> EResult<u32> {
        ctx.tables
            .reg(r)
            .ok_or_else(|| self.invalid(ctx, "a register the body does not declare"))
    }

    /// What `name` stands for.
    pub(super) fn sym(&self, ctx: &Ctx<'_>, name: Name) -> EResult<Sym> {
        ctx.tables
            .sym(name)
            .ok_or_else(|| self.invalid(ctx, "a name used before its declaration"))
    }

    /// What the base of an address stands for: `None` for an absolute address.
    pub(super) fn base_sym(&self, ctx: &Ctx<'_>, base: AddrBase) -> EResult<Option<Sym>> {
        Ok(match base {
            AddrBase::Absolute => None,
            AddrBase::Reg(r) => Some(Sym::Reg(self.reg_slot(ctx, r)?)),
            AddrBase::Name(name) => Some(self.sym(ctx, name)?),
        })
    }

    /// A destination register.
    pub(super) fn dst(&self, ctx: &Ctx<'_>, i: usize) -> EResult<u32> {
        let operand = self.operand(ctx, i)?;
        self.dst_operand(ctx, operand)
    }

    /// A destination register (or a vector register's component, or the sink `_`).
    pub(super) fn dst_operand(&self, ctx: &Ctx<'_>, operand: &Operand) -> EResult<u32> {
        match operand {
            Operand::Sink => Ok(self.sink),
            Operand::Reg(r) => self.reg_slot(ctx, *r),
            Operand::Name(_) => Err(self.invalid(ctx, "a parameter used as a register")),
            _ => Err(self.invalid(ctx, "the destination must be a register")),
        }
    }

    /// The elements of a vector operand: `{a, b, …}` as written, or a vector register's
    /// components; `None` for anything else.
    pub(super) fn vector_parts<'o>(&self, operand: &'o Operand) -> Option<&'o [Operand]> {
        match operand {
            Operand::Vector(parts) => Some(parts),
            _ => None,
        }
    }

    /// A source operand of type `ty`: a register, an immediate or a special register.
    pub(super) fn src(&mut self, ctx: &Ctx<'_>, i: usize, ty: ScalarType) -> EResult<u32> {
        let operand = self.operand(ctx, i)?;
        self.src_operand(ctx, operand, ty)
    }

    pub(super) fn src_operand(
        &mut self,
        ctx: &Ctx<'_>,
        operand: &Operand,
        ty: ScalarType,
    ) -> EResult<u32> {
        match operand {
            Operand::Reg(r) => self.reg_slot(ctx, *r),
            Operand::Int(_) | Operand::Float(_) => {
                let bits = imm_bits(operand, ty)
                    .ok_or_else(|| self.invalid(ctx, "an immediate that does not fit the type"))?;
                self.const_slot(bits).map_err(Ok)
            }
            Operand::Special(special) => self.special(*special),
            Operand::Name(_) => Err(self.invalid(ctx, "a parameter used as a register")),
            _ => Err(self.invalid(ctx, "unexpected operand kind")),
        }
    }

    /// The slot a special register is read from: its own, a constant, or one computed per
    /// thread just before the instruction.
    fn special(&mut self, special: Special) -> EResult<u32> {
        use Special as S;
        let per_thread = match special {
            S::Tid(d) => return Ok(u32::from(d)),
            S::Ntid(d) => return Ok(3 + u32::from(d)),
            S::Ctaid(d) => return Ok(6 + u32::from(d)),
            S::Nctaid(d) => return Ok(9 + u32::from(d)),
            // One cluster of one block: the cluster registers mirror the grid's.
            S::ClusterCtaid(_) => return self.const_slot(0).map_err(Ok),
            S::ClusterNctaid(_) => return self.const_slot(1).map_err(Ok),
            S::WarpSz => return self.const_slot(32).map_err(Ok),
            S::Laneid => SPECIAL_LANEID,
            S::Warpid => SPECIAL_WARPID,
            S::Nwarpid => SPECIAL_NWARPID,
            S::LanemaskEq => SPECIAL_LANEMASK_EQ,
            S::LanemaskLt => SPECIAL_LANEMASK_LT,
            S::LanemaskLe => SPECIAL_LANEMASK_LE,
            S::LanemaskGt => SPECIAL_LANEMASK_GT,
            S::LanemaskGe => SPECIAL_LANEMASK_GE,
            S::Clock => SPECIAL_CLOCK,
            S::Clock64 => SPECIAL_CLOCK64,
            S::Globaltimer => SPECIAL_GLOBALTIMER,
            // The emulator is one SM running one grid.
            S::Smid | S::Gridid => SPECIAL_ZERO,
            S::Nsmid => SPECIAL_ONE,
            S::Clusterid(_)
            | S::Nclusterid(_)
            | S::ClockHi
            | S::GlobaltimerLo
            | S::GlobaltimerHi
            | S::ClusterCtarank
            | S::ClusterNctarank
            | S::IsExplicitCluster
            | S::TotalSmemSize
            | S::DynamicSmemSize
            | S::AggrSmemSize
            | S::Envreg(_)
            | S::Pm(_) => return bad("this special register"),
        };
        let slot = self.alloc(1).map_err(Ok)?;
        let mut inst = Inst::new(Op::Special);
        inst.k = per_thread;
        inst.d = slot;
        self.pre.push(inst);
        Ok(slot)
    }

    pub(super) fn pred_src(&mut self, ctx: &Ctx<'_>, i: usize) -> EResult<(u32, bool)> {
        match self.operand(ctx, i)? {
            Operand::Not(r) => Ok((self.reg_slot(ctx, *r)?, true)),
            other => Ok((self.src_operand(ctx, other, ScalarType::Pred)?, false)),
        }
    }

    pub(super) fn push(&mut self, ctx: &mut Ctx<'_>, inst: Inst) {
        ctx.code.insts.push(inst);
    }

    /// A signed integer result of type `ty` written to register `d` that is wider than `ty` is
    /// sign-extended to the register's width, as the PTX rules for destination operands wider
    /// than the instruction type say (`ld`, `cvt`, `mov`). Every other result is already
    /// zero-extended (registers hold their value in the low bits, the rest zero).
    pub(super) fn sign_extend_dst(&mut self, ctx: &mut Ctx<'_>, d: u32, ty: ScalarType) {
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

    pub(super) fn one_type(&self, ctx: &Ctx<'_>) -> EResult<ScalarType> {
        ctx.ins
            .mods
            .one_type()
            .ok_or_else(|| self.invalid(ctx, "expected exactly one type"))
    }

    /// A [`DecodeError::Parse`] that `name` is not declared, at the instruction.
    pub(super) fn undeclared(&self, ctx: &Ctx<'_>, name: &str) -> DecodeError {
        DecodeError::Parse(parse_error(
            ctx.ins,
            ParseErrorKind::Undeclared {
                name: excerpt(name),
            },
        ))
    }
}

/// Whether a `DResult` failure is an error to pass on as it is.
pub(super) fn full<T>(result: DResult<T>) -> EResult<T> {
    result.map_err(Ok)
}

fn mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The bits of an immediate used as type `ty`.
fn imm_bits(operand: &Operand, ty: ScalarType) -> Option<u64> {
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
