//! The driver: each resolved body becomes function-relative code, statement by statement
//! (register slots, variables, `.param`s, labels), and the entry plus every called `.func` are
//! linked into one [`Program`].
//!
//! Names are never looked up by their text here: the resolver has already said what every name
//! means ([`Name`], [`RegId`]), and a body's [`Tables`] say where each of those lives in the
//! emulator (a slot, a kernel parameter, a place in the frame, an address).

use std::collections::HashMap;

use super::{
    DecodeError, F_BRANCH, F_BRANCH_NEG, F_GUARD_NEG, Inst, MAX_SLOTS, ModuleImage, NONE, Op,
    Program, SPECIAL_SLOTS, Site,
};
use crate::space::Space;
use jitseam_ptx::inst::{Instruction, Name, RegId, VarRef};
use jitseam_ptx::resolve::{Body, Owner, RegOrigin, ResolvedEntry, ResolvedModule, Stmt};
use jitseam_ptx::{Module, Param, ParseError, ParseErrorKind, ScalarType, excerpt};

/// Parses the body of `entry` in `src` (and of every `.func` it calls) and pre-decodes it: the
/// convenience form of [`decode_entry`], for a module header already parsed from `src`.
pub fn decode(src: &str, module: &Module, entry: &str) -> Result<Program, DecodeError> {
    let resolved = ResolvedModule::with_module(src, module.clone())?;
    let found = resolved.entry(src, entry)?;
    decode_entry(&resolved, &found)
}

/// Pre-decodes a resolved entry (its body and the body of every `.func` it calls) of `module`.
pub fn decode_entry(
    module: &ResolvedModule,
    entry: &ResolvedEntry,
) -> Result<Program, DecodeError> {
    let Some(found) = module.module.entries.get(entry.entry as usize) else {
        return Err(DecodeError::Parse(ParseError {
            offset: 0,
            line: 1,
            col: 1,
            kind: ParseErrorKind::NoSuchEntry {
                name: format!("#{}", entry.entry),
            },
        }));
    };
    let mut decoder = Decoder::new(module, &found.name);
    decoder.module_variables()?;
    decoder.carry_slot(entry)?;
    let (params, param_bytes) = kernel_layout(&found.params);
    // Every called function's parameter and return slots, before any body names them.
    for body in &entry.bodies {
        if let Owner::Func(index) = body.owner {
            decoder.signature(index)?;
        }
    }
    let kernel: Vec<Sym> = params
        .iter()
        .map(|&(offset, size)| Sym::KParam { offset, size })
        .collect();
    let mut codes = Vec::with_capacity(entry.bodies.len());
    for body in &entry.bodies {
        let code = decoder.function(body, &kernel)?;
        codes.push((body.owner, code));
    }
    let max_depth = entry
        .call_depth(&module.module)
        .map_err(|r| decoder.unsupported_line(r.line, &r.name, "recursive calls"))?;
    let mut always = std::mem::take(&mut decoder.unwritten);
    always.extend(decoder.carry);
    let zero_slots = super::undefined::zero_slots(&entry.bodies, &decoder.body_regs, always);
    decoder.link(codes, params, param_bytes, max_depth, zero_slots)
}

/// Kernel parameter offsets by the C rule: each at the next multiple of its alignment.
fn kernel_layout(params: &[Param]) -> (Vec<(usize, usize)>, usize) {
    let mut offset = 0usize;
    let placed = params
        .iter()
        .map(|p| {
            let size = usize::try_from(p.size_bytes()).unwrap_or(usize::MAX);
            let align = p.align.map_or(p.ty.bytes() as usize, |a| a as usize).max(1);
            let at = offset.next_multiple_of(align);
            offset = at.saturating_add(size);
            (at, size)
        })
        .collect();
    (placed, offset)
}

