//! Extent expressions of the custom ABI in their compact form: postfix programs over integer
//! literals, the kernel's integer params and the launch geometry, evaluated with checked `u64`
//! arithmetic and a fixed stack, so a launch evaluates them without allocating.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ParamValue;

/// Deepest operand stack an extent program may need; the [`ExtentCompiler`](crate::ExtentCompiler)
/// refuses a deeper one (and [`CustomAbi::validate`](crate::CustomAbi::validate) with it), so
/// evaluation never runs out of room.
pub const MAX_EXTENT_DEPTH: usize = 16;

/// One step of an extent program (postfix order; each program ends with [`ExtentOp::End`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ExtentOp {
    /// Pushes an integer literal.
    Lit(u64),
    /// Pushes the value of scalar param `p` (its index among the kernel's by-value params).
    Param(u16),
    /// Pushes `gridDim` along an axis (0 = x, 1 = y, 2 = z).
    Grid(u8),
    /// Pushes `blockDim` along an axis.
    Block(u8),
    /// `a + b`.
    Add,
    /// `a - b` (below zero is an overflow).
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b`, rounded down.
    Div,
    /// `div_ceil(a, b)`: `a / b` rounded up.
    DivCeil,
    /// Ends one extent: the value on the stack is the extent.
    End,
}

/// What an extent is evaluated against: the launch's by-value params and its geometry.
#[derive(Debug, Clone, Copy)]
pub struct ExtentEnv<'a> {
    /// The by-value params, in declaration order.
    pub params: &'a [ParamValue],
    /// `gridDim.{x,y,z}`.
    pub grid: [u32; 3],
    /// `blockDim.{x,y,z}`.
    pub block: [u32; 3],
}

/// Why an extent has no value for a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtentProblem {
    /// A step leaves `u64` (a product or sum too large, a difference below zero).
    Overflow,
    /// A division or `div_ceil` by zero.
    DivisionByZero,
    /// A signed integer param is negative.
    Negative {
        /// The param's index among the by-value params.
        param: u16,
        /// Its value.
        value: i64,
    },
    /// A param that is missing or not an integer (a spec `validate` refuses prevents it).
    NotInteger {
        /// The param's index among the by-value params.
        param: u16,
    },
    /// The program is not well formed (a spec `validate` refuses prevents it).
    Malformed,
}

impl fmt::Display for ExtentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Overflow => f.write_str("it overflows 64-bit unsigned arithmetic"),
            Self::DivisionByZero => f.write_str("it divides by zero"),
            Self::Negative { param, value } => write!(f, "param {param} is negative ({value})"),
            Self::NotInteger { param } => write!(f, "param {param} is not an integer"),
            Self::Malformed => f.write_str("the extent program is malformed"),
        }
    }
}

/// The value of an integer param as an extent ingredient.
#[inline]
fn param_value(env: &ExtentEnv<'_>, param: u16) -> Result<u64, ExtentProblem> {
    let signed =
        |value: i64| u64::try_from(value).map_err(|_| ExtentProblem::Negative { param, value });
    match env.params.get(usize::from(param)) {
        Some(ParamValue::U8(v)) => Ok(u64::from(*v)),
        Some(ParamValue::U16(v)) => Ok(u64::from(*v)),
        Some(ParamValue::U32(v)) => Ok(u64::from(*v)),
        Some(ParamValue::U64(v)) => Ok(*v),
        Some(ParamValue::I8(v)) => signed(i64::from(*v)),
        Some(ParamValue::I16(v)) => signed(i64::from(*v)),
        Some(ParamValue::I32(v)) => signed(i64::from(*v)),
        Some(ParamValue::I64(v)) => signed(*v),
        _ => Err(ExtentProblem::NotInteger { param }),
    }
}

/// Evaluates the program that starts at `*cursor` in `code`, leaving `*cursor` just past its
/// `End` (also when it has no value, so the next program can still be evaluated). Checked
/// arithmetic throughout; a fixed stack of [`MAX_EXTENT_DEPTH`].
#[inline]
pub fn eval_next(
    code: &[ExtentOp],
    cursor: &mut usize,
    env: &ExtentEnv<'_>,
) -> Result<u64, ExtentProblem> {
    let value = eval_program(code, cursor, env);
    let ended = cursor
        .checked_sub(1)
        .is_some_and(|last| code.get(last) == Some(&ExtentOp::End));
    if value.is_err() && !ended {
        while let Some(&op) = code.get(*cursor) {
            *cursor += 1;
            if op == ExtentOp::End {
                break;
            }
        }
    }
    value
}

#[inline]
fn eval_program(
    code: &[ExtentOp],
    cursor: &mut usize,
    env: &ExtentEnv<'_>,
) -> Result<u64, ExtentProblem> {
    let mut stack = [0u64; MAX_EXTENT_DEPTH];
    let mut depth = 0usize;
    while let Some(&op) = code.get(*cursor) {
        *cursor += 1;
        let value = match op {
            ExtentOp::Lit(value) => value,
            ExtentOp::Param(p) => param_value(env, p)?,
            ExtentOp::Grid(axis) => u64::from(axis_of(env.grid, axis)?),
            ExtentOp::Block(axis) => u64::from(axis_of(env.block, axis)?),
            ExtentOp::End => {
                return match depth {
                    1 => Ok(stack[0]),
                    _ => Err(ExtentProblem::Malformed),
                };
            }
            binary => {
                if depth < 2 {
                    return Err(ExtentProblem::Malformed);
                }
                depth -= 1;
                let (a, b) = (stack[depth - 1], stack[depth]);
                stack[depth - 1] = match binary {
                    ExtentOp::Add => a.checked_add(b).ok_or(ExtentProblem::Overflow)?,
                    ExtentOp::Sub => a.checked_sub(b).ok_or(ExtentProblem::Overflow)?,
                    ExtentOp::Mul => a.checked_mul(b).ok_or(ExtentProblem::Overflow)?,
                    ExtentOp::Div => a.checked_div(b).ok_or(ExtentProblem::DivisionByZero)?,
                    _ => {
                        if b == 0 {
                            return Err(ExtentProblem::DivisionByZero);
                        }
                        a.div_ceil(b)
                    }
                };
                continue;
            }
        };
        *stack.get_mut(depth).ok_or(ExtentProblem::Malformed)? = value;
        depth += 1;
    }
    Err(ExtentProblem::Malformed)
}

fn axis_of(dims: [u32; 3], axis: u8) -> Result<u32, ExtentProblem> {
    dims.get(usize::from(axis))
        .copied()
        .ok_or(ExtentProblem::Malformed)
}

/// Writes the program starting at `*cursor` as infix text (`m * k`, `div_ceil(n, 256)`),
/// naming params through `name`; leaves `*cursor` past its `End`. Parenthesizes only where
/// precedence needs it, so text parsed back gives the same program.
pub(crate) fn write_infix(
    code: &[ExtentOp],
    cursor: &mut usize,
    name: &dyn Fn(u16) -> String,
) -> String {
    // (text, precedence): 3 for leaves and calls, 2 for `*` `/`, 1 for `+` `-`.
    let mut stack: Vec<(String, u8)> = Vec::new();
    while let Some(&op) = code.get(*cursor) {
        *cursor += 1;
        let leaf = match op {
            ExtentOp::Lit(value) => Some(value.to_string()),
            ExtentOp::Param(p) => Some(name(p)),
            ExtentOp::Grid(axis) => Some(format!("grid.{}", axis_name(axis))),
            ExtentOp::Block(axis) => Some(format!("block.{}", axis_name(axis))),
            ExtentOp::End => break,
            _ => None,
        };
        if let Some(text) = leaf {
            stack.push((text, 3));
            continue;
        }
        let (b, b_prec) = stack.pop().unwrap_or_else(|| ("?".to_owned(), 3));
        let (a, a_prec) = stack.pop().unwrap_or_else(|| ("?".to_owned(), 3));
        let (symbol, prec) = match op {
            ExtentOp::Add => ("+", 1),
            ExtentOp::Sub => ("-", 1),
            ExtentOp::Mul => ("*", 2),
            ExtentOp::Div => ("/", 2),
            _ => {
                stack.push((format!("div_ceil({a}, {b})"), 3));
                continue;
            }
        };
        let a = if a_prec < prec { format!("({a})") } else { a };
        // Left-associative: a right operand of the same precedence keeps its parentheses.
        let b = if b_prec <= prec { format!("({b})") } else { b };
        stack.push((format!("{a} {symbol} {b}"), prec));
    }
    stack.pop().map(|(text, _)| text).unwrap_or_default()
}

/// `x`, `y`, `z`.
pub(crate) fn axis_name(axis: u8) -> char {
    match axis {
        0 => 'x',
        1 => 'y',
        2 => 'z',
        _ => '?',
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(params: &[ParamValue]) -> ExtentEnv<'_> {
        ExtentEnv {
            params,
            grid: [4, 2, 1],
            block: [256, 1, 1],
        }
    }

    #[test]
    fn evaluates_with_checked_arithmetic() {
        use ExtentOp::*;
        let params = [ParamValue::U32(3), ParamValue::I32(5), ParamValue::I32(-1)];
        let code = [
            Param(0),
            Param(1),
            Mul,
            End, // m * k
            Grid(0),
            Lit(7),
            Add,
            End, // grid.x + 7
            Param(1),
            Lit(2),
            DivCeil,
            End, // div_ceil(k, 2)
            Lit(u64::MAX),
            Lit(2),
            Mul,
            End,
            Lit(1),
            Lit(0),
            Div,
            End,
            Param(2),
            End,
            Lit(0),
            Lit(1),
            Sub,
            End,
        ];
        let env = env(&params);
        let mut cursor = 0;
        let mut next = || eval_next(&code, &mut cursor, &env);
        assert_eq!(next(), Ok(15));
        assert_eq!(next(), Ok(11));
        assert_eq!(next(), Ok(3));
        assert_eq!(next(), Err(ExtentProblem::Overflow));
        assert_eq!(next(), Err(ExtentProblem::DivisionByZero));
        assert_eq!(
            next(),
            Err(ExtentProblem::Negative {
                param: 2,
                value: -1
            })
        );
        assert_eq!(next(), Err(ExtentProblem::Overflow));
    }

    #[test]
    fn prints_with_minimal_parentheses() {
        use ExtentOp::*;
        let name = |p: u16| ["m", "n", "k"][usize::from(p)].to_owned();
        let print = |code: &[ExtentOp]| write_infix(code, &mut 0, &name);
        assert_eq!(print(&[Param(0), Param(2), Mul, End]), "m * k");
        assert_eq!(
            print(&[Param(0), Param(1), Add, Param(2), Mul, End]),
            "(m + n) * k"
        );
        assert_eq!(
            print(&[Param(0), Param(1), Param(2), Sub, Sub, End]),
            "m - (n - k)"
        );
        assert_eq!(
            print(&[Param(0), Lit(256), DivCeil, Block(1), Mul, End]),
            "div_ceil(m, 256) * block.y"
        );
    }
}
