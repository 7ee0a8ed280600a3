//! The extent grammar, once for every front end: a front end lexes its input (text, or a macro's
//! Rust tokens) into [`ExtentToken`]s and [`parse_extent`] does the rest with the
//! [`ExtentCompiler`]'s rules, so `#[len(..)]` and a signature's `f32[..]` accept and refuse the
//! same extents with the same words.
//!
//! ```text
//! sum     := product (('+' | '-') product)*
//! product := factor (('*' | '/') factor)*
//! factor  := INT | NAME | NAME '.' AXIS | NAME '(' (sum (',' sum)* ','?)? ')' | '(' sum ')'
//! ```

use crate::{ExtentCompiler, ExtentError, ExtentNames, ExtentOp, ExtentSite};

/// One token of an extent, as a front end lexes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtentToken {
    /// An integer literal.
    Int(u64),
    /// A name.
    Ident(String),
    /// `(`.
    Open,
    /// `)`.
    Close,
    /// `,`.
    Comma,
    /// `.`.
    Dot,
    /// An operator as written: `+ - * /`, or one the language lacks (`%`, `<<`).
    Op(String),
    /// Anything else, as written.
    Other(String),
    /// The end of the extent (and every token after it).
    End,
}

impl ExtentToken {
    /// The token for a message: `` `m` ``, `` `(` ``, `the end`.
    pub fn describe(&self) -> String {
        match self {
            Self::Int(value) => format!("`{value}`"),
            Self::Ident(name) => format!("`{name}`"),
            Self::Open => "`(`".to_owned(),
            Self::Close => "`)`".to_owned(),
            Self::Comma => "`,`".to_owned(),
            Self::Dot => "`.`".to_owned(),
            Self::Op(op) | Self::Other(op) => format!("`{op}`"),
            Self::End => "the end".to_owned(),
        }
    }
}

/// A front end's tokens, with where each one is.
pub trait ExtentLexer {
    /// Where a token is: a byte offset, a span.
    type Mark: Copy;
    /// The front end's error.
    type Error;

    /// Takes the next token.
    fn next(&mut self) -> Result<ExtentToken, Self::Error>;

    /// The next token, left in place.
    fn peek(&mut self) -> Result<ExtentToken, Self::Error>;

    /// Where the token taken last is.
    fn mark(&self) -> Self::Mark;

    /// The front end's error for `error` at `mark`.
    fn error(&self, mark: Self::Mark, error: ExtentError) -> Self::Error;
}

/// Parses one extent from `lexer` to its postfix program (ending with [`ExtentOp::End`]),
/// resolving names in `names`. Recursion is one level per level of parentheses or call
/// arguments, and the level past [`MAX_EXTENT_NESTING`](crate::MAX_EXTENT_NESTING) is refused
/// before the parser descends into it.
pub fn parse_extent<L: ExtentLexer>(
    lexer: &mut L,
    names: &ExtentNames<'_>,
    site: ExtentSite,
) -> Result<Vec<ExtentOp>, L::Error> {
    let mut parser = Parser {
        lexer,
        compiler: ExtentCompiler::new(names, site),
        site,
    };
    parser.sum()?;
    match parser.lexer.next()? {
        ExtentToken::End => {}
        other => return Err(parser.unexpected(other, "an operator or the end")),
    }
    let mark = parser.lexer.mark();
    parser
        .compiler
        .finish()
        .map_err(|e| parser.lexer.error(mark, e))
}

struct Parser<'l, 'n, 'p, L> {
    lexer: &'l mut L,
    compiler: ExtentCompiler<'n, 'p>,
    site: ExtentSite,
}

