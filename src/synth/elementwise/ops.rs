//! The ops the elementwise synthesizer knows, and the PTX each one becomes.
//!
//! Every sequence here uses only instructions NVRTC itself emits for elementwise kernels (plain
//! `add`/`sub`/`mul`, `div.rn`, `fma.rn`, `neg`, `abs`, `min`, `max`, `sqrt.rn`, `rcp.rn`,
//! `ex2.approx.ftz.f32`, `lg2.approx.ftz.f32`, `tanh.approx.f32`, `setp`, `selp`), so the
//! emulator that runs NVRTC's output runs ours too.
//!
//! Accuracy (f32, and f16/bf16 which compute in f32):
//! - `add sub mul div sqrt neg abs min max relu` and the scalar ops are IEEE round-to-nearest
//!   (ptxas may contract a `mul` feeding an `add` into one `fma`, as NVRTC's default does).
//! - `exp`: `ex2.approx` on `x·log2(e)` plus a first-order correction for the rounding of that
//!   product, so the error stays within a few ulp over the whole range instead of growing with
//!   `|x|` as in `__expf`; results below `2^-126` flush to zero (`.ftz`).
//! - `log`: `lg2.approx · ln 2`, except on `[0.75, 1.5]` where that has a large *relative*
//!   error (the result is near zero) and an `atanh` series is used instead; subnormal inputs
//!   flush to zero and give `-inf`.
//! - `tanh`: `tanh.approx.f32`, maximum relative error about `2^-11` (PTX ISA); compare with a
//!   tolerance. `sigmoid` and `silu` build on `exp` with `rcp.rn` / `div.rn`.
//! - `min`/`max`/`relu` follow PTX: if one operand is NaN the other is returned.
//!
//! f64 has no approximate transcendental instructions. Computing them through f32 would
//! silently return single-precision results in a double kernel, so `exp log tanh sigmoid silu`
//! are *declined* for f64 (`SynthDecline::UnsupportedOp`) rather than approximated.

use super::builder::{Body, Class, Compute, Reg};

/// One elementwise operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Neg,
    Abs,
    Relu,
    Exp,
    Log,
    Sqrt,
    Tanh,
    Sigmoid,
    Silu,
    AddScalar,
    MulScalar,
}

impl Op {
    /// Every op, in the order the documentation lists them.
    pub(crate) const ALL: [Op; 17] = [
        Op::Add,
        Op::Sub,
        Op::Mul,
        Op::Div,
        Op::Max,
        Op::Min,
        Op::Neg,
        Op::Abs,
        Op::Relu,
        Op::Exp,
        Op::Log,
        Op::Sqrt,
        Op::Tanh,
        Op::Sigmoid,
        Op::Silu,
        Op::AddScalar,
        Op::MulScalar,
    ];

    /// The region spelling.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Sub => "sub",
            Op::Mul => "mul",
            Op::Div => "div",
            Op::Max => "max",
            Op::Min => "min",
            Op::Neg => "neg",
            Op::Abs => "abs",
            Op::Relu => "relu",
            Op::Exp => "exp",
            Op::Log => "log",
            Op::Sqrt => "sqrt",
            Op::Tanh => "tanh",
            Op::Sigmoid => "sigmoid",
            Op::Silu => "silu",
            Op::AddScalar => "add_scalar",
            Op::MulScalar => "mul_scalar",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Operand subtrees the op takes.
    pub(crate) const fn arity(self) -> usize {
        match self {
            Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Max | Op::Min => 2,
            _ => 1,
        }
    }

    /// Scalars (runtime params) the op takes.
    pub(crate) const fn scalars(self) -> usize {
        match self {
            Op::AddScalar | Op::MulScalar => 1,
            _ => 0,
        }
    }

    /// Whether the op can be computed exactly enough in `compute` (see the module docs).
    pub(crate) const fn supports(self, compute: Compute) -> bool {
        match compute {
            Compute::F32 => true,
            Compute::F64 => !matches!(self, Op::Exp | Op::Log | Op::Tanh | Op::Sigmoid | Op::Silu),
        }
    }

