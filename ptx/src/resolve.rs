//! The resolver: every name of a body becomes what it means, once, for every reader.
//!
//! [`ResolvedModule::new`] reads a module's header and its module-scope variables;
//! [`ResolvedModule::entry`] then resolves one entry's body and the body of every `.func` it
//! calls, directly or not, into [`Body`]s of typed [`Instruction`]s.
//!
//! Scopes are PTX's: a name declared inside `{ }` names that declaration until the block closes
//! and never after; an inner declaration hides an outer one. A register range `%r<8>` declares
//! `%r0` … `%r7`. A vector register `.reg .v4 .f32 %v` is four registers, one per component,
//! named `%v.x` … `%v.w` (`%v` alone names all four, as a vector operand). Labels belong to the
//! whole body. A name that is declared nowhere — not in a scope, not as a parameter, not at
//! module scope, not a special register — is [`ParseErrorKind::Undeclared`].
//!
//! The call graph of the entry is recorded as each body's callees; [`ResolvedEntry::call_depth`]
//! measures it and refuses recursion.

// Names come from the caller's text: a seeded hash keeps lookups fast without letting a
// crafted module collide them (SipHash cost more than resolving a body of a large module).
use foldhash::{HashMap, HashMapExt};

use crate::body::{self, Statement, Variable, parse_body};
use crate::error::{ParseError, ParseErrorKind, excerpt};
use crate::inst::{AddrBase, Guard, Instruction, Name, Operand, RegId, Special, VarRef};
use crate::line_index::LineIndex;
use crate::model::{Entry, Module, Param, ScalarType};
use crate::module::parse_module;
use crate::variable::module_variables;

/// A module's header and module-scope variables, for resolving its entries.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedModule {
    /// The header: version, target, entries and functions with their parameters.
    pub module: Module,
    /// Every module-scope variable, in source order ([`VarRef::Module`] indexes it).
    pub vars: Vec<Variable>,
    /// Where the lines of the text start: every body's positions are read from it.
    lines: LineIndex,
    /// Each entry's index by name (the first of a name), so that looking up every entry of a
    /// module of many costs each lookup once, not the module's length.
    entry_index: HashMap<String, u32>,
}

/// Where a register comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegOrigin {
    /// A `.reg` declaration of the body.
    Declared,
    /// Parameter `i` of the `.func`, declared in the `.reg` space.
    Param(u32),
    /// Return value `i` of the `.func`, declared in the `.reg` space.
    Return(u32),
}

/// The most registers one body may declare (counting each component of a vector register):
/// far above what a compiler emits (NVRTC names a few hundred), and low enough that a range
/// like `%f<4294967295>` is refused before it is declared.
pub const MAX_BODY_REGISTERS: u64 = 1 << 20;

/// One register of a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegDecl {
    /// Its name (`%r5`; `%v.y` for a component of a vector register).
    pub name: String,
    /// Its type.
    pub ty: ScalarType,
    /// For a component of a vector register: the vector's length and this component's index.
    pub vector: Option<(u8, u8)>,
    /// Where it comes from.
    pub origin: RegOrigin,
}

/// A `.param` variable declared in a body (the arguments and return values of a call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamDecl {
    /// Its name.
    pub name: String,
    /// Element type.
    pub ty: ScalarType,
    /// `.align`, when written.
    pub align: Option<u32>,
    /// `[N]` of an array (`Some(0)` for `[]`); `None` for a scalar.
    pub array_len: Option<u32>,
    /// Byte offset of the declaration.
    pub offset: usize,
}

impl ParamDecl {
    /// Size in bytes (saturating).
    pub fn size_bytes(&self) -> u64 {
        u64::from(self.ty.bytes()).saturating_mul(u64::from(self.array_len.unwrap_or(1)))
    }
}

/// Whose body a [`Body`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Owner {
    /// Entry `i` of [`Module::entries`].
    Entry(u32),
    /// Function `i` of [`Module::functions`].
    Func(u32),
}

/// One statement of a resolved body, in source order.
// Nearly every statement is an instruction: boxing them would cost an allocation each.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// An instruction.
    Instruction(Instruction),
    /// Label `i` of [`Body::labels`] is here.
    Label(u32),
    /// Variables `start..end` of [`Body::vars`] are declared here.
    Vars(u32, u32),
    /// `.param` variable `i` of [`Body::params`] is declared here.
    Param(u32),
    /// Another directive (`.callprototype`, …), by name with its line.
    Directive {
        /// The directive, with its dot.
        name: String,
        /// 1-based line.
        line: u32,
    },
}

