//! The extent compiler: the one statement of what an extent may say, shared by every front end
//! (the signature text here, `#[len(..)]` and `covers = ..` in the macro) and by
//! [`CustomAbi::validate`](crate::CustomAbi::validate), which replays a finished table through it.
//!
//! A front end walks its own syntax and reports each piece in postfix order; the compiler
//! resolves names against the kernel's parameters, applies the rules, and refuses, while the
//! front end is still parsing, an extent that nests or stacks deeper than its limits: a caller's
//! text can never make a parser recurse without bound.

use std::fmt;

use crate::{CustomKind, CustomParam, ElementKind, ExtentOp, MAX_EXTENT_DEPTH};

/// Most levels of parentheses and call arguments an extent may nest. Front ends recurse once per
/// level, and refuse the level past this one before descending into it.
pub const MAX_EXTENT_NESTING: usize = 32;

/// Most steps one extent's program may have: far more than an extent written by hand needs, and
/// few enough that printing one back as text (which rebuilds each subexpression's text) stays
/// cheap. Refused as the front end reports the step past it.
pub const MAX_EXTENT_STEPS: usize = 256;

/// Where an extent sits, which decides what it may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExtentSite {
    /// A pointer's extent (`#[len(..)]`, `f32[..]` in a signature).
    Len,
    /// The covered count (`covers = ..`), which decides the launch geometry and so cannot
    /// name it.
    Covers,
    /// The least dynamic shared bytes every launch gives (`shared = ..`), in bytes.
    Shared,
}

impl fmt::Display for ExtentSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Len => "an extent",
            Self::Covers => "`covers`",
            Self::Shared => "`shared`",
        })
    }
}

/// What the names an extent may use are, as an error's hint.
fn names_hint(site: ExtentSite) -> &'static str {
    match site {
        ExtentSite::Len | ExtentSite::Shared => ", `grid.x/y/z` and `block.x/y/z`",
        ExtentSite::Covers => "",
    }
}

/// Why an extent is refused: a rule of the extent language, whatever the front end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExtentError {
    /// A name that is no param of the kernel.
    #[error(
        "unknown name `{name}` in {site}: it may name the kernel's integer params{}",
        names_hint(*site)
    )]
    UnknownName {
        /// The name.
        name: String,
        /// Where it was used.
        site: ExtentSite,
    },
    /// A floating-point param: extents count elements.
    #[error("`{name}` is a param of type `{dtype}`: {site} takes integer params only")]
    FloatParam {
        /// The param.
        name: String,
        /// Its type.
        dtype: ElementKind,
        /// Where it was used.
        site: ExtentSite,
    },
    /// A pointer: extents are over by-value params.
    #[error("`{name}` is a pointer: {site} names integer by-value params{}", names_hint(*site))]
    Pointer {
        /// The pointer.
        name: String,
        /// Where it was used.
        site: ExtentSite,
    },
    /// `grid` or `block` without an axis.
    #[error("`{dim}` needs an axis: `{dim}.x`, `{dim}.y` or `{dim}.z`")]
    NeedsAxis {
        /// `grid` or `block`.
        dim: &'static str,
    },
    /// `grid.w`.
    #[error("`{dim}.{axis}` is not a launch dimension: use `{dim}.x`, `{dim}.y` or `{dim}.z`")]
    NotADimension {
        /// `grid` or `block`.
        dim: &'static str,
        /// The axis as written.
        axis: String,
    },
    /// `n.x`: only the launch geometry has fields.
    #[error(
        "unsupported expression in {site}: only `grid.x/y/z` and `block.x/y/z` have fields, not `{name}`"
    )]
    NoFields {
        /// The name before the dot.
        name: String,
        /// Where it was used.
        site: ExtentSite,
    },
    /// The covered count names the geometry it decides.
    #[error("`covers` cannot name `{dim}`: the covered count decides the launch geometry")]
    CoversNamesGeometry {
        /// `grid` or `block`.
        dim: &'static str,
    },
    /// A call of anything but `div_ceil`.
    #[error("unknown function `{name}` in {site}: the only one is `div_ceil(a, b)`")]
    UnknownFunction {
        /// The function.
        name: String,
        /// Where it was used.
        site: ExtentSite,
    },
    /// `div_ceil` with other than two arguments.
    #[error("`div_ceil` takes two arguments, as in `div_ceil(n, 256)`; found {found}")]
    Arity {
        /// Arguments given.
        found: usize,
    },
    /// An extent whose evaluation needs more than [`MAX_EXTENT_DEPTH`] values at once.
    #[error(
        "this extent is too deep to evaluate: it needs more than {limit} values on the stack at once"
    )]
    TooDeep {
        /// [`MAX_EXTENT_DEPTH`].
        limit: usize,
    },
    /// An extent nested deeper than [`MAX_EXTENT_NESTING`] levels of parentheses and calls.
    #[error("this extent nests parentheses and calls more than {limit} levels deep")]
    TooNested {
        /// [`MAX_EXTENT_NESTING`].
        limit: usize,
    },
    /// An extent whose program has more than [`MAX_EXTENT_STEPS`] steps.
    #[error("this extent is too long: it has more than {limit} values and operators")]
    TooLong {
        /// [`MAX_EXTENT_STEPS`].
        limit: usize,
    },
    /// An operator the language lacks: `%`, `<<`, `==`.
    #[error("unsupported operator `{op}` in {site}: use `+`, `-`, `*`, `/` or `div_ceil(a, b)`")]
    UnsupportedOperator {
        /// The operator as written.
        op: String,
        /// Where it was used.
        site: ExtentSite,
    },
    /// Something other than a value where a value must come.
    #[error(
        "unsupported expression in {site}: found {found}, but an extent is made of integer literals, integer params, `grid.x/y/z`, `block.x/y/z`, `+ - * /`, `div_ceil(a, b)` and parentheses"
    )]
    UnsupportedExpression {
        /// The token, described.
        found: String,
        /// Where it was used.
        site: ExtentSite,
    },
    /// A token the grammar does not expect where it is.
    #[error("expected {expected} in {site}, found {found}")]
    Expected {
        /// What may come there.
        expected: &'static str,
        /// The token, described.
        found: String,
        /// Where it was used.
        site: ExtentSite,
    },
    /// A compiled program that names a by-value param the kernel does not have.
    #[error("an extent names by-value param {index}, which does not exist")]
    NoSuchParam {
        /// The param's index among the by-value params.
        index: u16,
    },
    /// A compiled program that names a geometry axis other than x, y or z.
    #[error("geometry axis {axis} is not x, y or z")]
    NoSuchAxis {
        /// The axis.
        axis: u8,
    },
    /// A compiled program that does not leave exactly one value.
    #[error("an extent program is malformed")]
    Malformed,
}

