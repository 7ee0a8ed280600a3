//! Pre-decoding: a parsed body becomes a [`Program`], a flat array of compact instructions whose
//! operands are resolved to slots of one register file.
//!
//! Every register (of every type), every immediate, every special register (`%tid.x`, …) and
//! every `.param` variable of a call sequence gets one 64-bit slot; an instruction names slots by
//! index, so running it needs no lookup, allocation or string handling. Immediates live in slots
//! written once per launch. `.func`s are compiled once each, into the same array, with their own
//! slots (recursion is refused, so a frame never needs saving). Anything the interpreter cannot
//! run exactly is refused here, as [`DecodeError::Unsupported`], naming the instruction and line —
//! never a wrong answer later.

use std::collections::HashMap;
use std::ops::Range;

use thiserror::Error;

use crate::body::{Instruction, Operand, Statement, parse_body};
use crate::error::{ParseError, ParseErrorKind, excerpt};
use crate::lexer::FloatValue;
use crate::line_index::LineIndex;
use crate::model::{Module, Param, ScalarType};

/// No slot (an absent operand or guard).
pub(crate) const NONE: u32 = u32::MAX;

/// Instruction flags.
pub(crate) const F_GUARD_NEG: u8 = 1;
pub(crate) const F_FTZ: u8 = 2;
pub(crate) const F_SAT: u8 = 4;
pub(crate) const F_NEG_C: u8 = 8;
pub(crate) const F_SIGNED: u8 = 16;
pub(crate) const F_X2: u8 = 32;
/// On a `setp`: the next instruction is `@p bra` (or `@!p bra`, with `F_BRANCH_NEG`) to `imm`,
/// fused so that the pair costs one dispatch.
pub(crate) const F_BRANCH: u8 = 64;
pub(crate) const F_BRANCH_NEG: u8 = 128;

/// Register slots a program may use; the interpreter's register file has exactly this many
/// (indices are 16-bit, so no access needs a bounds check).
pub(crate) const MAX_SLOTS: u32 = 65535;

/// Rounding modes (`k` or `imm` of float instructions).
pub(crate) const RN: u8 = 0;
pub(crate) const RZ: u8 = 1;
pub(crate) const RM: u8 = 2;
pub(crate) const RP: u8 = 3;

/// Float formats (`k`/`w` of conversions and half-precision arithmetic).
pub(crate) const FMT_F16: u8 = 0;
pub(crate) const FMT_BF16: u8 = 1;
pub(crate) const FMT_F32: u8 = 2;
pub(crate) const FMT_F64: u8 = 3;

/// Arithmetic kinds for the slow paths.
pub(crate) const AR_ADD: u8 = 0;
pub(crate) const AR_SUB: u8 = 1;
pub(crate) const AR_MUL: u8 = 2;
pub(crate) const AR_FMA: u8 = 3;
pub(crate) const AR_NEG: u8 = 4;
pub(crate) const AR_ABS: u8 = 5;

/// Comparisons of `setp`.
pub(crate) const CMP_EQ: u8 = 0;
pub(crate) const CMP_NE: u8 = 1;
pub(crate) const CMP_LT: u8 = 2;
pub(crate) const CMP_LE: u8 = 3;
pub(crate) const CMP_GT: u8 = 4;
pub(crate) const CMP_GE: u8 = 5;
/// Unordered float comparisons are the ordered code + `CMP_UNORDERED`.
pub(crate) const CMP_UNORDERED: u8 = 8;
pub(crate) const CMP_NUM: u8 = 16;
pub(crate) const CMP_NAN: u8 = 17;

/// What an instruction does. Widths, signedness, rounding and flags live in [`Inst`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Op {
    Mov,
    MovMask,
    Add,
    Sub,
    MulLo,
    MulHi,
    MulWide,
    Mad,
    MadWide,
    Div,
    Rem,
    Min,
    Max,
    NegI,
    AbsI,
    And,
    Or,
    Xor,
    Not,
    Shl,
    Shr,
    SetpI,
    SetpF32,
    SetpF64,
    Selp,
    AddF32,
    SubF32,
    MulF32,
    FmaF32,
    ArithF32Dir,
    DivF32,
    NegF32,
    AbsF32,
    MinF32,
    MaxF32,
    SqrtF32,
    RsqrtF32,
    RcpF32,
    Ex2F32,
    Lg2F32,
    SinF32,
    CosF32,
    TanhF32,
    AddF64,
    SubF64,
    MulF64,
    FmaF64,
    DivF64,
    NegF64,
    AbsF64,
    MinF64,
    MaxF64,
    SqrtF64,
    RsqrtF64,
    RcpF64,
    Half,
    CvtInt,
    CvtIntToFloat,
    CvtFloatToInt,
    CvtFloat,
    LdGlobal,
    LdGlobalV,
    StGlobal,
    StGlobalV,
    LdKParam,
    Pack,
    Unpack,
    Bra,
    Call,
    Ret,
}

/// One pre-decoded instruction (40 bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inst {
    pub(crate) op: Op,
    /// Width in bits for integer ops; size in bytes for memory ops; a format for conversions.
    pub(crate) w: u8,
    /// A sub-kind: comparison, rounding mode, source format, arithmetic kind.
    pub(crate) k: u8,
    /// `F_*` flags.
    pub(crate) f: u8,
    /// Guard predicate slot, or [`NONE`].
    pub(crate) guard: u32,
    pub(crate) d: u32,
    pub(crate) a: u32,
    pub(crate) b: u32,
    pub(crate) c: u32,
    pub(crate) e: u32,
    /// Address offset, branch target, a second width, or a `setp` combining operation.
    pub(crate) imm: i64,
}

impl Inst {
    fn new(op: Op) -> Self {
        Self {
            op,
            w: 0,
            k: 0,
            f: 0,
            guard: NONE,
            d: NONE,
            a: NONE,
            b: NONE,
            c: NONE,
            e: NONE,
            imm: 0,
        }
    }
}

/// Where an instruction came from, for diagnostics.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    pub(crate) text: String,
    pub(crate) line: u32,
}

/// Slots of the special registers, in this order: `%tid`, `%ntid`, `%ctaid`, `%nctaid`, each
/// `.x .y .z`.
pub(crate) const SPECIAL_SLOTS: u32 = 12;

/// A kernel ready to run: pre-decoded once, launched any number of times.
#[derive(Debug, Clone)]
pub struct Program {
    pub(crate) insts: Vec<Inst>,
    pub(crate) sites: Vec<Site>,
    pub(crate) lanes: Vec<u32>,
    pub(crate) consts: Vec<(u32, u64)>,
    pub(crate) num_regs: usize,
    pub(crate) entry_pc: u32,
    pub(crate) entry: String,
    pub(crate) params: Vec<(usize, usize)>,
    pub(crate) param_bytes: usize,
    /// Deepest chain of nested calls.
    pub(crate) max_depth: usize,
}