/// A label of a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// Its name.
    pub name: String,
    /// 1-based line.
    pub line: u32,
}

/// The resolved body of an entry or a `.func`.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    /// Whose body it is.
    pub owner: Owner,
    /// Every register the body can name ([`RegId`] indexes it).
    pub regs: Vec<RegDecl>,
    /// Variables declared in the body ([`VarRef::Body`] indexes it).
    pub vars: Vec<Variable>,
    /// `.param` variables declared in the body ([`Name::LocalParam`] indexes it).
    pub params: Vec<ParamDecl>,
    /// Labels ([`Name::Label`] and [`Stmt::Label`] index it).
    pub labels: Vec<Label>,
    /// The statements, in order.
    pub statements: Vec<Stmt>,
    /// The functions the body calls, by index into [`Module::functions`], in order of first
    /// call.
    pub callees: Vec<u32>,
    /// 1-based line of the `.entry` or `.func` directive.
    pub line: u32,
}

impl Body {
    /// The instructions, in order.
    pub fn instructions(&self) -> impl Iterator<Item = &Instruction> {
        self.statements.iter().filter_map(|s| match s {
            Stmt::Instruction(ins) => Some(ins),
            _ => None,
        })
    }

    /// The register `id`.
    pub fn reg(&self, id: RegId) -> Option<&RegDecl> {
        self.regs.get(id.0 as usize)
    }
}

/// An entry's body and the body of every function it calls, directly or not.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedEntry {
    /// The entry's index in [`Module::entries`].
    pub entry: u32,
    /// The entry's body first, then each called function's, in order of discovery.
    pub bodies: Vec<Body>,
}

/// A call graph that recurses: `func` is reached from itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` calls itself, directly or through other functions")]
pub struct Recursion {
    /// The function's index in [`Module::functions`].
    pub func: u32,
    /// Its name.
    pub name: String,
    /// 1-based line of its `.func` directive.
    pub line: u32,
}

impl ResolvedEntry {
    /// The entry's body.
    pub fn entry_body(&self) -> Option<&Body> {
        self.bodies.first()
    }

    /// The body of function `func` (an index into [`Module::functions`]), if the entry reaches
    /// it and it has one.
    pub fn func_body(&self, func: u32) -> Option<&Body> {
        self.bodies.iter().find(|b| b.owner == Owner::Func(func))
    }

