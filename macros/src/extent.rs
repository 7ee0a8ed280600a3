//! Extent expressions of `abi = custom` kernels (`#[len(m * k)]`, `covers = n`), checked and
//! compiled to the postfix program jitseam evaluates at every launch. Every error is spanned at
//! the offending token.

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::{BinOp, Error, Expr, Lit, Member};

/// Deepest operand stack jitseam evaluates an extent with (`jitseam::abi::MAX_EXTENT_DEPTH`).
const MAX_DEPTH: usize = 16;

/// One step of a compiled extent, mirroring `jitseam::abi::ExtentOp`.
#[derive(Clone, Copy)]
pub(crate) enum Op {
    Lit(u64),
    Param(u16),
    Grid(u8),
    Block(u8),
    Add,
    Sub,
    Mul,
    Div,
    DivCeil,
    End,
}

impl Op {
    /// `::jitseam::__private::ExtentOp::Mul`, spanned at `span`.
    pub(crate) fn tokens(self, span: Span) -> TokenStream {
        let path = quote_spanned!(span=> ::jitseam::__private::ExtentOp);
        match self {
            Self::Lit(value) => quote_spanned!(span=> #path::Lit(#value)),
            Self::Param(p) => quote_spanned!(span=> #path::Param(#p)),
            Self::Grid(axis) => quote_spanned!(span=> #path::Grid(#axis)),
            Self::Block(axis) => quote_spanned!(span=> #path::Block(#axis)),
            Self::Add => quote_spanned!(span=> #path::Add),
            Self::Sub => quote_spanned!(span=> #path::Sub),
            Self::Mul => quote_spanned!(span=> #path::Mul),
            Self::Div => quote_spanned!(span=> #path::Div),
            Self::DivCeil => quote_spanned!(span=> #path::DivCeil),
            Self::End => quote_spanned!(span=> #path::End),
        }
    }
}

/// What a name in an extent may refer to.
pub(crate) enum Named {
    /// By-value param number `index` (among the by-value params); `integer` when it is one.
    Param {
        index: u16,
        integer: bool,
        ty: &'static str,
    },
    /// A pointer operand.
    Pointer,
}

/// Where the extent sits: on a pointer (`#[len]`) or as the covered count (`covers`), which
/// decides the geometry and so cannot name it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Site {
    Len,
    Covers,
}

impl Site {
    fn what(self) -> &'static str {
        match self {
            Self::Len => "an extent",
            Self::Covers => "`covers`",
        }
    }
}

/// Compiles `expr` onto `code` (postfix, ending with `End`), resolving names with `lookup`.
pub(crate) fn compile(
    expr: &Expr,
    site: Site,
    lookup: &dyn Fn(&str) -> Option<Named>,
    code: &mut Vec<Op>,
) -> syn::Result<()> {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    emit(expr, site, lookup, code, &mut depth, &mut deepest)?;
    if deepest > MAX_DEPTH {
        return Err(Error::new(
            expr.span(),
            format!(
                "this extent nests too deeply: it needs a stack of {deepest}, at most {MAX_DEPTH}"
            ),
        ));
    }
    code.push(Op::End);
    Ok(())
}

fn emit(
    expr: &Expr,
    site: Site,
    lookup: &dyn Fn(&str) -> Option<Named>,
    code: &mut Vec<Op>,
    depth: &mut usize,
    deepest: &mut usize,
) -> syn::Result<()> {
    let mut push = |op: Op, code: &mut Vec<Op>| {
        code.push(op);
        *depth += 1;
        *deepest = (*deepest).max(*depth);
    };
    match expr {
        Expr::Paren(inner) => emit(&inner.expr, site, lookup, code, depth, deepest),
        Expr::Group(inner) => emit(&inner.expr, site, lookup, code, depth, deepest),
        Expr::Lit(lit) => match &lit.lit {
            Lit::Int(int) if int.suffix().is_empty() => {
                let value = int.base10_parse::<u64>().map_err(|_| {
                    Error::new(
                        int.span(),
                        "this literal does not fit a 64-bit unsigned extent",
                    )
                })?;
                push(Op::Lit(value), code);
                Ok(())
            }
            Lit::Int(int) => Err(Error::new(
                int.span(),
                format!(
                    "write extent literals without a suffix: `{}`",
                    int.base10_digits()
                ),
            )),
            other => Err(Error::new(
                other.span(),
                format!(
                    "{} counts elements: only integer literals, as in `256`",
                    site.what()
                ),
            )),
        },
        Expr::Path(path) => {
            let Some(ident) = path.path.get_ident() else {
                return Err(Error::new(
                    path.span(),
                    format!(
                        "{} names the kernel's integer params by their plain names",
                        site.what()
                    ),
                ));
            };
            let name = ident.to_string();
            match lookup(&name) {
                Some(Named::Param {
                    index,
                    integer: true,
                    ..
                }) => {
                    push(Op::Param(index), code);
                    Ok(())
                }
                Some(Named::Param { ty, .. }) => Err(Error::new(
                    ident.span(),
                    format!(
                        "`{name}` is a param of type `{ty}`: {} takes integer params only",
                        site.what()
                    ),
                )),
                Some(Named::Pointer) => Err(Error::new(
                    ident.span(),
                    format!(
                        "`{name}` is a pointer: {} names integer by-value params{}",
                        site.what(),
                        geometry_hint(site)
                    ),
                )),
                None if name == "grid" || name == "block" => Err(Error::new(
                    ident.span(),
                    format!("`{name}` needs an axis: `{name}.x`, `{name}.y` or `{name}.z`"),
                )),
                None => Err(Error::new(
                    ident.span(),
                    format!(
                        "unknown name `{name}` in {}: it may name the kernel's integer params{}",
                        site.what(),
                        geometry_hint(site)
                    ),
                )),
            }
        }
        Expr::Field(field) => {
            let base = match &*field.base {
                Expr::Path(path) => path.path.get_ident().map(ToString::to_string),
                _ => None,
            };
            let Some(base @ ("grid" | "block")) = base.as_deref() else {
                return Err(Error::new(
                    field.span(),
                    format!(
                        "unsupported expression in {}: only `grid.x/y/z` and `block.x/y/z` have fields",
                        site.what()
                    ),
                ));
            };
            if site == Site::Covers {
                return Err(Error::new(
                    field.span(),
                    format!(
                        "`covers` cannot name `{base}`: the covered count decides the launch geometry"
                    ),
                ));
            }
            let axis = match &field.member {
                Member::Named(axis) if axis == "x" => 0,
                Member::Named(axis) if axis == "y" => 1,
                Member::Named(axis) if axis == "z" => 2,
                member => {
                    let spelled = match member {
                        Member::Named(ident) => ident.to_string(),
                        Member::Unnamed(index) => index.index.to_string(),
                    };
                    return Err(Error::new(
                        member.span(),
                        format!(
                            "`{base}.{spelled}` is not a launch dimension: use `{base}.x`, `{base}.y` or `{base}.z`"
                        ),
                    ));
                }
            };
            push(
                if base == "grid" {
                    Op::Grid(axis)
                } else {
                    Op::Block(axis)
                },
                code,
            );
            Ok(())
        }
        Expr::Binary(binary) => {
            let op = match binary.op {
                BinOp::Add(_) => Op::Add,
                BinOp::Sub(_) => Op::Sub,
                BinOp::Mul(_) => Op::Mul,
                BinOp::Div(_) => Op::Div,
                other => {
                    let spelled = quote::ToTokens::to_token_stream(&other).to_string();
                    return Err(Error::new(
                        other.span(),
                        format!(
                            "unsupported operator `{spelled}` in {}: use `+`, `-`, `*`, `/` or `div_ceil(a, b)`",
                            site.what()
                        ),
                    ));
                }
            };
            emit(&binary.left, site, lookup, code, depth, deepest)?;
            emit(&binary.right, site, lookup, code, depth, deepest)?;
            code.push(op);
            *depth -= 1;
            Ok(())
        }
        Expr::Call(call) => {
            let is_div_ceil = matches!(&*call.func, Expr::Path(p) if p.path.is_ident("div_ceil"));
            if !is_div_ceil {
                return Err(Error::new(
                    call.func.span(),
                    format!(
                        "unknown function in {}: the only one is `div_ceil(a, b)`",
                        site.what()
                    ),
                ));
            }
            if call.args.len() != 2 {
                return Err(Error::new(
                    call.paren_token.span.join(),
                    format!(
                        "`div_ceil` takes two arguments, as in `div_ceil(n, 256)`; found {}",
                        call.args.len()
                    ),
                ));
            }
            for arg in &call.args {
                emit(arg, site, lookup, code, depth, deepest)?;
            }
            code.push(Op::DivCeil);
            *depth -= 1;
            Ok(())
        }
        other => Err(Error::new(
            other.span(),
            format!(
                "unsupported expression in {}: use integer literals, integer params, `grid.x/y/z`, `block.x/y/z`, `+ - * /`, `div_ceil(a, b)` and parentheses",
                site.what()
            ),
        )),
    }
}

fn geometry_hint(site: Site) -> &'static str {
    match site {
        Site::Len => ", `grid.x/y/z` and `block.x/y/z`",
        Site::Covers => "",
    }
}
