//! Addresses of names: what `[name+imm]`, `mov.u64 %rd, name` and `cvta.space.u64 %rd, name`
//! make of a variable or a kernel parameter, per state space.

use super::decoder::{Ctx, Decoder, Sym, lookup};
use super::operands::{EResult, bad};
use crate::error::{ParseErrorKind, excerpt};
use crate::space::{PARAM_WINDOW, Space};

impl<'a> Decoder<'a> {
    /// The address `name` stands for: in `space` (the generic address for
    /// [`Space::Generic`]), or in the name's own state space for `None`.
    pub(super) fn symbol_address(
        &self,
        ctx: &Ctx<'_, 'a, '_>,
        name: &str,
        space: Option<Space>,
    ) -> EResult<u64> {
        let (own, addr) = match lookup(ctx.scopes, name) {
            Some(Sym::Var { space, addr }) => (space, addr),
            Some(Sym::KParam { offset, .. }) => (Space::Param, PARAM_WINDOW + offset as u64),
            // The PTX ISA: the address of a function's parameter is in the `.local` space.
            Some(Sym::ParamMem { addr, .. }) => (Space::Local, addr),
            Some(Sym::ParamSlot { .. }) => return bad("addresses of function parameters"),
            Some(Sym::Refused(reason)) => return bad(reason),
            Some(Sym::Reg(_) | Sym::VecReg { .. }) => {
                return Err(self.invalid(ctx, "a register used as a symbol"));
            }
            None if self.module.functions.iter().any(|f| f.name == name) => {
                return bad("addresses of functions");
            }
            None => {
                return Err(Ok(self.parse_error(
                    ctx.instruction.range.start,
                    ParseErrorKind::Undeclared {
                        name: excerpt(name),
                    },
                )));
            }
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
        ctx: &Ctx<'_, 'a, '_>,
        space: Space,
        base: Option<&'a str>,
    ) -> EResult<u32> {
        match base {
            None => self.const_slot(0).map_err(Ok),
            Some(name) => match lookup(ctx.scopes, name) {
                Some(Sym::Reg(slot)) => Ok(slot),
                _ => {
                    let addr = self.symbol_address(ctx, name, Some(space))?;
                    self.const_slot(addr).map_err(Ok)
                }
            },
        }
    }
}
