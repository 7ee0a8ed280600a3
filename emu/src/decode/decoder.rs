//! The driver: a body becomes function-relative code, statement by statement (scopes, register
//! slots, labels), and the entry plus every called `.func` are linked into one [`Program`].

use std::collections::HashMap;
use std::ops::Range;

use super::{
    DecodeError, F_BRANCH, F_BRANCH_NEG, F_GUARD_NEG, Inst, MAX_SLOTS, ModuleImage, NONE, Op,
    Program, SPECIAL_SLOTS, Site,
};
use crate::space::Space;
use jitseam_ptx::LineIndex;
use jitseam_ptx::body::{Instruction, Statement, parse_body};
use jitseam_ptx::{Module, Param, ScalarType};
use jitseam_ptx::{ParseError, ParseErrorKind, excerpt};

/// Parses the body of `entry` (and of every `.func` it calls) and pre-decodes it.
pub fn decode(src: &str, module: &Module, entry: &str) -> Result<Program, DecodeError> {
    let Some(found) = module.entry(entry) else {
        return Err(DecodeError::Parse(ParseError::new(
            src,
            0,
            ParseErrorKind::NoSuchEntry {
                name: entry.to_owned(),
            },
        )));
    };
    let Some(body) = found.body.clone() else {
        return Err(DecodeError::Parse(ParseError::new(
            src,
            found.offset,
            ParseErrorKind::InvalidInstruction {
                instruction: excerpt(entry),
                reason: "the entry has no body",
            },
        )));
    };
    let mut decoder = Decoder::new(src, module, entry);
    decoder.module_variables()?;
    let (params, param_bytes) = kernel_layout(&found.params);
    let mut root = Scope::default();
    for (param, &(offset, size)) in found.params.iter().zip(&params) {
        root.names
            .insert(param.name.clone(), Sym::KParam { offset, size });
    }
    let code = decoder.function(body, root)?;
    let mut funcs = Vec::new();
    let mut next = 0;
    while next < decoder.pending.len() {
        let index = decoder.pending[next];
        next += 1;
        decoder.compiling = Some(index);
        let (body, scope) = decoder.func_scope(index)?;
        let code = decoder.function(body, scope)?;
        funcs.push((index, code));
    }
    let max_depth = decoder.call_depth()?;
    decoder.link(code, funcs, params, param_bytes, max_depth)
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
    /// A `.v2`/`.v4` vector register: `len` consecutive slots from `base`, one per component.
    VecReg {
        base: u32,
        len: u8,
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
}

#[derive(Debug, Default, Clone)]
pub(super) struct Scope<'a> {
    pub(super) names: HashMap<String, Sym>,
    /// `prefix<count>` ranges: prefix, count, first slot.
    ranges: Vec<(&'a str, u32, u32)>,
}

/// A function's instructions before linking; branch targets are function-relative.
pub(super) struct Code<'a> {
    pub(super) insts: Vec<Inst>,
    pub(super) sites: Vec<Site>,
    /// Call instructions and the function index they call.
    pub(super) calls: Vec<(usize, usize)>,
    _marker: std::marker::PhantomData<&'a ()>,
}

pub(super) struct FuncSig {
    /// How each parameter and return value is passed: [`Sym::ParamSlot`], [`Sym::Reg`] or
    /// [`Sym::ParamMem`].
    pub(super) params: Vec<Sym>,
    pub(super) returns: Vec<Sym>,
    pub(super) callees: Vec<usize>,
}

pub(super) struct Decoder<'a> {
    pub(super) src: &'a str,
    pub(super) module: &'a Module,
    pub(super) entry: &'a str,
    lines: LineIndex,
    num_regs: u32,
    consts: HashMap<u64, u32>,
    pub(super) lanes: Vec<u32>,
    pub(super) sink: u32,
    /// Function index (into `module.functions`) → its slots, once referenced.
    pub(super) sigs: HashMap<usize, FuncSig>,
    pub(super) pending: Vec<usize>,
    /// Callees of the entry.
    pub(super) entry_callees: Vec<usize>,
    /// The function being compiled; `None` for the entry.
    pub(super) compiling: Option<usize>,
    /// Declared width in bits of every register slot (0 for slots that are not registers).
    pub(super) reg_bits: Vec<u8>,
    /// Instructions the current instruction needs run just before it (special registers).
    pub(super) pre: Vec<Inst>,
    /// Bytes of the `.local` frame laid out so far.
    pub(super) local_bytes: u64,
    /// The module's variables: their bytes, and their names.
    pub(super) image: ModuleImage,
    pub(super) module_syms: HashMap<String, Sym>,
    /// The block's shared memory.
    pub(super) shared: super::layout::SharedLayout,
}

