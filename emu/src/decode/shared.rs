//! `.shared` memory: the declarations (in a body, or at module scope, both parsed with every
//! other variable), the block's layout, and the instructions that use the shared state space.
//!
//! Layout: the static variables in the order the decoder meets them (module-scope ones first),
//! each at the next multiple of its alignment; then the dynamic arrays (`.extern .shared`, sized
//! by the launch), which all start at one offset after the statics, aligned to at least 16 bytes
//! and to the largest alignment any of them asks for. A variable's name stands for its offset in
//! shared space, which `mov` copies and `ld.shared`/`st.shared`/`atom.shared` and `cvta.shared`
//! use; the offset of the dynamic arrays is known once every body is compiled, so it lives in a
//! slot written at link time.
//!
//! `ld.shared` and `st.shared` are the memory instructions of every state space, with the
//! shared space in `k`; the interpreter routes them to the block's shared memory. An atomic's
//! `k` holds its operation, so `atom.shared`/`red.shared` become [`Op::ToShared`], which checks
//! the address against the block's shared memory (faulting with the shared address) and
//! converts it to a generic one in the shared window, followed by the generic atomic.

use super::decoder::{Ctx, DResult, Decoder, Sym};
use super::operands::{EResult, bad, full};
use super::{Inst, MAX_SHARED_BYTES, Op};
use crate::space::SHARED_WINDOW;
use jitseam_ptx::ScalarType;
use jitseam_ptx::body::Variable;
use jitseam_ptx::inst::{AddrBase, Flag, Opcode, Operand, Space};

/// One declared variable.
struct Decl<'a> {
    name: &'a str,
    /// Its size; `None` for an array of unknown size (`name[]`).
    bytes: Option<u64>,
    align: u64,
    external: bool,
}

