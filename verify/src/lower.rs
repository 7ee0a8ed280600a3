//! Lowering: the typed, resolved instructions of the entry (and, inlined at each call, of every
//! `.func` it calls) become the flat [`Body`] the analysis runs on.
//!
//! Every [`Opcode`] is matched here, with nothing left to a default: each has a stated abstract
//! semantics — an exact one ([`Kind::Int`], [`Kind::Setp`], [`Kind::Mem`], …), "some value"
//! ([`Kind::Opaque`], only for instructions that write registers and nothing else), or a refusal
//! ([`Kind::Refuse`]). A modifier an exact semantics does not account for makes the result
//! opaque, or, for an instruction that touches memory, a refusal; what the typed model does not
//! know at all is refused with its [`UnknownForm`](jitseam_ptx::inst::UnknownForm).
//!
//! Nothing here decides safety: the analysis rejects a refusal only if it reaches it.

use std::borrow::Cow;
use std::collections::HashMap;

use super::ir::{
    Access, AddrBase, Body, Cmp, Ins, IntOp, Kind, MemSpace, PredOp, Reg, SharedVar, Src, VarSpace,
};
use jitseam_ptx::FloatValue;
use jitseam_ptx::body::Variable;
use jitseam_ptx::inst::{
    self, BoolOp, Compare, Flag, Instruction, Name, Opcode, Operand, RegId, Space, Special, VarRef,
};
use jitseam_ptx::resolve::{Body as Resolved, RegOrigin, ResolvedEntry, ResolvedModule, Stmt};
use jitseam_ptx::{ScalarType, StateSpace};

/// Why lowering stopped: a 1-based line (0: none) and a reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LowerError {
    pub(crate) line: u32,
    pub(crate) text: String,
    pub(crate) reason: String,
}

/// Calls nested deeper than this are refused (they also rule out recursion).
const MAX_INLINE_DEPTH: usize = 8;
/// Instructions after inlining.
const MAX_INSTS: usize = 200_000;
/// Registers of one body.
const MAX_REGS: usize = 1 << 20;

/// What a resolved name is in the flattened body.
#[derive(Debug, Clone, Copy)]
enum Sym {
    Reg(Reg),
    /// A kernel parameter.
    KParam(u32),
    /// A variable the body can name (`.shared`, `.local`, a module table): its index in
    /// [`Body::shared`].
    Shared(u32),
    /// Anything else (a variable of another space, a function, a label): what it is.
    Other,
}

/// One body being lowered: the entry, or a `.func` inlined at a call.
struct Frame<'r> {
    body: &'r Resolved,
    /// The body's registers are `base..base + body.regs.len()`.
    base: Reg,
    /// What `Name::Param(i)` is.
    params: Vec<Sym>,
    /// The registers holding the return values (`Name::Return(i)`).
    returns: Vec<Reg>,
    /// The registers holding the body's own `.param` variables (`Name::LocalParam(i)`).
    local_params: Vec<Reg>,
    /// The size in bytes of each `.param`-space variable held in a register (the body's own,
    /// and a `.func`'s parameters and return values): an access wider than its variable reads
    /// or writes bytes that are not the variable's.
    param_bytes: HashMap<Reg, u64>,
    /// The body's `.shared` and `.local` variables, by their index in `body.vars`.
    shared: HashMap<u32, u32>,
    /// Inlined at a call: `ret` jumps past the call.
    inlined: bool,
}

impl Frame<'_> {
    fn reg(&self, id: RegId) -> Reg {
        self.base.saturating_add(id.0)
    }

    /// Whether an access of `bytes` at the start of the variable held in `r` stays inside it
    /// (always, for a register that holds no `.param` variable).
    fn within_param(&self, r: Reg, bytes: u64) -> bool {
        self.param_bytes.get(&r).is_none_or(|&size| bytes <= size)
    }

    fn is_pred(&self, id: RegId) -> bool {
        self.body.reg(id).is_some_and(|r| r.ty == ScalarType::Pred)
    }
}

pub(crate) struct Lowerer<'a> {
    src: &'a str,
    module: &'a ResolvedModule,
    entry: &'a ResolvedEntry,
    body: Body,
    depth: usize,
    /// Module-scope `.shared`, `.const` and `.global` variables, by their index in
    /// `module.vars` (a module may have thousands: a table, not a map).
    module_shared: Vec<Option<u32>>,
    /// The byte range of the entry instruction being lowered (`None` inside an inlined
    /// `.func` and outside instructions): recorded with every kind it lowers to.
    span: Option<(usize, usize)>,
}

impl<'a> Lowerer<'a> {
    pub(crate) fn new(src: &'a str, module: &'a ResolvedModule, entry: &'a ResolvedEntry) -> Self {
        // The module's own index of line starts: a body quotes its lines without reading the
        // whole text again (a module of many entries would cost its size once per entry).
        Lowerer {
            src,
            module,
            entry,
            body: Body::default(),
            depth: 0,
            module_shared: Vec::new(),
            span: None,
        }
    }

    pub(crate) fn line_of(&self, offset: usize) -> u32 {
        self.module.line(offset)
    }

    pub(crate) fn line_text(&self, line: u32) -> String {
        self.module
            .lines()
            .line_text(self.src, line)
            .trim()
            .to_owned()
    }

    fn err(&self, line: u32, reason: impl Into<String>) -> LowerError {
        LowerError {
            line,
            text: self.line_text(line),
            reason: reason.into(),
        }
    }

    fn fresh(&mut self) -> Reg {
        let r = self.body.num_regs;
        self.body.num_regs = self.body.num_regs.saturating_add(1);
        r
    }

    /// Registers for a body of `count` registers.
    fn frame_regs(&mut self, count: usize, line: u32) -> Result<Reg, LowerError> {
        if count > MAX_REGS {
            return Err(self.err(line, "too many registers"));
        }
        let base = self.body.num_regs;
        self.body.num_regs = base.saturating_add(count as u32);
        Ok(base)
    }