/// The names an extent may use: the kernel's by-value params, in order (an extent names them
/// by index), and its pointers (which it may not name).
#[derive(Debug, Clone, Default)]
pub struct ExtentNames<'p> {
    values: Vec<(&'p str, ElementKind)>,
    pointers: Vec<&'p str>,
}

impl<'p> ExtentNames<'p> {
    /// The names of a parameter table.
    pub fn of(params: &'p [CustomParam]) -> Self {
        let mut names = Self::default();
        for param in params {
            match param.kind {
                CustomKind::Value(dtype) => names.value(&param.name, dtype),
                CustomKind::In(_) | CustomKind::Out(_) => names.pointer(&param.name),
            }
        }
        names
    }

    /// Adds the next by-value param.
    pub fn value(&mut self, name: &'p str, dtype: ElementKind) {
        self.values.push((name, dtype));
    }

    /// Adds a pointer.
    pub fn pointer(&mut self, name: &'p str) {
        self.pointers.push(name);
    }
}

/// Compiles one extent to its postfix program, from the pieces a front end reports in postfix
/// order: leaves ([`literal`](Self::literal), [`name`](Self::name),
/// [`geometry`](Self::geometry)), operators ([`push`](Self::push)), calls after their
/// arguments ([`call`](Self::call)), and [`enter`](Self::enter)/[`leave`](Self::leave) around
/// each level of parentheses or call arguments.
#[derive(Debug)]
pub struct ExtentCompiler<'n, 'p> {
    names: &'n ExtentNames<'p>,
    site: ExtentSite,
    code: Vec<ExtentOp>,
    /// Values on the evaluation stack after the code so far.
    depth: usize,
    /// Levels of parentheses and call arguments open now.
    nesting: usize,
}

impl<'n, 'p> ExtentCompiler<'n, 'p> {
    /// A compiler for one extent at `site` over the kernel's `names`.
    pub fn new(names: &'n ExtentNames<'p>, site: ExtentSite) -> Self {
        Self {
            names,
            site,
            code: Vec::new(),
            depth: 0,
            nesting: 0,
        }
    }

    /// Pushes an integer literal.
    pub fn literal(&mut self, value: u64) -> Result<(), ExtentError> {
        self.push(ExtentOp::Lit(value))
    }

