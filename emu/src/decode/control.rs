//! Control flow: `bra` (resolved to a label after the body), `ret`/`exit`, and `call`, which
//! becomes argument moves, the call and return-value moves.

use super::class::int_type;
use super::decoder::{Ctx, Decoder, Sym, lookup};
use super::operands::{EResult, bad};
use super::{Inst, Op};
use crate::space::Space;
use jitseam_ptx::body::Operand;
use jitseam_ptx::{ParseErrorKind, excerpt};

impl<'a> Decoder<'a> {
    pub(super) fn bra(&mut self, ctx: &mut Ctx<'_, 'a, '_>) -> EResult<()> {
        self.expect_count(ctx, 1)?;
        let Operand::Name(label) = self.operand(ctx, 0)? else {
            return bad("indirect branches");
        };
        let label = *label;
        let at = ctx.code.insts.len();
        ctx.fixups.push((at, label, ctx.instruction.range.start));
        self.push(ctx, Inst::new(Op::Bra));
        Ok(())
    }

    /// `ret`, or `exit` (`imm` 1): in a `.func`, `exit` ends the thread rather than returning.
    pub(super) fn ret(&mut self, ctx: &mut Ctx<'_, 'a, '_>, exit: bool) -> EResult<()> {
        let mut inst = Inst::new(Op::Ret);
        inst.imm = i64::from(exit);
        self.push(ctx, inst);
        Ok(())
    }

    pub(super) fn call(&mut self, ctx: &mut Ctx<'_, 'a, '_>) -> EResult<()> {
        let ops = ctx.instruction.operands.clone();
        let at = ctx.instruction.range.start;
        let mut iter = ops.iter().peekable();
        let returns = match iter.peek() {
            Some(Operand::List(items)) => {
                iter.next();
                items.clone()
            }
            _ => Vec::new(),
        };
        let Some(Operand::Name(func)) = iter.next() else {
            return bad("indirect calls");
        };
        let args = match iter.next() {
            Some(Operand::List(items)) => items.clone(),
            None => Vec::new(),
            Some(_) => return bad("calls with a prototype"),
        };
        if iter.next().is_some() {
            return bad("calls with a prototype");
        }
        let index = self.signature(func, at).map_err(Ok)?;
        let (params, rets) = match self.sigs.get(&index) {
            Some(sig) => (sig.params.clone(), sig.returns.clone()),
            None => return bad("this call"),
        };
        if params.len() != args.len() || rets.len() != returns.len() {
            return Err(self.invalid(ctx, "argument count differs from the function's"));
        }
        for (arg, &pass) in args.iter().zip(&params) {
            let (slot, size) = match pass {
                Sym::ParamSlot { slot, size } => (slot, size),
                Sym::Reg(slot) => (slot, u32::from(self.reg_width(slot).div_ceil(8))),
                Sym::ParamMem { addr, size } => {
                    let from = self.frame_param(ctx, arg, size)?;
                    self.copy_in_frame(ctx, addr, from, size)?;
                    continue;
                }
                _ => return bad("this call"),
            };
            let src = match arg {
                Operand::Name(name) => match lookup(ctx.scopes, name) {
                    Some(Sym::ParamSlot { slot, .. } | Sym::Reg(slot)) => slot,
                    Some(Sym::KParam { .. }) => return bad("passing kernel parameters directly"),
                    Some(Sym::ParamMem { .. }) => {
                        return Err(self.invalid(ctx, "an array argument for a scalar parameter"));
                    }
                    Some(Sym::Var { .. }) => return bad("passing a variable as an argument"),
                    Some(Sym::VecReg { .. }) => {
                        return Err(self.invalid(ctx, "a vector register as an argument"));
                    }
                    Some(Sym::Refused(reason)) => return bad(reason),
                    Some(Sym::Shared(_)) => return bad("passing a shared variable's address"),
                    None => {
                        return Err(Ok(self.parse_error(
                            at,
                            ParseErrorKind::Undeclared {
                                name: excerpt(name),
                            },
                        )));
                    }
                },
                other => self.src_operand(ctx, other, int_type((size * 8).min(64) as u8))?,
            };
            let mut inst = Inst::new(Op::MovMask);
            inst.d = slot;
            inst.a = src;
            inst.w = (size * 8).min(64) as u8;
            self.push(ctx, inst);
        }
        let call_at = ctx.code.insts.len();
        ctx.code.calls.push((call_at, index));
        self.push(ctx, Inst::new(Op::Call));
        for (ret, &pass) in returns.iter().zip(&rets) {
            let slot = match pass {
                Sym::ParamSlot { slot, .. } | Sym::Reg(slot) => slot,
                Sym::ParamMem { addr, size } => {
                    let to = self.frame_param(ctx, ret, size)?;
                    self.copy_in_frame(ctx, to, addr, size)?;
                    continue;
                }
                _ => return bad("this call"),
            };
            let dst = match ret {
                Operand::Name(name) => match lookup(ctx.scopes, name) {
                    Some(Sym::ParamSlot { slot, .. } | Sym::Reg(slot)) => slot,
                    _ => return Err(self.invalid(ctx, "a return value must go to a .param")),
                },
                _ => return Err(self.invalid(ctx, "a return value must go to a .param")),
            };
            let mut inst = Inst::new(Op::Mov);
            inst.d = dst;
            inst.a = slot;
            self.push(ctx, inst);
        }
        // Record the call-graph edge for the recursion check.
        let caller = self.current_function();
        match caller {
            Some(f) => {
                if let Some(sig) = self.sigs.get_mut(&f)
                    && !sig.callees.contains(&index)
                {
                    sig.callees.push(index);
                }
            }
            None => {
                if !self.entry_callees.contains(&index) {
                    self.entry_callees.push(index);
                }
            }
        }
        Ok(())
    }
}

