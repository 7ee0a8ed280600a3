//! Warp-level instructions: `shfl.sync`, `vote.sync`, `redux.sync`, `match.sync` and
//! `activemask`. Only the `.sync` forms (which name their member threads) are accepted.

use super::decoder::{Ctx, Decoder};
use super::mods::Mods;
use super::operands::{EResult, bad};
use super::{
    F_NEG_C, F_SIGNED, Inst, NONE, Op, WARP_ACTIVEMASK, WARP_MATCH_ALL, WARP_MATCH_ANY,
    WARP_REDUX_ADD, WARP_REDUX_AND, WARP_REDUX_MAX, WARP_REDUX_MIN, WARP_REDUX_OR, WARP_REDUX_XOR,
    WARP_SHFL_BFLY, WARP_SHFL_DOWN, WARP_SHFL_IDX, WARP_SHFL_UP, WARP_VOTE_ALL, WARP_VOTE_ANY,
    WARP_VOTE_BALLOT, WARP_VOTE_UNI,
};
use jitseam_ptx::ScalarType;
use jitseam_ptx::body::Operand;

impl<'a> Decoder<'a> {
    pub(super) fn warp(
        &mut self,
        ctx: &mut Ctx<'_, 'a, '_>,
        m: &Mods<'a>,
        opcode: &str,
    ) -> EResult<()> {
        self.shared.block_scoped = true;
        let has = |w: &str| m.extra.contains(&w);
        let written = |w: &str| ctx.instruction.modifiers.contains(&w);
        if opcode != "activemask" && !has(".sync") {
            return bad("warp-level instructions without .sync");
        }
        let mut inst = Inst::new(Op::Warp);
        inst.imm = i64::from(NONE);
        match opcode {
            "activemask" => {
                self.expect_count(ctx, 1)?;
                inst.k = WARP_ACTIVEMASK;
                inst.d = self.dst(ctx, 0)?;
            }
            "shfl" => {
                if self.one_type(ctx, m)? != ScalarType::B32 {
                    return bad("shfl of a type other than .b32");
                }
                self.expect_count(ctx, 5)?;
                inst.k = if has(".up") {
                    WARP_SHFL_UP
                } else if has(".down") {
                    WARP_SHFL_DOWN
                } else if has(".bfly") {
                    WARP_SHFL_BFLY
                } else if has(".idx") {
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
            "vote" => {
                self.expect_count(ctx, 3)?;
                inst.k = if has(".all") {
                    WARP_VOTE_ALL
                } else if has(".any") {
                    WARP_VOTE_ANY
                } else if written(".uni") {
                    WARP_VOTE_UNI
                } else if has(".ballot") {
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
            "redux" => {
                self.expect_count(ctx, 3)?;
                let ty = self.one_type(ctx, m)?;
                let bitwise = match m.bool_op {
                    1 => Some(WARP_REDUX_AND),
                    2 => Some(WARP_REDUX_OR),
                    3 => Some(WARP_REDUX_XOR),
                    _ => None,
                };
                inst.k = match (bitwise, ty) {
                    (Some(k), ScalarType::B32) => k,
                    (None, ScalarType::U32 | ScalarType::S32) => {
                        if ty == ScalarType::S32 {
                            inst.f |= F_SIGNED;
                        }
                        if has(".add") {
                            WARP_REDUX_ADD
                        } else if has(".min") {
                            WARP_REDUX_MIN
                        } else if has(".max") {
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
            "match" => {
                self.expect_count(ctx, 3)?;
                let ty = self.one_type(ctx, m)?;
                inst.w = match ty {
                    ScalarType::B32 => 32,
                    ScalarType::B64 => 64,
                    _ => return bad("match of a type other than .b32 or .b64"),
                };
                if has(".any") {
                    inst.k = WARP_MATCH_ANY;
                    inst.d = self.dst(ctx, 0)?;
                } else if has(".all") {
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
    fn value_and_predicate(&mut self, ctx: &Ctx<'_, 'a, '_>, inst: &mut Inst) -> EResult<()> {
        let at = ctx.instruction.range.start;
        match self.operand(ctx, 0)?.clone() {
            Operand::PredPair(d, p) => {
                inst.d = if d == "_" {
                    self.sink
                } else {
                    self.reg(ctx.scopes, d, at).map_err(Ok)?
                };
                if p != "_" {
                    inst.imm = i64::from(self.reg(ctx.scopes, p, at).map_err(Ok)?);
                }
            }
            _ => inst.d = self.dst(ctx, 0)?,
        }
        Ok(())
    }
}