/// Where something a body names lives in the emulator.
#[derive(Debug, Clone, Copy)]
pub(super) enum Sym {
    Reg(u32),
    /// A `.param` variable held in one slot (call arguments, function params and returns).
    ParamSlot {
        slot: u32,
        size: u32,
    },
    /// A kernel parameter, read from the argument packet.
    KParam {
        offset: usize,
        size: usize,
    },
    /// A `.param` array (of a function or of a call sequence), held in the thread's local
    /// frame at offset `addr`.
    ParamMem {
        addr: u64,
        size: u32,
    },
    /// A variable at address `addr` of its state space `space`.
    Var {
        space: Space,
        addr: u64,
    },
    /// A name the emulator knows but cannot use, and why.
    Refused(&'static str),
    /// A `.shared` variable: the slot holding its shared-space address.
    Shared(u32),
    /// A `.func` of the module, named as a value.
    Func,
    /// A label of the body, named as a value.
    Label,
}

/// Where each name of one body lives: filled as the body's declarations are met, read by its
/// instructions.
pub(super) struct Tables {
    /// [`RegId`] → slot.
    regs: Vec<u32>,
    /// The body's variables ([`VarRef::Body`]), once declared.
    vars: Vec<Option<Sym>>,
    /// The body's `.param` variables ([`Name::LocalParam`]), once declared.
    params: Vec<Option<Sym>>,
    /// The function's own parameters ([`Name::Param`]) and return values ([`Name::Return`]).
    own_params: Vec<Sym>,
    own_returns: Vec<Sym>,
    /// The module's variables ([`VarRef::Module`]).
    module: Vec<Sym>,
}

impl Tables {
    /// The slot of register `r`.
    pub(super) fn reg(&self, r: RegId) -> Option<u32> {
        self.regs.get(r.0 as usize).copied()
    }

    /// What `name` stands for, once declared.
    pub(super) fn sym(&self, name: Name) -> Option<Sym> {
        let at = |list: &[Sym], i: u32| list.get(i as usize).copied();
        match name {
            Name::Reg(r) => self.reg(r).map(Sym::Reg),
            Name::Param(i) => at(&self.own_params, i),
            Name::Return(i) => at(&self.own_returns, i),
            Name::LocalParam(i) => self.params.get(i as usize).copied().flatten(),
            Name::Var(VarRef::Module(i)) => at(&self.module, i),
            Name::Var(VarRef::Body(i)) => self.vars.get(i as usize).copied().flatten(),
            Name::Func(_) => Some(Sym::Func),
            Name::Label(_) => Some(Sym::Label),
        }
    }
}

/// A function's instructions before linking; branch targets are function-relative.
pub(super) struct Code {
    pub(super) insts: Vec<Inst>,
    pub(super) sites: Vec<Site>,
    /// Call instructions and the function index they call.
    pub(super) calls: Vec<(usize, u32)>,
}

/// How a function's parameters and return values are passed: [`Sym::ParamSlot`],
/// [`Sym::Reg`] or [`Sym::ParamMem`] each.
#[derive(Debug, Clone)]
pub(super) struct FuncSig {
    pub(super) params: Vec<Sym>,
    pub(super) returns: Vec<Sym>,
}

pub(super) struct Decoder<'a> {
    pub(super) module: &'a ResolvedModule,
    pub(super) entry: &'a str,
    num_regs: u32,
    consts: HashMap<u64, u32>,
    pub(super) lanes: Vec<u32>,
    pub(super) sink: u32,
    /// Function index (into the module's functions) → its slots.
    pub(super) sigs: HashMap<u32, FuncSig>,
    /// Declared width in bits of every register slot (0 for slots that are not registers).
    pub(super) reg_bits: Vec<u8>,
    /// Instructions the current instruction needs run just before it (special registers).
    pub(super) pre: Vec<Inst>,
    /// Bytes of the `.local` frame laid out so far.
    pub(super) local_bytes: u64,
    /// The module's variables: their bytes, and where each lives.
    pub(super) image: ModuleImage,
    pub(super) module_syms: Vec<Sym>,
    /// The block's shared memory.
    pub(super) shared: super::layout::SharedLayout,
    /// The thread's carry flag, when some instruction reads or writes it.
    pub(super) carry: Option<u32>,
    /// Slots that are not registers of any body but may be read before a write (the
    /// `.param` slots of calls): cleared for every group.
    pub(super) unwritten: Vec<u32>,
    /// For each body compiled, its register slots (by [`RegId`]), for the analysis of reads
    /// before writes.
    pub(super) body_regs: Vec<Vec<u32>>,
}

