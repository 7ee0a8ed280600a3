//! Barriers: `bar`/`barrier` `.sync`, `.arrive` and `.red` (`.popc`, `.and`, `.or`) across the
//! threads of a block, each with a barrier number and an optional thread count; and
//! `bar.warp.sync`, which waits for the threads of a warp.

use super::decoder::{Ctx, Decoder};
use super::operands::{EResult, bad};
use super::{
    BAR_ARRIVE, BAR_RED_AND, BAR_RED_OR, BAR_RED_POPC, BAR_SYNC, F_NEG_C, Inst, NONE, Op, WARP_SYNC,
};
use jitseam_ptx::ScalarType;
use jitseam_ptx::inst::{BoolOp, Flag, Opcode};

impl Decoder<'_> {
    pub(super) fn barrier(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let m = &ins.mods;
        self.shared.block_scoped = true;
        let has = |f: Flag| m.has(f);
        if has(Flag::Cluster) {
            return bad("cluster barriers");
        }
        use Flag as F;
        if !m.flags_within(&[F::Warp, F::Aligned, F::Red, F::Popc, F::Arrive, F::Sync]) {
            return bad("this modifier on a barrier");
        }
        if has(Flag::Warp) {
            self.expect_count(ctx, 1)?;
            let mut inst = Inst::new(Op::Warp);
            inst.k = WARP_SYNC;
            inst.e = self.src(ctx, 0, ScalarType::B32)?;
            inst.imm = i64::from(NONE);
            self.push(ctx, inst);
            return Ok(());
        }
        let count = ins.operands.len();
        let mut inst = Inst::new(Op::Barrier);
        // `bar` is `barrier` `.aligned`: the whole warp executes it together.
        inst.w = u8::from(ins.opcode == Opcode::Bar || has(Flag::Aligned));
        if has(Flag::Red) {
            inst.k = if has(Flag::Popc) {
                BAR_RED_POPC
            } else {
                match m.bool_op {
                    Some(BoolOp::And) => BAR_RED_AND,
                    Some(BoolOp::Or) => BAR_RED_OR,
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
        } else if has(Flag::Arrive) {
            // A thread count is required: arriving threads do not wait, so the barrier must
            // know how many to expect.
            self.expect_count(ctx, 2)?;
            inst.k = BAR_ARRIVE;
            inst.a = self.src(ctx, 0, ScalarType::U32)?;
            inst.b = self.src(ctx, 1, ScalarType::U32)?;
        } else if has(Flag::Sync) {
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