impl Decoder<'_> {
    /// A `.shared` variable (in a body or at module scope): its name stands for the slot of
    /// its shared-space address.
    pub(super) fn shared_var(&mut self, var: &Variable) -> DResult<Sym> {
        if var.init.is_some() {
            return Err(self.unsupported_at(var.offset, ".shared", "initialized shared variables"));
        }
        if var.opaque {
            return Err(self.unsupported_at(
                var.offset,
                ".shared",
                "textures, samplers and surfaces",
            ));
        }
        let decl = Decl {
            name: &var.name,
            bytes: var.size_bytes(),
            align: var.alignment(),
            external: var.external,
        };
        if !decl.align.is_power_of_two() {
            return Err(self.unsupported_at(
                var.offset,
                &var.name,
                "an alignment that is not a power of two",
            ));
        }
        self.place_shared(&decl, var.offset).map(Sym::Shared)
    }

    /// Places a variable; returns the slot of its address.
    fn place_shared(&mut self, decl: &Decl<'_>, offset: usize) -> DResult<u32> {
        let layout = &mut self.shared;
        layout.block_scoped = true;
        if decl.external || decl.bytes.is_none() {
            if !decl.external {
                return Err(self.unsupported_at(
                    offset,
                    decl.name,
                    "a shared array of unknown size that is not .extern",
                ));
            }
            layout.dynamic_align = layout.dynamic_align.max(decl.align);
            let slot = match layout.dynamic_slot {
                Some(slot) => slot,
                None => {
                    let slot = self.alloc(1)?;
                    self.shared.dynamic_slot = Some(slot);
                    slot
                }
            };
            return Ok(slot);
        }
        let bytes = decl.bytes.unwrap_or(0);
        let at = layout.end.next_multiple_of(decl.align.max(1));
        let end = at.checked_add(bytes).filter(|&e| e <= MAX_SHARED_BYTES);
        let Some(end) = end else {
            return Err(self.unsupported_at(
                offset,
                decl.name,
                "more static shared memory than a block can have",
            ));
        };
        layout.end = end;
        self.const_slot(at)
    }

    /// The shared-memory forms of `ld`, `st`, `atom`, `red`, `cvta` and `mov`, emitted; `None`
    /// for every other instruction. A global or generic access through a shared variable's
    /// name is refused.
    pub(super) fn shared_dispatch(&mut self, ctx: &mut Ctx<'_>) -> Option<EResult<()>> {
        let ins = ctx.ins;
        let shared = ins.mods.space == Some(Space::Shared);
        match ins.opcode {
            Opcode::Ld | Opcode::St if shared => {
                // The access itself is every space's; the block's threads must run together.
                self.shared.block_scoped = true;
                None
            }
            Opcode::Atom | Opcode::Red if shared => Some(self.shared_atomic(ctx)),
            Opcode::Cvta if shared => Some(self.shared_cvta(ctx)),
            Opcode::Mov => {
                let Some(Operand::Name(name)) = ins.operands.get(1) else {
                    return None;
                };
                let Some(Sym::Shared(slot)) = ctx.tables.sym(*name) else {
                    return None;
                };
                Some(self.shared_address(ctx, slot))
            }
            _ if !shared => match self.check_shared_names(ctx) {
                Ok(()) => None,
                Err(e) => Some(Err(e)),
            },
            _ => None,
        }
    }

    /// `atom` or `red` on `.shared`: the generic form, its address converted first.
    pub(super) fn shared_atomic(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        self.shared.block_scoped = true;
        let before = ctx.code.insts.len();
        self.atomic(ctx)?;
        let found = ctx
            .code
            .insts
            .iter()
            .enumerate()
            .skip(before)
            .find(|(_, i)| i.op == Op::Atom)
            .map(|(at, i)| (at, *i));
        let Some((at, access)) = found else {
            return bad("this shared-memory access");
        };
        let tmp = full(self.alloc(1))?;
        let mut check = Inst::new(Op::ToShared);
        check.d = tmp;
        check.a = access.a;
        check.imm = access.imm;
        check.w = access.w;
        check.k = 1;
        if let Some(inst) = ctx.code.insts.get_mut(at) {
            inst.a = tmp;
            inst.imm = 0;
        }
        ctx.code.insts.insert(at, check);
        Ok(())
    }

    /// `cvta.shared` (shared to generic) and `cvta.to.shared` (generic to shared), on 64-bit
    /// addresses; the source may be a shared variable's name.
    pub(super) fn shared_cvta(&mut self, ctx: &mut Ctx<'_>) -> EResult<()> {
        let ins = ctx.ins;
        let ty = self.one_type(ctx)?;
        if !ins.mods.flags_within(&[Flag::To]) {
            return bad("this modifier on cvta");
        }
        let to = ins.mods.has(Flag::To);
        if ty.bytes() != 8 {
            return bad("32-bit shared address conversion");
        }
        self.expect_count(ctx, 2)?;
        self.shared.block_scoped = true;
        let a = match self.operand(ctx, 1)? {
            Operand::Name(name) => match self.sym(ctx, *name)? {
                Sym::Shared(slot) if !to => slot,
                Sym::Shared(_) => return bad("cvta.to of a variable"),
                _ => self.src(ctx, 1, ty)?,
            },
            _ => self.src(ctx, 1, ty)?,
        };
        let mut inst = Inst::new(if to { Op::Sub } else { Op::Add });
        inst.d = self.dst(ctx, 0)?;
        inst.a = a;
        inst.b = full(self.const_slot(SHARED_WINDOW))?;
        inst.w = 64;
        self.push(ctx, inst);
        Ok(())
    }

    /// `mov d, var` of a shared variable: its shared-space address.
    pub(super) fn shared_address(&mut self, ctx: &mut Ctx<'_>, slot: u32) -> EResult<()> {
        let ty = self.one_type(ctx)?;
        if !ctx.ins.mods.flags_within(&[]) {
            return bad("this modifier on mov");
        }
        if !matches!(
            ty,
            ScalarType::U32 | ScalarType::U64 | ScalarType::B32 | ScalarType::B64
        ) && !matches!(ty, ScalarType::S32 | ScalarType::S64)
        {
            return bad("a variable's address in this type");
        }
        let mut inst = Inst::new(Op::MovMask);
        inst.d = self.dst(ctx, 0)?;
        inst.a = slot;
        inst.w = (ty.bytes() * 8) as u8;
        self.push(ctx, inst);
        Ok(())
    }

    /// Refuses a generic or global access through a shared variable's name: the name stands
    /// for a shared-space address, which is not a generic one.
    pub(super) fn check_shared_names(&self, ctx: &Ctx<'_>) -> EResult<()> {
        for operand in &ctx.ins.operands {
            if let Operand::Address {
                base: AddrBase::Name(name),
                ..
            } = operand
                && matches!(ctx.tables.sym(*name), Some(Sym::Shared(_)))
            {
                return bad("a shared variable's name outside the shared state space");
            }
        }
        Ok(())
    }
}