pub(super) type DResult<T> = Result<T, DecodeError>;

impl<'a> Decoder<'a> {
    fn new(module: &'a ResolvedModule, entry: &'a str) -> Self {
        Self {
            module,
            entry,
            num_regs: SPECIAL_SLOTS + 1,
            consts: HashMap::new(),
            lanes: Vec::new(),
            sink: SPECIAL_SLOTS,
            sigs: HashMap::new(),
            reg_bits: Vec::new(),
            pre: Vec::new(),
            local_bytes: 0,
            image: ModuleImage::default(),
            module_syms: Vec::new(),
            shared: Default::default(),
            carry: None,
            unwritten: Vec::new(),
            body_regs: Vec::new(),
        }
    }

    pub(super) fn alloc(&mut self, count: u32) -> DResult<u32> {
        let base = self.num_regs;
        self.num_regs = base
            .checked_add(count)
            .filter(|&n| n <= MAX_SLOTS)
            .ok_or_else(|| {
                self.unsupported_line(1, "registers", "more than 65535 register slots")
            })?;
        Ok(base)
    }

    /// Records the declared width of `count` register slots from `base`.
    pub(super) fn set_reg_bits(&mut self, base: u32, count: u32, ty: ScalarType) {
        let bits = if ty == ScalarType::Pred {
            1
        } else {
            u8::try_from(ty.bytes() * 8).unwrap_or(64)
        };
        let end = base as usize + count as usize;
        if self.reg_bits.len() < end {
            self.reg_bits.resize(end, 0);
        }
        if let Some(slots) = self.reg_bits.get_mut(base as usize..end) {
            slots.fill(bits);
        }
    }

    /// The declared width of register slot `slot`, in bits (0 if it is not a register).
    pub(super) fn reg_width(&self, slot: u32) -> u8 {
        self.reg_bits.get(slot as usize).copied().unwrap_or(0)
    }

    /// The 1-based line of byte `offset` of the module's text.
    pub(super) fn line(&self, offset: usize) -> u32 {
        self.module.line(offset)
    }

    /// `what`, at byte `offset`, is valid PTX the emulator does not run.
    pub(super) fn unsupported_at(
        &self,
        offset: usize,
        what: &str,
        reason: &'static str,
    ) -> DecodeError {
        self.unsupported_line(self.line(offset), what, reason)
    }

    pub(super) fn unsupported_line(
        &self,
        line: u32,
        what: &str,
        reason: &'static str,
    ) -> DecodeError {
        DecodeError::Unsupported {
            entry: self.entry.to_owned(),
            instruction: excerpt(what),
            line,
            reason,
        }
    }

    pub(super) fn const_slot(&mut self, bits: u64) -> DResult<u32> {
        if let Some(&slot) = self.consts.get(&bits) {
            return Ok(slot);
        }
        let slot = self.alloc(1)?;
        self.consts.insert(bits, slot);
        Ok(slot)
    }

    /// A slot for the thread's carry flag when some instruction of the entry (or of a function
    /// it calls) reads or writes it, as the model says.
    fn carry_slot(&mut self, entry: &ResolvedEntry) -> DResult<()> {
        let uses = entry.bodies.iter().flat_map(Body::instructions).any(|ins| {
            let carry = ins.carry();
            carry.reads || carry.writes
        });
        if uses {
            self.carry = Some(self.alloc(1)?);
        }
        Ok(())
    }