    /// Pushes the value of the param `name`; refuses a name that is no integer by-value param.
    pub fn name(&mut self, name: &str) -> Result<(), ExtentError> {
        if let Some(index) = self.names.values.iter().position(|(n, _)| *n == name) {
            let index =
                u16::try_from(index).map_err(|_| ExtentError::NoSuchParam { index: u16::MAX })?;
            return self.push(ExtentOp::Param(index));
        }
        Err(if self.names.pointers.contains(&name) {
            ExtentError::Pointer {
                name: name.to_owned(),
                site: self.site,
            }
        } else if let Some(dim) = geometry(name) {
            ExtentError::NeedsAxis { dim }
        } else {
            ExtentError::UnknownName {
                name: name.to_owned(),
                site: self.site,
            }
        })
    }

    /// Pushes `base.axis`, which only the launch geometry (`grid`, `block`) has, and not in the
    /// covered count.
    pub fn geometry(&mut self, base: &str, axis: &str) -> Result<(), ExtentError> {
        let Some(dim) = geometry(base) else {
            return Err(ExtentError::NoFields {
                name: base.to_owned(),
                site: self.site,
            });
        };
        if self.site == ExtentSite::Covers {
            return Err(ExtentError::CoversNamesGeometry { dim });
        }
        let axis = match axis {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            other => {
                return Err(ExtentError::NotADimension {
                    dim,
                    axis: other.to_owned(),
                });
            }
        };
        self.push(if dim == "grid" {
            ExtentOp::Grid(axis)
        } else {
            ExtentOp::Block(axis)
        })
    }

    /// Applies the function `name` to the `args` values pushed last.
    pub fn call(&mut self, name: &str, args: usize) -> Result<(), ExtentError> {
        if name != "div_ceil" {
            return Err(ExtentError::UnknownFunction {
                name: name.to_owned(),
                site: self.site,
            });
        }
        if args != 2 {
            return Err(ExtentError::Arity { found: args });
        }
        self.push(ExtentOp::DivCeil)
    }

    /// Opens one level of parentheses or call arguments; refuses one past
    /// [`MAX_EXTENT_NESTING`], before the front end descends into it.
    pub fn enter(&mut self) -> Result<(), ExtentError> {
        if self.nesting >= MAX_EXTENT_NESTING {
            return Err(ExtentError::TooNested {
                limit: MAX_EXTENT_NESTING,
            });
        }
        self.nesting += 1;
        Ok(())
    }

    /// Closes the level [`enter`](Self::enter) opened.
    pub fn leave(&mut self) {
        self.nesting = self.nesting.saturating_sub(1);
    }

    /// Appends one step with every rule a step has: a param that exists and is an integer, an
    /// axis that is x, y or z and not in the covered count, an operator with two values to
    /// take, a stack no deeper than [`MAX_EXTENT_DEPTH`], a program no longer than
    /// [`MAX_EXTENT_STEPS`]. `End` is [`finish`](Self::finish)'s.
    pub fn push(&mut self, op: ExtentOp) -> Result<(), ExtentError> {
        if self.code.len() >= MAX_EXTENT_STEPS {
            return Err(ExtentError::TooLong {
                limit: MAX_EXTENT_STEPS,
            });
        }
        match op {
            ExtentOp::Lit(_) => {}
            ExtentOp::Param(index) => self.check_param(index)?,
            ExtentOp::Grid(axis) | ExtentOp::Block(axis) => {
                let dim = if matches!(op, ExtentOp::Grid(_)) {
                    "grid"
                } else {
                    "block"
                };
                if self.site == ExtentSite::Covers {
                    return Err(ExtentError::CoversNamesGeometry { dim });
                }
                if axis > 2 {
                    return Err(ExtentError::NoSuchAxis { axis });
                }
            }
            ExtentOp::Add | ExtentOp::Sub | ExtentOp::Mul | ExtentOp::Div | ExtentOp::DivCeil => {
                if self.depth < 2 {
                    return Err(ExtentError::Malformed);
                }
                self.depth -= 1;
                self.code.push(op);
                return Ok(());
            }
            ExtentOp::End => return Err(ExtentError::Malformed),
        }
        if self.depth >= MAX_EXTENT_DEPTH {
            return Err(ExtentError::TooDeep {
                limit: MAX_EXTENT_DEPTH,
            });
        }
        self.depth += 1;
        self.code.push(op);
        Ok(())
    }

    /// The program, ending with [`ExtentOp::End`]; refuses one that does not leave exactly one
    /// value.
    pub fn finish(mut self) -> Result<Vec<ExtentOp>, ExtentError> {
        if self.depth != 1 {
            return Err(ExtentError::Malformed);
        }
        self.code.push(ExtentOp::End);
        Ok(self.code)
    }