    pub(crate) fn lower(mut self) -> Result<Body, LowerError> {
        let Some(entry) = self.entry.entry_body() else {
            return Err(LowerError {
                line: 0,
                text: String::new(),
                reason: "the entry has no body".to_owned(),
            });
        };
        // Module-scope `.shared` variables are the block's as much as the entry's own; module
        // `.const` and `.global` variables are tables every thread may read.
        let module = self.module;
        self.module_shared = Vec::with_capacity(module.vars.len());
        for var in &module.vars {
            let space = match var.space {
                StateSpace::Shared => Some(VarSpace::Shared),
                StateSpace::Const => Some(VarSpace::Const),
                StateSpace::Global => Some(VarSpace::Global),
                StateSpace::Local => None,
            };
            let index = space.and_then(|space| self.declare_var(var, space));
            self.module_shared.push(index);
        }
        let base = self.frame_regs(entry.regs.len(), entry.line)?;
        let params = (0..self.entry_param_count())
            .map(|i| Sym::KParam(i as u32))
            .collect();
        let frame = Frame {
            body: entry,
            base,
            params,
            returns: Vec::new(),
            local_params: Vec::new(),
            param_bytes: HashMap::new(),
            shared: HashMap::new(),
            inlined: false,
        };
        self.function(frame)?;
        self.body.build_blocks();
        Ok(self.body)
    }

    fn entry_param_count(&self) -> usize {
        self.module
            .module
            .entries
            .get(self.entry.entry as usize)
            .map_or(0, |e| e.params.len())
    }

    /// Lowers one body. For an inlined `.func`, `ret` jumps to the instruction after it
    /// (patched at the end).
    fn function(&mut self, mut frame: Frame<'a>) -> Result<(), LowerError> {
        let body = frame.body;
        let mut labels: Vec<Option<usize>> = vec![None; body.labels.len()];
        let mut fixups: Vec<(usize, u32, u32)> = Vec::new();
        let mut returns: Vec<usize> = Vec::new();
        for statement in &body.statements {
            self.span = None;
            match statement {
                Stmt::Label(id) => {
                    if let Some(slot) = labels.get_mut(*id as usize) {
                        *slot = Some(self.body.insts.len());
                    }
                }
                Stmt::Param(id) => {
                    let r = self.fresh();
                    frame.local_params.push(r);
                    let bytes = body.params.get(*id as usize).map_or(0, |p| p.size_bytes());
                    frame.param_bytes.insert(r, bytes);
                }
                Stmt::Vars(start, end) => self.variables(&mut frame, *start, *end),
                // A call prototype declares a signature; only a call through it matters.
                Stmt::Directive { name, .. } if name == ".callprototype" => {}
                Stmt::Directive { name, line } => {
                    let reason = match name.as_str() {
                        ".shared" => "shared memory is not verified",
                        ".local" => "local memory is not verified",
                        ".const" | ".global" => "module variables are not verified",
                        _ => "this directive is not verified",
                    };
                    self.push_refuse(reason, None, *line);
                }
                Stmt::Instruction(ins) => {
                    if self.body.insts.len() > MAX_INSTS {
                        return Err(self.err(ins.line, "the body is too large"));
                    }
                    let guard = ins.guard.map(|g| (frame.reg(g.reg), g.negated));
                    let line = ins.line;
                    self.span = (!frame.inlined).then_some((ins.range.start, ins.range.end));
                    if let Some(form) = ins.unknown() {
                        let kind = Kind::Refuse {
                            reason: Cow::Owned(form.to_string()),
                            unknown: true,
                        };
                        self.push(kind, guard, line);
                        continue;
                    }
                    match ins.opcode {
                        Opcode::Bra => match ins.operands.first() {
                            Some(Operand::Name(Name::Label(label))) => {
                                fixups.push((self.body.insts.len(), *label, line));
                                self.push(Kind::Bra { target: 0 }, guard, line);
                            }
                            _ => {
                                self.push_refuse("indirect branches are not verified", guard, line)
                            }
                        },
                        Opcode::Ret if frame.inlined => {
                            returns.push(self.body.insts.len());
                            self.push(Kind::Bra { target: 0 }, guard, line);
                        }
                        Opcode::Ret | Opcode::Exit => self.push(Kind::Ret, guard, line),
                        Opcode::Call => self.call(&frame, ins, guard)?,
                        _ => {
                            let kinds = self.instruction(&frame, ins);
                            for kind in kinds {
                                self.push(kind, guard, line);
                            }
                        }
                    }
                }
            }
        }
        for (at, label, line) in fixups {
            let Some(target) = labels.get(label as usize).copied().flatten() else {
                return Err(self.err(line, "a branch to a label outside its body"));
            };
            if let Some(ins) = self.body.insts.get_mut(at) {
                ins.kind = Kind::Bra { target };
            }
        }
        let end = self.body.insts.len();
        for at in returns {
            if let Some(ins) = self.body.insts.get_mut(at) {
                ins.kind = Kind::Bra { target: end };
            }
        }
        Ok(())
    }

    /// A declaration of variables `start..end` of the frame's body.
    fn variables(&mut self, frame: &mut Frame<'a>, start: u32, end: u32) {
        let vars = frame
            .body
            .vars
            .get(start as usize..end as usize)
            .unwrap_or(&[]);
        let line = self.line_of(vars.first().map_or(0, |v| v.offset));
        let all = |space| !vars.is_empty() && vars.iter().all(|v| v.space == space);
        if all(StateSpace::Shared) && !frame.inlined {
            for (i, var) in vars.iter().enumerate() {
                if let Some(index) = self.declare_var(var, VarSpace::Shared) {
                    frame.shared.insert(start + i as u32, index);
                }
            }
            self.push(Kind::SharedDecl, None, line);
            return;
        }
        // A thread's `.local` frame (NVRTC's `__local_depot`, a `volatile` or address-taken
        // local): private to the thread, of known size, and a new one for each inlined call.
        if all(StateSpace::Local) {
            for (i, var) in vars.iter().enumerate() {
                if let Some(index) = self.declare_var(var, VarSpace::Local) {
                    frame.shared.insert(start + i as u32, index);
                }
            }
            return;
        }
        let reason = match vars.first().map(|v| v.space) {
            Some(StateSpace::Shared) => "shared memory is not verified",
            Some(StateSpace::Local) => "local memory is not verified",
            _ => "module variables are not verified",
        };
        self.push_refuse(reason, None, line);
    }