    /// Emits the op on `args` (compute-type registers) and `params` (its scalars, loaded as
    /// compute-type registers) and returns the register holding the result.
    pub(crate) fn emit(self, b: &mut Body, c: Compute, args: &[Reg], params: &[Reg]) -> Reg {
        let t = c.ty();
        // Arity and scalar counts were validated while lowering; a missing register here would
        // be a lowering bug, and the PTX would then fail `load()`/ptxas rather than run wrong.
        let x = args.first().copied().unwrap_or(Reg::NONE);
        let y = args.get(1).copied().unwrap_or(Reg::NONE);
        let p = params.first().copied().unwrap_or(Reg::NONE);
        // The multi-instruction ops allocate their own result register.
        match self {
            Op::Exp => return exp_f32(b, x),
            Op::Log => return log_f32(b, x),
            _ => {}
        }
        let d = b.reg(c.class());
        match self {
            Op::Add => b.ins(format_args!("add.{t} {d}, {x}, {y}")),
            Op::Sub => b.ins(format_args!("sub.{t} {d}, {x}, {y}")),
            Op::Mul => b.ins(format_args!("mul.{t} {d}, {x}, {y}")),
            Op::Div => b.ins(format_args!("div.rn.{t} {d}, {x}, {y}")),
            Op::Max => b.ins(format_args!("max.{t} {d}, {x}, {y}")),
            Op::Min => b.ins(format_args!("min.{t} {d}, {x}, {y}")),
            Op::Neg => b.ins(format_args!("neg.{t} {d}, {x}")),
            Op::Abs => b.ins(format_args!("abs.{t} {d}, {x}")),
            Op::Relu => b.ins(format_args!("max.{t} {d}, {x}, {}", c.imm(0.0))),
            Op::Sqrt => b.ins(format_args!("sqrt.rn.{t} {d}, {x}")),
            Op::AddScalar => b.ins(format_args!("add.{t} {d}, {x}, {p}")),
            Op::MulScalar => b.ins(format_args!("mul.{t} {d}, {x}, {p}")),
            Op::Exp | Op::Log => {}
            Op::Tanh => b.ins(format_args!("tanh.approx.f32 {d}, {x}")),
            Op::Sigmoid => {
                let den = one_plus_exp_neg(b, x);
                b.ins(format_args!("rcp.rn.f32 {d}, {den}"));
            }
            Op::Silu => {
                let den = one_plus_exp_neg(b, x);
                b.ins(format_args!("div.rn.f32 {d}, {x}, {den}"));
            }
        }
        d
    }
}

fn f32_imm(v: f32) -> String {
    format!("0f{:08X}", v.to_bits())
}

/// `1 + exp(-x)`, the denominator of sigmoid and silu.
fn one_plus_exp_neg(b: &mut Body, x: Reg) -> Reg {
    let nx = b.reg(Class::F32);
    b.ins(format_args!("neg.f32 {nx}, {x}"));
    let e = exp_f32(b, nx);
    let den = b.reg(Class::F32);
    b.ins(format_args!("add.f32 {den}, {e}, {}", f32_imm(1.0)));
    den
}

/// `exp(x) = 2^(x·log2 e)`. The product is rounded to `p`; `e` recovers what the rounding and
/// the f32 truncation of `log2 e` lost (`fma` gives the product's exact error), and the result
/// is corrected by `2^e ≈ 1 + e·ln 2` (`|e| < 2^-16`, so the quadratic term is below an ulp).
/// The correction is skipped only where `ex2` is not finite (`|p| ≥ 128`: overflow to inf, or
/// a result far below the flush threshold) or `p` is NaN, since there it could turn `inf · 0`
/// into NaN. It is *not* skipped on `126 ≤ p < 128`: `e` is largest there (it grows with
/// `|x|`), and `ex2(p)` alone is off by up to ~64 ulp for `x` in `[87.3, 88.7]`.
fn exp_f32(b: &mut Body, x: Reg) -> Reg {
    let log2e = std::f64::consts::LOG2_E as f32;
    let log2e_lo = (std::f64::consts::LOG2_E - f64::from(log2e)) as f32;
    let ln2 = std::f64::consts::LN_2 as f32;
    b.comment("exp: ex2.approx with a correction for the rounding of x*log2(e)");
    let p = b.reg(Class::F32);
    b.ins(format_args!("mul.f32 {p}, {x}, {}", f32_imm(log2e)));
    let np = b.reg(Class::F32);
    b.ins(format_args!("neg.f32 {np}, {p}"));
    let e0 = b.reg(Class::F32);
    b.ins(format_args!(
        "fma.rn.f32 {e0}, {x}, {}, {np}",
        f32_imm(log2e)
    ));
    let e = b.reg(Class::F32);
    b.ins(format_args!(
        "fma.rn.f32 {e}, {x}, {}, {e0}",
        f32_imm(log2e_lo)
    ));
    let r = b.reg(Class::F32);
    b.ins(format_args!("ex2.approx.ftz.f32 {r}, {p}"));
    let t = b.reg(Class::F32);
    b.ins(format_args!("mul.f32 {t}, {e}, {}", f32_imm(ln2)));
    let corrected = b.reg(Class::F32);
    b.ins(format_args!("fma.rn.f32 {corrected}, {r}, {t}, {r}"));
    let ap = b.reg(Class::F32);
    b.ins(format_args!("abs.f32 {ap}, {p}"));
    let small = b.reg(Class::Pred);
    b.ins(format_args!(
        "setp.lt.f32 {small}, {ap}, {}",
        f32_imm(128.0)
    ));
    let d = b.reg(Class::F32);
    b.ins(format_args!("selp.f32 {d}, {corrected}, {r}, {small}"));
    d
}