    /// By-value param `index` exists and is an integer.
    fn check_param(&self, index: u16) -> Result<(), ExtentError> {
        let &(name, dtype) = self
            .names
            .values
            .get(usize::from(index))
            .ok_or(ExtentError::NoSuchParam { index })?;
        if dtype.is_float() {
            return Err(ExtentError::FloatParam {
                name: name.to_owned(),
                dtype,
                site: self.site,
            });
        }
        Ok(())
    }
}

/// `grid` and `block`, the launch geometry's names.
fn geometry(name: &str) -> Option<&'static str> {
    match name {
        "grid" => Some("grid"),
        "block" => Some("block"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Vec<CustomParam> {
        vec![
            CustomParam::new("x", CustomKind::In(ElementKind::F32)),
            CustomParam::new("n", CustomKind::Value(ElementKind::U32)),
            CustomParam::new("a", CustomKind::Value(ElementKind::F32)),
            CustomParam::new("k", CustomKind::Value(ElementKind::I64)),
        ]
    }

    #[test]
    fn names_resolve_to_by_value_params_by_index() {
        let params = params();
        let names = ExtentNames::of(&params);
        let mut c = ExtentCompiler::new(&names, ExtentSite::Len);
        c.name("k").unwrap();
        c.geometry("block", "y").unwrap();
        c.push(ExtentOp::Mul).unwrap();
        assert_eq!(
            c.finish().unwrap(),
            [
                ExtentOp::Param(2),
                ExtentOp::Block(1),
                ExtentOp::Mul,
                ExtentOp::End
            ]
        );
    }

    #[test]
    fn each_rule_is_refused_with_its_reason() {
        let params = params();
        let names = ExtentNames::of(&params);
        let len = || ExtentCompiler::new(&names, ExtentSite::Len);
        let covers = || ExtentCompiler::new(&names, ExtentSite::Covers);
        assert!(matches!(
            len().name("m"),
            Err(ExtentError::UnknownName { .. })
        ));
        assert!(matches!(len().name("x"), Err(ExtentError::Pointer { .. })));
        assert!(matches!(
            len().name("a"),
            Err(ExtentError::FloatParam {
                dtype: ElementKind::F32,
                ..
            })
        ));
        assert_eq!(
            len().name("grid"),
            Err(ExtentError::NeedsAxis { dim: "grid" })
        );
        assert!(matches!(
            len().geometry("grid", "w"),
            Err(ExtentError::NotADimension { .. })
        ));
        assert!(matches!(
            len().geometry("n", "x"),
            Err(ExtentError::NoFields { .. })
        ));
        assert_eq!(
            covers().geometry("block", "x"),
            Err(ExtentError::CoversNamesGeometry { dim: "block" })
        );
        assert_eq!(
            covers().push(ExtentOp::Grid(0)),
            Err(ExtentError::CoversNamesGeometry { dim: "grid" })
        );
        assert!(matches!(
            len().call("max", 2),
            Err(ExtentError::UnknownFunction { .. })
        ));
        assert_eq!(
            len().call("div_ceil", 1),
            Err(ExtentError::Arity { found: 1 })
        );
        assert_eq!(
            len().push(ExtentOp::Param(3)),
            Err(ExtentError::NoSuchParam { index: 3 })
        );
        assert_eq!(
            len().push(ExtentOp::Block(3)),
            Err(ExtentError::NoSuchAxis { axis: 3 })
        );
        assert_eq!(len().push(ExtentOp::Add), Err(ExtentError::Malformed));
        assert_eq!(len().finish(), Err(ExtentError::Malformed));
    }

    #[test]
    fn the_stack_limit_is_refused_at_the_push_that_breaks_it() {
        let params = params();
        let names = ExtentNames::of(&params);
        let mut c = ExtentCompiler::new(&names, ExtentSite::Len);
        for _ in 0..MAX_EXTENT_DEPTH {
            c.literal(1).unwrap();
        }
        assert_eq!(
            c.literal(1),
            Err(ExtentError::TooDeep {
                limit: MAX_EXTENT_DEPTH
            })
        );
    }

    #[test]
    fn the_nesting_limit_is_refused_before_descending() {
        let params = params();
        let names = ExtentNames::of(&params);
        let mut c = ExtentCompiler::new(&names, ExtentSite::Len);
        for _ in 0..MAX_EXTENT_NESTING {
            c.enter().unwrap();
        }
        assert_eq!(
            c.enter(),
            Err(ExtentError::TooNested {
                limit: MAX_EXTENT_NESTING
            })
        );
        c.leave();
        assert_eq!(c.enter(), Ok(()));
    }
}
