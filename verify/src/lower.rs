//! Lowering: parsed statements of the entry (and, inlined at each call, of every `.func` it
//! calls) become the flat [`Body`] the analysis runs on.
//!
//! Nothing here decides safety. Instructions that cannot be modeled become
//! [`Kind::Refuse`], which the analysis rejects only if it reaches them.

use std::collections::HashMap;

use super::ir::{Access, AddrBase, Body, Cmp, Ins, IntOp, Kind, PredOp, Reg, SharedVar, Src};
use jitseam_ptx::FloatValue;
use jitseam_ptx::body::Variable;
use jitseam_ptx::body::{Instruction, Operand, Statement, parse_body};
use jitseam_ptx::module_variables;
use jitseam_ptx::{Module, ScalarType, StateSpace};

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

#[derive(Debug, Clone, Copy)]
enum Sym {
    Reg(Reg),
    /// A kernel parameter.
    KParam(u32),
}

#[derive(Default)]
struct Scope<'a> {
    names: HashMap<String, Sym>,
    ranges: Vec<(&'a str, u32, Reg)>,
}

pub(crate) struct Lowerer<'a> {
    src: &'a str,
    module: &'a Module,
    line_starts: Vec<usize>,
    body: Body,
    depth: usize,
    /// `.shared` variables by name: their index in `body.shared`.
    shared_names: HashMap<String, u32>,
}