/// `log(x)`: `lg2.approx(x)·ln 2` is accurate in *absolute* terms, which near `x = 1` (result
/// near 0) is a large relative error. On `[0.75, 1.5]` use `2·atanh(s)`, `s = (x-1)/(x+1)`
/// (`x - 1` is exact there), summed to `s^11`: `|s| ≤ 0.2`, so the first omitted term is below
/// `2^-28` relative.
fn log_f32(b: &mut Body, x: Reg) -> Reg {
    let ln2 = std::f64::consts::LN_2 as f32;
    b.comment("log: lg2.approx*ln2, or an atanh series on [0.75, 1.5]");
    let l2 = b.reg(Class::F32);
    b.ins(format_args!("lg2.approx.ftz.f32 {l2}, {x}"));
    let far = b.reg(Class::F32);
    b.ins(format_args!("mul.f32 {far}, {l2}, {}", f32_imm(ln2)));
    let num = b.reg(Class::F32);
    b.ins(format_args!("sub.f32 {num}, {x}, {}", f32_imm(1.0)));
    let den = b.reg(Class::F32);
    b.ins(format_args!("add.f32 {den}, {x}, {}", f32_imm(1.0)));
    let s = b.reg(Class::F32);
    b.ins(format_args!("div.rn.f32 {s}, {num}, {den}"));
    let s2 = b.reg(Class::F32);
    b.ins(format_args!("mul.f32 {s2}, {s}, {s}"));
    // Horner over 1/11, 1/9, …, 1/3, 1 in s².
    let mut acc = b.reg(Class::F32);
    b.ins(format_args!(
        "fma.rn.f32 {acc}, {s2}, {}, {}",
        f32_imm(1.0 / 11.0),
        f32_imm(1.0 / 9.0)
    ));
    for k in [7.0f32, 5.0, 3.0, 1.0] {
        let next = b.reg(Class::F32);
        b.ins(format_args!(
            "fma.rn.f32 {next}, {s2}, {acc}, {}",
            f32_imm(1.0 / k)
        ));
        acc = next;
    }
    let two_s = b.reg(Class::F32);
    b.ins(format_args!("add.f32 {two_s}, {s}, {s}"));
    let near = b.reg(Class::F32);
    b.ins(format_args!("mul.f32 {near}, {two_s}, {acc}"));
    let lo = b.reg(Class::Pred);
    b.ins(format_args!("setp.ge.f32 {lo}, {x}, {}", f32_imm(0.75)));
    let hi = b.reg(Class::Pred);
    b.ins(format_args!("setp.le.f32 {hi}, {x}, {}", f32_imm(1.5)));
    let d0 = b.reg(Class::F32);
    b.ins(format_args!("selp.f32 {d0}, {near}, {far}, {lo}"));
    let d = b.reg(Class::F32);
    b.ins(format_args!("selp.f32 {d}, {d0}, {far}, {hi}"));
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_f64_declines_transcendentals() {
        for op in Op::ALL {
            assert_eq!(Op::from_name(op.name()), Some(op));
            assert!(op.supports(Compute::F32));
        }
        assert_eq!(Op::from_name("gelu"), None);
        let f64_declined: Vec<_> = Op::ALL
            .into_iter()
            .filter(|op| !op.supports(Compute::F64))
            .map(Op::name)
            .collect();
        assert_eq!(f64_declined, ["exp", "log", "tanh", "sigmoid", "silu"]);
    }

    /// The f32 exp and log recipes, replayed on the host with the same constants and roundings
    /// (ex2/lg2 computed exactly here), stay within a few ulp of the correctly rounded result.
    /// This checks the algorithm; the emulator differential test will check the PTX.
    #[test]
    fn exp_and_log_recipes_are_accurate_on_the_host() {
        let log2e = std::f64::consts::LOG2_E as f32;
        let log2e_lo = (std::f64::consts::LOG2_E - f64::from(log2e)) as f32;
        let ln2 = std::f64::consts::LN_2 as f32;
        let ulps = |got: f32, want: f64| {
            let want = want as f32;
            (got.to_bits() as i64 - want.to_bits() as i64).unsigned_abs()
        };
        let mut x = -87.0f32;
        while x < 88.72 {
            let p = x * log2e;
            let e = x.mul_add(log2e_lo, x.mul_add(log2e, -p));
            let r = (f64::from(p).exp2()) as f32;
            let corrected = r.mul_add(e * ln2, r);
            // The kernel's selection: uncorrected only where `ex2` is not finite.
            let got = if p.abs() < 128.0 { corrected } else { r };
            assert!(ulps(got, f64::from(x).exp()) <= 2, "exp({x}) = {got}");
            // Densely near overflow, where the correction matters most (it used to be skipped
            // from |p| = 126 on, 64 ulp off there).
            x += if x > 87.0 { 0.0007 } else { 0.173 };
        }
        let mut x = 0.75f32;
        while x <= 1.5 {
            let s = (x - 1.0) / (x + 1.0);
            let s2 = s * s;
            let mut acc = s2.mul_add(1.0 / 11.0, 1.0 / 9.0);
            for k in [7.0f32, 5.0, 3.0, 1.0] {
                acc = s2.mul_add(acc, 1.0 / k);
            }
            let got = (s + s) * acc;
            assert!(ulps(got, f64::from(x).ln()) <= 3, "log({x}) = {got}");
            x += 0.0013;
        }
    }
}