impl<'a> Decoder<'a> {
    /// The frame offset of the `.param` array `operand` names, which must hold `size` bytes
    /// (the PTX ISA: an argument matches its parameter's size).
    fn frame_param(&self, ctx: &Ctx<'_, 'a, '_>, operand: &Operand<'a>, size: u32) -> EResult<u64> {
        match operand {
            Operand::Name(name) => match lookup(ctx.scopes, name) {
                Some(Sym::ParamMem { addr, size: own }) if own == size => Ok(addr),
                Some(Sym::ParamMem { .. }) => {
                    Err(self.invalid(ctx, "an array argument of another size than its parameter"))
                }
                _ => Err(self.invalid(ctx, "an array parameter needs a .param array argument")),
            },
            _ => Err(self.invalid(ctx, "an array parameter needs a .param array argument")),
        }
    }

    /// Copies `size` bytes of the frame from offset `from` to offset `to`, in the widest
    /// pieces both alignments allow.
    fn copy_in_frame(
        &mut self,
        ctx: &mut Ctx<'_, 'a, '_>,
        to: u64,
        from: u64,
        size: u32,
    ) -> EResult<()> {
        let zero = self.const_slot(0).map_err(Ok)?;
        let temp = self.alloc(1).map_err(Ok)?;
        let mut at = 0u64;
        let size = u64::from(size);
        while at < size {
            let width = [8u64, 4, 2, 1]
                .into_iter()
                .find(|&w| {
                    w <= size - at && (to + at).is_multiple_of(w) && (from + at).is_multiple_of(w)
                })
                .unwrap_or(1);
            let mut load = Inst::new(Op::LdGlobal);
            load.k = Space::Local.code();
            load.d = temp;
            load.a = zero;
            load.imm = (from + at) as i64;
            load.w = width as u8;
            self.push(ctx, load);
            let mut store = Inst::new(Op::StGlobal);
            store.k = Space::Local.code();
            store.a = zero;
            store.b = temp;
            store.imm = (to + at) as i64;
            store.w = width as u8;
            self.push(ctx, store);
            at += width;
        }
        Ok(())
    }
}