impl<'a> Lowerer<'a> {
    pub(crate) fn new(src: &'a str, module: &'a Module) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', src.as_bytes()).map(|i| i + 1));
        Lowerer {
            src,
            module,
            line_starts,
            body: Body::default(),
            depth: 0,
            shared_names: HashMap::new(),
        }
    }

    pub(crate) fn line_of(&self, offset: usize) -> u32 {
        let i = self.line_starts.partition_point(|&s| s <= offset);
        i as u32
    }

    pub(crate) fn line_text(&self, line: u32) -> String {
        let i = (line as usize).saturating_sub(1);
        let start = self.line_starts.get(i).copied().unwrap_or(0);
        let end = self
            .line_starts
            .get(i + 1)
            .copied()
            .unwrap_or(self.src.len());
        self.src.get(start..end).unwrap_or("").trim().to_owned()
    }

    fn err(&self, offset: usize, reason: impl Into<String>) -> LowerError {
        let line = self.line_of(offset);
        LowerError {
            line,
            text: self.line_text(line),
            reason: reason.into(),
        }
    }

    fn fresh(&mut self) -> Reg {
        let r = self.body.num_regs;
        self.body.num_regs += 1;
        r
    }

    pub(crate) fn entry(mut self, entry: &str) -> Result<Body, LowerError> {
        let Some(found) = self.module.entry(entry) else {
            return Err(LowerError {
                line: 0,
                text: String::new(),
                reason: format!("no entry `{entry}`"),
            });
        };
        let Some(range) = found.body.clone() else {
            return Err(self.err(found.offset, "the entry has no body"));
        };
        // Module-scope `.shared` variables are the block's as much as the entry's own; a module
        // whose variables do not parse names none (an access through one is then refused).
        if let Ok(vars) = module_variables(self.src) {
            for var in vars.iter().filter(|v| v.space == StateSpace::Shared) {
                self.declare_shared(var);
            }
        }
        let mut root = Scope::default();
        for (i, p) in found.params.iter().enumerate() {
            root.names.insert(p.name.clone(), Sym::KParam(i as u32));
        }
        self.function(range, root, None)?;
        self.body.build_blocks();
        Ok(self.body)
    }

    /// Lowers one body. For an inlined `.func`, `ret` jumps to the instruction after it
    /// (patched at the end).
    fn function(
        &mut self,
        range: std::ops::Range<usize>,
        root: Scope<'a>,
        inlined: Option<()>,
    ) -> Result<(), LowerError> {
        let statements = parse_body(self.src, range).map_err(|e| LowerError {
            line: e.line,
            text: self.line_text(e.line),
            reason: format!("{e}"),
        })?;
        let mut scopes = vec![root];
        let mut labels: HashMap<&'a str, usize> = HashMap::new();
        let mut fixups: Vec<(usize, &'a str, usize)> = Vec::new();
        let mut returns: Vec<usize> = Vec::new();
        for statement in statements {
            match statement {
                Statement::Open { .. } => scopes.push(Scope::default()),
                Statement::Close { offset } => {
                    if scopes.len() <= 1 {
                        return Err(self.err(offset, "unbalanced `}`"));
                    }
                    scopes.pop();
                }
                Statement::Label { name, .. } => {
                    labels.insert(name, self.body.insts.len());
                }
                Statement::Reg { names, .. } => {
                    for name in names {
                        let count = name.count.unwrap_or(1);
                        if count > 1 << 20 {
                            return Err(LowerError {
                                line: 0,
                                text: String::new(),
                                reason: "too many registers".to_owned(),
                            });
                        }
                        let base = self.body.num_regs;
                        self.body.num_regs = base.saturating_add(count);
                        if let Some(scope) = scopes.last_mut() {
                            match name.count {
                                Some(n) => scope.ranges.push((name.name, n, base)),
                                None => {
                                    scope.names.insert(name.name.to_owned(), Sym::Reg(base));
                                }
                            }
                        }
                    }
                }
                Statement::Param { name, .. } => {
                    let r = self.fresh();
                    if let Some(scope) = scopes.last_mut() {
                        scope.names.insert(name.to_owned(), Sym::Reg(r));
                    }
                }
                // A call prototype declares a signature; only a call through it matters.
                Statement::Directive {
                    name: ".callprototype",
                    ..
                } => {}
                Statement::Variables(vars)
                    if inlined.is_none()
                        && !vars.is_empty()
                        && vars.iter().all(|v| v.space == StateSpace::Shared) =>
                {
                    for var in &vars {
                        self.declare_shared(var);
                    }
                    let line = self.line_of(vars.first().map_or(0, |v| v.offset));
                    self.push(Kind::SharedDecl, None, line);
                }
                Statement::Variables(vars) => {
                    let reason = match vars.first().map(|v| v.space) {
                        Some(StateSpace::Shared) => "shared memory is not verified",
                        Some(StateSpace::Local) => "local memory is not verified",
                        _ => "module variables are not verified",
                    };
                    let line = self.line_of(vars.first().map_or(0, |v| v.offset));
                    self.push(Kind::Refuse { reason }, None, line);
                }
                Statement::Directive { name, offset, .. } => {
                    let reason = match name {
                        ".shared" => "shared memory is not verified",
                        ".local" => "local memory is not verified",
                        ".const" | ".global" => "module variables are not verified",
                        _ => "this directive is not verified",
                    };
                    let line = self.line_of(offset);
                    self.push(Kind::Refuse { reason }, None, line);
                }
                Statement::Instruction(ins) => {
                    if self.body.insts.len() > MAX_INSTS {
                        return Err(self.err(ins.range.start, "the body is too large"));
                    }
                    let line = self.line_of(ins.range.start);
                    let guard = match ins.guard {
                        Some(g) => match lookup(&scopes, g.pred) {
                            Some(Sym::Reg(r)) => Some((r, g.negated)),
                            _ => return Err(self.err(ins.range.start, "unknown guard predicate")),
                        },
                        None => None,
                    };
                    if ins.opcode == "bra" {
                        match ins.operands.first() {
                            Some(Operand::Name(label)) => {
                                fixups.push((self.body.insts.len(), label, ins.range.start));
                                self.push(Kind::Bra { target: 0 }, guard, line);
                            }
                            _ => self.push(
                                Kind::Refuse {
                                    reason: "indirect branches are not verified",
                                },
                                guard,
                                line,
                            ),
                        }
                        continue;
                    }
                    if matches!(ins.opcode, "ret" | "exit") && inlined.is_some() {
                        if ins.opcode == "ret" {
                            returns.push(self.body.insts.len());
                            self.push(Kind::Bra { target: 0 }, guard, line);
                        } else {
                            self.push(Kind::Ret, guard, line);
                        }
                        continue;
                    }
                    if ins.opcode == "call" {
                        self.call(&scopes, &ins, guard, line)?;
                        continue;
                    }
                    let kind = self.instruction(&scopes, &ins);
                    self.push(kind, guard, line);
                }
            }
        }
        for (at, label, offset) in fixups {
            let Some(&target) = labels.get(label) else {
                return Err(self.err(offset, format!("undeclared label `{label}`")));
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

    /// Names a `.shared` variable. One that is initialized, opaque, of unknown size without
    /// being `.extern`, or with an alignment that is not a power of two is not named: the
    /// decoder refuses such a module, and an access through it stays unattributed here.
    fn declare_shared(&mut self, var: &Variable) {
        let bytes = var.size_bytes();
        let align = var.alignment();
        if var.init.is_some()
            || var.opaque
            || (bytes.is_none() && !var.external)
            || !align.is_power_of_two()
        {
            self.shared_names.remove(&var.name);
            return;
        }
        // The decoder places every `.extern` array with the dynamic ones (sized by the launch),
        // whether or not it is written with a size: so is it bounded here.
        let index = self.body.shared.len() as u32;
        self.body.shared.push(SharedVar {
            name: var.name.to_owned(),
            bytes: if var.external { None } else { bytes },
            align,
        });
        self.shared_names.insert(var.name.to_owned(), index);
    }

    fn push(&mut self, kind: Kind, guard: Option<(Reg, bool)>, line: u32) {
        let site = self.body.sites.len() as u32;
        self.body.sites.push(self.line_text(line));
        self.body.insts.push(Ins {
            kind,
            guard,
            line,
            site,
        });
    }

    fn call(
        &mut self,
        scopes: &[Scope<'a>],
        ins: &Instruction<'a>,
        guard: Option<(Reg, bool)>,
        line: u32,
    ) -> Result<(), LowerError> {
        let refuse = |this: &mut Self, reason| {
            this.push(Kind::Refuse { reason }, guard, line);
            Ok(())
        };
        if guard.is_some() {
            return refuse(self, "predicated calls are not verified");
        }
        let mut ops = ins.operands.iter().peekable();
        let rets: Vec<Operand<'a>> = match ops.peek() {
            Some(Operand::List(items)) => {
                let items = items.clone();
                ops.next();
                items
            }
            _ => Vec::new(),
        };
        let Some(Operand::Name(name)) = ops.next() else {
            return refuse(self, "indirect calls are not verified");
        };
        let args: Vec<Operand<'a>> = match ops.next() {
            Some(Operand::List(items)) => items.clone(),
            None => Vec::new(),
            Some(_) => return refuse(self, "calls through a prototype are not verified"),
        };
        if ops.next().is_some() {
            return refuse(self, "calls through a prototype are not verified");
        }
        let module = self.module;
        let Some(func) = module
            .functions
            .iter()
            .find(|f| f.name == *name && f.body.is_some())
        else {
            return refuse(self, "calls to functions without a body are not verified");
        };
        if func.params.len() != args.len() || func.returns.len() != rets.len() {
            return Err(self.err(
                ins.range.start,
                "argument count differs from the function's",
            ));
        }
        if self.depth >= MAX_INLINE_DEPTH {
            return refuse(
                self,
                "calls nested too deeply (or recursive) are not verified",
            );
        }
        let Some(range) = func.body.clone() else {
            return refuse(self, "calls to functions without a body are not verified");
        };
        let mut root = Scope::default();
        let mut ret_regs = Vec::new();
        for (p, arg) in func.params.iter().zip(&args) {
            let r = self.fresh();
            root.names.insert(p.name.clone(), Sym::Reg(r));
            let w = (p.size_bytes().min(8) * 8) as u8;
            let a = match self.src(scopes, arg) {
                Some(a) => a,
                None => return refuse(self, "this call argument is not verified"),
            };
            self.push(Kind::Mov { d: r, a, w }, None, line);
        }
        for p in &func.returns {
            let r = self.fresh();
            root.names.insert(p.name.clone(), Sym::Reg(r));
            ret_regs.push(r);
        }
        self.depth += 1;
        let result = self.function(range, root, Some(()));
        self.depth -= 1;
        result?;
        for (ret, r) in rets.iter().zip(ret_regs) {
            let Operand::Name(name) = ret else {
                return refuse(self, "this call result is not verified");
            };
            let Some(Sym::Reg(d)) = lookup(scopes, name) else {
                return refuse(self, "this call result is not verified");
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

    fn src(&self, scopes: &[Scope<'a>], op: &Operand<'a>) -> Option<Src> {
        match op {
            Operand::Name(name) => match lookup(scopes, name)? {
                Sym::Reg(r) => Some(Src::Reg(r)),
                Sym::KParam(_) => None,
            },
            Operand::Int(v) => Some(Src::Imm(*v)),
            Operand::Float(FloatValue::F32(f)) => Some(Src::Imm(u64::from(f.to_bits()))),
            Operand::Float(FloatValue::F64(f)) => Some(Src::Imm(f.to_bits())),
            Operand::Special(name, dim) => {
                let group = match *name {
                    "%tid" => 0,
                    "%ntid" => 1,
                    "%ctaid" => 2,
                    "%nctaid" => 3,
                    _ => return None,
                };
                Some(Src::Special(group * 3 + dim.min(&2)))
            }
            _ => None,
        }
    }

    fn dst(&self, scopes: &[Scope<'a>], op: &Operand<'a>) -> Option<Reg> {
        match op {
            Operand::Name(name) => match lookup(scopes, name)? {
                Sym::Reg(r) => Some(r),
                Sym::KParam(_) => None,
            },
            _ => None,
        }
    }

    /// Every register named by an operand (vector lists included).
    fn regs_of(&self, scopes: &[Scope<'a>], op: &Operand<'a>) -> Option<Vec<Reg>> {
        match op {
            Operand::Vector(items) => items
                .iter()
                .map(|i| match i {
                    Operand::Name("_") => Some(Vec::new()),
                    other => self.dst(scopes, other).map(|r| vec![r]),
                })
                .collect::<Option<Vec<_>>>()
                .map(|v| v.into_iter().flatten().collect()),
            Operand::Name("_") => Some(Vec::new()),
            other => self.dst(scopes, other).map(|r| vec![r]),
        }
    }

    fn srcs_of(&self, scopes: &[Scope<'a>], op: &Operand<'a>) -> Vec<Src> {
        match op {
            Operand::Vector(items) => items.iter().filter_map(|i| self.src(scopes, i)).collect(),
            Operand::Not(name) => lookup(scopes, name)
                .and_then(|s| match s {
                    Sym::Reg(r) => Some(vec![Src::Reg(r)]),
                    Sym::KParam(_) => None,
                })
                .unwrap_or_default(),
            other => self.src(scopes, other).into_iter().collect(),
        }
    }

    fn instruction(&mut self, scopes: &[Scope<'a>], ins: &Instruction<'a>) -> Kind {
        match self.instruction_inner(scopes, ins) {
            Some(kind) => kind,
            None => Kind::Refuse {
                reason: "this instruction's operands are not verified",
            },
        }
    }

    fn instruction_inner(&mut self, scopes: &[Scope<'a>], ins: &Instruction<'a>) -> Option<Kind> {
        let m = Mods::parse(&ins.modifiers);
        let ops = &ins.operands;
        let op = |i: usize| ops.get(i);
        let ty = m.types.first().copied();
        let int = ty.and_then(int_class);
        Some(match ins.opcode {
            "mov" => {
                let (Some(d), Some(a)) = (op(0), op(1)) else {
                    return None;
                };
                match (d, a, int) {
                    (Operand::Name(_), _, Some((w, _))) if !matches!(a, Operand::Vector(_)) => {
                        if let Operand::Name(n) = a
                            && !matches!(lookup(scopes, n), Some(Sym::Reg(_)))
                            && w == 64
                            && let Some(&var) = self.shared_names.get(*n)
                        {
                            return Some(Kind::SharedAddr {
                                d: self.dst(scopes, d)?,
                                var,
                            });
                        }
                        if let Operand::Name(n) = a
                            && !matches!(lookup(scopes, n), Some(Sym::Reg(_)))
                        {
                            // The address of a function or variable: an integer no access may
                            // use (calling through it is refused at the call).
                            return Some(Kind::Opaque {
                                dests: vec![self.dst(scopes, d)?],
                                srcs: Vec::new(),
                            });
                        }
                        Kind::Mov {
                            d: self.dst(scopes, d)?,
                            a: self.src(scopes, a)?,
                            w,
                        }
                    }
                    (Operand::Name(_), _, None) if ty == Some(ScalarType::Pred) => Kind::Pred {
                        op: PredOp::Mov,
                        d: self.dst(scopes, d)?,
                        a: match self.src(scopes, a)? {
                            Src::Reg(r) => r,
                            _ => return Some(self.opaque(scopes, ins)),
                        },
                        a_neg: false,
                        b: None,
                    },
                    _ => self.opaque(scopes, ins),
                }
            }
            "ld" | "ldu" => {
                let Some(Operand::Address { base, offset }) = op(1) else {
                    return None;
                };
                let bytes = ty?.bytes().checked_mul(u32::from(m.vec))?;
                let dests = self.regs_of(scopes, op(0)?)?;
                match m.space {
                    Some(".param") => {
                        let base = (*base)?;
                        match lookup(scopes, base)? {
                            Sym::KParam(index) => Kind::LdKParam {
                                d: *dests.first()?,
                                index,
                                offset: *offset,
                                bytes,
                            },
                            Sym::Reg(r) if *offset == 0 && dests.len() == 1 => Kind::Mov {
                                d: *dests.first()?,
                                a: Src::Reg(r),
                                w: (bytes.min(8) * 8) as u8,
                            },
                            Sym::Reg(_) => Kind::Refuse {
                                reason: "parameter accesses at an offset are not verified",
                            },
                        }
                    }
                    None | Some(".global" | ".shared") => {
                        self.mem(scopes, Access::Load, *base, *offset, bytes, dests, m.space)?
                    }
                    Some(_) => Kind::Refuse {
                        reason: "accesses outside the global state space are not verified",
                    },
                }
            }
            "st" => {
                let Some(Operand::Address { base, offset }) = op(0) else {
                    return None;
                };
                let bytes = ty?.bytes().checked_mul(u32::from(m.vec))?;
                match m.space {
                    Some(".param") => {
                        let base = (*base)?;
                        match lookup(scopes, base)? {
                            Sym::Reg(r) if *offset == 0 => Kind::Mov {
                                d: r,
                                a: self.src(scopes, op(1)?)?,
                                w: (bytes.min(8) * 8) as u8,
                            },
                            _ => Kind::Refuse {
                                reason: "stores to kernel parameters are not verified",
                            },
                        }
                    }
                    None | Some(".global" | ".shared") => self.mem(
                        scopes,
                        Access::Store,
                        *base,
                        *offset,
                        bytes,
                        Vec::new(),
                        m.space,
                    )?,
                    Some(_) => Kind::Refuse {
                        reason: "accesses outside the global state space are not verified",
                    },
                }
            }
            "atom" | "red" => {
                let at = usize::from(ins.opcode == "atom");
                let Some(Operand::Address { base, offset }) = op(at) else {
                    return None;
                };
                let bytes = m.types.last()?.bytes().checked_mul(u32::from(m.vec))?;
                let dests = if at == 1 {
                    self.regs_of(scopes, op(0)?)?
                } else {
                    Vec::new()
                };
                match m.space {
                    None | Some(".global" | ".shared") => self.mem(
                        scopes,
                        Access::Atomic,
                        *base,
                        *offset,
                        bytes,
                        dests,
                        m.space,
                    )?,
                    Some(_) => Kind::Refuse {
                        reason: "atomics outside the global state space are not verified",
                    },
                }
            }
            "cvta" => {
                if m.space != Some(".global") {
                    return Some(Kind::Refuse {
                        reason: "address conversions outside the global space are not verified",
                    });
                }
                let a = op(1)?;
                if let Operand::Name(n) = a
                    && !matches!(lookup(scopes, n), Some(Sym::Reg(_)))
                {
                    return Some(Kind::Refuse {
                        reason: "addresses of variables are not verified",
                    });
                }
                Kind::Mov {
                    d: self.dst(scopes, op(0)?)?,
                    a: self.src(scopes, a)?,
                    w: 64,
                }
            }
            "cvt" => {
                let (Some(dt), Some(st)) = (m.types.first(), m.types.get(1)) else {
                    return None;
                };
                match (int_class(*dt), int_class(*st)) {
                    (Some((dw, _)), Some((sw, ssigned))) if !m.sat => Kind::Cvt {
                        d: self.dst(scopes, op(0)?)?,
                        a: self.src(scopes, op(1)?)?,
                        dw,
                        sw,
                        ssigned,
                    },
                    _ => self.opaque(scopes, ins),
                }
            }
            "add" | "sub" | "mul" | "mad" | "div" | "rem" | "min" | "max" | "and" | "or"
            | "xor" | "shl" | "shr" | "not" | "neg" | "abs" => {
                let Some((w, signed)) = int else {
                    if ty == Some(ScalarType::Pred) {
                        return self.pred_op(scopes, ins);
                    }
                    return Some(self.opaque(scopes, ins));
                };
                if m.sat || m.cc {
                    return Some(self.opaque(scopes, ins));
                }
                let iop = match ins.opcode {
                    "add" => IntOp::Add,
                    "sub" => IntOp::Sub,
                    "mul" if m.wide => IntOp::MulWide,
                    "mul" if m.hi => IntOp::MulHi,
                    "mul" => IntOp::MulLo,
                    "mad" if m.wide => IntOp::MadWide,
                    "mad" if m.hi => IntOp::MadHi,
                    "mad" => IntOp::MadLo,
                    "div" => IntOp::Div,
                    "rem" => IntOp::Rem,
                    "min" => IntOp::Min,
                    "max" => IntOp::Max,
                    "and" => IntOp::And,
                    "or" => IntOp::Or,
                    "xor" => IntOp::Xor,
                    "shl" => IntOp::Shl,
                    "shr" => IntOp::Shr,
                    "not" => IntOp::Not,
                    "neg" => IntOp::Neg,
                    _ => IntOp::Abs,
                };
                Kind::Int {
                    op: iop,
                    d: self.dst(scopes, op(0)?)?,
                    a: self.src(scopes, op(1)?)?,
                    b: match op(2) {
                        Some(o) => Some(self.src(scopes, o)?),
                        None => None,
                    },
                    c: match op(3) {
                        Some(o) => Some(self.src(scopes, o)?),
                        None => None,
                    },
                    w,
                    signed,
                }
            }
            "setp" => {
                let cmp = m.cmp.or(if m.hi { Some(".hi") } else { None })?;
                let Some((w, signed)) = int else {
                    return Some(self.opaque(scopes, ins));
                };
                let (d, d2) = match op(0)? {
                    Operand::PredPair(p, q) => (
                        self.dst(scopes, &Operand::Name(p))?,
                        if *q == "_" {
                            None
                        } else {
                            Some(self.dst(scopes, &Operand::Name(q))?)
                        },
                    ),
                    other => (self.dst(scopes, other)?, None),
                };
                let (cmp, force_unsigned) = match cmp {
                    ".eq" => (Cmp::Eq, false),
                    ".ne" => (Cmp::Ne, false),
                    ".lt" => (Cmp::Lt, false),
                    ".le" => (Cmp::Le, false),
                    ".gt" => (Cmp::Gt, false),
                    ".ge" => (Cmp::Ge, false),
                    ".lo" => (Cmp::Lt, true),
                    ".ls" => (Cmp::Le, true),
                    ".hi" => (Cmp::Gt, true),
                    ".hs" => (Cmp::Ge, true),
                    _ => return Some(self.opaque(scopes, ins)),
                };
                let combine = match (m.bool_op, op(3)) {
                    (Some(bop), Some(c)) => {
                        let (name, neg) = match c {
                            Operand::Not(n) => (*n, true),
                            Operand::Name(n) => (*n, false),
                            _ => return Some(self.opaque(scopes, ins)),
                        };
                        let Some(Sym::Reg(r)) = lookup(scopes, name) else {
                            return None;
                        };
                        Some((bop, r, neg))
                    }
                    (None, None) => None,
                    _ => return None,
                };
                Kind::Setp {
                    d,
                    d2,
                    cmp,
                    w,
                    signed: signed && !force_unsigned,
                    a: self.src(scopes, op(1)?)?,
                    b: self.src(scopes, op(2)?)?,
                    combine,
                }
            }
            "selp" => {
                let p = match op(3)? {
                    Operand::Name(n) => match lookup(scopes, n)? {
                        Sym::Reg(r) => (r, false),
                        Sym::KParam(_) => return None,
                    },
                    Operand::Not(n) => match lookup(scopes, n)? {
                        Sym::Reg(r) => (r, true),
                        Sym::KParam(_) => return None,
                    },
                    _ => return Some(self.opaque(scopes, ins)),
                };
                if int.is_none() {
                    return Some(self.opaque(scopes, ins));
                }
                Kind::Selp {
                    d: self.dst(scopes, op(0)?)?,
                    a: self.src(scopes, op(1)?)?,
                    b: self.src(scopes, op(2)?)?,
                    p: p.0,
                    neg: p.1,
                }
            }
            // `bar.red` writes its destination: not a no-op.
            "bar" | "barrier" if ins.modifiers.contains(&".red") => self.opaque(scopes, ins),
            "bar" | "barrier" | "membar" | "fence" | "pragma" => Kind::Nop,
            "trap" => Kind::Ret,
            "ret" | "exit" => Kind::Ret,
            "tex"
            | "tld4"
            | "suld"
            | "sust"
            | "sured"
            | "prefetch"
            | "prefetchu"
            | "cp"
            | "ldmatrix"
            | "stmatrix"
            | "mma"
            | "wmma"
            | "isspacep"
            | "cvta.to"
            | "alloca"
            | "vote"
            | "shfl"
            | "match"
            | "activemask"
            | "redux"
            | "elect"
            | "mapa"
            | "getctarank"
            | "discard"
            | "applypriority"
            | "createpolicy"
            | "brkpt"
            | "nanosleep"
            | "pmevent"
            | "griddepcontrol"
            | "setmaxnreg"
            | "stackrestore"
            | "stacksave"
            | "multimem"
            | "tensormap"
            | "clusterlaunchcontrol"
            | "st.async"
            | "red.async"
            | "mbarrier"
            | "bra.uni"
            | "brx" => Kind::Refuse {
                reason: "this instruction is not verified",
            },
            _ if ins
                .operands
                .iter()
                .any(|o| matches!(o, Operand::Address { .. })) =>
            {
                Kind::Refuse {
                    reason: "this memory instruction is not verified",
                }
            }
            _ => self.opaque(scopes, ins),
        })
    }

    fn pred_op(&mut self, scopes: &[Scope<'a>], ins: &Instruction<'a>) -> Option<Kind> {
        let pred = |o: &Operand<'a>| -> Option<(Reg, bool)> {
            match o {
                Operand::Name(n) => match lookup(scopes, n)? {
                    Sym::Reg(r) => Some((r, false)),
                    Sym::KParam(_) => None,
                },
                Operand::Not(n) => match lookup(scopes, n)? {
                    Sym::Reg(r) => Some((r, true)),
                    Sym::KParam(_) => None,
                },
                _ => None,
            }
        };
        let d = self.dst(scopes, ins.operands.first()?)?;
        let (a, a_neg) = pred(ins.operands.get(1)?)?;
        let b = match ins.operands.get(2) {
            Some(o) => Some(pred(o)?),
            None => None,
        };
        let op = match ins.opcode {
            "and" => PredOp::And,
            "or" => PredOp::Or,
            "xor" => PredOp::Xor,
            "not" => PredOp::Not,
            _ => return Some(self.opaque(scopes, ins)),
        };
        Some(Kind::Pred { op, d, a, a_neg, b })
    }

    #[allow(clippy::too_many_arguments)]
    fn mem(
        &mut self,
        scopes: &[Scope<'a>],
        access: Access,
        base: Option<&'a str>,
        offset: i64,
        bytes: u32,
        dests: Vec<Reg>,
        space: Option<&'a str>,
    ) -> Option<Kind> {
        let addr = match base {
            None => AddrBase::Absolute,
            Some(name) => match lookup(scopes, name) {
                Some(Sym::Reg(r)) => AddrBase::Reg(r),
                None if space == Some(".shared") && self.shared_names.contains_key(name) => {
                    AddrBase::Shared(self.shared_names.get(name).copied()?)
                }
                _ => {
                    return Some(Kind::Refuse {
                        reason: "accesses to variables or parameters by name are not verified",
                    });
                }
            },
        };
        Some(Kind::Mem {
            access,
            addr,
            offset,
            bytes,
            dests,
            space: space.map(|s| if s == ".shared" { ".shared" } else { ".global" }),
        })
    }

    fn opaque(&mut self, scopes: &[Scope<'a>], ins: &Instruction<'a>) -> Kind {
        let mut dests = Vec::new();
        let mut srcs = Vec::new();
        for (i, o) in ins.operands.iter().enumerate() {
            if i == 0 {
                match o {
                    Operand::PredPair(p, q) => {
                        for n in [p, q] {
                            if let Some(Sym::Reg(r)) = lookup(scopes, n) {
                                dests.push(r);
                            }
                        }
                    }
                    other => dests.extend(self.regs_of(scopes, other).unwrap_or_default()),
                }
            } else {
                srcs.extend(self.srcs_of(scopes, o));
            }
        }
        Kind::Opaque { dests, srcs }
    }
}

fn lookup(scopes: &[Scope<'_>], name: &str) -> Option<Sym> {
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
                for &(p, count, base) in scope.ranges.iter().rev() {
                    if p == prefix && index < count {
                        return Some(Sym::Reg(base.saturating_add(index)));
                    }
                }
            }
        }
    }
    None
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

#[derive(Default)]
struct Mods {
    types: Vec<ScalarType>,
    vec: u8,
    space: Option<&'static str>,
    cmp: Option<&'static str>,
    bool_op: Option<PredOp>,
    wide: bool,
    hi: bool,
    sat: bool,
    cc: bool,
}

impl Mods {
    fn parse(modifiers: &[&str]) -> Mods {
        let mut m = Mods {
            vec: 1,
            ..Mods::default()
        };
        for &t in modifiers {
            if let Some(ty) = ScalarType::from_directive(t) {
                m.types.push(ty);
                continue;
            }
            match t {
                ".v2" => m.vec = 2,
                ".v4" => m.vec = 4,
                ".v8" => m.vec = 8,
                ".global" => m.space = Some(".global"),
                ".param" => m.space = Some(".param"),
                ".shared" => m.space = Some(".shared"),
                ".local" => m.space = Some(".local"),
                ".const" => m.space = Some(".const"),
                ".tex" => m.space = Some(".tex"),
                ".generic" => m.space = None,
                ".wide" => m.wide = true,
                ".sat" => m.sat = true,
                ".cc" => m.cc = true,
                ".and" => m.bool_op = Some(PredOp::And),
                ".or" => m.bool_op = Some(PredOp::Or),
                ".xor" => m.bool_op = Some(PredOp::Xor),
                ".eq" => m.cmp = Some(".eq"),
                ".ne" => m.cmp = Some(".ne"),
                ".lt" => m.cmp = Some(".lt"),
                ".le" => m.cmp = Some(".le"),
                ".gt" => m.cmp = Some(".gt"),
                ".ge" => m.cmp = Some(".ge"),
                ".lo" => m.cmp = Some(".lo"),
                ".ls" => m.cmp = Some(".ls"),
                ".hs" => m.cmp = Some(".hs"),
                ".hi" if m.cmp.is_none() => m.hi = true,
                ".shared::cta" => m.space = Some(".shared"),
                // A cluster's shared window reaches other blocks' shared memory: not modeled.
                _ if t.starts_with(".shared::") => m.space = Some(".shared::cluster"),
                _ => {}
            }
        }
        m
    }
}
