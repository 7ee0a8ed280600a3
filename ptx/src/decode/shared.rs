//! `.shared` memory: the declarations (in a body, or at module scope), the block's layout, and
//! the instructions that use the shared state space.
//!
//! Layout: the static variables in the order the decoder meets them (module-scope ones first),
//! each at the next multiple of its alignment; then the dynamic arrays (`.extern .shared`, sized
//! by the launch), which all start at one offset after the statics, aligned to at least 16 bytes
//! and to the largest alignment any of them asks for. A variable's name stands for its offset in
//! shared space, which `mov` copies and `ld.shared`/`st.shared`/`atom.shared` and `cvta.shared`
//! use; the offset of the dynamic arrays is known once every body is compiled, so it lives in a
//! slot written at link time.
//!
//! A shared-space access becomes [`Op::ToShared`], which checks the address against the block's
//! window (faulting with the shared address) and converts it to a generic one, followed by the
//! generic access itself, which the interpreter routes to the block's shared memory.

use std::ops::Range;

use super::decoder::{Ctx, DResult, Decoder, Scope, Sym, lookup};
use super::mods::Mods;
use super::operands::{EResult, bad};
use super::{Inst, MAX_SHARED_BYTES, Op, SHARED_WINDOW};
use crate::body::Operand;
use crate::lexer::{Lexer, Punct, Token, TokenKind};
use crate::model::ScalarType;

/// One declared variable.
struct Decl<'a> {
    name: &'a str,
    /// Its size; `None` for an array of unknown size (`name[]`).
    bytes: Option<u64>,
    align: u64,
    external: bool,
}

impl<'a> Decoder<'a> {
    /// Finds the module-scope `.shared` variables and places the static ones.
    pub(super) fn scan_module_shared(&mut self) -> DResult<()> {
        let src = self.src;
        if memchr::memmem::find(src.as_bytes(), b".shared").is_none() {
            return Ok(());
        }
        let mut lexer = Lexer::new(src);
        // Nesting of braces and parentheses: `.shared` at depth 0 begins a declaration (in a
        // parameter list it is a pointer's state space).
        let mut depth = 0usize;
        let mut start: Option<usize> = None;
        while let Some(token) = lexer.next_token() {
            let Ok(token) = token else {
                // The module parser has already accepted this text; a lexing error here means
                // nothing is declared where it is.
                return Ok(());
            };
            match token.kind {
                TokenKind::Punct(Punct::LBrace | Punct::LParen) => depth += 1,
                TokenKind::Punct(Punct::RBrace | Punct::RParen) => {
                    depth = depth.saturating_sub(1);
                }
                TokenKind::Directive if depth == 0 => {
                    if matches!(token.text, ".extern" | ".visible" | ".weak") {
                        start.get_or_insert(token.offset);
                        continue;
                    }
                    if token.text == ".shared" {
                        let from = start.unwrap_or(token.offset);
                        let end = statement_end(&mut lexer, src.len());
                        let decls = parse_decls(src, from..end)
                            .map_err(|reason| self.unsupported_at(from, ".shared", reason))?;
                        for decl in decls {
                            let slot = self.place_shared(&decl, from)?;
                            self.shared.module.push((decl.name, slot));
                        }
                    }
                }
                _ => {}
            }
            start = None;
        }
        Ok(())
    }

    /// Adds the module-scope shared variables to a function's outermost scope.
    pub(super) fn module_shared_into(&self, scope: &mut Scope<'a>) {
        for &(name, slot) in &self.shared.module {
            scope.names.entry(name).or_insert(Sym::Shared(slot));
        }
    }