    /// Names a variable of `space`. A `.shared` or `.local` one that is initialized, one that
    /// is opaque, of unknown size (unless an `.extern` shared array), a module table defined in
    /// another module (`.extern`), or one with an alignment that is not a power of two is not
    /// named: an access through it stays unattributed here.
    fn declare_var(&mut self, var: &Variable, space: VarSpace) -> Option<u32> {
        let bytes = var.size_bytes();
        let align = var.alignment();
        let shared = space == VarSpace::Shared;
        let table = matches!(space, VarSpace::Const | VarSpace::Global);
        if (var.init.is_some() && !table)
            || var.opaque
            || (bytes.is_none() && !(shared && var.external))
            || (table && var.external)
            || !align.is_power_of_two()
        {
            return None;
        }
        // The decoder places every `.extern` array with the dynamic ones (sized by the launch),
        // whether or not it is written with a size: so is it bounded here.
        let index = self.body.shared.len() as u32;
        self.body.shared.push(SharedVar {
            name: var.name.clone(),
            bytes: if var.external { None } else { bytes },
            align,
            space,
        });
        Some(index)
    }

    fn push(&mut self, kind: Kind, guard: Option<(Reg, bool)>, line: u32) {
        let site = self.body.sites.len() as u32;
        self.body.sites.push(self.line_text(line));
        self.body.spans.push(self.span);
        self.body.insts.push(Ins {
            kind,
            guard,
            line,
            site,
        });
    }

    fn push_refuse(&mut self, reason: &'static str, guard: Option<(Reg, bool)>, line: u32) {
        self.push(refuse(reason), guard, line);
    }

    fn sym(&self, frame: &Frame<'_>, name: Name) -> Sym {
        match name {
            Name::Reg(r) => Sym::Reg(frame.reg(r)),
            Name::Param(i) => frame.params.get(i as usize).copied().unwrap_or(Sym::Other),
            Name::Return(i) => frame
                .returns
                .get(i as usize)
                .map_or(Sym::Other, |&r| Sym::Reg(r)),
            Name::LocalParam(i) => frame
                .local_params
                .get(i as usize)
                .map_or(Sym::Other, |&r| Sym::Reg(r)),
            Name::Var(VarRef::Body(v)) => {
                frame.shared.get(&v).map_or(Sym::Other, |&s| Sym::Shared(s))
            }
            Name::Var(VarRef::Module(v)) => self
                .module_shared
                .get(v as usize)
                .copied()
                .flatten()
                .map_or(Sym::Other, Sym::Shared),
            Name::Func(_) | Name::Label(_) => Sym::Other,
        }
    }

    fn call(
        &mut self,
        frame: &Frame<'a>,
        ins: &Instruction,
        guard: Option<(Reg, bool)>,
    ) -> Result<(), LowerError> {
        let line = ins.line;
        if guard.is_some() {
            self.push_refuse("predicated calls are not verified", guard, line);
            return Ok(());
        }
        let mut ops = ins.operands.iter().peekable();
        let rets: &[Operand] = match ops.peek() {
            Some(Operand::List(items)) => {
                ops.next();
                items
            }
            _ => &[],
        };
        let Some(Operand::Name(Name::Func(func))) = ops.next() else {
            self.push_refuse("indirect calls are not verified", guard, line);
            return Ok(());
        };
        let args: &[Operand] = match ops.next() {
            Some(Operand::List(items)) => items,
            None => &[],
            Some(_) => {
                self.push_refuse("calls through a prototype are not verified", guard, line);
                return Ok(());
            }
        };
        if ops.next().is_some() {
            self.push_refuse("calls through a prototype are not verified", guard, line);
            return Ok(());
        }
        let module = self.module;
        let entry = self.entry;
        let decl = module.module.functions.get(*func as usize);
        if decl.is_some_and(|d| d.is_assert_fail() && entry.func_body(*func).is_none()) {
            // CUDA's `assert`: the driver's `__assertfail` reports the message and traps, so
            // the thread (the whole launch) ends here, as at `trap`.
            self.push(Kind::Ret, guard, line);
            return Ok(());
        }
        let (Some(decl), Some(callee)) = (decl, entry.func_body(*func)) else {
            self.push_refuse(
                "calls to functions without a body are not verified",
                guard,
                line,
            );
            return Ok(());
        };
        if decl.params.len() != args.len() || decl.returns.len() != rets.len() {
            return Err(self.err(line, "argument count differs from the function's"));
        }
        if self.depth >= MAX_INLINE_DEPTH {
            self.push_refuse(
                "calls nested too deeply (or recursive) are not verified",
                guard,
                line,
            );
            return Ok(());
        }
        let base = self.frame_regs(callee.regs.len(), callee.line)?;
        let reg_of = |origin: RegOrigin| {
            callee
                .regs
                .iter()
                .position(|r| r.origin == origin)
                .map(|i| base.saturating_add(i as u32))
        };
        let mut params = Vec::with_capacity(decl.params.len());
        let mut param_bytes = HashMap::new();
        for (i, (p, arg)) in decl.params.iter().zip(args).enumerate() {
            let r = match reg_of(RegOrigin::Param(i as u32)) {
                Some(r) if p.reg => r,
                _ => {
                    let r = self.fresh();
                    param_bytes.insert(r, p.size_bytes());
                    r
                }
            };
            params.push(Sym::Reg(r));
            let w = (p.size_bytes().min(8) * 8) as u8;
            let Some(a) = self.src(frame, arg) else {
                self.push_refuse("this call argument is not verified", guard, line);
                return Ok(());
            };
            self.push(Kind::Mov { d: r, a, w }, None, line);
        }
        let mut returns = Vec::with_capacity(decl.returns.len());
        for (i, p) in decl.returns.iter().enumerate() {
            let r = match reg_of(RegOrigin::Return(i as u32)) {
                Some(r) if p.reg => r,
                _ => {
                    let r = self.fresh();
                    param_bytes.insert(r, p.size_bytes());
                    r
                }
            };
            returns.push(r);
        }
        let inner = Frame {
            body: callee,
            base,
            params,
            returns: returns.clone(),
            local_params: Vec::new(),
            param_bytes,
            shared: HashMap::new(),
            inlined: true,
        };
        self.depth += 1;
        let result = self.function(inner);
        self.depth -= 1;
        result?;
        for (ret, r) in rets.iter().zip(returns) {
            let d = match ret {
                Operand::Reg(d) => frame.reg(*d),
                Operand::Name(name) => match self.sym(frame, *name) {
                    Sym::Reg(d) => d,
                    _ => {
                        self.push_refuse("this call result is not verified", guard, line);
                        return Ok(());
                    }
                },
                _ => {
                    self.push_refuse("this call result is not verified", guard, line);
                    return Ok(());
                }
            };
            self.push(
                Kind::Mov {
                    d,
                    a: Src::Reg(r),
                    w: 64,
                },
                None,
                line,
            );
        }
        Ok(())
    }