pub(super) type DResult<T> = Result<T, DecodeError>;

impl<'a> Decoder<'a> {
    fn new(src: &'a str, module: &'a Module, entry: &'a str) -> Self {
        Self {
            src,
            module,
            entry,
            lines: LineIndex::new(src),
            num_regs: SPECIAL_SLOTS + 1,
            consts: HashMap::new(),
            lanes: Vec::new(),
            sink: SPECIAL_SLOTS,
            sigs: HashMap::new(),
            pending: Vec::new(),
            entry_callees: Vec::new(),
            compiling: None,
            reg_bits: Vec::new(),
            pre: Vec::new(),
            local_bytes: 0,
            image: ModuleImage::default(),
            module_syms: HashMap::new(),
            shared: Default::default(),
        }
    }

    pub(super) fn alloc(&mut self, count: u32) -> DResult<u32> {
        let base = self.num_regs;
        self.num_regs = base
            .checked_add(count)
            .filter(|&n| n <= MAX_SLOTS)
            .ok_or_else(|| self.unsupported_at(0, "registers", "more than 65535 register slots"))?;
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

    pub(super) fn line(&self, offset: usize) -> u32 {
        self.lines.line_col(self.src, offset).0
    }

    pub(super) fn unsupported_at(
        &self,
        offset: usize,
        what: &str,
        reason: &'static str,
    ) -> DecodeError {
        DecodeError::Unsupported {
            entry: self.entry.to_owned(),
            instruction: excerpt(what),
            line: self.line(offset),
            reason,
        }
    }

    pub(super) fn parse_error(&self, offset: usize, kind: ParseErrorKind) -> DecodeError {
        DecodeError::Parse(ParseError::new(self.src, offset, kind))
    }

    pub(super) fn const_slot(&mut self, bits: u64) -> DResult<u32> {
        if let Some(&slot) = self.consts.get(&bits) {
            return Ok(slot);
        }
        let slot = self.alloc(1)?;
        self.consts.insert(bits, slot);
        Ok(slot)
    }

    fn link(
        mut self,
        entry: Code<'a>,
        funcs: Vec<(usize, Code<'a>)>,
        params: Vec<(usize, usize)>,
        param_bytes: usize,
        max_depth: usize,
    ) -> DResult<Program> {
        let mut insts = Vec::new();
        let mut sites = Vec::new();
        let mut starts: HashMap<usize, i64> = HashMap::new();
        let mut pieces = vec![(None, entry)];
        pieces.extend(funcs.into_iter().map(|(i, c)| (Some(i), c)));
        let mut calls = Vec::new();
        for (index, code) in pieces {
            let base = insts.len();
            if let Some(index) = index {
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
        let const_slots: Vec<u32> = consts.iter().map(|&(s, _)| s).collect();
        let zero_slots =
            super::undefined::zero_slots(&insts, &self.lanes, self.num_regs as usize, &const_slots);
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

    /// Compiles one body. The first scope holds the function's parameters.
    fn function(&mut self, body: Range<usize>, mut root: Scope<'a>) -> DResult<Code<'a>> {
        let statements = parse_body(self.src, body)?;
        for (name, &sym) in &self.module_syms {
            root.names.entry(name.clone()).or_insert(sym);
        }
        let mut scopes = vec![root];
        let mut code = Code {
            insts: Vec::new(),
            sites: Vec::new(),
            calls: Vec::new(),
            _marker: std::marker::PhantomData,
        };
        let mut labels: HashMap<&'a str, i64> = HashMap::new();
        let mut fixups: Vec<(usize, &'a str, usize)> = Vec::new();
        for statement in statements {
            match statement {
                Statement::Open { .. } => scopes.push(Scope::default()),
                Statement::Close { offset } => {
                    if scopes.len() <= 1 {
                        return Err(self.parse_error(
                            offset,
                            ParseErrorKind::UnexpectedToken {
                                expected: "a statement",
                                found: "}".to_owned(),
                            },
                        ));
                    }
                    scopes.pop();
                }
                Statement::Label { name, offset } => {
                    if labels.insert(name, code.insts.len() as i64).is_some() {
                        return Err(self.parse_error(
                            offset,
                            ParseErrorKind::DuplicateLabel {
                                name: excerpt(name),
                            },
                        ));
                    }
                }
                Statement::Reg {
                    ty,
                    vector,
                    names,
                    offset,
                } => {
                    if let Some(len) = vector {
                        for name in names {
                            if name.count.is_some() {
                                return Err(self.unsupported_at(
                                    offset,
                                    ".reg",
                                    "ranges of vector registers",
                                ));
                            }
                            let base = self.alloc(u32::from(len))?;
                            self.set_reg_bits(base, u32::from(len), ty);
                            if let Some(scope) = scopes.last_mut() {
                                scope
                                    .names
                                    .insert(name.name.to_owned(), Sym::VecReg { base, len });
                            }
                        }
                        continue;
                    }
                    for name in names {
                        let count = name.count.unwrap_or(1);
                        let base = self.alloc(count)?;
                        self.set_reg_bits(base, count, ty);
                        let Some(scope) = scopes.last_mut() else {
                            continue;
                        };
                        match name.count {
                            Some(n) => scope.ranges.push((name.name, n, base)),
                            None => {
                                scope.names.insert(name.name.to_owned(), Sym::Reg(base));
                            }
                        }
                    }
                }
                Statement::Param {
                    ty,
                    name,
                    array_len: Some(len),
                    offset,
                    align,
                } => {
                    let sym = self.param_array(ty, len, align, offset, name)?;
                    if let Some(scope) = scopes.last_mut() {
                        scope.names.insert(name.to_owned(), sym);
                    }
                }
                Statement::Param {
                    ty,
                    name,
                    array_len: None,
                    offset,
                    ..
                } => {
                    let size = ty.bytes();
                    if size > 8 {
                        return Err(self.unsupported_at(
                            offset,
                            name,
                            "parameters larger than 8 bytes",
                        ));
                    }
                    let slot = self.alloc(1)?;
                    if let Some(scope) = scopes.last_mut() {
                        scope
                            .names
                            .insert(name.to_owned(), Sym::ParamSlot { slot, size });
                    }
                }
                Statement::Variables(vars) => {
                    if let Some(scope) = scopes.last_mut() {
                        self.declare(&vars, scope)?;
                    }
                }
                Statement::Directive { name, offset, .. } => {
                    let reason = match name {
                        ".shared" => "shared memory",
                        ".local" => "local memory",
                        ".global" | ".const" => "module variables",
                        _ => "this directive",
                    };
                    return Err(self.unsupported_at(offset, name, reason));
                }
                Statement::Instruction(instruction) => {
                    let mut ctx = Ctx {
                        scopes: &scopes,
                        code: &mut code,
                        fixups: &mut fixups,
                        instruction: &instruction,
                    };
                    self.instruction(&mut ctx)?;
                }
            }
        }
        for (at, label, offset) in fixups {
            let Some(&target) = labels.get(label) else {
                return Err(self.parse_error(
                    offset,
                    ParseErrorKind::Undeclared {
                        name: excerpt(label),
                    },
                ));
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
        Ok(code)
    }
}

pub(super) struct Ctx<'s, 'a, 'c> {
    pub(super) scopes: &'s [Scope<'a>],
    pub(super) code: &'c mut Code<'a>,
    pub(super) fixups: &'c mut Vec<(usize, &'a str, usize)>,
    pub(super) instruction: &'s Instruction<'a>,
}

pub(super) fn lookup<'a>(scopes: &[Scope<'a>], name: &str) -> Option<Sym> {
    for scope in scopes.iter().rev() {
        if let Some(&sym) = scope.names.get(name) {
            return Some(sym);
        }
        if !scope.ranges.is_empty() {
            let digits = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
            if digits < name.len() {
                let (prefix, number) = name.split_at(digits);
                let Ok(index) = number.parse::<u32>() else {
                    continue;
                };
                for &(range_prefix, count, base) in scope.ranges.iter().rev() {
                    if range_prefix == prefix && index < count {
                        return Some(Sym::Reg(base + index));
                    }
                }
            }
        }
    }
    None
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
