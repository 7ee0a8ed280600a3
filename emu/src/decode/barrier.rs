//! Barriers: `bar`/`barrier` `.sync`, `.arrive` and `.red` (`.popc`, `.and`, `.or`) across the
//! threads of a block, each with a barrier number and an optional thread count; and
//! `bar.warp.sync`, which waits for the threads of a warp.

use super::decoder::{Ctx, Decoder};
use super::mods::Mods;
use super::operands::{EResult, bad};
use super::{
    BAR_ARRIVE, BAR_RED_AND, BAR_RED_OR, BAR_RED_POPC, BAR_SYNC, F_NEG_C, Inst, NONE, Op, WARP_SYNC,
};
use jitseam_ptx::ScalarType;

impl<'a> Decoder<'a> {
    pub(super) fn barrier(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>) -> EResult<()> {
        self.shared.block_scoped = true;
        let has = |w: &str| m.extra.contains(&w);
        if has(".cluster") {
            return bad("cluster barriers");
        }
        if has(".warp") {
            self.expect_count(ctx, 1)?;
            let mut inst = Inst::new(Op::Warp);
            inst.k = WARP_SYNC;
            inst.e = self.src(ctx, 0, ScalarType::B32)?;
            inst.imm = i64::from(NONE);
            self.push(ctx, inst);
            return Ok(());
        }
        let count = ctx.instruction.operands.len();
        let mut inst = Inst::new(Op::Barrier);
        // `bar` is `barrier` `.aligned`: the whole warp executes it together.
        inst.w = u8::from(ctx.instruction.opcode == "bar" || has(".aligned"));
        if has(".red") {
            inst.k = if has(".popc") {
                BAR_RED_POPC
            } else {
                match m.bool_op {
                    1 => BAR_RED_AND,
                    2 => BAR_RED_OR,
                    _ => return Err(self.invalid(ctx, "bar.red needs .popc, .and or .or")),
                }
            };
            if !(3..=4).contains(&count) {
                return Err(self.invalid(ctx, "wrong number of operands"));
            }
            inst.d = self.dst(ctx, 0)?;
            inst.a = self.src(ctx, 1, ScalarType::U32)?;
            if count == 4 {
                inst.b = self.src(ctx, 2, ScalarType::U32)?;
            }
            let (c, negated) = self.pred_src(ctx, count - 1)?;
            inst.c = c;
            if negated {
                inst.f |= F_NEG_C;
            }
        } else if has(".arrive") {
            // A thread count is required: arriving threads do not wait, so the barrier must
            // know how many to expect.
            self.expect_count(ctx, 2)?;
            inst.k = BAR_ARRIVE;
            inst.a = self.src(ctx, 0, ScalarType::U32)?;
            inst.b = self.src(ctx, 1, ScalarType::U32)?;
        } else if has(".sync") {
            if !(1..=2).contains(&count) {
                return Err(self.invalid(ctx, "wrong number of operands"));
            }
            inst.k = BAR_SYNC;
            inst.a = self.src(ctx, 0, ScalarType::U32)?;
            if count == 2 {
                inst.b = self.src(ctx, 1, ScalarType::U32)?;
            }
        } else {
            return bad("this barrier");
        }
        self.push(ctx, inst);
        Ok(())
    }
}