    /// A source operand: a register, an immediate, or a thread-coordinate special register.
    fn src(&self, frame: &Frame<'_>, op: &Operand) -> Option<Src> {
        match op {
            Operand::Reg(r) => Some(Src::Reg(frame.reg(*r))),
            Operand::Name(name) => match self.sym(frame, *name) {
                Sym::Reg(r) => Some(Src::Reg(r)),
                _ => None,
            },
            Operand::Int(v) => Some(Src::Imm(*v)),
            Operand::Float(FloatValue::F32(f)) => Some(Src::Imm(u64::from(f.to_bits()))),
            Operand::Float(FloatValue::F64(f)) => Some(Src::Imm(f.to_bits())),
            Operand::Special(special) => {
                let (group, dim) = match special {
                    Special::Tid(d) => (0, d),
                    Special::Ntid(d) => (1, d),
                    Special::Ctaid(d) => (2, d),
                    Special::Nctaid(d) => (3, d),
                    // `warpSize`: the ISA's constant, as the emulator reads it.
                    Special::WarpSz => return Some(Src::Imm(32)),
                    _ => return None,
                };
                Some(Src::Special(group * 3 + dim.min(&2)))
            }
            _ => None,
        }
    }

    /// A destination register.
    fn dst(&self, frame: &Frame<'_>, op: &Operand) -> Option<Reg> {
        match op {
            Operand::Reg(r) => Some(frame.reg(*r)),
            Operand::Name(name) => match self.sym(frame, *name) {
                Sym::Reg(r) => Some(r),
                _ => None,
            },
            _ => None,
        }
    }

    /// A predicate operand, `%p` or `!%p`.
    fn pred(&self, frame: &Frame<'_>, op: &Operand) -> Option<(Reg, bool)> {
        match op {
            Operand::Reg(r) => Some((frame.reg(*r), false)),
            Operand::Not(r) => Some((frame.reg(*r), true)),
            _ => None,
        }
    }

    /// "Some value" in every register the instruction writes (a predicate's an unknown
    /// predicate), computed from everything it reads.
    fn opaque(&self, frame: &Frame<'_>, ins: &Instruction) -> Kind {
        let mut dests = Vec::new();
        let mut preds = Vec::new();
        for &d in ins.defs() {
            if frame.is_pred(d) {
                preds.push(frame.reg(d));
            } else {
                dests.push(frame.reg(d));
            }
        }
        let srcs = ins.uses().iter().map(|&r| Src::Reg(frame.reg(r))).collect();
        Kind::Opaque { dests, preds, srcs }
    }