impl<L: ExtentLexer> Parser<'_, '_, '_, L> {
    /// `error` at the token taken last.
    fn fail(&self, error: ExtentError) -> L::Error {
        self.lexer.error(self.lexer.mark(), error)
    }

    /// The token taken last, where `expected` should have come: an operator the language lacks
    /// is named as one.
    fn unexpected(&self, token: ExtentToken, expected: &'static str) -> L::Error {
        self.fail(match token {
            ExtentToken::Op(op) => ExtentError::UnsupportedOperator {
                op,
                site: self.site,
            },
            other => ExtentError::Expected {
                expected,
                found: other.describe(),
                site: self.site,
            },
        })
    }

    fn sum(&mut self) -> Result<(), L::Error> {
        self.product()?;
        while let Some(op) = self.operator(&[("+", ExtentOp::Add), ("-", ExtentOp::Sub)])? {
            self.product()?;
            self.push(op)?;
        }
        Ok(())
    }

    fn product(&mut self) -> Result<(), L::Error> {
        self.factor()?;
        while let Some(op) = self.operator(&[("*", ExtentOp::Mul), ("/", ExtentOp::Div)])? {
            self.factor()?;
            self.push(op)?;
        }
        Ok(())
    }

    /// Takes the next token if it is one of `ops`.
    fn operator(&mut self, ops: &[(&str, ExtentOp)]) -> Result<Option<ExtentOp>, L::Error> {
        let ExtentToken::Op(spelled) = self.lexer.peek()? else {
            return Ok(None);
        };
        let Some(&(_, op)) = ops.iter().find(|(s, _)| *s == spelled) else {
            return Ok(None);
        };
        self.lexer.next()?;
        Ok(Some(op))
    }

    fn push(&mut self, op: ExtentOp) -> Result<(), L::Error> {
        self.compiler.push(op).map_err(|e| self.fail(e))
    }

    fn factor(&mut self) -> Result<(), L::Error> {
        let token = self.lexer.next()?;
        let mark = self.lexer.mark();
        let at = |lexer: &L, e: ExtentError| lexer.error(mark, e);
        match token {
            ExtentToken::Int(value) => self.compiler.literal(value).map_err(|e| at(self.lexer, e)),
            ExtentToken::Open => {
                self.nested(mark, Self::sum)?;
                self.expect_close()
            }
            ExtentToken::Ident(name) => match self.lexer.peek()? {
                ExtentToken::Dot => {
                    self.lexer.next()?;
                    let axis = match self.lexer.next()? {
                        ExtentToken::Ident(axis) => axis,
                        ExtentToken::Int(index) => index.to_string(),
                        other => {
                            return Err(self.fail(ExtentError::Expected {
                                expected: "an axis (`x`, `y` or `z`)",
                                found: other.describe(),
                                site: self.site,
                            }));
                        }
                    };
                    let axis_mark = self.lexer.mark();
                    self.compiler.geometry(&name, &axis).map_err(|e| match e {
                        ExtentError::NotADimension { .. } => self.lexer.error(axis_mark, e),
                        e => at(self.lexer, e),
                    })
                }
                ExtentToken::Open => {
                    self.lexer.next()?;
                    let open = self.lexer.mark();
                    let args = self.nested(open, Self::arguments)?;
                    self.compiler.call(&name, args).map_err(|e| match e {
                        ExtentError::Arity { .. } => self.lexer.error(open, e),
                        e => at(self.lexer, e),
                    })
                }
                _ => self.compiler.name(&name).map_err(|e| at(self.lexer, e)),
            },
            other => Err(self.fail(ExtentError::UnsupportedExpression {
                found: other.describe(),
                site: self.site,
            })),
        }
    }

    /// A call's arguments after its `(`, through its `)`: how many there are.
    fn arguments(&mut self) -> Result<usize, L::Error> {
        let mut args = 0usize;
        loop {
            if self.lexer.peek()? == ExtentToken::Close {
                self.lexer.next()?;
                return Ok(args);
            }
            self.sum()?;
            args += 1;
            match self.lexer.next()? {
                ExtentToken::Comma => {}
                ExtentToken::Close => return Ok(args),
                other => return Err(self.unexpected(other, "`,` or `)`")),
            }
        }
    }

    fn expect_close(&mut self) -> Result<(), L::Error> {
        match self.lexer.next()? {
            ExtentToken::Close => Ok(()),
            other => Err(self.unexpected(other, "`)`")),
        }
    }

    /// Runs `inner` one level deeper, refused at `mark` (its opening token) past the limit.
    fn nested<T>(
        &mut self,
        mark: L::Mark,
        inner: impl FnOnce(&mut Self) -> Result<T, L::Error>,
    ) -> Result<T, L::Error> {
        self.compiler
            .enter()
            .map_err(|e| self.lexer.error(mark, e))?;
        let value = inner(self)?;
        self.compiler.leave();
        Ok(value)
    }
}