    /// Length of the longest call chain from the entry (0: it calls nothing), or the
    /// recursion that makes it unbounded.
    pub fn call_depth(&self, module: &Module) -> Result<usize, Recursion> {
        let index: HashMap<u32, &Body> = self
            .bodies
            .iter()
            .filter_map(|b| match b.owner {
                Owner::Func(f) => Some((f, b)),
                Owner::Entry(_) => None,
            })
            .collect();
        let callees = |f: u32| index.get(&f).map_or(&[][..], |b| b.callees.as_slice());
        let mut depth: HashMap<u32, usize> = HashMap::new();
        let mut on_stack: HashMap<u32, bool> = HashMap::new();
        let mut best = 0usize;
        let roots = self.entry_body().map_or(&[][..], |b| b.callees.as_slice());
        for &root in roots {
            if depth.contains_key(&root) {
                best = best.max(depth.get(&root).copied().unwrap_or(0));
                continue;
            }
            let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
            on_stack.insert(root, true);
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                let list = callees(node);
                if let Some(&callee) = list.get(*next) {
                    *next += 1;
                    if on_stack.get(&callee).copied().unwrap_or(false) {
                        let func = module.functions.get(callee as usize);
                        return Err(Recursion {
                            func: callee,
                            name: func.map_or_else(String::new, |f| f.name.clone()),
                            line: index.get(&callee).map_or(0, |b| b.line),
                        });
                    }
                    if !depth.contains_key(&callee) {
                        on_stack.insert(callee, true);
                        stack.push((callee, 0));
                    }
                } else {
                    let own = 1 + list
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
}

impl ResolvedModule {
    /// Parses `src`'s header and its module-scope variables.
    pub fn new(src: &str) -> Result<Self, ParseError> {
        let module = parse_module(src)?;
        Self::with_module(src, module)
    }

    /// The same, for a header already parsed from `src`.
    pub fn with_module(src: &str, module: Module) -> Result<Self, ParseError> {
        let vars = module_variables(src)?;
        let mut entry_index = HashMap::with_capacity(module.entries.len());
        for (i, entry) in module.entries.iter().enumerate() {
            entry_index.entry(entry.name.clone()).or_insert(i as u32);
        }
        Ok(Self {
            module,
            vars,
            entry_index,
            lines: LineIndex::new(src),
        })
    }

    /// The header of the entry named `name` (the first, should two share it).
    pub fn entry_header(&self, name: &str) -> Option<&Entry> {
        let index = *self.entry_index.get(name)?;
        self.module.entries.get(index as usize)
    }

    /// Where the lines of the text start, for a reader that quotes a line.
    pub fn lines(&self) -> &LineIndex {
        &self.lines
    }

    /// The 1-based line of byte `offset` of the text: where a declaration the model keeps by
    /// offset (a [`Variable`], a [`ParamDecl`], a function) is, for a reader's messages.
    pub fn line(&self, offset: usize) -> u32 {
        self.lines.line(offset)
    }

    /// Resolves the body of the entry named `entry` in `src` (the text this module was read
    /// from) and of every function it calls.
    pub fn entry(&self, src: &str, entry: &str) -> Result<ResolvedEntry, ParseError> {
        let Some(index) = self.entry_index.get(entry).map(|&i| i as usize) else {
            return Err(ParseError::new(
                src,
                0,
                ParseErrorKind::NoSuchEntry {
                    name: excerpt(entry),
                },
            ));
        };
        let found = &self.module.entries[index];
        let Some(range) = found.body.clone() else {
            return Err(ParseError::new(
                src,
                found.offset,
                ParseErrorKind::InvalidInstruction {
                    instruction: excerpt(entry),
                    reason: "the entry has no body",
                },
            ));
        };
        let resolver = Resolver {
            src,
            lines: &self.lines,
            globals: self.global_names(),
        };
        let owner = Owner::Entry(index as u32);
        let entry_body = resolver.body(owner, range, &found.params, &[], found.offset)?;
        let mut bodies = vec![entry_body];
        let mut seen: Vec<u32> = Vec::new();
        let mut next = 0;
        while next < bodies.len() {
            let callees = bodies[next].callees.clone();
            next += 1;
            for callee in callees {
                if seen.contains(&callee) {
                    continue;
                }
                seen.push(callee);
                let Some(func) = self.module.functions.get(callee as usize) else {
                    continue;
                };
                let Some(range) = func.body.clone() else {
                    continue;
                };
                let body = resolver.body(
                    Owner::Func(callee),
                    range,
                    &func.params,
                    &func.returns,
                    func.offset,
                )?;
                bodies.push(body);
            }
        }
        Ok(ResolvedEntry {
            entry: index as u32,
            bodies,
        })
    }

    /// Names at module scope: variables first, then functions (a definition over a
    /// declaration of the same name).
    fn global_names(&self) -> HashMap<&str, Name> {
        let mut names = HashMap::new();
        for (i, func) in self.module.functions.iter().enumerate() {
            let name = Name::Func(i as u32);
            match names.get(func.name.as_str()) {
                Some(Name::Func(j))
                    if self
                        .module
                        .functions
                        .get(*j as usize)
                        .is_some_and(|f| f.body.is_some()) => {}
                _ => {
                    names.insert(func.name.as_str(), name);
                }
            }
        }
        for (i, var) in self.vars.iter().enumerate() {
            names.insert(var.name.as_str(), Name::Var(VarRef::Module(i as u32)));
        }
        names
    }
}

/// A scope's names.
#[derive(Default)]
struct Scope {
    names: HashMap<String, Named>,
    ranges: Vec<RegRange>,
}

/// `.reg .ty prefix<count>`: registers `first..first + count·per`, `per` for each name (the
/// components of a vector register).
struct RegRange {
    prefix: String,
    count: u32,
    first: u32,
    per: u8,
}

/// What a name in a scope is: a scalar name, or a whole vector register.
#[derive(Debug, Clone, Copy)]
enum Named {
    Name(Name),
    /// A vector register: its first component and its length.
    Vector(u32, u8),
}

struct Resolver<'r> {
    src: &'r str,
    lines: &'r LineIndex,
    globals: HashMap<&'r str, Name>,
}

/// The body under construction.
struct Building<'r> {
    body: Body,
    scopes: Vec<Scope>,
    labels: HashMap<&'r str, u32>,
}

impl<'r> Resolver<'r> {
    fn line(&self, offset: usize) -> u32 {
        self.lines.line(offset)
    }

    fn error(&self, offset: usize, kind: ParseErrorKind) -> ParseError {
        ParseError::new(self.src, offset, kind)
    }