    /// The abstract semantics of one instruction (calls, branches and returns aside): the
    /// kinds it lowers to, in order.
    fn instruction(&mut self, frame: &Frame<'_>, ins: &Instruction) -> Vec<Kind> {
        use Opcode as O;
        let m = &ins.mods;
        let ty = m.types.first().copied();
        let int = ty.and_then(int_class);
        let op = |i: usize| ins.operands.get(i);
        let operands_refused = || refuse("this instruction's operands are not verified");
        let kind = match ins.opcode {
            O::Mov => self.mov(frame, ins, int),
            O::Ld | O::Ldu => return self.load(frame, ins),
            O::St => self.store(frame, ins),
            O::Atom | O::Red => self.atomic(frame, ins),
            // A 32-bit `cvta` holds the low half of the address: no address at all.
            O::Cvta
                if m.space == Some(Space::Local)
                    && m.flags_within(&[Flag::To])
                    && int.is_some_and(|(w, _)| w == 64) =>
            {
                return self.local_cvta(frame, ins);
            }
            O::Cvta => {
                if m.space != Some(Space::Global) || !m.flags_within(&[Flag::To]) {
                    refuse("address conversions outside the global space are not verified")
                } else {
                    match (op(0).and_then(|d| self.dst(frame, d)), op(1)) {
                        (Some(d), Some(a @ Operand::Reg(_))) => match self.src(frame, a) {
                            // A 32-bit `cvta` holds the low half of the address.
                            Some(a) => Kind::Mov {
                                d,
                                a,
                                w: int.map_or(64, |(w, _)| w),
                            },
                            None => operands_refused(),
                        },
                        (Some(_), Some(Operand::Name(_))) => {
                            refuse("addresses of variables are not verified")
                        }
                        _ => operands_refused(),
                    }
                }
            }
            O::Cvt => {
                let (Some(dt), Some(st)) = (m.types.first(), m.types.get(1)) else {
                    return vec![operands_refused()];
                };
                match (int_class(*dt), int_class(*st)) {
                    (Some((dw, _)), Some((sw, ssigned)))
                        if m.flags_within(&[]) && m.rounding.is_none() =>
                    {
                        match (op(0).and_then(|d| self.dst(frame, d)), op(1)) {
                            (Some(d), Some(a)) => match self.src(frame, a) {
                                Some(a) => Kind::Cvt {
                                    d,
                                    a,
                                    dw,
                                    sw,
                                    ssigned,
                                },
                                None => operands_refused(),
                            },
                            _ => operands_refused(),
                        }
                    }
                    _ => self.opaque(frame, ins),
                }
            }
            O::Add
            | O::Sub
            | O::Mul
            | O::Mad
            | O::Div
            | O::Rem
            | O::Min
            | O::Max
            | O::And
            | O::Or
            | O::Xor
            | O::Shl
            | O::Shr
            | O::Not
            | O::Neg
            | O::Abs
            | O::Addc
            | O::Subc
            | O::Madc => return self.integer(frame, ins, int),
            O::Setp => self.setp(frame, ins, int),
            O::Selp => {
                let p = op(3).and_then(|p| self.pred(frame, p));
                match (int, p) {
                    (Some((w, _)), Some((p, neg))) => {
                        match (
                            op(0).and_then(|d| self.dst(frame, d)),
                            op(1).and_then(|a| self.src(frame, a)),
                            op(2).and_then(|b| self.src(frame, b)),
                        ) {
                            (Some(d), Some(a), Some(b)) => Kind::Selp { d, a, b, p, neg, w },
                            _ => operands_refused(),
                        }
                    }
                    _ => self.opaque(frame, ins),
                }
            }
            // `bar.red` writes its destination: not a no-op.
            O::Bar | O::Barrier if m.has(Flag::Red) => self.opaque(frame, ins),
            O::Bar | O::Barrier | O::Membar | O::Fence => Kind::Nop,
            O::Trap => Kind::Ret,
            // Register-only computations: floats, halves, bit fields, permutations, packed
            // video arithmetic. They write registers and nothing else, so "some value" of what
            // they read is their meaning for the proof.
            O::Fma
            | O::Rcp
            | O::Sqrt
            | O::Rsqrt
            | O::Sin
            | O::Cos
            | O::Lg2
            | O::Ex2
            | O::Tanh
            | O::Copysign
            | O::Testp
            | O::Bfe
            | O::Bfi
            | O::Bfind
            | O::Bmsk
            | O::Brev
            | O::Clz
            | O::Popc
            | O::Prmt
            | O::Shf
            | O::Lop3
            | O::Cnot
            | O::Szext
            | O::Fns
            | O::Mul24
            | O::Mad24
            | O::Sad
            | O::Dp2a
            | O::Dp4a
            | O::Set
            | O::Slct
            | O::Istypep
            | O::Movmatrix
            | O::Vabsdiff
            | O::Vabsdiff2
            | O::Vabsdiff4
            | O::Vadd
            | O::Vadd2
            | O::Vadd4
            | O::Vavrg2
            | O::Vavrg4
            | O::Vmad
            | O::Vmax
            | O::Vmax2
            | O::Vmax4
            | O::Vmin
            | O::Vmin2
            | O::Vmin4
            | O::Vset
            | O::Vset2
            | O::Vset4
            | O::Vshl
            | O::Vshr
            | O::Vsub
            | O::Vsub2
            | O::Vsub4 => self.opaque(frame, ins),
            // A warp shuffle writes its destination (another lane's value, so no function of
            // this thread's registers) and its predicate; a vote (`ballot`, `any`, `all`,
            // `uni`) and `activemask` write a mask or a predicate of the warp's lanes. None
            // touches memory.
            O::Shfl | O::Vote | O::Activemask => self.opaque(frame, ins),
            O::Tex
            | O::Tld4
            | O::Txq
            | O::Suld
            | O::Sust
            | O::Sured
            | O::Suq
            | O::Prefetch
            | O::Prefetchu
            | O::Cp
            | O::Ldmatrix
            | O::Stmatrix
            | O::Mma
            | O::Wmma
            | O::Wgmma
            | O::Tcgen05
            | O::Isspacep
            | O::Alloca
            | O::Match
            | O::Redux
            | O::Elect
            | O::Mapa
            | O::Getctarank
            | O::Discard
            | O::Applypriority
            | O::Createpolicy
            | O::Brkpt
            | O::Nanosleep
            | O::Pmevent
            | O::Griddepcontrol
            | O::Setmaxnreg
            | O::Stackrestore
            | O::Stacksave
            | O::Multimem
            | O::Tensormap
            | O::Clusterlaunchcontrol
            | O::Mbarrier
            | O::Brx => refuse("this instruction is not verified"),
            // Lowered by `function` before this match; listed so that the match is exhaustive.
            O::Bra | O::Ret | O::Exit | O::Call => refuse("this control transfer is not verified"),
            O::Unknown => refuse("this instruction is not verified"),
        };
        vec![kind]
    }

    /// `cvta.local d, a` and `cvta.to.local d, a`: `a` a register or a `.local` variable's
    /// name (its local-space address).
    fn local_cvta(&mut self, frame: &Frame<'_>, ins: &Instruction) -> Vec<Kind> {
        let operands_refused = || vec![refuse("this instruction's operands are not verified")];
        let to_generic = !ins.mods.has(Flag::To);
        let Some(d) = ins.operands.first().and_then(|d| self.dst(frame, d)) else {
            return operands_refused();
        };
        match ins.operands.get(1) {
            Some(Operand::Name(name)) => match self.sym(frame, *name) {
                Sym::Shared(var) if to_generic => {
                    let t = self.fresh();
                    vec![
                        Kind::SharedAddr { d: t, var },
                        Kind::LocalCvta {
                            d,
                            a: Src::Reg(t),
                            to_generic,
                        },
                    ]
                }
                _ => vec![refuse("addresses of variables are not verified")],
            },
            Some(a @ Operand::Reg(_)) => match self.src(frame, a) {
                Some(a) => vec![Kind::LocalCvta { d, a, to_generic }],
                None => operands_refused(),
            },
            _ => operands_refused(),
        }
    }

    fn mov(&self, frame: &Frame<'_>, ins: &Instruction, int: Option<(u8, bool)>) -> Kind {
        let (Some(d), Some(a)) = (ins.operands.first(), ins.operands.get(1)) else {
            return refuse("this instruction's operands are not verified");
        };
        let ty = ins.mods.types.first().copied();
        match (d, a, int) {
            (Operand::Reg(_), Operand::Name(name), Some((w, _))) => {
                match self.sym(frame, *name) {
                    Sym::Shared(var) if w == 64 => match self.dst(frame, d) {
                        Some(d) => Kind::SharedAddr { d, var },
                        None => refuse("this instruction's operands are not verified"),
                    },
                    // The address of a parameter, a variable or a function: an integer no
                    // access may use (a load through it, a call through it, is refused there).
                    _ => self.opaque(frame, ins),
                }
            }
            (Operand::Reg(_), Operand::Vector(_), _) => self.opaque(frame, ins),
            (Operand::Reg(_), _, Some((w, _))) => match (self.dst(frame, d), self.src(frame, a)) {
                (Some(d), Some(a)) => Kind::Mov { d, a, w },
                _ => refuse("this instruction's operands are not verified"),
            },
            (Operand::Reg(_), Operand::Reg(_), None) if ty == Some(ScalarType::Pred) => {
                match (self.dst(frame, d), self.pred(frame, a)) {
                    (Some(d), Some((a, a_neg))) => Kind::Pred {
                        op: PredOp::Mov,
                        d,
                        a,
                        a_neg,
                        b: None,
                    },
                    _ => refuse("this instruction's operands are not verified"),
                }
            }
            _ => self.opaque(frame, ins),
        }
    }