impl Program {
    /// The entry point's name.
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// `(offset, size)` of every kernel parameter in the argument packet, as this program reads
    /// them: each parameter at the next multiple of its alignment (the C rule CUDA uses).
    pub fn param_layout(&self) -> &[(usize, usize)] {
        &self.params
    }

    /// Bytes of argument packet the program reads.
    pub fn param_bytes(&self) -> usize {
        self.param_bytes
    }

    /// Number of pre-decoded instructions (entry and called functions).
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    /// Whether the program has no instruction.
    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }

    /// Number of 64-bit register slots a thread uses.
    pub fn register_slots(&self) -> usize {
        self.num_regs
    }
}

/// Why a module cannot be turned into a [`Program`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The text is not valid PTX (including undeclared names and malformed operands).
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// Valid PTX that the interpreter does not run.
    #[error(
        "entry `{entry}`: line {line}: `{instruction}` is not supported by the emulator: {reason}"
    )]
    Unsupported {
        /// The entry being decoded.
        entry: String,
        /// The instruction (or directive) as written.
        instruction: String,
        /// Its 1-based line.
        line: u32,
        /// Why.
        reason: &'static str,
    },
}

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
    let (params, param_bytes) = kernel_layout(&found.params);
    let mut root = Scope::default();
    for (param, &(offset, size)) in found.params.iter().zip(&params) {
        root.names
            .insert(param.name.as_str(), Sym::KParam { offset, size });
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
enum Sym {
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
}

#[derive(Debug, Default)]
struct Scope<'a> {
    names: HashMap<&'a str, Sym>,
    /// `prefix<count>` ranges: prefix, count, first slot.
    ranges: Vec<(&'a str, u32, u32)>,
}

/// A function's instructions before linking; branch targets are function-relative.
struct Code<'a> {
    insts: Vec<Inst>,
    sites: Vec<Site>,
    /// Call instructions and the function index they call.
    calls: Vec<(usize, usize)>,
    _marker: std::marker::PhantomData<&'a ()>,
}

struct FuncSig {
    params: Vec<(u32, u32)>,
    returns: Vec<(u32, u32)>,
    callees: Vec<usize>,
}

struct Decoder<'a> {
    src: &'a str,
    module: &'a Module,
    entry: &'a str,
    lines: LineIndex,
    num_regs: u32,
    consts: HashMap<u64, u32>,
    lanes: Vec<u32>,
    sink: u32,
    /// Function index (into `module.functions`) → its slots, once referenced.
    sigs: HashMap<usize, FuncSig>,
    pending: Vec<usize>,
    /// Callees of the entry.
    entry_callees: Vec<usize>,
    /// The function being compiled; `None` for the entry.
    compiling: Option<usize>,
}

/// Parsed modifiers of one instruction.
#[derive(Debug, Default)]
struct Mods<'a> {
    types: Vec<ScalarType>,
    vec: u8,
    space: Option<&'a str>,
    rnd: Option<u8>,
    irnd: Option<u8>,
    ftz: bool,
    sat: bool,
    approx: bool,
    full: bool,
    lo: bool,
    hi: bool,
    wide: bool,
    cmp: Option<&'a str>,
    bool_op: i64,
    to: bool,
}

type DResult<T> = Result<T, DecodeError>;

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
        }
    }

    fn alloc(&mut self, count: u32) -> DResult<u32> {
        let base = self.num_regs;
        self.num_regs = base
            .checked_add(count)
            .filter(|&n| n <= MAX_SLOTS)
            .ok_or_else(|| self.unsupported_at(0, "registers", "more than 65535 register slots"))?;
        Ok(base)
    }

    fn line(&self, offset: usize) -> u32 {
        self.lines.line_col(self.src, offset).0
    }

    fn unsupported_at(&self, offset: usize, what: &str, reason: &'static str) -> DecodeError {
        DecodeError::Unsupported {
            entry: self.entry.to_owned(),
            instruction: excerpt(what),
            line: self.line(offset),
            reason,
        }
    }

    fn parse_error(&self, offset: usize, kind: ParseErrorKind) -> DecodeError {
        DecodeError::Parse(ParseError::new(self.src, offset, kind))
    }

    fn func_scope(&mut self, index: usize) -> DResult<(Range<usize>, Scope<'a>)> {
        let module = self.module;
        let Some(func) = module.functions.get(index) else {
            return Err(self.unsupported_at(0, "call", "unknown function"));
        };
        let Some(body) = func.body.clone() else {
            return Err(self.unsupported_at(func.offset, &func.name, "function has no body"));
        };
        let mut scope = Scope::default();
        if let Some(sig) = self.sigs.get(&index) {
            for (param, &(slot, size)) in func.params.iter().zip(&sig.params) {
                scope
                    .names
                    .insert(param.name.as_str(), Sym::ParamSlot { slot, size });
            }
            for (param, &(slot, size)) in func.returns.iter().zip(&sig.returns) {
                scope
                    .names
                    .insert(param.name.as_str(), Sym::ParamSlot { slot, size });
            }
        }
        Ok((body, scope))
    }

    /// The slots of function `name`, allocated (and its body queued) on first reference.
    fn signature(&mut self, name: &str, offset: usize) -> DResult<usize> {
        let module = self.module;
        let Some(index) = module
            .functions
            .iter()
            .position(|f| f.name == name && f.body.is_some())
        else {
            return Err(self.parse_error(
                offset,
                ParseErrorKind::Undeclared {
                    name: excerpt(name),
                },
            ));
        };
        if self.sigs.contains_key(&index) {
            return Ok(index);
        }
        let func = &module.functions[index];
        let slots = |list: &[Param], this: &mut Self| -> DResult<Vec<(u32, u32)>> {
            list.iter()
                .map(|p| {
                    let size = u32::try_from(p.size_bytes()).unwrap_or(u32::MAX);
                    if size > 8 {
                        return Err(this.unsupported_at(
                            p.offset,
                            &p.name,
                            "parameters larger than 8 bytes",
                        ));
                    }
                    Ok((this.alloc(1)?, size))
                })
                .collect()
        };
        let params = slots(&func.params, self)?;
        let returns = slots(&func.returns, self)?;
        self.sigs.insert(
            index,
            FuncSig {
                params,
                returns,
                callees: Vec::new(),
            },
        );
        self.pending.push(index);
        Ok(index)
    }

    /// Length of the longest call chain; refuses recursion.
    fn call_depth(&self) -> DResult<usize> {
        // Iterative DFS with colours over the call graph rooted at the entry.
        let mut depth: HashMap<usize, usize> = HashMap::new();
        let mut on_stack: HashMap<usize, bool> = HashMap::new();
        let mut best = 0usize;
        for &root in &self.entry_callees {
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            on_stack.insert(root, true);
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                let callees = self.sigs.get(&node).map_or(&[][..], |s| &s.callees[..]);
                if let Some(&callee) = callees.get(*next) {
                    *next += 1;
                    if on_stack.get(&callee).copied().unwrap_or(false) {
                        let name = self
                            .module
                            .functions
                            .get(callee)
                            .map_or("call", |f| f.name.as_str());
                        let offset = self.module.functions.get(callee).map_or(0, |f| f.offset);
                        return Err(self.unsupported_at(offset, name, "recursive calls"));
                    }
                    if !depth.contains_key(&callee) {
                        on_stack.insert(callee, true);
                        stack.push((callee, 0));
                    }
                } else {
                    let own = 1 + callees
                        .iter()
                        .map(|c| depth.get(c).copied().unwrap_or(0))
                        .max()
                        .unwrap_or(0);
                    depth.insert(node, own);
                    on_stack.insert(node, false);
                    stack.pop();
                }
            }
            best = best.max(depth.get(&root).copied().unwrap_or(0));
        }
        Ok(best)
    }

    fn const_slot(&mut self, bits: u64) -> DResult<u32> {
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
        let mut consts: Vec<(u32, u64)> = self.consts.drain().map(|(v, s)| (s, v)).collect();
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
        })
    }

    /// Compiles one body. The first scope holds the function's parameters.
    fn function(&mut self, body: Range<usize>, root: Scope<'a>) -> DResult<Code<'a>> {
        let statements = parse_body(self.src, body)?;
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
                    ty: _,
                    vector,
                    names,
                    offset,
                } => {
                    if vector.is_some() {
                        return Err(self.unsupported_at(offset, ".reg", "vector registers"));
                    }
                    for name in names {
                        let count = name.count.unwrap_or(1);
                        let base = self.alloc(count)?;
                        let Some(scope) = scopes.last_mut() else {
                            continue;
                        };
                        match name.count {
                            Some(n) => scope.ranges.push((name.name, n, base)),
                            None => {
                                scope.names.insert(name.name, Sym::Reg(base));
                            }
                        }
                    }
                }
                Statement::Param {
                    ty,
                    name,
                    array_len,
                    offset,
                    ..
                } => {
                    let size = ty.bytes().saturating_mul(array_len.unwrap_or(1));
                    if size > 8 {
                        return Err(self.unsupported_at(
                            offset,
                            name,
                            "parameters larger than 8 bytes",
                        ));
                    }
                    let slot = self.alloc(1)?;
                    if let Some(scope) = scopes.last_mut() {
                        scope.names.insert(name, Sym::ParamSlot { slot, size });
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

struct Ctx<'s, 'a, 'c> {
    scopes: &'s [Scope<'a>],
    code: &'c mut Code<'a>,
    fixups: &'c mut Vec<(usize, &'a str, usize)>,
    instruction: &'s Instruction<'a>,
}