    fn body(
        &self,
        owner: Owner,
        range: std::ops::Range<usize>,
        params: &[Param],
        returns: &[Param],
        offset: usize,
    ) -> Result<Body, ParseError> {
        let statements = parse_body(self.src, range)?;
        let mut b = Building {
            body: Body {
                owner,
                regs: Vec::new(),
                vars: Vec::new(),
                params: Vec::new(),
                labels: Vec::new(),
                statements: Vec::with_capacity(statements.len()),
                callees: Vec::new(),
                line: self.line(offset),
            },
            scopes: vec![Scope::default()],
            labels: HashMap::new(),
        };
        let entry = matches!(owner, Owner::Entry(_));
        for (list, is_return) in [(params, false), (returns, true)] {
            for (i, p) in list.iter().enumerate() {
                let i = i as u32;
                let name = if p.reg && !entry {
                    let origin = if is_return {
                        RegOrigin::Return(i)
                    } else {
                        RegOrigin::Param(i)
                    };
                    Name::Reg(b.reg(&p.name, p.ty, None, origin))
                } else if is_return {
                    Name::Return(i)
                } else {
                    Name::Param(i)
                };
                b.scope().names.insert(p.name.clone(), Named::Name(name));
            }
        }
        // Labels name positions anywhere in the body, so they are known before any branch.
        for statement in &statements {
            if let Statement::Label { name, offset } = statement {
                let id = b.body.labels.len() as u32;
                if b.labels.insert(name, id).is_some() {
                    return Err(self.error(
                        *offset,
                        ParseErrorKind::DuplicateLabel {
                            name: excerpt(name),
                        },
                    ));
                }
                b.body.labels.push(Label {
                    name: (*name).to_owned(),
                    line: self.line(*offset),
                });
            }
        }
        for statement in statements {
            self.statement(&mut b, statement)?;
        }
        Ok(b.body)
    }

    fn statement(&self, b: &mut Building<'r>, statement: Statement<'r>) -> Result<(), ParseError> {
        match statement {
            Statement::Open { .. } => b.scopes.push(Scope::default()),
            Statement::Close { offset } => {
                if b.scopes.len() <= 1 {
                    return Err(self.error(
                        offset,
                        ParseErrorKind::UnexpectedToken {
                            expected: "a statement",
                            found: "}".to_owned(),
                        },
                    ));
                }
                b.scopes.pop();
            }
            Statement::Label { name, .. } => {
                if let Some(&id) = b.labels.get(name) {
                    b.body.statements.push(Stmt::Label(id));
                }
            }
            Statement::Reg {
                ty,
                vector,
                names,
                offset,
            } => {
                for name in names {
                    let adding = u64::from(name.count.unwrap_or(1))
                        .saturating_mul(u64::from(vector.unwrap_or(1).max(1)));
                    if (b.body.regs.len() as u64).saturating_add(adding) > MAX_BODY_REGISTERS {
                        return Err(self.error(
                            offset,
                            ParseErrorKind::TooManyRegisters {
                                limit: MAX_BODY_REGISTERS,
                            },
                        ));
                    }
                    match name.count {
                        Some(count) => {
                            let first = b.body.regs.len() as u32;
                            for i in 0..count {
                                b.declare_reg(&format!("{}{i}", name.name), ty, vector);
                            }
                            b.scope().ranges.push(RegRange {
                                prefix: name.name.to_owned(),
                                count,
                                first,
                                per: vector.unwrap_or(1).max(1),
                            });
                        }
                        None => {
                            let named = b.declare_reg(name.name, ty, vector);
                            b.scope().names.insert(name.name.to_owned(), named);
                        }
                    }
                }
            }
            Statement::Param {
                ty,
                align,
                name,
                array_len,
                offset,
            } => {
                let id = b.body.params.len() as u32;
                b.body.params.push(ParamDecl {
                    name: name.to_owned(),
                    ty,
                    align,
                    array_len,
                    offset,
                });
                b.scope()
                    .names
                    .insert(name.to_owned(), Named::Name(Name::LocalParam(id)));
                b.body.statements.push(Stmt::Param(id));
            }
            Statement::Variables(vars) => {
                let start = b.body.vars.len() as u32;
                for var in vars {
                    let id = b.body.vars.len() as u32;
                    b.scope()
                        .names
                        .insert(var.name.clone(), Named::Name(Name::Var(VarRef::Body(id))));
                    b.body.vars.push(var);
                }
                let end = b.body.vars.len() as u32;
                b.body.statements.push(Stmt::Vars(start, end));
            }
            Statement::Directive { name, offset, .. } => {
                b.body.statements.push(Stmt::Directive {
                    name: name.to_owned(),
                    line: self.line(offset),
                });
            }
            Statement::Instruction(ins) => {
                let ins = self.instruction(b, &ins)?;
                b.body.statements.push(Stmt::Instruction(ins));
            }
        }
        Ok(())
    }

