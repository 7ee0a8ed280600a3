//! One instruction: modifiers parsed, the opcode handed to its family, the guard applied to what
//! it emitted, and its source line recorded for diagnostics.

use super::decoder::{Ctx, DResult, Decoder};
use super::mods::Mods;
use super::operands::{EResult, bad};
use super::{DecodeError, F_GUARD_NEG, Inst, Op, Site};
use jitseam_ptx::excerpt;

impl<'a> Decoder<'a> {
    pub(super) fn instruction(&mut self, ctx: &mut Ctx<'_, 'a, '_>) -> DResult<()> {
        let ins = ctx.instruction;
        let offset = ins.range.start;
        let full = ins.full_opcode();
        let unsupported = |this: &Self, reason: &'static str| DecodeError::Unsupported {
            entry: this.entry.to_owned(),
            instruction: excerpt(&full),
            line: this.line(offset),
            reason,
        };
        let m = self.mods(ins).map_err(|reason| unsupported(self, reason))?;
        let guard = match ins.guard {
            Some(g) => Some((self.reg(ctx.scopes, g.pred, offset)?, g.negated)),
            None => None,
        };
        let before = ctx.code.insts.len();
        self.pre.clear();
        self.emit(ctx, &m, &full)
            .map_err(|e| e.unwrap_or_else(|reason| unsupported(self, reason)))?;
        // Special registers read by the instruction are computed just before it.
        if !self.pre.is_empty() {
            let pre = std::mem::take(&mut self.pre);
            let at = before.min(ctx.code.insts.len());
            ctx.code.insts.splice(at..at, pre);
        }
        let text = normalize(self.src.get(ins.range.clone()).unwrap_or(""));
        let line = self.line(offset);
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
                text: text.clone(),
                line,
            });
        }
        Ok(())
    }

    fn emit(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>, full: &str) -> EResult<()> {
        let opcode = ctx.instruction.opcode;
        if m.space.is_some()
            && !matches!(opcode, "ld" | "st" | "cvta" | "atom" | "red" | "isspacep")
        {
            return bad("this state space");
        }
        if let Some(done) = self.shared_dispatch(ctx, m, opcode) {
            return done;
        }
        match opcode {
            "mov" => self.mov(ctx, m),
            "ld" => self.load(ctx, m),
            "st" => self.store(ctx, m),
            "cvta" => self.cvta(ctx, m),
            "isspacep" => self.isspacep(ctx, m),
            "add" | "sub" | "mul" | "mad" | "fma" | "div" | "rem" | "min" | "max" => {
                self.arith(ctx, m, opcode)
            }
            "neg" | "abs" | "not" | "sqrt" | "rsqrt" | "rcp" | "ex2" | "lg2" | "sin" | "cos"
            | "tanh" => self.unary(ctx, m, opcode),
            "and" | "or" | "xor" | "shl" | "shr" => self.bitwise(ctx, m, opcode),
            "setp" => self.setp(ctx, m),
            "set" => self.set(ctx, m),
            "selp" => self.selp(ctx, m),
            "cvt" => self.cvt(ctx, m),
            "bra" => self.bra(ctx),
            "ret" => self.ret(ctx, false),
            "exit" => self.ret(ctx, true),
            "call" => self.call(ctx),
            "bfe" | "bfi" | "prmt" | "shf" | "brev" | "clz" | "popc" | "bfind" | "mul24"
            | "mad24" | "sad" | "dp4a" | "dp2a" | "copysign" | "testp" => {
                self.int_bits(ctx, m, opcode)
            }
            "atom" | "red" => self.atomic(ctx, m, opcode),
            "bar" | "barrier" => self.barrier(ctx, m),
            "shfl" | "vote" | "redux" | "match" | "activemask" => self.warp(ctx, m, opcode),
            "trap" | "brkpt" => {
                self.expect_count(ctx, 0)?;
                self.push(ctx, Inst::new(Op::Trap));
                Ok(())
            }
            // No effect for threads that share nothing but global memory through atomics:
            // memory ordering, and a sleep hint.
            "membar" | "fence" | "nanosleep" => {
                self.push(ctx, Inst::new(Op::Nop));
                Ok(())
            }
            "tex" | "tld4" | "txq" | "suld" | "sust" | "sured" | "suq" | "istypep" => {
                bad("texture and surface instructions")
            }
            _ => {
                let _ = full;
                bad("this instruction")
            }
        }
    }
}

/// Collapses runs of whitespace so multi-line instructions read as one line in diagnostics.
fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}