fn lookup<'a>(scopes: &[Scope<'a>], name: &str) -> Option<Sym> {
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

enum Class {
    Int { bits: u8, signed: bool },
    F16,
    BF16,
    F16x2,
    BF16x2,
    F32,
    F64,
    Pred,
    Other,
}

fn class(ty: ScalarType) -> Class {
    use ScalarType::*;
    match ty {
        // The width is the type's own; bit types compute like unsigned integers.
        B8 | U8 | S8 | B16 | U16 | S16 | B32 | U32 | S32 | B64 | U64 | S64 => Class::Int {
            bits: (ty.bytes() * 8) as u8,
            signed: matches!(ty, S8 | S16 | S32 | S64),
        },
        F16 => Class::F16,
        BF16 => Class::BF16,
        F16x2 => Class::F16x2,
        BF16x2 => Class::BF16x2,
        F32 => Class::F32,
        F64 => Class::F64,
        Pred => Class::Pred,
        B128 => Class::Other,
    }
}

fn rnd_code(text: &str) -> Option<u8> {
    Some(match text {
        ".rn" | ".rni" => RN,
        ".rz" | ".rzi" => RZ,
        ".rm" | ".rmi" => RM,
        ".rp" | ".rpi" => RP,
        _ => return None,
    })
}

fn mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl<'a> Decoder<'a> {
    fn instruction(&mut self, ctx: &mut Ctx<'_, 'a, '_>) -> DResult<()> {
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
        self.emit(ctx, &m, &full)
            .map_err(|e| e.unwrap_or_else(|reason| unsupported(self, reason)))?;
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

    fn mods(&self, ins: &Instruction<'a>) -> Result<Mods<'a>, &'static str> {
        let mut m = Mods {
            vec: 1,
            ..Mods::default()
        };
        for &text in &ins.modifiers {
            if let Some(ty) = ScalarType::from_directive(text) {
                m.types.push(ty);
                continue;
            }
            if let Some(r) = rnd_code(text) {
                if text.len() == 4 {
                    m.irnd = Some(r);
                } else {
                    m.rnd = Some(r);
                }
                continue;
            }
            match text {
                ".v2" => m.vec = 2,
                ".v4" => m.vec = 4,
                ".global" | ".param" | ".local" | ".shared" | ".const" | ".tex" | ".generic" => {
                    m.space = Some(text);
                }
                ".ftz" => m.ftz = true,
                ".sat" => m.sat = true,
                ".approx" => m.approx = true,
                ".full" => m.full = true,
                ".lo" => m.lo = true,
                ".hi" => m.hi = true,
                ".wide" => m.wide = true,
                ".to" => m.to = true,
                ".and" => m.bool_op = 1,
                ".or" => m.bool_op = 2,
                ".xor" => m.bool_op = 3,
                ".eq" | ".ne" | ".lt" | ".le" | ".gt" | ".ge" | ".ls" | ".hs" | ".equ" | ".neu"
                | ".ltu" | ".leu" | ".gtu" | ".geu" | ".num" | ".nan" => {
                    m.cmp = Some(text);
                }
                // Cache and ordering hints change nothing for one thread at a time.
                ".nc" | ".ca" | ".cg" | ".cs" | ".lu" | ".cv" | ".wb" | ".wt" | ".uni"
                | ".volatile" | ".relaxed" | ".weak" | ".cta" | ".gpu" | ".sys" => {}
                _ if text.starts_with(".L1::") || text.starts_with(".L2::") => {}
                _ => return Err("this modifier"),
            }
        }
        if ins.opcode == "setp" && m.cmp.is_none() {
            if m.lo {
                m.cmp = Some(".lo");
            } else if m.hi {
                m.cmp = Some(".hi");
            }
        }
        Ok(m)
    }

    fn reg(&self, scopes: &[Scope<'a>], name: &str, offset: usize) -> DResult<u32> {
        match lookup(scopes, name) {
            Some(Sym::Reg(slot)) => Ok(slot),
            Some(_) => Err(self.parse_error(
                offset,
                ParseErrorKind::InvalidInstruction {
                    instruction: excerpt(name),
                    reason: "a parameter used as a register",
                },
            )),
            None => Err(self.parse_error(
                offset,
                ParseErrorKind::Undeclared {
                    name: excerpt(name),
                },
            )),
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

/// An emission failure: a full error, or just the reason something is unsupported (the caller
/// adds the instruction and line).
type EResult<T> = Result<T, Result<DecodeError, &'static str>>;

fn bad<T>(reason: &'static str) -> EResult<T> {
    Err(Err(reason))
}

impl<'a> Decoder<'a> {
    fn invalid(
        &self,
        ctx: &Ctx<'_, 'a, '_>,
        reason: &'static str,
    ) -> Result<DecodeError, &'static str> {
        Ok(self.parse_error(
            ctx.instruction.range.start,
            ParseErrorKind::InvalidInstruction {
                instruction: excerpt(&ctx.instruction.full_opcode()),
                reason,
            },
        ))
    }

    fn operand<'o>(&self, ctx: &'o Ctx<'_, 'a, '_>, i: usize) -> EResult<&'o Operand<'a>> {
        ctx.instruction
            .operands
            .get(i)
            .ok_or_else(|| self.invalid(ctx, "too few operands"))
    }

    fn expect_count(&self, ctx: &Ctx<'_, 'a, '_>, n: usize) -> EResult<()> {
        if ctx.instruction.operands.len() == n {
            Ok(())
        } else {
            Err(self.invalid(ctx, "wrong number of operands"))
        }
    }

    /// A destination register.
    fn dst(&self, ctx: &Ctx<'_, 'a, '_>, i: usize) -> EResult<u32> {
        match self.operand(ctx, i)? {
            Operand::Name("_") => Ok(self.sink),
            Operand::Name(name) => self
                .reg(ctx.scopes, name, ctx.instruction.range.start)
                .map_err(Ok),
            _ => Err(self.invalid(ctx, "the destination must be a register")),
        }
    }

    /// A source operand of type `ty`: a register, an immediate or a special register.
    fn src(&mut self, ctx: &Ctx<'_, 'a, '_>, i: usize, ty: ScalarType) -> EResult<u32> {
        let operand = self.operand(ctx, i)?.clone();
        self.src_operand(ctx, &operand, ty)
    }

    fn src_operand(
        &mut self,
        ctx: &Ctx<'_, 'a, '_>,
        operand: &Operand<'a>,
        ty: ScalarType,
    ) -> EResult<u32> {
        match operand {
            Operand::Name(name) => self
                .reg(ctx.scopes, name, ctx.instruction.range.start)
                .map_err(Ok),
            Operand::Int(_) | Operand::Float(_) => {
                let bits = imm_bits(operand, ty)
                    .ok_or_else(|| self.invalid(ctx, "an immediate that does not fit the type"))?;
                self.const_slot(bits).map_err(Ok)
            }
            Operand::Special(name, dim) => {
                let group = match *name {
                    "%tid" => 0,
                    "%ntid" => 1,
                    "%ctaid" => 2,
                    "%nctaid" => 3,
                    _ => return bad("this special register"),
                };
                Ok(group * 3 + u32::from(*dim))
            }
            _ => Err(self.invalid(ctx, "unexpected operand kind")),
        }
    }

    fn pred_src(&mut self, ctx: &Ctx<'_, 'a, '_>, i: usize) -> EResult<(u32, bool)> {
        match self.operand(ctx, i)?.clone() {
            Operand::Not(name) => Ok((
                self.reg(ctx.scopes, name, ctx.instruction.range.start)
                    .map_err(Ok)?,
                true,
            )),
            other => Ok((self.src_operand(ctx, &other, ScalarType::Pred)?, false)),
        }
    }

    fn push(&mut self, ctx: &mut Ctx<'_, 'a, '_>, inst: Inst) {
        ctx.code.insts.push(inst);
    }

    fn one_type(&self, ctx: &Ctx<'_, 'a, '_>, m: &Mods<'a>) -> EResult<ScalarType> {
        match m.types.as_slice() {
            [ty] => Ok(*ty),
            _ => Err(self.invalid(ctx, "expected exactly one type")),
        }
    }

    fn emit(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>, full: &str) -> EResult<()> {
        let opcode = ctx.instruction.opcode;
        if m.space.is_some() && !matches!(opcode, "ld" | "st" | "cvta") {
            return bad("this state space");
        }
        match opcode {
            "mov" => self.mov(ctx, m),
            "ld" => self.load(ctx, m),
            "st" => self.store(ctx, m),
            "cvta" => {
                let ty = self.one_type(ctx, m)?;
                if m.space != Some(".global") || ty.bytes() != 8 {
                    return bad("address conversion outside the global space");
                }
                self.expect_count(ctx, 2)?;
                if let Operand::Name(name) = self.operand(ctx, 1)?
                    && !matches!(lookup(ctx.scopes, name), Some(Sym::Reg(_)))
                {
                    return bad("addresses of variables");
                }
                let mut inst = Inst::new(Op::Mov);
                inst.d = self.dst(ctx, 0)?;
                inst.a = self.src(ctx, 1, ty)?;
                self.push(ctx, inst);
                Ok(())
            }
            "add" | "sub" | "mul" | "mad" | "fma" | "div" | "rem" | "min" | "max" => {
                self.arith(ctx, m, opcode)
            }
            "neg" | "abs" | "not" | "sqrt" | "rsqrt" | "rcp" | "ex2" | "lg2" | "sin" | "cos"
            | "tanh" => self.unary(ctx, m, opcode),
            "and" | "or" | "xor" | "shl" | "shr" => self.bitwise(ctx, m, opcode),
            "setp" => self.setp(ctx, m),
            "selp" => {
                let ty = self.one_type(ctx, m)?;
                self.expect_count(ctx, 4)?;
                let mut inst = Inst::new(Op::Selp);
                inst.d = self.dst(ctx, 0)?;
                inst.a = self.src(ctx, 1, ty)?;
                inst.b = self.src(ctx, 2, ty)?;
                inst.c = self.src(ctx, 3, ScalarType::Pred)?;
                self.push(ctx, inst);
                Ok(())
            }
            "cvt" => self.cvt(ctx, m),
            "bra" => {
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
            "ret" | "exit" => {
                self.push(ctx, Inst::new(Op::Ret));
                Ok(())
            }
            "call" => self.call(ctx),
            _ => {
                let _ = full;
                bad("this instruction")
            }
        }
    }

    fn mov(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        self.expect_count(ctx, 2)?;
        let bits = (ty.bytes() * 8) as u8;
        match (self.operand(ctx, 0)?.clone(), self.operand(ctx, 1)?.clone()) {
            (Operand::Vector(_), Operand::Vector(_)) => bad("vector to vector moves"),
            (Operand::Vector(parts), _) => {
                let lane_bits = lane_bits(bits, parts.len()).ok_or_else(|| {
                    self.invalid(ctx, "a vector that does not split the type evenly")
                })?;
                let start = self.lanes.len() as u32;
                for part in &parts {
                    let slot = match part {
                        Operand::Name("_") => self.sink,
                        Operand::Name(name) => self
                            .reg(ctx.scopes, name, ctx.instruction.range.start)
                            .map_err(Ok)?,
                        _ => return Err(self.invalid(ctx, "vector elements must be registers")),
                    };
                    self.lanes.push(slot);
                }
                let mut inst = Inst::new(Op::Unpack);
                inst.a = self.src(ctx, 1, ty)?;
                inst.b = start;
                inst.c = parts.len() as u32;
                inst.w = lane_bits;
                self.push(ctx, inst);
                Ok(())
            }
            (_, Operand::Vector(parts)) => {
                let lane_bits = lane_bits(bits, parts.len()).ok_or_else(|| {
                    self.invalid(ctx, "a vector that does not split the type evenly")
                })?;
                let lane_ty = int_type(lane_bits);
                let mut slots = Vec::with_capacity(parts.len());
                for part in &parts {
                    slots.push(self.src_operand(ctx, part, lane_ty)?);
                }
                let start = self.lanes.len() as u32;
                self.lanes.extend(slots);
                let mut inst = Inst::new(Op::Pack);
                inst.d = self.dst(ctx, 0)?;
                inst.b = start;
                inst.c = parts.len() as u32;
                inst.w = lane_bits;
                self.push(ctx, inst);
                Ok(())
            }
            (_, Operand::Name(name)) if !matches!(lookup(ctx.scopes, name), Some(Sym::Reg(_))) => {
                bad("addresses of variables, functions or parameters")
            }
            _ => {
                let mut inst = Inst::new(Op::MovMask);
                inst.d = self.dst(ctx, 0)?;
                inst.a = self.src(ctx, 1, ty)?;
                inst.w = if ty == ScalarType::Pred { 64 } else { bits };
                self.push(ctx, inst);
                Ok(())
            }
        }
    }

    fn load(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        self.expect_count(ctx, 2)?;
        let Operand::Address { base, offset } = self.operand(ctx, 1)?.clone() else {
            return Err(self.invalid(ctx, "the source of ld must be an address"));
        };
        let size = ty.bytes();
        if size > 8 {
            return bad("128-bit loads");
        }
        match m.space {
            Some(".param") => {
                if m.vec != 1 {
                    return bad("vector parameter loads");
                }
                let Some(base) = base else {
                    return Err(self.invalid(ctx, "a parameter load needs a parameter name"));
                };
                let d = self.dst(ctx, 0)?;
                match lookup(ctx.scopes, base) {
                    Some(Sym::KParam {
                        offset: at,
                        size: psize,
                    }) => {
                        let Ok(off) = usize::try_from(offset) else {
                            return bad("negative parameter offsets");
                        };
                        if off + size as usize > psize {
                            return Err(self.invalid(ctx, "a load past the end of a parameter"));
                        }
                        let mut inst = Inst::new(Op::LdKParam);
                        inst.d = d;
                        inst.imm = (at + off) as i64;
                        inst.w = size as u8;
                        self.push(ctx, inst);
                        Ok(())
                    }
                    Some(Sym::ParamSlot { slot, size: psize }) => {
                        if offset != 0 || size > psize.max(1) {
                            return bad("parameter accesses at an offset");
                        }
                        let mut inst = Inst::new(Op::MovMask);
                        inst.d = d;
                        inst.a = slot;
                        inst.w = (size * 8) as u8;
                        self.push(ctx, inst);
                        Ok(())
                    }
                    Some(Sym::Reg(_)) => bad("parameter-space loads through registers"),
                    None => Err(Ok(self.parse_error(
                        ctx.instruction.range.start,
                        ParseErrorKind::Undeclared {
                            name: excerpt(base),
                        },
                    ))),
                }
            }
            None | Some(".global") | Some(".generic") => {
                let a = self.address_base(ctx, base)?;
                if m.vec == 1 {
                    let mut inst = Inst::new(Op::LdGlobal);
                    inst.d = self.dst(ctx, 0)?;
                    inst.a = a;
                    inst.imm = offset;
                    inst.w = size as u8;
                    self.push(ctx, inst);
                } else {
                    let Operand::Vector(parts) = self.operand(ctx, 0)?.clone() else {
                        return Err(self.invalid(ctx, "a vector load needs a vector destination"));
                    };
                    if parts.len() != m.vec as usize {
                        return Err(self.invalid(ctx, "vector length differs from .v"));
                    }
                    let start = self.lanes.len() as u32;
                    for part in &parts {
                        let slot = match part {
                            Operand::Name("_") => self.sink,
                            Operand::Name(name) => self
                                .reg(ctx.scopes, name, ctx.instruction.range.start)
                                .map_err(Ok)?,
                            _ => return Err(self.invalid(ctx, "vector elements must be registers")),
                        };
                        self.lanes.push(slot);
                    }
                    let mut inst = Inst::new(Op::LdGlobalV);
                    inst.d = start;
                    inst.c = u32::from(m.vec);
                    inst.a = a;
                    inst.imm = offset;
                    inst.w = size as u8;
                    self.push(ctx, inst);
                }
                Ok(())
            }
            Some(_) => bad("memory other than global"),
        }
    }

    fn address_base(&mut self, ctx: &Ctx<'_, 'a, '_>, base: Option<&'a str>) -> EResult<u32> {
        match base {
            None => self.const_slot(0).map_err(Ok),
            Some(name) => match lookup(ctx.scopes, name) {
                Some(Sym::Reg(slot)) => Ok(slot),
                Some(_) => bad("addressing parameters as memory"),
                None => {
                    if self.module.functions.iter().any(|f| f.name == name) {
                        bad("addresses of functions")
                    } else {
                        bad("module variables")
                    }
                }
            },
        }
    }

    fn store(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        self.expect_count(ctx, 2)?;
        let Operand::Address { base, offset } = self.operand(ctx, 0)?.clone() else {
            return Err(self.invalid(ctx, "the destination of st must be an address"));
        };
        let size = ty.bytes();
        if size > 8 {
            return bad("128-bit stores");
        }
        match m.space {
            Some(".param") => {
                if m.vec != 1 {
                    return bad("vector parameter stores");
                }
                let Some(base) = base else {
                    return Err(self.invalid(ctx, "a parameter store needs a parameter name"));
                };
                match lookup(ctx.scopes, base) {
                    Some(Sym::ParamSlot { slot, size: psize }) => {
                        if offset != 0 || size > psize.max(1) {
                            return bad("parameter accesses at an offset");
                        }
                        let mut inst = Inst::new(Op::MovMask);
                        inst.d = slot;
                        inst.a = self.src(ctx, 1, ty)?;
                        inst.w = (size * 8) as u8;
                        self.push(ctx, inst);
                        Ok(())
                    }
                    Some(_) => bad("stores to kernel parameters"),
                    None => Err(Ok(self.parse_error(
                        ctx.instruction.range.start,
                        ParseErrorKind::Undeclared {
                            name: excerpt(base),
                        },
                    ))),
                }
            }
            None | Some(".global") | Some(".generic") => {
                let a = self.address_base(ctx, base)?;
                if m.vec == 1 {
                    let mut inst = Inst::new(Op::StGlobal);
                    inst.a = a;
                    inst.b = self.src(ctx, 1, ty)?;
                    inst.imm = offset;
                    inst.w = size as u8;
                    self.push(ctx, inst);
                } else {
                    let Operand::Vector(parts) = self.operand(ctx, 1)?.clone() else {
                        return Err(self.invalid(ctx, "a vector store needs a vector source"));
                    };
                    if parts.len() != m.vec as usize {
                        return Err(self.invalid(ctx, "vector length differs from .v"));
                    }
                    let mut slots = Vec::with_capacity(parts.len());
                    for part in &parts {
                        slots.push(self.src_operand(ctx, part, ty)?);
                    }
                    let start = self.lanes.len() as u32;
                    self.lanes.extend(slots);
                    let mut inst = Inst::new(Op::StGlobalV);
                    inst.a = a;
                    inst.b = start;
                    inst.c = u32::from(m.vec);
                    inst.imm = offset;
                    inst.w = size as u8;
                    self.push(ctx, inst);
                }
                Ok(())
            }
            Some(_) => bad("memory other than global"),
        }
    }

    fn arith(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>, opcode: &str) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        let three = matches!(opcode, "mad" | "fma");
        self.expect_count(ctx, if three { 4 } else { 3 })?;
        let mut inst = Inst::new(Op::Mov);
        match class(ty) {
            Class::Int { bits, signed } => {
                if m.sat || m.rnd.is_some() || m.ftz || m.approx || m.full {
                    return bad("these modifiers on integer arithmetic");
                }
                let wide = m.wide;
                inst.op = match opcode {
                    "add" => Op::Add,
                    "sub" => Op::Sub,
                    "mul" if wide => Op::MulWide,
                    "mul" if m.hi => Op::MulHi,
                    "mul" if m.lo => Op::MulLo,
                    "mad" if wide => Op::MadWide,
                    "mad" if m.lo => Op::Mad,
                    "div" => Op::Div,
                    "rem" => Op::Rem,
                    "min" => Op::Min,
                    "max" => Op::Max,
                    "mul" | "mad" => return Err(self.invalid(ctx, "needs .lo, .hi or .wide")),
                    _ => return bad("this integer operation"),
                };
                if wide && bits > 32 {
                    return Err(self.invalid(ctx, ".wide needs a 16- or 32-bit type"));
                }
                inst.w = bits;
                if signed {
                    inst.f |= F_SIGNED;
                }
                inst.d = self.dst(ctx, 0)?;
                inst.a = self.src(ctx, 1, ty)?;
                inst.b = self.src(ctx, 2, ty)?;
                if three {
                    let cty = if wide { int_type(bits * 2) } else { ty };
                    inst.c = self.src(ctx, 3, cty)?;
                }
            }
            Class::F32 => {
                let rnd = m.rnd;
                inst.op = match (opcode, rnd) {
                    ("add", None | Some(RN)) => Op::AddF32,
                    ("sub", None | Some(RN)) => Op::SubF32,
                    ("mul", None | Some(RN)) => Op::MulF32,
                    ("fma" | "mad", Some(RN)) => Op::FmaF32,
                    ("add" | "sub" | "mul" | "fma" | "mad", Some(r)) => {
                        inst.k = match opcode {
                            "add" => AR_ADD,
                            "sub" => AR_SUB,
                            "mul" => AR_MUL,
                            _ => AR_FMA,
                        };
                        inst.imm = i64::from(r);
                        Op::ArithF32Dir
                    }
                    ("fma" | "mad", None) => return Err(self.invalid(ctx, "needs a rounding mode")),
                    ("div", Some(RN)) if !m.approx && !m.full => Op::DivF32,
                    ("div", None) if m.approx || m.full => Op::DivF32,
                    ("div", _) => return bad("directed rounding of division"),
                    ("min", None) => Op::MinF32,
                    ("max", None) => Op::MaxF32,
                    _ => return bad("this float operation"),
                };
                self.float_flags(&mut inst, m);
                inst.d = self.dst(ctx, 0)?;
                inst.a = self.src(ctx, 1, ty)?;
                inst.b = self.src(ctx, 2, ty)?;
                if three {
                    inst.c = self.src(ctx, 3, ty)?;
                }
            }
            Class::F64 => {
                if m.ftz || m.sat {
                    return bad("these modifiers on f64");
                }
                inst.op = match (opcode, m.rnd) {
                    ("add", None | Some(RN)) => Op::AddF64,
                    ("sub", None | Some(RN)) => Op::SubF64,
                    ("mul", None | Some(RN)) => Op::MulF64,
                    ("fma" | "mad", Some(RN)) => Op::FmaF64,
                    ("div", Some(RN)) => Op::DivF64,
                    ("min", None) => Op::MinF64,
                    ("max", None) => Op::MaxF64,
                    _ => return bad("this f64 operation or rounding mode"),
                };
                inst.d = self.dst(ctx, 0)?;
                inst.a = self.src(ctx, 1, ty)?;
                inst.b = self.src(ctx, 2, ty)?;
                if three {
                    inst.c = self.src(ctx, 3, ty)?;
                }
            }
            Class::F16 | Class::BF16 | Class::F16x2 | Class::BF16x2 => {
                if m.ftz || m.sat || !matches!(m.rnd, None | Some(RN)) {
                    return bad("these modifiers on half-precision arithmetic");
                }
                inst.op = Op::Half;
                inst.k = match opcode {
                    "add" => AR_ADD,
                    "sub" => AR_SUB,
                    "mul" => AR_MUL,
                    "fma" if m.rnd == Some(RN) => AR_FMA,
                    _ => return bad("this half-precision operation"),
                };
                let (fmt, x2) = half_format(ty);
                inst.w = fmt;
                if x2 {
                    inst.f |= F_X2;
                }
                inst.d = self.dst(ctx, 0)?;
                inst.a = self.src(ctx, 1, ty)?;
                inst.b = self.src(ctx, 2, ty)?;
                if three {
                    inst.c = self.src(ctx, 3, ty)?;
                }
            }
            _ => return bad("this type"),
        }
        self.push(ctx, inst);
        Ok(())
    }

    fn float_flags(&self, inst: &mut Inst, m: &Mods<'a>) {
        if m.ftz {
            inst.f |= F_FTZ;
        }
        if m.sat {
            inst.f |= F_SAT;
        }
    }

    fn unary(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>, opcode: &str) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        self.expect_count(ctx, 2)?;
        let mut inst = Inst::new(Op::Mov);
        match class(ty) {
            Class::Int { bits, signed } => {
                inst.op = match opcode {
                    "neg" if signed => Op::NegI,
                    "abs" if signed => Op::AbsI,
                    "not" => Op::Not,
                    _ => return bad("this integer operation"),
                };
                inst.w = bits;
            }
            Class::Pred if opcode == "not" => {
                inst.op = Op::Not;
                inst.w = 1;
            }
            Class::F32 => {
                let approx = m.approx;
                inst.op = match (opcode, m.rnd) {
                    ("neg", None) => Op::NegF32,
                    ("abs", None) => Op::AbsF32,
                    ("sqrt", Some(RN)) => Op::SqrtF32,
                    ("sqrt", None) if approx => Op::SqrtF32,
                    ("rsqrt", None) if approx => Op::RsqrtF32,
                    ("rcp", Some(RN)) => Op::RcpF32,
                    ("rcp", None) if approx => Op::RcpF32,
                    ("ex2", None) if approx => Op::Ex2F32,
                    ("lg2", None) if approx => Op::Lg2F32,
                    ("sin", None) if approx => Op::SinF32,
                    ("cos", None) if approx => Op::CosF32,
                    ("tanh", None) if approx => Op::TanhF32,
                    _ => return bad("this f32 operation or rounding mode"),
                };
                self.float_flags(&mut inst, m);
            }
            Class::F64 => {
                if m.sat {
                    return bad("saturation on f64");
                }
                inst.op = match (opcode, m.rnd) {
                    ("neg", None) => Op::NegF64,
                    ("abs", None) => Op::AbsF64,
                    ("sqrt", Some(RN)) => Op::SqrtF64,
                    ("rsqrt", None) if m.approx => Op::RsqrtF64,
                    ("rcp", Some(RN)) => Op::RcpF64,
                    ("rcp", None) if m.approx => Op::RcpF64,
                    _ => return bad("this f64 operation or rounding mode"),
                };
            }
            Class::F16 | Class::BF16 | Class::F16x2 | Class::BF16x2
                if matches!(opcode, "neg" | "abs") && !m.ftz && m.rnd.is_none() =>
            {
                inst.op = Op::Half;
                inst.k = if opcode == "neg" { AR_NEG } else { AR_ABS };
                let (fmt, x2) = half_format(ty);
                inst.w = fmt;
                if x2 {
                    inst.f |= F_X2;
                }
            }
            _ => return bad("this type"),
        }
        inst.d = self.dst(ctx, 0)?;
        inst.a = self.src(ctx, 1, ty)?;
        self.push(ctx, inst);
        Ok(())
    }

    fn bitwise(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>, opcode: &str) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        self.expect_count(ctx, 3)?;
        let mut inst = Inst::new(Op::Mov);
        let (bits, signed) = match class(ty) {
            Class::Int { bits, signed } => (bits, signed),
            Class::Pred if matches!(opcode, "and" | "or" | "xor") => (1, false),
            _ => return bad("this type"),
        };
        inst.op = match opcode {
            "and" => Op::And,
            "or" => Op::Or,
            "xor" => Op::Xor,
            "shl" => Op::Shl,
            _ => Op::Shr,
        };
        inst.w = bits;
        if signed && opcode == "shr" {
            inst.f |= F_SIGNED;
        }
        inst.d = self.dst(ctx, 0)?;
        inst.a = self.src(ctx, 1, ty)?;
        let bty = if matches!(opcode, "shl" | "shr") {
            ScalarType::U32
        } else {
            ty
        };
        inst.b = self.src(ctx, 2, bty)?;
        self.push(ctx, inst);
        Ok(())
    }

    fn setp(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>) -> EResult<()> {
        let ty = self.one_type(ctx, m)?;
        let n = ctx.instruction.operands.len();
        if n != 3 && n != 4 {
            return Err(self.invalid(ctx, "wrong number of operands"));
        }
        if (n == 4) != (m.bool_op != 0) {
            return Err(self.invalid(ctx, "a combining predicate goes with .and, .or or .xor"));
        }
        let Some(cmp) = m.cmp else {
            return Err(self.invalid(ctx, "setp needs a comparison"));
        };
        let mut inst = Inst::new(Op::SetpI);
        match class(ty) {
            Class::Int { bits, signed } => {
                let (code, force_unsigned) = match cmp {
                    ".eq" => (CMP_EQ, false),
                    ".ne" => (CMP_NE, false),
                    ".lt" => (CMP_LT, false),
                    ".le" => (CMP_LE, false),
                    ".gt" => (CMP_GT, false),
                    ".ge" => (CMP_GE, false),
                    ".lo" => (CMP_LT, true),
                    ".ls" => (CMP_LE, true),
                    ".hi" => (CMP_GT, true),
                    ".hs" => (CMP_GE, true),
                    _ => return Err(self.invalid(ctx, "a float comparison on integers")),
                };
                inst.k = code;
                inst.w = bits;
                if signed && !force_unsigned {
                    inst.f |= F_SIGNED;
                }
            }
            Class::F32 | Class::F64 => {
                inst.op = if matches!(class(ty), Class::F32) {
                    Op::SetpF32
                } else {
                    Op::SetpF64
                };
                inst.k = match cmp {
                    ".eq" => CMP_EQ,
                    ".ne" => CMP_NE,
                    ".lt" => CMP_LT,
                    ".le" => CMP_LE,
                    ".gt" => CMP_GT,
                    ".ge" => CMP_GE,
                    ".equ" => CMP_EQ + CMP_UNORDERED,
                    ".neu" => CMP_NE + CMP_UNORDERED,
                    ".ltu" => CMP_LT + CMP_UNORDERED,
                    ".leu" => CMP_LE + CMP_UNORDERED,
                    ".gtu" => CMP_GT + CMP_UNORDERED,
                    ".geu" => CMP_GE + CMP_UNORDERED,
                    ".num" => CMP_NUM,
                    ".nan" => CMP_NAN,
                    _ => return Err(self.invalid(ctx, "an integer comparison on floats")),
                };
                if m.ftz {
                    inst.f |= F_FTZ;
                }
            }
            _ => return bad("comparisons of this type"),
        }
        match self.operand(ctx, 0)?.clone() {
            Operand::PredPair(p, q) => {
                let at = ctx.instruction.range.start;
                inst.d = self.reg(ctx.scopes, p, at).map_err(Ok)?;
                inst.e = if q == "_" {
                    NONE
                } else {
                    self.reg(ctx.scopes, q, at).map_err(Ok)?
                };
            }
            _ => inst.d = self.dst(ctx, 0)?,
        }
        inst.a = self.src(ctx, 1, ty)?;
        inst.b = self.src(ctx, 2, ty)?;
        if n == 4 {
            let (c, negated) = self.pred_src(ctx, 3)?;
            inst.c = c;
            if negated {
                inst.f |= F_NEG_C;
            }
            inst.imm = m.bool_op;
        }
        self.push(ctx, inst);
        Ok(())
    }

    fn cvt(&mut self, ctx: &mut Ctx<'_, 'a, '_>, m: &Mods<'a>) -> EResult<()> {
        let [dty, sty] = m.types.as_slice() else {
            return Err(self.invalid(ctx, "cvt needs a destination and a source type"));
        };
        let (dty, sty) = (*dty, *sty);
        self.expect_count(ctx, 2)?;
        let mut inst = Inst::new(Op::Mov);
        let fmt = |c: &Class| match c {
            Class::F16 => Some(FMT_F16),
            Class::BF16 => Some(FMT_BF16),
            Class::F32 => Some(FMT_F32),
            Class::F64 => Some(FMT_F64),
            _ => None,
        };
        let (dc, sc) = (class(dty), class(sty));
        match (&dc, &sc) {
            (
                Class::Int { bits: db, .. },
                Class::Int {
                    bits: sb,
                    signed: ss,
                },
            ) => {
                if m.sat || m.rnd.is_some() || m.irnd.is_some() || m.ftz {
                    return bad("these modifiers on integer conversions");
                }
                inst.op = Op::CvtInt;
                inst.w = *sb;
                inst.imm = i64::from(*db);
                if *ss {
                    inst.f |= F_SIGNED;
                }
            }
            (_, Class::Int { bits, signed }) => {
                let Some(df) = fmt(&dc) else {
                    return bad("this conversion");
                };
                if m.irnd.is_some() || m.ftz {
                    return bad("these modifiers on int-to-float conversions");
                }
                if df <= FMT_BF16 && m.rnd.is_some_and(|r| r != RN) {
                    return bad("directed rounding to half precision");
                }
                inst.op = Op::CvtIntToFloat;
                inst.w = *bits;
                inst.k = df;
                inst.imm = i64::from(m.rnd.unwrap_or(RN));
                if *signed {
                    inst.f |= F_SIGNED;
                }
                if m.sat {
                    inst.f |= F_SAT;
                }
            }
            (Class::Int { bits, signed }, _) => {
                let Some(sf) = fmt(&sc) else {
                    return bad("this conversion");
                };
                let Some(r) = m.irnd else {
                    return Err(
                        self.invalid(ctx, "float-to-int conversions need .rni/.rzi/.rmi/.rpi")
                    );
                };
                if m.rnd.is_some() {
                    return Err(self.invalid(ctx, "float-to-int conversions need integer rounding"));
                }
                inst.op = Op::CvtFloatToInt;
                inst.w = *bits;
                inst.k = sf;
                inst.imm = i64::from(r);
                if *signed {
                    inst.f |= F_SIGNED;
                }
                if m.ftz {
                    inst.f |= F_FTZ;
                }
            }
            _ => {
                let (Some(df), Some(sf)) = (fmt(&dc), fmt(&sc)) else {
                    return bad("this conversion");
                };
                if m.rnd.is_some() && m.irnd.is_some() {
                    return Err(self.invalid(ctx, "two rounding modes"));
                }
                let narrowing = df < sf || (df == FMT_BF16 && sf == FMT_F16);
                if m.irnd.is_some() && df != sf {
                    return Err(self.invalid(ctx, "integer rounding needs equal types"));
                }
                if df != sf && !narrowing && m.rnd.is_some() {
                    return Err(self.invalid(ctx, "a widening conversion takes no rounding"));
                }
                if narrowing && m.rnd.is_none() {
                    return Err(self.invalid(ctx, "a narrowing conversion needs a rounding mode"));
                }
                if narrowing && df <= FMT_BF16 && m.rnd != Some(RN) {
                    return bad("directed rounding to half precision");
                }
                if m.ftz && (df != FMT_F32 && sf != FMT_F32) {
                    return bad(".ftz without f32");
                }
                inst.op = Op::CvtFloat;
                inst.k = sf;
                inst.w = df;
                // imm: 0..3 rounding of a narrowing conversion; 4..7 integer rounding; 8 exact.
                inst.imm = match (m.rnd, m.irnd) {
                    (Some(r), _) => i64::from(r),
                    (None, Some(r)) => 4 + i64::from(r),
                    (None, None) => 8,
                };
                self.float_flags(&mut inst, m);
            }
        }
        inst.d = self.dst(ctx, 0)?;
        inst.a = self.src(ctx, 1, sty)?;
        self.push(ctx, inst);
        Ok(())
    }

    fn call(&mut self, ctx: &mut Ctx<'_, 'a, '_>) -> EResult<()> {
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
        for (arg, &(slot, size)) in args.iter().zip(&params) {
            let src = match arg {
                Operand::Name(name) => match lookup(ctx.scopes, name) {
                    Some(Sym::ParamSlot { slot, .. } | Sym::Reg(slot)) => slot,
                    Some(Sym::KParam { .. }) => return bad("passing kernel parameters directly"),
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
        for (ret, &(slot, _)) in returns.iter().zip(&rets) {
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

    fn current_function(&self) -> Option<usize> {
        self.compiling
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

fn lane_bits(total: u8, lanes: usize) -> Option<u8> {
    match lanes {
        2 | 4 => {
            let per = total / lanes as u8;
            (per >= 8 && per * lanes as u8 == total).then_some(per)
        }
        _ => None,
    }
}

fn int_type(bits: u8) -> ScalarType {
    match bits {
        8 => ScalarType::B8,
        16 => ScalarType::B16,
        32 => ScalarType::B32,
        _ => ScalarType::B64,
    }
}

fn half_format(ty: ScalarType) -> (u8, bool) {
    match ty {
        ScalarType::F16 => (FMT_F16, false),
        ScalarType::F16x2 => (FMT_F16, true),
        ScalarType::BF16 => (FMT_BF16, false),
        _ => (FMT_BF16, true),
    }
}

/// The bits of an immediate used as type `ty`.
fn imm_bits(operand: &Operand<'_>, ty: ScalarType) -> Option<u64> {
    let bits = (ty.bytes() * 8) as u8;
    match (operand, class(ty)) {
        (Operand::Int(v), Class::F32) => Some(u64::from((*v as i64 as f32).to_bits())),
        (Operand::Int(v), Class::F64) => Some((*v as i64 as f64).to_bits()),
        (Operand::Int(v), Class::Pred) => Some(u64::from(*v != 0)),
        (Operand::Int(v), _) => Some(v & mask(bits)),
        (Operand::Float(FloatValue::F32(f)), Class::F64) => Some(f64::from(*f).to_bits()),
        (Operand::Float(FloatValue::F32(f)), _) if bits == 32 => Some(u64::from(f.to_bits())),
        (Operand::Float(FloatValue::F64(f)), Class::F32) => Some(u64::from((*f as f32).to_bits())),
        (Operand::Float(FloatValue::F64(f)), _) if bits == 64 => Some(f.to_bits()),
        (Operand::Float(FloatValue::F64(f)), Class::F16) => {
            Some(u64::from(half::f16::from_f64(*f).to_bits()))
        }
        (Operand::Float(FloatValue::F64(f)), Class::BF16) => {
            Some(u64::from(half::bf16::from_f64(*f).to_bits()))
        }
        _ => None,
    }
}