    fn instruction(
        &self,
        b: &mut Building<'r>,
        ins: &body::Instruction<'r>,
    ) -> Result<Instruction, ParseError> {
        let at = ins.range.start;
        let labels_first = matches!(ins.opcode, "bra" | "brx");
        let guard = match ins.guard {
            Some(g) => Some(Guard {
                reg: self.register(b, g.pred, at)?,
                negated: g.negated,
            }),
            None => None,
        };
        let mut operands = Vec::with_capacity(ins.operands.len());
        for operand in &ins.operands {
            operands.push(self.operand(b, operand, at, labels_first)?);
        }
        if ins.opcode == "call" {
            for operand in &operands {
                if let Operand::Name(Name::Func(f)) = operand
                    && !b.body.callees.contains(f)
                {
                    b.body.callees.push(*f);
                }
            }
        }
        let text = self.src.get(ins.range.clone()).unwrap_or("");
        let resolved = Instruction::new(
            guard,
            ins.opcode,
            &ins.modifiers,
            operands,
            self.lines.line_col(self.src, at),
            ins.range.clone(),
            normalize(text),
        );
        if let Some(reason) = resolved.destination_problem() {
            return Err(self.error(
                at,
                ParseErrorKind::InvalidInstruction {
                    instruction: excerpt(&ins.full_opcode()),
                    reason,
                },
            ));
        }
        Ok(resolved)
    }

    /// A name that must be a scalar register.
    fn register(&self, b: &Building<'r>, name: &str, at: usize) -> Result<RegId, ParseError> {
        match self.lookup(b, name, false) {
            Some(Named::Name(Name::Reg(r))) => Ok(r),
            Some(_) => Err(self.error(
                at,
                ParseErrorKind::InvalidInstruction {
                    instruction: excerpt(name),
                    reason: "a register is required here",
                },
            )),
            None => Err(self.undeclared(at, name)),
        }
    }

    fn undeclared(&self, at: usize, name: &str) -> ParseError {
        self.error(
            at,
            ParseErrorKind::Undeclared {
                name: excerpt(name),
            },
        )
    }

    fn operand(
        &self,
        b: &Building<'r>,
        operand: &body::Operand<'r>,
        at: usize,
        labels_first: bool,
    ) -> Result<Operand, ParseError> {
        use body::Operand as P;
        Ok(match operand {
            P::Name("_") => Operand::Sink,
            P::Name(name) => match self.lookup(b, name, labels_first) {
                Some(Named::Name(Name::Reg(r))) => Operand::Reg(r),
                Some(Named::Name(n)) => Operand::Name(n),
                Some(Named::Vector(first, len)) => Operand::Vector(
                    (0..u32::from(len))
                        .map(|i| Operand::Reg(RegId(first + i)))
                        .collect(),
                ),
                None => match Special::scalar(name) {
                    Some(special) => Operand::Special(special),
                    None => return Err(self.undeclared(at, name)),
                },
            },
            P::Special(name, dim) => match self.lookup(b, name, false) {
                Some(Named::Vector(first, len)) if *dim < len => {
                    Operand::Reg(RegId(first + u32::from(*dim)))
                }
                Some(Named::Vector(..)) => {
                    return Err(self.error(
                        at,
                        ParseErrorKind::InvalidInstruction {
                            instruction: excerpt(name),
                            reason: "a component the vector lacks",
                        },
                    ));
                }
                Some(_) => {
                    return Err(self.error(
                        at,
                        ParseErrorKind::InvalidInstruction {
                            instruction: excerpt(name),
                            reason: "a component of something that is not a vector",
                        },
                    ));
                }
                None => match Special::component(name, *dim) {
                    Some(special) => Operand::Special(special),
                    None => return Err(self.undeclared(at, name)),
                },
            },
            P::Not(name) => Operand::Not(self.register(b, name, at)?),
            P::PredPair(p, q) => {
                let p = self.register(b, p, at)?;
                let q = if *q == "_" {
                    None
                } else {
                    Some(self.register(b, q, at)?)
                };
                Operand::Pair(p, q)
            }
            P::Int(v) => Operand::Int(*v),
            P::Float(f) => Operand::Float(*f),
            P::Address { base, offset } => {
                let base = match base {
                    None => AddrBase::Absolute,
                    Some(name) => match self.lookup(b, name, false) {
                        Some(Named::Name(Name::Reg(r))) => AddrBase::Reg(r),
                        Some(Named::Name(n)) => AddrBase::Name(n),
                        Some(Named::Vector(..)) => {
                            return Err(self.error(
                                at,
                                ParseErrorKind::InvalidInstruction {
                                    instruction: excerpt(name),
                                    reason: "a vector register as an address",
                                },
                            ));
                        }
                        None => return Err(self.undeclared(at, name)),
                    },
                };
                Operand::Address {
                    base,
                    offset: *offset,
                }
            }
            P::Vector(items) => Operand::Vector(self.operands(b, items, at)?),
            P::List(items) => Operand::List(self.operands(b, items, at)?),
            P::Texture(items) => Operand::Texture(self.operands(b, items, at)?),
        })
    }

