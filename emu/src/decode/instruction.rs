//! One instruction: what the model does not know refused, the opcode handed to its family in
//! one exhaustive match over [`Opcode`] (an opcode the model gains is a compile error here until
//! it is given a meaning or a reason), the guard applied to what it emitted, and its source
//! line recorded for diagnostics.

use super::decoder::{Ctx, DResult, Decoder};
use super::operands::{EResult, bad};
use super::{DecodeError, F_GUARD_NEG, Inst, Op, Site};
use crate::space::Space;
use jitseam_ptx::excerpt;
use jitseam_ptx::inst::{Flag, Opcode, Rounding};

impl Decoder<'_> {
    pub(super) fn instruction(&mut self, ctx: &mut Ctx<'_>) -> DResult<()> {
        let ins = ctx.ins;
        if let Some(form) = ins.unknown() {
            return Err(DecodeError::Unknown(form));
        }
        let unsupported = |this: &Self, reason: &'static str| DecodeError::Unsupported {
            entry: this.entry.to_owned(),
            instruction: excerpt(ins.opcode_text()),
            line: ins.line,
            reason,
        };
        let guard = match ins.guard {
            Some(g) => match ctx.tables.reg(g.reg) {
                Some(slot) => Some((slot, g.negated)),
                None => return Err(unsupported(self, "this guard")),
            },
            None => None,
        };
        let before = ctx.code.insts.len();
        self.pre.clear();
        self.emit(ctx)
            .map_err(|e| e.unwrap_or_else(|reason| unsupported(self, reason)))?;
        // Special registers read by the instruction are computed just before it.
        if !self.pre.is_empty() {
            let pre = std::mem::take(&mut self.pre);
            let at = before.min(ctx.code.insts.len());
            ctx.code.insts.splice(at..at, pre);
        }
        for inst in ctx.code.insts.iter_mut().skip(before) {
            if let Some((slot, negated)) = guard {
                inst.guard = slot;
                if negated {
                    inst.f |= F_GUARD_NEG;
                }
            }
        }
        while ctx.code.sites.len() < ctx.code.insts.len() {
            ctx.code.sites.push(Site {
                text: ins.text.clone(),
                line: ins.line,
            });
        }
        Ok(())
    }

    fn emit(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let m = &ins.mods;
        let opcode = ins.opcode;
        // Forms of the model no family of the emulator runs.
        if m.vector == 8 {
            return bad(".v8 vectors");
        }
        if matches!(
            m.rounding,
            Some(Rounding::NearestAway | Rounding::Stochastic)
        ) {
            return bad("the rounding modes .rna and .rs");
        }
        if m.space.is_some() {
            if !matches!(
                opcode,
                Opcode::Ld
                    | Opcode::St
                    | Opcode::Cvta
                    | Opcode::Atom
                    | Opcode::Red
                    | Opcode::Isspacep
            ) {
                return bad("this state space");
            }
            if Space::of(m.space).is_none() {
                return bad("this state space");
            }
        }
        if let Some(done) = self.shared_dispatch(ctx) {
            return done;
        }
        use Opcode as O;
        match opcode {
            O::Mov => self.mov(ctx),
            O::Ld => self.load(ctx),
            O::St => self.store(ctx),
            O::Cvta => self.cvta(ctx),
            O::Isspacep => self.isspacep(ctx),
            O::Add | O::Sub | O::Mad if m.has(Flag::Cc) => self.carry(ctx),
            O::Addc | O::Subc | O::Madc => self.carry(ctx),
            O::Add | O::Sub | O::Mul | O::Mad | O::Fma | O::Div | O::Rem | O::Min | O::Max => {
                self.arith(ctx)
            }
            O::Neg
            | O::Abs
            | O::Not
            | O::Sqrt
            | O::Rsqrt
            | O::Rcp
            | O::Ex2
            | O::Lg2
            | O::Sin
            | O::Cos
            | O::Tanh => self.unary(ctx),
            O::And | O::Or | O::Xor | O::Shl | O::Shr => self.bitwise(ctx),
            O::Setp => self.setp(ctx),
            O::Set => self.set(ctx),
            O::Selp => self.selp(ctx),
            O::Cvt => self.cvt(ctx),
            O::Bra => self.bra(ctx),
            O::Ret => self.ret(ctx, false),
            O::Exit => self.ret(ctx, true),
            O::Call => self.call(ctx),
            O::Bfe
            | O::Bfi
            | O::Prmt
            | O::Shf
            | O::Brev
            | O::Clz
            | O::Popc
            | O::Bfind
            | O::Mul24
            | O::Mad24
            | O::Sad
            | O::Dp4a
            | O::Dp2a
            | O::Copysign
            | O::Testp => self.int_bits(ctx),
            O::Atom | O::Red => self.atomic(ctx),
            O::Bar | O::Barrier => self.barrier(ctx),
            O::Shfl | O::Vote | O::Redux | O::Match | O::Activemask => self.warp(ctx),
            O::Trap | O::Brkpt => {
                if !m.flags_within(&[]) {
                    return bad("this modifier on trap");
                }
                self.expect_count(ctx, 0)?;
                self.push(ctx, Inst::new(Op::Trap));
                Ok(())
            }
            // No effect for threads that share nothing but global memory through atomics and
            // see every access at once: memory ordering, and a sleep hint.
            O::Membar | O::Fence | O::Nanosleep => {
                let ordering = [
                    Flag::Gl,
                    Flag::Sc,
                    Flag::AcqRel,
                    Flag::Acquire,
                    Flag::Release,
                    Flag::Proxy,
                    Flag::Async,
                    Flag::Cluster,
                ];
                if !m.flags_within(&ordering) {
                    return bad("this modifier on a memory barrier");
                }
                self.push(ctx, Inst::new(Op::Nop));
                Ok(())
            }
            O::Brx => bad("indirect branches"),
            O::Tex | O::Tld4 | O::Txq | O::Suld | O::Sust | O::Sured | O::Suq | O::Istypep => {
                bad("texture and surface instructions")
            }
            O::Mma | O::Wmma | O::Wgmma | O::Ldmatrix | O::Stmatrix | O::Movmatrix | O::Tcgen05 => {
                bad("matrix (tensor core) instructions")
            }
            O::Cp => bad("asynchronous copies (cp.async, cp.async.bulk)"),
            O::Mbarrier => bad("mbarrier objects"),
            O::Multimem => bad("multimem accesses"),
            O::Tensormap => bad("tensor maps"),
            O::Clusterlaunchcontrol | O::Getctarank | O::Mapa => bad("cluster instructions"),
            O::Alloca | O::Stacksave | O::Stackrestore => bad("stack allocation"),
            O::Ldu => bad("ldu (uniform loads)"),
            O::Prefetch | O::Prefetchu | O::Applypriority | O::Discard | O::Createpolicy => {
                bad("cache control instructions")
            }
            O::Griddepcontrol => bad("grid dependency control"),
            O::Setmaxnreg => bad("register reallocation (setmaxnreg)"),
            O::Pmevent => bad("performance-monitor events"),
            O::Elect => bad("elect.sync"),
            O::Fns => bad("fns (find the n-th set bit)"),
            O::Lop3 => bad("lop3 (three-input logic)"),
            O::Bmsk => bad("bmsk (bit masks)"),
            O::Szext => bad("szext (sign or zero extension of a field)"),
            O::Cnot => bad("cnot"),
            O::Slct => bad("slct"),
            O::Vabsdiff
            | O::Vabsdiff2
            | O::Vabsdiff4
            | O::Vadd
            | O::Vadd2
            | O::Vadd4
            | O::Vavrg2
            | O::Vavrg4
            | O::Vmad
            | O::Vmax
            | O::Vmax2
            | O::Vmax4
            | O::Vmin
            | O::Vmin2
            | O::Vmin4
            | O::Vset
            | O::Vset2
            | O::Vset4
            | O::Vshl
            | O::Vshr
            | O::Vsub
            | O::Vsub2
            | O::Vsub4 => bad("video instructions"),
            // Refused with the model's own error before the match; kept here so that the match
            // stays exhaustive.
            O::Unknown => bad("an opcode the model does not know"),
        }
    }
}
