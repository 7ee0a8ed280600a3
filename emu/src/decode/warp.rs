//! Warp-level instructions: `shfl.sync`, `vote.sync`, `redux.sync`, `match.sync` and
//! `activemask`. Only the `.sync` forms (which name their member threads) are accepted.

use super::decoder::{Ctx, Decoder};
use super::operands::{EResult, bad};
use super::{
    F_NEG_C, F_SIGNED, Inst, NONE, Op, WARP_ACTIVEMASK, WARP_MATCH_ALL, WARP_MATCH_ANY,
    WARP_REDUX_ADD, WARP_REDUX_AND, WARP_REDUX_MAX, WARP_REDUX_MIN, WARP_REDUX_OR, WARP_REDUX_XOR,
    WARP_SHFL_BFLY, WARP_SHFL_DOWN, WARP_SHFL_IDX, WARP_SHFL_UP, WARP_VOTE_ALL, WARP_VOTE_ANY,
    WARP_VOTE_BALLOT, WARP_VOTE_UNI,
};
use jitseam_ptx::ScalarType;
use jitseam_ptx::inst::{BoolOp, Flag, Hint, Opcode, Operand};

impl Decoder<'_> {
    pub(super) fn warp(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let (m, opcode) = (&ins.mods, ins.opcode);
        self.shared.block_scoped = true;
        let has = |f: Flag| m.has(f);
        if opcode != Opcode::Activemask && !has(Flag::Sync) {
            return bad("warp-level instructions without .sync");
        }
        use Flag as F;
        let known = [
            F::Sync,
            F::Aligned,
            F::Up,
            F::Down,
            F::Bfly,
            F::Idx,
            F::All,
            F::Any,
            F::Ballot,
            F::Add,
            F::Min,
            F::Max,
        ];
        if !m.flags_within(&known) {
            return bad("this modifier on a warp-level instruction");
        }
        let mut inst = Inst::new(Op::Warp);
        inst.imm = i64::from(NONE);
        match opcode {
            Opcode::Activemask => {
                self.expect_count(ctx, 1)?;
                inst.k = WARP_ACTIVEMASK;
                inst.d = self.dst(ctx, 0)?;
            }
            Opcode::Shfl => {
                if self.one_type(ctx)? != ScalarType::B32 {
                    return bad("shfl of a type other than .b32");
                }
                self.expect_count(ctx, 5)?;
                inst.k = if has(F::Up) {
                    WARP_SHFL_UP
                } else if has(F::Down) {
                    WARP_SHFL_DOWN
                } else if has(F::Bfly) {
                    WARP_SHFL_BFLY
                } else if has(F::Idx) {
                    WARP_SHFL_IDX
                } else {
                    return Err(self.invalid(ctx, "shfl needs .up, .down, .bfly or .idx"));
                };
                self.value_and_predicate(ctx, &mut inst)?;
                inst.a = self.src(ctx, 1, ScalarType::B32)?;
                inst.b = self.src(ctx, 2, ScalarType::B32)?;
                inst.c = self.src(ctx, 3, ScalarType::B32)?;
                inst.e = self.src(ctx, 4, ScalarType::B32)?;
            }
            Opcode::Vote => {
                self.expect_count(ctx, 3)?;
                inst.k = if has(F::All) {
                    WARP_VOTE_ALL
                } else if has(F::Any) {
                    WARP_VOTE_ANY
                } else if m.has_hint(Hint::Uni) {
                    WARP_VOTE_UNI
                } else if has(F::Ballot) {
                    WARP_VOTE_BALLOT
                } else {
                    return Err(self.invalid(ctx, "vote needs .all, .any, .uni or .ballot"));
                };
                inst.d = self.dst(ctx, 0)?;
                let (c, negated) = self.pred_src(ctx, 1)?;
                inst.c = c;
                if negated {
                    inst.f |= F_NEG_C;
                }
                inst.e = self.src(ctx, 2, ScalarType::B32)?;
            }
            Opcode::Redux => {
                self.expect_count(ctx, 3)?;
                let ty = self.one_type(ctx)?;
                let bitwise = match m.bool_op {
                    Some(BoolOp::And) => Some(WARP_REDUX_AND),
                    Some(BoolOp::Or) => Some(WARP_REDUX_OR),
                    Some(BoolOp::Xor) => Some(WARP_REDUX_XOR),
                    None => None,
                };
                inst.k = match (bitwise, ty) {
                    (Some(k), ScalarType::B32) => k,
                    (None, ScalarType::U32 | ScalarType::S32) => {
                        if ty == ScalarType::S32 {
                            inst.f |= F_SIGNED;
                        }
                        if has(F::Add) {
                            WARP_REDUX_ADD
                        } else if has(F::Min) {
                            WARP_REDUX_MIN
                        } else if has(F::Max) {
                            WARP_REDUX_MAX
                        } else {
                            return Err(self.invalid(ctx, "redux needs an operation"));
                        }
                    }
                    _ => return bad("redux of this type or operation"),
                };
                inst.d = self.dst(ctx, 0)?;
                inst.a = self.src(ctx, 1, ty)?;
                inst.e = self.src(ctx, 2, ScalarType::B32)?;
            }
            Opcode::Match => {
                self.expect_count(ctx, 3)?;
                let ty = self.one_type(ctx)?;
                inst.w = match ty {
                    ScalarType::B32 => 32,
                    ScalarType::B64 => 64,
                    _ => return bad("match of a type other than .b32 or .b64"),
                };
                if has(F::Any) {
                    inst.k = WARP_MATCH_ANY;
                    inst.d = self.dst(ctx, 0)?;
                } else if has(F::All) {
                    inst.k = WARP_MATCH_ALL;
                    self.value_and_predicate(ctx, &mut inst)?;
                } else {
                    return Err(self.invalid(ctx, "match needs .any or .all"));
                }
                inst.a = self.src(ctx, 1, ty)?;
                inst.e = self.src(ctx, 2, ScalarType::B32)?;
            }
            _ => return bad("this instruction"),
        }
        self.push(ctx, inst);
        Ok(())
    }

    /// The destination `d` or `d|p` of operand 0 into `d` and `imm`.
    fn value_and_predicate(&mut self, ctx: &Ctx<'_>, inst: &mut Inst) -> EResult<()> {
        match self.operand(ctx, 0)? {
            Operand::Pair(d, p) => {
                inst.d = self.reg_slot(ctx, *d)?;
                if let Some(p) = p {
                    inst.imm = i64::from(self.reg_slot(ctx, *p)?);
                }
            }
            _ => inst.d = self.dst(ctx, 0)?,
        }
        Ok(())
    }
}