    fn link(
        mut self,
        codes: Vec<(Owner, Code)>,
        params: Vec<(usize, usize)>,
        param_bytes: usize,
        max_depth: usize,
        zero_slots: Vec<u32>,
    ) -> DResult<Program> {
        let mut insts = Vec::new();
        let mut sites = Vec::new();
        let mut starts: HashMap<u32, i64> = HashMap::new();
        let mut calls = Vec::new();
        for (owner, code) in codes {
            let base = insts.len();
            if let Owner::Func(index) = owner {
                starts.insert(index, base as i64);
            }
            for mut inst in code.insts {
                if inst.op == Op::Bra {
                    inst.imm += base as i64;
                }
                insts.push(inst);
            }
            sites.extend(code.sites);
            calls.extend(code.calls.into_iter().map(|(at, f)| (at + base, f)));
        }
        for (at, f) in calls {
            let target = starts.get(&f).copied().unwrap_or(0);
            if let Some(inst) = insts.get_mut(at) {
                inst.imm = target;
            }
        }
        fuse_compare_and_branch(&mut insts);
        let shared = self.shared.info();
        let mut consts: Vec<(u32, u64)> = self.consts.drain().map(|(v, s)| (s, v)).collect();
        consts.extend(shared.dynamic_const);
        consts.sort_unstable();
        Ok(Program {
            insts,
            sites,
            lanes: self.lanes,
            consts,
            num_regs: self.num_regs as usize,
            entry_pc: 0,
            entry: self.entry.to_owned(),
            params,
            param_bytes,
            max_depth,
            zero_slots,
            local_bytes: usize::try_from(self.local_bytes).unwrap_or(usize::MAX),
            module: std::mem::take(&mut self.image),
            block_scoped: self.shared.block_scoped,
            shared_static: shared.static_bytes,
            shared_dynamic_offset: shared.dynamic_offset,
        })
    }

    /// The slots of `body`'s registers: a fresh slot for each declared one, the function's
    /// own slot for each parameter or return value declared in the `.reg` space.
    fn register_slots(&mut self, body: &Body) -> DResult<Vec<u32>> {
        let sig = match body.owner {
            Owner::Func(f) => self.sigs.get(&f).cloned(),
            Owner::Entry(_) => None,
        };
        let passed = |list: Option<&Vec<Sym>>, i: u32| match list.and_then(|l| l.get(i as usize)) {
            Some(Sym::Reg(slot)) => Some(*slot),
            _ => None,
        };
        let mut slots = Vec::with_capacity(body.regs.len());
        for decl in &body.regs {
            let slot = match decl.origin {
                RegOrigin::Declared => {
                    let slot = self.alloc(1)?;
                    self.set_reg_bits(slot, 1, decl.ty);
                    Some(slot)
                }
                RegOrigin::Param(i) => passed(sig.as_ref().map(|s| &s.params), i),
                RegOrigin::Return(i) => passed(sig.as_ref().map(|s| &s.returns), i),
            };
            let Some(slot) = slot else {
                return Err(self.unsupported_line(
                    body.line,
                    &decl.name,
                    "this register parameter",
                ));
            };
            slots.push(slot);
        }
        Ok(slots)
    }