    /// A `.shared` declaration in a body: the variables enter the innermost scope.
    pub(super) fn declare_shared(
        &mut self,
        scopes: &mut [Scope<'a>],
        range: Range<usize>,
    ) -> DResult<()> {
        let decls = parse_decls(self.src, range.clone())
            .map_err(|reason| self.unsupported_at(range.start, ".shared", reason))?;
        for decl in decls {
            let slot = self.place_shared(&decl, range.start)?;
            if let Some(scope) = scopes.last_mut() {
                scope.names.insert(decl.name, Sym::Shared(slot));
            }
        }
        Ok(())
    }

    /// Places a variable; returns the slot of its address.
    fn place_shared(&mut self, decl: &Decl<'a>, offset: usize) -> DResult<u32> {
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
    pub(super) fn shared_dispatch(
        &mut self,
        ctx: &mut Ctx<'_, 'a, '_>,
        m: &Mods<'a>,
        opcode: &str,
    ) -> Option<EResult<()>> {
        let shared = m.space == Some(".shared");
        match opcode {
            "ld" | "st" | "atom" | "red" if shared => Some(self.shared_access(ctx, m, opcode)),
            "cvta" if shared => Some(self.shared_cvta(ctx, m)),
            "mov" => {
                let Some(Operand::Name(name)) = ctx.instruction.operands.get(1) else {
                    return None;
                };
                let slot = Self::shared_symbol(ctx, name)?;
                Some(self.shared_address(ctx, m, slot))
            }
            _ if !shared => match self.check_shared_names(ctx) {
                Ok(()) => None,
                Err(e) => Some(Err(e)),
            },
            _ => None,
        }
    }

    /// `ld`, `st`, `atom` or `red` on `.shared`: the global form, its address converted first.
    pub(super) fn shared_access(
        &mut self,
        ctx: &mut Ctx<'_, 'a, '_>,
        m: &Mods<'a>,
        opcode: &str,
    ) -> EResult<()> {
        self.shared.block_scoped = true;
        let global = Mods {
            space: Some(".global"),
            types: m.types.clone(),
            extra: m.extra.clone(),
            vec: m.vec,
            bool_op: m.bool_op,
            ..Mods::default()
        };
        let before = ctx.code.insts.len();
        match opcode {
            "ld" => self.load(ctx, &global)?,
            "st" => self.store(ctx, &global)?,
            _ => self.atomic(ctx, &global, opcode)?,
        }
        let found = ctx
            .code
            .insts
            .iter()
            .enumerate()
            .skip(before)
            .find(|(_, i)| {
                matches!(
                    i.op,
                    Op::LdGlobal | Op::LdGlobalV | Op::StGlobal | Op::StGlobalV | Op::Atom
                )
            })
            .map(|(at, i)| (at, *i));
        let Some((at, access)) = found else {
            return bad("this shared-memory access");
        };
        let tmp = self.alloc(1).map_err(Ok)?;
        let mut check = Inst::new(Op::ToShared);
        check.d = tmp;
        check.a = access.a;
        check.imm = access.imm;
        let count = if matches!(access.op, Op::LdGlobalV | Op::StGlobalV) {
            access.c.clamp(1, 4) as u8
        } else {
            1
        };
        check.w = access.w.saturating_mul(count);
        check.k = u8::from(!matches!(access.op, Op::LdGlobal | Op::LdGlobalV));
        if let Some(inst) = ctx.code.insts.get_mut(at) {
            inst.a = tmp;
            inst.imm = 0;
        }
        ctx.code.insts.insert(at, check);
        Ok(())
    }

    /// `cvta.shared` (shared to generic) and `cvta.to.shared` (generic to shared), on 64-bit
    /// addresses; the source may be a shared variable's name.
    pub(super) fn shared_cvta(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        if ty.bytes() != 8 {
            return bad("32-bit shared address conversion");
        }
        self.expect_count(ctx, 2)?;
        self.shared.block_scoped = true;
        let a = match self.operand(ctx, 1)?.clone() {
            Operand::Name(name) => match lookup(ctx.scopes, name) {
                Some(Sym::Shared(slot)) if !m.to => slot,
                Some(Sym::Shared(_)) => return bad("cvta.to of a variable"),
                _ => self.src(ctx, 1, ty)?,
            },
            _ => self.src(ctx, 1, ty)?,
        };
        let mut inst = Inst::new(if m.to { Op::Sub } else { Op::Add });
        inst.d = self.dst(ctx, 0)?;
        inst.a = a;
        inst.b = self.const_slot(SHARED_WINDOW).map_err(Ok)?;
        inst.w = 64;
        self.push(ctx, inst);
        Ok(())
    }

    /// `mov d, var` of a shared variable: its shared-space address.
    pub(super) fn shared_address(
        &mut self,
        ctx: &mut Ctx<'_, 'a, '_>,
        m: &Mods<'a>,
        slot: u32,
    ) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
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

    /// The slot of a shared variable named `name`, if it is one.
    pub(super) fn shared_symbol(ctx: &Ctx<'_, 'a, '_>, name: &str) -> Option<u32> {
        match lookup(ctx.scopes, name) {
            Some(Sym::Shared(slot)) => Some(slot),
            _ => None,
        }
    }

    /// Refuses a generic or global access through a shared variable's name: the name stands
    /// for a shared-space address, which is not a generic one.
    pub(super) fn check_shared_names(&self, ctx: &Ctx<'_, 'a, '_>) -> EResult<()> {
        for operand in &ctx.instruction.operands {
            if let Operand::Address {
                base: Some(name), ..
            } = operand
                && Self::shared_symbol(ctx, name).is_some()
            {
                return bad("a shared variable's name outside the shared state space");
            }
        }
        Ok(())
    }
}

/// Advances `lexer` past the `;` that ends the current statement; returns the offset after it.
fn statement_end(lexer: &mut Lexer<'_>, len: usize) -> usize {
    while let Some(Ok(token)) = lexer.next_token() {
        if token.is_punct(Punct::Semi) {
            return token.end();
        }
    }
    len
}

/// Parses `[.extern] .shared [.align N] [.vN] .type name[dims] {, name[dims]} ;` in `range`.
fn parse_decls(src: &str, range: Range<usize>) -> Result<Vec<Decl<'_>>, &'static str> {
    let mut tokens = Lexer::with_range(src, range).filter_map(Result::ok);
    let mut external = false;
    let mut align = None;
    let mut vec = 1u64;
    let mut ty: Option<ScalarType> = None;
    let mut next = tokens.next();
    while let Some(Token {
        kind: TokenKind::Directive,
        text,
        ..
    }) = next
    {
        match text {
            ".extern" => external = true,
            ".visible" | ".weak" | ".shared" => {}
            ".align" => {
                let value = tokens.next().and_then(|t| t.int_value());
                match value {
                    Some(a) if a.is_power_of_two() => align = Some(a),
                    _ => return Err("an alignment that is not a power of two"),
                }
            }
            ".v2" => vec = 2,
            ".v4" => vec = 4,
            ".v8" => vec = 8,
            ".ptr" => return Err("shared pointers"),
            _ => match ScalarType::from_directive(text) {
                Some(parsed) if ty.is_none() => ty = Some(parsed),
                _ => return Err("this shared variable declaration"),
            },
        }
        next = tokens.next();
    }
    let Some(ty) = ty else {
        return Err("a shared variable without a type");
    };
    let element = u64::from(ty.bytes()).saturating_mul(vec);
    let align = align.unwrap_or(element).max(1);
    let mut decls = Vec::new();
    loop {
        let Some(Token {
            kind: TokenKind::Ident,
            text: name,
            ..
        }) = next
        else {
            return Err("this shared variable declaration");
        };
        let mut bytes = Some(element);
        next = tokens.next();
        while next.is_some_and(|t| t.is_punct(Punct::LBracket)) {
            next = tokens.next();
            match next {
                Some(t) if t.is_punct(Punct::RBracket) => bytes = None,
                Some(t) => {
                    let count = t.int_value().ok_or("an array size that is not a number")?;
                    bytes = bytes.and_then(|b| b.checked_mul(count));
                    if bytes.is_none() {
                        return Err("a shared array too large");
                    }
                    next = tokens.next();
                    if !next.is_some_and(|t| t.is_punct(Punct::RBracket)) {
                        return Err("this shared variable declaration");
                    }
                }
                None => return Err("this shared variable declaration"),
            }
            next = tokens.next();
        }
        decls.push(Decl {
            name,
            bytes,
            align,
            external,
        });
        match next {
            Some(t) if t.is_punct(Punct::Comma) => next = tokens.next(),
            Some(t) if t.is_punct(Punct::Semi) => break,
            None => break,
            Some(t) if t.is_punct(Punct::Eq) => return Err("initialized shared variables"),
            Some(_) => return Err("this shared variable declaration"),
        }
    }
    Ok(decls)
}
