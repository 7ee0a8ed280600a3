//! Control flow: `bra` (resolved to its label after the body), `ret`/`exit`, and `call`, which
//! becomes argument moves, the call and return-value moves.

use super::class::int_type;
use super::decoder::{Ctx, Decoder, Sym};
use super::operands::{EResult, bad, full};
use super::{Inst, NONE, Op};
use crate::space::Space;
use jitseam_ptx::inst::{Name, Operand};

impl Decoder<'_> {
    pub(super) fn bra(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        if !ctx.ins.mods.flags_within(&[]) {
            return bad("this modifier on bra");
        }
        self.expect_count(ctx, 1)?;
        let Operand::Name(Name::Label(label)) = self.operand(ctx, 0)? else {
            return bad("indirect branches");
        };
        ctx.branch = Some((ctx.code.insts.len(), *label));
        self.push(ctx, Inst::new(Op::Bra));
        Ok(())
    }

    /// `ret`, or `exit` (`imm` 1): in a `.func`, `exit` ends the thread rather than returning.
    pub(super) fn ret(&mut self, ctx: &mut Ctx<'_>, exit: bool) -> EResult<()> {
        if !ctx.ins.mods.flags_within(&[]) {
            return bad("this modifier on ret or exit");
        }
        let mut inst = Inst::new(Op::Ret);
        inst.imm = i64::from(exit);
        self.push(ctx, inst);
        Ok(())
    }

    pub(super) fn call(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        if !ins.mods.flags_within(&[]) {
            return bad("this modifier on call");
        }
        let mut iter = ins.operands.iter().peekable();
        let returns: &[Operand] = match iter.peek() {
            Some(Operand::List(items)) => {
                iter.next();
                items
            }
            _ => &[],
        };
        let func = match iter.next() {
            Some(Operand::Name(Name::Func(func))) => *func,
            _ => return bad("indirect calls"),
        };
        let args: &[Operand] = match iter.next() {
            Some(Operand::List(items)) => items,
            None => &[],
            Some(_) => return bad("calls with a prototype"),
        };
        if iter.next().is_some() {
            return bad("calls with a prototype");
        }
        let module = self.module;
        if module
            .module
            .functions
            .get(func as usize)
            .is_some_and(|f| f.is_assert_fail())
            && returns.is_empty()
        {
            return self.assert_fail(ctx, args);
        }
        let (params, rets) = match self.sigs.get(&func) {
            Some(sig) => (sig.params.clone(), sig.returns.clone()),
            None => {
                let name = module
                    .module
                    .functions
                    .get(func as usize)
                    .map_or("?", |f| f.name.as_str());
                // A function declared without a body is no function the entry can reach.
                return Err(Ok(self.undeclared(ctx, name)));
            }
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
            let src = self.argument(ctx, arg, size)?;
            let mut inst = Inst::new(Op::MovMask);
            inst.d = slot;
            inst.a = src;
            inst.w = (size * 8).min(64) as u8;
            self.push(ctx, inst);
        }
        self.clear_carry(ctx)?;
        let call_at = ctx.code.insts.len();
        ctx.code.calls.push((call_at, func));
        self.push(ctx, Inst::new(Op::Call));
        self.clear_carry(ctx)?;
        self.call_returns(ctx, returns, &rets)
    }

    /// `call __assertfail, (message, file, line, function, char_size)`: one instruction that
    /// ends the launch with the assertion (see [`Op::AssertFail`]).
    fn assert_fail(&mut self, ctx: &mut Ctx<'_>, args: &[Operand]) -> EResult<()> {
        const SIZES: [u32; 5] = [8, 8, 4, 8, 8];
        if args.len() != SIZES.len() {
            return Err(self.invalid(ctx, "argument count differs from the function's"));
        }
        let mut slots = [NONE; 5];
        for ((slot, arg), size) in slots.iter_mut().zip(args).zip(SIZES) {
            *slot = self.argument(ctx, arg, size)?;
        }
        let mut inst = Inst::new(Op::AssertFail);
        let [message, file, line, function, _] = slots;
        inst.a = message;
        inst.b = file;
        inst.c = line;
        inst.e = function;
        self.push(ctx, inst);
        Ok(())
    }

    /// The slot holding call argument `arg` of `size` bytes.
    fn argument(&mut self, ctx: &mut Ctx<'_>, arg: &Operand, size: u32) -> EResult<u32> {
        Ok(match arg {
            Operand::Name(name) => match self.sym(ctx, *name)? {
                Sym::ParamSlot { slot, .. } | Sym::Reg(slot) => slot,
                Sym::KParam { .. } => return bad("passing kernel parameters directly"),
                Sym::ParamMem { .. } => {
                    return Err(self.invalid(ctx, "an array argument for a scalar parameter"));
                }
                Sym::Var { .. } => return bad("passing a variable as an argument"),
                Sym::Refused(reason) => return bad(reason),
                Sym::Shared(_) => return bad("passing a shared variable's address"),
                Sym::Func => return bad("passing a function as an argument"),
                Sym::Label => return bad("passing a label as an argument"),
            },
            Operand::Vector(_) => {
                return Err(self.invalid(ctx, "a vector register as an argument"));
            }
            other => self.src_operand(ctx, other, int_type((size * 8).min(64) as u8))?,
        })
    }

    /// The moves of a call's return values into the registers (or `.param`s) named for them.
    fn call_returns(
        &mut self,
        ctx: &mut Ctx<'_>,
        returns: &[Operand],
        rets: &[Sym],
    ) -> EResult<()> {
        for (ret, &pass) in returns.iter().zip(rets) {
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
                Operand::Reg(r) => self.reg_slot(ctx, *r)?,
                Operand::Name(name) => match self.sym(ctx, *name)? {
                    Sym::ParamSlot { slot, .. } | Sym::Reg(slot) => slot,
                    _ => return Err(self.invalid(ctx, "a return value must go to a .param")),
                },
                _ => return Err(self.invalid(ctx, "a return value must go to a .param")),
            };
            let mut inst = Inst::new(Op::Mov);
            inst.d = dst;
            inst.a = slot;
            self.push(ctx, inst);
        }
        Ok(())
    }

    /// The frame offset of the `.param` array `operand` names, which must hold `size` bytes
    /// (the PTX ISA: an argument matches its parameter's size).
    fn frame_param(&self, ctx: &Ctx<'_>, operand: &Operand, size: u32) -> EResult<u64> {
        let sym = match operand {
            Operand::Name(name) => ctx.tables.sym(*name),
            _ => None,
        };
        match sym {
            Some(Sym::ParamMem { addr, size: own }) if own == size => Ok(addr),
            Some(Sym::ParamMem { .. }) => {
                Err(self.invalid(ctx, "an array argument of another size than its parameter"))
            }
            _ => Err(self.invalid(ctx, "an array parameter needs a .param array argument")),
        }
    }

    /// Copies `size` bytes of the frame from offset `from` to offset `to`, in the widest
    /// pieces both alignments allow.
    fn copy_in_frame(&mut self, ctx: &mut Ctx<'_>, to: u64, from: u64, size: u32) -> EResult<()> {
        let zero = full(self.const_slot(0))?;
        let temp = full(self.alloc(1))?;
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