    /// The bytes one access moves: the element type's size times the vector length.
    fn access_bytes(ins: &Instruction, ty: Option<ScalarType>) -> Option<u32> {
        ty?.bytes().checked_mul(u32::from(ins.mods.vector))
    }

    /// The registers a load or atomic writes (every one of a vector, in order).
    fn dests(frame: &Frame<'_>, ins: &Instruction) -> Vec<Reg> {
        ins.defs().iter().map(|&d| frame.reg(d)).collect()
    }

    fn load(&mut self, frame: &Frame<'_>, ins: &Instruction) -> Vec<Kind> {
        let m = &ins.mods;
        if !m.flags_within(&[Flag::Acquire, Flag::Sc]) {
            return vec![refuse(
                "this memory instruction's modifiers are not verified",
            )];
        }
        let Some(Operand::Address { base, offset }) = ins.operands.get(1) else {
            return vec![refuse("this instruction's operands are not verified")];
        };
        let ty = m.types.first().copied();
        let Some(bytes) = Self::access_bytes(ins, ty) else {
            return vec![refuse("this instruction's operands are not verified")];
        };
        let dests = Self::dests(frame, ins);
        match m.space {
            Some(Space::Param) => self.load_param(frame, ins, *base, *offset, dests, ty),
            None
            | Some(Space::Generic | Space::Global | Space::Shared | Space::Local | Space::Const) => {
                let mut access =
                    self.mem(frame, Access::Load, *base, *offset, bytes, dests, m.space);
                // A reload from the thread's own frame (a spill, a small array of its own)
                // stays data: the numbers it reloads are the stored ones, whose relations a
                // fresh number loses all the same, and following them costs (`sinf`'s range
                // reduction shifts and adds the words it reloads).
                if let Kind::Mem { value, .. } = &mut access
                    && m.space != Some(Space::Local)
                {
                    *value = ty.and_then(loaded_value);
                }
                vec![access]
            }
            Some(_) => vec![refuse(
                "accesses outside the global state space are not verified",
            )],
        }
    }

    /// `ld.param`: a kernel parameter read by name (each register of a vector from its own
    /// offset), or a call sequence's or function's `.param` variable, which the analysis holds
    /// in a register.
    fn load_param(
        &mut self,
        frame: &Frame<'_>,
        ins: &Instruction,
        base: inst::AddrBase,
        offset: i64,
        dests: Vec<Reg>,
        ty: Option<ScalarType>,
    ) -> Vec<Kind> {
        let inst::AddrBase::Name(name) = base else {
            return vec![refuse(
                "parameter-space accesses through a register are not verified",
            )];
        };
        let Some(elem) = ty.map(ScalarType::bytes) else {
            return vec![refuse("this instruction's operands are not verified")];
        };
        let kind = match self.sym(frame, name) {
            Sym::KParam(index) => {
                // One read per register written; `_` slots of a vector are read by no one.
                let mut parts = Vec::new();
                let mut at = offset;
                let written: Vec<Option<RegId>> = match ins.operands.first() {
                    Some(Operand::Vector(items)) => items.iter().map(Operand::reg).collect(),
                    Some(Operand::Reg(r)) => vec![Some(*r)],
                    _ => return vec![refuse("this instruction's operands are not verified")],
                };
                for d in written {
                    if let Some(d) = d {
                        parts.push(Kind::LdKParam {
                            d: frame.reg(d),
                            index,
                            offset: at,
                            bytes: elem,
                        });
                        // Into a wider register the value is sign-extended (a signed type)
                        // or zero-extended (any other), as for every `ld`.
                        if let Some(ext) = self.param_extension(frame, d, ty) {
                            parts.push(ext);
                        }
                    }
                    at = at.saturating_add(i64::from(elem));
                }
                return parts;
            }
            Sym::Reg(r) if !frame.within_param(r, u64::from(elem)) => {
                refuse("parameter accesses past the end of a parameter are not verified")
            }
            Sym::Reg(r) if offset == 0 && dests.len() == 1 && ins.mods.vector == 1 => {
                match dests.first() {
                    Some(&d) => Kind::Mov {
                        d,
                        a: Src::Reg(r),
                        w: (elem.min(8) * 8) as u8,
                    },
                    None => refuse("this instruction's operands are not verified"),
                }
            }
            Sym::Reg(_) => refuse("parameter accesses at an offset are not verified"),
            Sym::Shared(_) | Sym::Other => {
                refuse("accesses to variables or parameters by name are not verified")
            }
        };
        vec![kind]
    }

    /// The extension of an integer `.param` value of type `ty` loaded into register `d` when
    /// the register is wider than the type: `cvt` from the type to the register's width.
    fn param_extension(&self, frame: &Frame<'_>, d: RegId, ty: Option<ScalarType>) -> Option<Kind> {
        let (sw, ssigned) = int_class(ty?)?;
        let dw = (frame.body.reg(d)?.ty.bytes().min(8) * 8) as u8;
        (dw > sw).then(|| Kind::Cvt {
            d: frame.reg(d),
            a: Src::Reg(frame.reg(d)),
            dw,
            sw,
            ssigned,
        })
    }