    /// Compiles one body; `kernel` is where the entry's parameters are.
    fn function(&mut self, body: &Body, kernel: &[Sym]) -> DResult<Code> {
        let (own_params, own_returns) = match body.owner {
            Owner::Entry(_) => (kernel.to_vec(), Vec::new()),
            Owner::Func(f) => match self.sigs.get(&f) {
                Some(sig) => (sig.params.clone(), sig.returns.clone()),
                None => (Vec::new(), Vec::new()),
            },
        };
        let mut tables = Tables {
            regs: self.register_slots(body)?,
            vars: vec![None; body.vars.len()],
            params: vec![None; body.params.len()],
            own_params,
            own_returns,
            module: self.module_syms.clone(),
        };
        let mut code = Code {
            insts: Vec::new(),
            sites: Vec::new(),
            calls: Vec::new(),
        };
        let mut labels: Vec<Option<i64>> = vec![None; body.labels.len()];
        let mut fixups: Vec<(usize, u32, &Instruction)> = Vec::new();
        for statement in &body.statements {
            match statement {
                Stmt::Label(id) => {
                    if let Some(at) = labels.get_mut(*id as usize) {
                        *at = Some(code.insts.len() as i64);
                    }
                }
                Stmt::Vars(start, end) => {
                    for i in *start..*end {
                        let Some(var) = body.vars.get(i as usize) else {
                            continue;
                        };
                        let sym = self.declare(var)?;
                        if let Some(place) = tables.vars.get_mut(i as usize) {
                            *place = Some(sym);
                        }
                    }
                }
                Stmt::Param(i) => {
                    let Some(param) = body.params.get(*i as usize) else {
                        continue;
                    };
                    let sym = match param.array_len {
                        Some(len) => {
                            self.param_array(param.ty, len, param.align, param.offset, &param.name)?
                        }
                        None => {
                            let size = param.ty.bytes();
                            if size > 8 {
                                return Err(self.unsupported_at(
                                    param.offset,
                                    &param.name,
                                    "parameters larger than 8 bytes",
                                ));
                            }
                            let slot = self.alloc(1)?;
                            self.unwritten.push(slot);
                            Sym::ParamSlot { slot, size }
                        }
                    };
                    if let Some(place) = tables.params.get_mut(*i as usize) {
                        *place = Some(sym);
                    }
                }
                Stmt::Directive { name, line } => {
                    let reason = match name.as_str() {
                        ".shared" => "shared memory",
                        ".local" => "local memory",
                        ".global" | ".const" => "module variables",
                        _ => "this directive",
                    };
                    return Err(self.unsupported_line(*line, name, reason));
                }
                Stmt::Instruction(ins) => {
                    let mut ctx = Ctx {
                        ins,
                        tables: &tables,
                        code: &mut code,
                        branch: None,
                    };
                    self.instruction(&mut ctx)?;
                    if let Some((at, label)) = ctx.branch {
                        fixups.push((at, label, ins));
                    }
                }
            }
        }
        for (at, label, ins) in fixups {
            let Some(target) = labels.get(label as usize).copied().flatten() else {
                let name = body
                    .labels
                    .get(label as usize)
                    .map_or("?", |l| l.name.as_str());
                return Err(DecodeError::Parse(parse_error(
                    ins,
                    ParseErrorKind::Undeclared {
                        name: excerpt(name),
                    },
                )));
            };
            if let Some(inst) = code.insts.get_mut(at) {
                inst.imm = target;
            }
        }
        // Falling off the end returns.
        code.insts.push(Inst::new(Op::Ret));
        code.sites.push(Site {
            text: "(end of body)".to_owned(),
            line: 0,
        });
        self.body_regs.push(tables.regs);
        Ok(code)
    }
}

/// What the decoder needs of one instruction while it emits it.
pub(super) struct Ctx<'c> {
    pub(super) ins: &'c Instruction,
    pub(super) tables: &'c Tables,
    pub(super) code: &'c mut Code,
    /// A branch emitted at this index to this label, to be resolved after the body.
    pub(super) branch: Option<(usize, u32)>,
}

/// A [`ParseError`] of kind `kind` at instruction `ins`.
pub(super) fn parse_error(ins: &Instruction, kind: ParseErrorKind) -> ParseError {
    ParseError {
        offset: ins.range.start,
        line: ins.line,
        col: ins.col,
        kind,
    }
}

/// Marks every unguarded, uncombined `setp p` followed by `@p bra` / `@!p bra` so that the
/// interpreter branches from the `setp` itself and skips the `bra`. The `bra` stays in place
/// (a label may point at it) and still works when reached directly.
fn fuse_compare_and_branch(insts: &mut [Inst]) {
    for i in 1..insts.len() {
        let (head, tail) = insts.split_at_mut(i);
        let (Some(setp), Some(bra)) = (head.last_mut(), tail.first()) else {
            continue;
        };
        let is_setp = matches!(setp.op, Op::SetpI | Op::SetpF32 | Op::SetpF64);
        if is_setp
            && setp.guard == NONE
            && setp.c == NONE
            && setp.e == NONE
            && bra.op == Op::Bra
            && bra.guard == setp.d
        {
            setp.f |= F_BRANCH;
            if bra.f & F_GUARD_NEG != 0 {
                setp.f |= F_BRANCH_NEG;
            }
            setp.imm = bra.imm;
        }
    }
}
