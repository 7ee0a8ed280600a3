//! Addresses of names: what `[name+imm]`, `mov.u64 %rd, name` and `cvta.space.u64 %rd, name`
//! make of a variable or a kernel parameter, per state space; and `isspacep`, which tells the
//! window of a generic address.

use super::decoder::{Ctx, Decoder, Sym};
use super::operands::{EResult, bad, full};
use super::{CMP_GE, CMP_LT, Inst, NONE, Op};
use crate::space::{
    CONST_VARS, GLOBAL_VARS, LOCAL_WINDOW, PARAM_WINDOW, RESERVED, SHARED_WINDOW, Space,
    WINDOW_BYTES,
};
use jitseam_ptx::ScalarType;

impl Decoder<'_> {
    /// The address `sym` stands for: in `space` (the generic address for
    /// [`Space::Generic`]), or in the name's own state space for `None`.
    pub(super) fn symbol_address(
        &self,
        ctx: &Ctx<'_>,
        sym: Sym,
        space: Option<Space>,
    ) -> EResult<u64> {
        let (own, addr) = match sym {
            Sym::Var { space, addr } => (space, addr),
            Sym::KParam { offset, .. } => (Space::Param, PARAM_WINDOW + offset as u64),
            // The PTX ISA: the address of a function's parameter is in the `.local` space.
            Sym::ParamMem { addr, .. } => (Space::Local, addr),
            Sym::ParamSlot { .. } => return bad("addresses of function parameters"),
            Sym::Refused(reason) => return bad(reason),
            Sym::Shared(_) => {
                return bad("a shared variable's name outside the shared state space");
            }
            Sym::Reg(_) => {
                return Err(self.invalid(ctx, "a register used as a symbol"));
            }
            Sym::Func => return bad("addresses of functions"),
            Sym::Label => return bad("addresses of labels"),
        };
        match space {
            None => Ok(addr),
            Some(Space::Generic) => Ok(own.generic_base().wrapping_add(addr)),
            Some(space) if space == own => Ok(addr),
            Some(_) => Err(self.invalid(ctx, "a variable of another state space")),
        }
    }

    /// The slot holding the base of `[base+imm]` in `space`: the register, or a constant
    /// holding the variable's address (0 for `[imm]`).
    pub(super) fn base_slot(
        &mut self,
        ctx: &Ctx<'_>,
        space: Space,
        base: Option<Sym>,
    ) -> EResult<u32> {
        match base {
            None => full(self.const_slot(0)),
            Some(Sym::Reg(slot)) => Ok(slot),
            // Its slot holds its shared-space address.
            Some(Sym::Shared(slot)) if space == Space::Shared => Ok(slot),
            Some(sym) => {
                let addr = self.symbol_address(ctx, sym, Some(space))?;
                full(self.const_slot(addr))
            }
        }
    }
}

impl Decoder<'_> {
    /// `isspacep.space p, a`: whether the generic address `a` lies in `space`'s window; for
    /// `.global`, whether it lies outside every window but the module's `.global` variables'.
    pub(super) fn isspacep(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        if !ctx.ins.mods.flags_within(&[]) {
            return bad("this modifier on isspacep");
        }
        self.expect_count(ctx, 2)?;
        let space = match Space::of(ctx.ins.mods.space) {
            Some(Space::Generic) | None => {
                return Err(self.invalid(ctx, "isspacep needs a state space"));
            }
            Some(space) => space,
        };
        let p = self.dst(ctx, 0)?;
        let a = self.src(ctx, 1, ScalarType::U64)?;
        let base = match space {
            Space::Local => LOCAL_WINDOW,
            Space::Shared => SHARED_WINDOW,
            Space::Param => PARAM_WINDOW,
            Space::Const => CONST_VARS,
            Space::Global | Space::Generic => GLOBAL_VARS,
        };
        if space != Space::Global {
            return self.below(ctx, a, base, WINDOW_BYTES, CMP_LT, p, None);
        }
        let vars = full(self.alloc(1))?;
        self.below(ctx, a, GLOBAL_VARS, WINDOW_BYTES, CMP_LT, vars, None)?;
        let span = RESERVED.end - RESERVED.start;
        // Outside the reserved span, or a module variable.
        self.below(ctx, a, RESERVED.start, span, CMP_GE, p, Some(vars))
    }

    /// `p = (a - base) <cmp> span` (unsigned), or'ed with predicate `or` when given.
    #[allow(clippy::too_many_arguments)]
    fn below(
        &mut self,
        ctx: &mut Ctx<'_>,
        a: u32,
        base: u64,
        span: u64,
        cmp: u8,
        p: u32,
        or: Option<u32>,
    ) -> EResult<()> {
        let offset = full(self.alloc(1))?;
        let mut sub = Inst::new(Op::Sub);
        sub.d = offset;
        sub.a = a;
        sub.b = full(self.const_slot(base))?;
        sub.w = 64;
        self.push(ctx, sub);
        let mut setp = Inst::new(Op::SetpI);
        setp.d = p;
        setp.a = offset;
        setp.b = full(self.const_slot(span))?;
        setp.k = cmp;
        setp.w = 64;
        if let Some(q) = or {
            setp.c = q;
            setp.imm = 2;
        } else {
            setp.c = NONE;
        }
        self.push(ctx, setp);
        Ok(())
    }
}