    fn store(&mut self, frame: &Frame<'_>, ins: &Instruction) -> Kind {
        let m = &ins.mods;
        if !m.flags_within(&[Flag::Release, Flag::Sc]) {
            return refuse("this memory instruction's modifiers are not verified");
        }
        let Some(Operand::Address { base, offset }) = ins.operands.first() else {
            return refuse("this instruction's operands are not verified");
        };
        let ty = m.types.first().copied();
        let Some(bytes) = Self::access_bytes(ins, ty) else {
            return refuse("this instruction's operands are not verified");
        };
        match m.space {
            Some(Space::Param) => {
                let inst::AddrBase::Name(name) = base else {
                    return refuse("parameter-space accesses through a register are not verified");
                };
                match self.sym(frame, *name) {
                    Sym::Reg(r) if !frame.within_param(r, u64::from(bytes)) => {
                        refuse("parameter accesses past the end of a parameter are not verified")
                    }
                    Sym::Reg(r) if *offset == 0 => {
                        match ins.operands.get(1).and_then(|a| self.src(frame, a)) {
                            Some(a) => Kind::Mov {
                                d: r,
                                a,
                                w: (bytes.min(8) * 8) as u8,
                            },
                            None => refuse("this instruction's operands are not verified"),
                        }
                    }
                    _ => refuse("stores to kernel parameters are not verified"),
                }
            }
            None | Some(Space::Generic | Space::Global | Space::Shared | Space::Local) => self.mem(
                frame,
                Access::Store,
                *base,
                *offset,
                bytes,
                Vec::new(),
                m.space,
            ),
            Some(_) => refuse("accesses outside the global state space are not verified"),
        }
    }