    fn operands(
        &self,
        b: &Building<'r>,
        items: &[body::Operand<'r>],
        at: usize,
    ) -> Result<Vec<Operand>, ParseError> {
        items
            .iter()
            .map(|item| self.operand(b, item, at, false))
            .collect()
    }

    /// What `name` means where the body is now: its scopes from the innermost out (the first
    /// holds the function's parameters), then the module's names; labels before all of them
    /// when `labels_first` (a branch target), else after.
    fn lookup(&self, b: &Building<'r>, name: &str, labels_first: bool) -> Option<Named> {
        let label = || b.labels.get(name).map(|&id| Named::Name(Name::Label(id)));
        if labels_first && let Some(found) = label() {
            return Some(found);
        }
        for scope in b.scopes.iter().rev() {
            if let Some(&named) = scope.names.get(name) {
                return Some(named);
            }
            if let Some(found) = range_member(scope, name) {
                return Some(found);
            }
        }
        if let Some(&found) = self.globals.get(name) {
            return Some(Named::Name(found));
        }
        label()
    }
}

/// `%r12` as member 12 of a range `%r<16>` of `scope`, if it is one. The number is written
/// without leading zeros, as the range's names are.
fn range_member(scope: &Scope, name: &str) -> Option<Named> {
    if scope.ranges.is_empty() {
        return None;
    }
    let digits = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (prefix, number) = name.split_at(digits);
    if number.is_empty() || (number.len() > 1 && number.starts_with('0')) {
        return None;
    }
    let index: u32 = number.parse().ok()?;
    let range = scope
        .ranges
        .iter()
        .rev()
        .find(|r| r.prefix == prefix && index < r.count)?;
    let first = range.first + index * u32::from(range.per);
    Some(if range.per > 1 {
        Named::Vector(first, range.per)
    } else {
        Named::Name(Name::Reg(RegId(first)))
    })
}

impl<'r> Building<'r> {
    /// The innermost scope. The root scope is never popped (a `}` without its `{` is an
    /// error), so there always is one.
    fn scope(&mut self) -> &mut Scope {
        if self.scopes.is_empty() {
            self.scopes.push(Scope::default());
        }
        let last = self.scopes.len() - 1;
        &mut self.scopes[last]
    }

    fn reg(
        &mut self,
        name: &str,
        ty: ScalarType,
        vector: Option<(u8, u8)>,
        origin: RegOrigin,
    ) -> RegId {
        let id = RegId(self.body.regs.len() as u32);
        self.body.regs.push(RegDecl {
            name: name.to_owned(),
            ty,
            vector,
            origin,
        });
        id
    }

    /// Declares one register (a scalar, or every component of a vector) and returns what its
    /// name means.
    fn declare_reg(&mut self, name: &str, ty: ScalarType, vector: Option<u8>) -> Named {
        match vector {
            None | Some(1) => Named::Name(Name::Reg(self.reg(name, ty, None, RegOrigin::Declared))),
            Some(len) => {
                let first = self.body.regs.len() as u32;
                for i in 0..len {
                    let component = ["x", "y", "z", "w", "4", "5", "6", "7"]
                        .get(usize::from(i))
                        .copied()
                        .unwrap_or("?");
                    self.reg(
                        &format!("{name}.{component}"),
                        ty,
                        Some((len, i)),
                        RegOrigin::Declared,
                    );
                }
                Named::Vector(first, len)
            }
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