    fn atomic(&mut self, frame: &Frame<'_>, ins: &Instruction) -> Kind {
        let m = &ins.mods;
        let atom = ins.opcode == Opcode::Atom;
        let allowed = [
            Flag::Add,
            Flag::Min,
            Flag::Max,
            Flag::Inc,
            Flag::Dec,
            Flag::Exch,
            Flag::Cas,
            Flag::Acquire,
            Flag::Release,
            Flag::AcqRel,
            Flag::Sc,
        ];
        if !m.flags_within(&allowed) {
            return refuse("this memory instruction's modifiers are not verified");
        }
        let at = usize::from(atom);
        let Some(Operand::Address { base, offset }) = ins.operands.get(at) else {
            return refuse("this instruction's operands are not verified");
        };
        let Some(bytes) = Self::access_bytes(ins, m.types.last().copied()) else {
            return refuse("this instruction's operands are not verified");
        };
        let dests = if atom {
            Self::dests(frame, ins)
        } else {
            Vec::new()
        };
        match m.space {
            None | Some(Space::Generic | Space::Global | Space::Shared) => {
                self.mem(frame, Access::Atomic, *base, *offset, bytes, dests, m.space)
            }
            Some(_) => refuse("atomics outside the global state space are not verified"),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn mem(
        &self,
        frame: &Frame<'_>,
        access: Access,
        base: inst::AddrBase,
        offset: i64,
        bytes: u32,
        dests: Vec<Reg>,
        space: Option<Space>,
    ) -> Kind {
        let space = match space {
            Some(Space::Global) => MemSpace::Global,
            Some(Space::Shared) => MemSpace::Shared,
            Some(Space::Local) => MemSpace::Local,
            Some(Space::Const) => MemSpace::Const,
            _ => MemSpace::Generic,
        };
        let addr = match base {
            inst::AddrBase::Absolute => AddrBase::Absolute,
            inst::AddrBase::Reg(r) => AddrBase::Reg(frame.reg(r)),
            inst::AddrBase::Name(name) => match self.sym(frame, name) {
                // A variable named in an access of its own space.
                Sym::Shared(var)
                    if self
                        .body
                        .shared
                        .get(var as usize)
                        .is_some_and(|v| var_space_of(v.space) == space) =>
                {
                    AddrBase::Shared(var)
                }
                _ => {
                    return refuse("accesses to variables or parameters by name are not verified");
                }
            },
        };
        Kind::Mem {
            access,
            addr,
            offset,
            bytes,
            dests,
            value: None,
            shared: space == MemSpace::Shared,
            space,
        }
    }

    /// Integer arithmetic (and the predicate logic written with the same opcodes).
    fn integer(
        &mut self,
        frame: &Frame<'_>,
        ins: &Instruction,
        int: Option<(u8, bool)>,
    ) -> Vec<Kind> {
        use Opcode as O;
        let m = &ins.mods;
        let ty = m.types.first().copied();
        let Some((w, signed)) = int else {
            if ty == Some(ScalarType::Pred) {
                return vec![self.pred_op(frame, ins)];
            }
            return vec![self.opaque(frame, ins)];
        };
        let allowed: &[Flag] = match ins.opcode {
            O::Add | O::Sub | O::Addc | O::Subc => &[Flag::Cc],
            O::Mul => &[Flag::Lo, Flag::Hi, Flag::Wide],
            O::Mad | O::Madc => &[Flag::Lo, Flag::Hi, Flag::Wide, Flag::Cc],
            O::Min | O::Max => &[Flag::Relu],
            _ => &[],
        };
        if !m.flags_within(allowed) {
            return vec![self.opaque(frame, ins)];
        }
        let iop = match ins.opcode {
            O::Add | O::Addc => IntOp::Add,
            O::Sub | O::Subc => IntOp::Sub,
            O::Mul if m.has(Flag::Wide) => IntOp::MulWide,
            O::Mul if m.has(Flag::Hi) => IntOp::MulHi,
            O::Mul => IntOp::MulLo,
            O::Mad | O::Madc if m.has(Flag::Wide) => IntOp::MadWide,
            O::Mad | O::Madc if m.has(Flag::Hi) => IntOp::MadHi,
            O::Mad | O::Madc => IntOp::MadLo,
            O::Div => IntOp::Div,
            O::Rem => IntOp::Rem,
            O::Min => IntOp::Min,
            O::Max => IntOp::Max,
            O::And => IntOp::And,
            O::Or => IntOp::Or,
            O::Xor => IntOp::Xor,
            O::Shl => IntOp::Shl,
            O::Shr => IntOp::Shr,
            O::Not => IntOp::Not,
            O::Neg => IntOp::Neg,
            _ => IntOp::Abs,
        };
        let op = |i: usize| ins.operands.get(i);
        let src = |i: usize| op(i).map(|o| self.src(frame, o));
        let d = op(0).and_then(|d| self.dst(frame, d));
        let (Some(d), Some(Some(a))) = (d, src(1)) else {
            return vec![refuse("this instruction's operands are not verified")];
        };
        let (b, c) = match (src(2), src(3)) {
            (Some(None), _) | (_, Some(None)) => {
                return vec![refuse("this instruction's operands are not verified")];
            }
            (b, c) => (b.flatten(), c.flatten()),
        };
        let carry_in = ins.carry().reads;
        let relu = m.has(Flag::Relu);
        if !carry_in && !relu {
            return vec![Kind::Int {
                op: iop,
                d,
                a,
                b,
                c,
                w,
                signed,
            }];
        }
        // `addc`/`subc`/`madc` add (or subtract) the carry flag, a bit this analysis does not
        // track: the result is the operation's, plus a fresh value in [0, 1]. `.relu` is
        // `max(min(a, b), 0)` (or of `max`), signed.
        let t = self.fresh();
        let mut out = vec![Kind::Int {
            op: iop,
            d: t,
            a,
            b,
            c,
            w,
            signed,
        }];
        if carry_in {
            let bit = self.fresh();
            out.push(Kind::Fresh {
                d: bit,
                lo: 0,
                hi: 1,
                w,
            });
            out.push(Kind::Int {
                op: if iop == IntOp::Sub {
                    IntOp::Sub
                } else {
                    IntOp::Add
                },
                d,
                a: Src::Reg(t),
                b: Some(Src::Reg(bit)),
                c: None,
                w,
                signed,
            });
        } else {
            out.push(Kind::Int {
                op: IntOp::Max,
                d,
                a: Src::Reg(t),
                b: Some(Src::Imm(0)),
                c: None,
                w,
                signed: true,
            });
        }
        out
    }

    fn setp(&mut self, frame: &Frame<'_>, ins: &Instruction, int: Option<(u8, bool)>) -> Kind {
        let m = &ins.mods;
        let Some((w, signed)) = int else {
            return self.opaque(frame, ins);
        };
        let Some(cmp) = m.cmp else {
            return refuse("this instruction's operands are not verified");
        };
        if !m.flags_within(&[]) {
            return self.opaque(frame, ins);
        }
        let (cmp, force_unsigned) = match cmp {
            Compare::Eq => (Cmp::Eq, false),
            Compare::Ne => (Cmp::Ne, false),
            Compare::Lt => (Cmp::Lt, false),
            Compare::Le => (Cmp::Le, false),
            Compare::Gt => (Cmp::Gt, false),
            Compare::Ge => (Cmp::Ge, false),
            Compare::Lo => (Cmp::Lt, true),
            Compare::Ls => (Cmp::Le, true),
            Compare::Hi => (Cmp::Gt, true),
            Compare::Hs => (Cmp::Ge, true),
            _ => return self.opaque(frame, ins),
        };
        let op = |i: usize| ins.operands.get(i);
        let (d, d2) = match op(0) {
            Some(Operand::Pair(p, q)) => (frame.reg(*p), q.map(|q| frame.reg(q))),
            Some(Operand::Reg(p)) => (frame.reg(*p), None),
            _ => return refuse("this instruction's operands are not verified"),
        };
        let combine = match (m.bool_op, op(3)) {
            (Some(bop), Some(c)) => match self.pred(frame, c) {
                Some((r, neg)) => Some((
                    match bop {
                        BoolOp::And => PredOp::And,
                        BoolOp::Or => PredOp::Or,
                        BoolOp::Xor => PredOp::Xor,
                    },
                    r,
                    neg,
                )),
                None => return self.opaque(frame, ins),
            },
            (None, None) => None,
            _ => return refuse("this instruction's operands are not verified"),
        };
        match (
            op(1).and_then(|a| self.src(frame, a)),
            op(2).and_then(|b| self.src(frame, b)),
        ) {
            (Some(a), Some(b)) => Kind::Setp {
                d,
                d2,
                cmp,
                w,
                signed: signed && !force_unsigned,
                a,
                b,
                combine,
            },
            _ => refuse("this instruction's operands are not verified"),
        }
    }

    fn pred_op(&self, frame: &Frame<'_>, ins: &Instruction) -> Kind {
        let op = match ins.opcode {
            Opcode::And => PredOp::And,
            Opcode::Or => PredOp::Or,
            Opcode::Xor => PredOp::Xor,
            Opcode::Not => PredOp::Not,
            _ => return self.opaque(frame, ins),
        };
        let (Some(d), Some((a, a_neg))) = (
            ins.operands.first().and_then(|d| self.dst(frame, d)),
            ins.operands.get(1).and_then(|a| self.pred(frame, a)),
        ) else {
            return refuse("this instruction's operands are not verified");
        };
        let b = match ins.operands.get(2) {
            Some(o) => match self.pred(frame, o) {
                Some(b) => Some(b),
                None => return refuse("this instruction's operands are not verified"),
            },
            None => None,
        };
        Kind::Pred { op, d, a, a_neg, b }
    }
}

/// The state space an access of a variable of `space` names.
fn var_space_of(space: VarSpace) -> MemSpace {
    match space {
        VarSpace::Shared => MemSpace::Shared,
        VarSpace::Local => MemSpace::Local,
        VarSpace::Const => MemSpace::Const,
        VarSpace::Global => MemSpace::Global,
    }
}

fn refuse(reason: &'static str) -> Kind {
    Kind::Refuse {
        reason: Cow::Borrowed(reason),
        unknown: false,
    }
}

/// Integer class of a type: (bits, signed).
fn int_class(ty: ScalarType) -> Option<(u8, bool)> {
    use ScalarType::*;
    match ty {
        B8 | U8 | S8 | B16 | U16 | S16 | B32 | U32 | S32 | B64 | U64 | S64 => {
            Some(((ty.bytes() * 8) as u8, matches!(ty, S8 | S16 | S32 | S64)))
        }
        _ => None,
    }
}

/// The width and signedness of an integer a load of `ty` writes to each destination: 32- and
/// 64-bit integers (`.b` read unsigned); `None` for narrower or floating-point data.
fn loaded_value(ty: ScalarType) -> Option<(u8, bool)> {
    match ty {
        ScalarType::S32 => Some((32, true)),
        ScalarType::S64 => Some((64, true)),
        ScalarType::U32 | ScalarType::B32 => Some((32, false)),
        ScalarType::U64 | ScalarType::B64 => Some((64, false)),
        _ => None,
    }
}
