//! The validated kernel declaration. Every error a user can see is raised here, spanned at the
//! tokens that caused it, in lowercase without a trailing period.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Error, FnArg, Ident, Lit, LitStr, Pat, Type, Visibility};

use crate::extent::{self, Named, Op, Site};
use crate::names;
use crate::parse::{AttrArgs, Declaration, RawOption, RawValue};
use crate::scalars::{self, Scalar};

/// Largest vector, in bytes, the vectorized ABI allows (`W · size_of(T) ≤ 16`).
const MAX_VECTOR_BYTES: usize = 16;
/// Largest rank of the strided ABI.
const MAX_RANK: u8 = 8;

/// A declaration that passed every check.
pub(crate) struct Kernel {
    /// Attributes carried over to every generated item (`cfg`, lint levels).
    pub(crate) shared_attrs: Vec<Attribute>,
    /// Doc comments, for the signature type.
    pub(crate) docs: Vec<Attribute>,
    pub(crate) vis: Visibility,
    pub(crate) fn_name: Ident,
    /// The signature type: `ReluAdd`.
    pub(crate) type_name: Ident,
    /// The argument struct: `ReluAddArgs`.
    pub(crate) args_name: Ident,
    pub(crate) abi: Abi,
    pub(crate) symbol: LitStr,
    pub(crate) inputs: Vec<Operand>,
    pub(crate) outputs: Vec<Operand>,
    pub(crate) params: Vec<Param>,
    /// Every argument in declaration order (for the custom ABI the kernel's own order; for the
    /// others inputs, outputs, params, which the model enforces).
    pub(crate) order: Vec<Field>,
    /// The extents of an `abi = custom` kernel.
    pub(crate) custom: Option<Custom>,
}

/// One argument by its kind and index among its kind.
#[derive(Clone, Copy)]
pub(crate) enum Field {
    Input(usize),
    Output(usize),
    Param(usize),
}

/// The compiled extents of a custom kernel: one program per pointer in declaration order,
/// then the covered count's, each ending with `Op::End`; each op with the span of the tokens
/// it came from.
pub(crate) struct Custom {
    pub(crate) code: Vec<(Op, Span)>,
    pub(crate) covers: bool,
}

/// The ABI, with the span of its spelling for assertions about it.
#[derive(Clone, Copy)]
pub(crate) enum Abi {
    Scalar,
    Vectorized { width: u8, span: Span },
    Strided { rank: u8 },
    Custom,
}

/// An `In<T>` or `Out<T>` argument.
pub(crate) struct Operand {
    pub(crate) name: Ident,
    pub(crate) elem: Elem,
    /// The marker as written (`In`, `jitseam::Out`), generics removed. The expansion makes
    /// rustc resolve it, so the declaration means what it says: `In` must be `jitseam::In`.
    pub(crate) marker: syn::Path,
    /// The whole `In<T>`, so errors about what was passed for it point at it.
    pub(crate) span: Span,
}

/// An operand's element type: a scalar the macro knows by name, or any other type, left to the
/// `Element` bound (a type alias of `f32` is fine; `String` is refused by rustc there).
pub(crate) enum Elem {
    Known { scalar: Scalar, span: Span },
    Other(Box<Type>),
}

/// A by-value param.
pub(crate) struct Param {
    pub(crate) name: Ident,
    pub(crate) scalar: Scalar,
    pub(crate) span: Span,
}

/// Where an argument falls in the required order: inputs, then outputs, then params.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    Input,
    Output,
    Param,
}

impl Role {
    fn article(self) -> &'static str {
        match self {
            Self::Input => "an input",
            Self::Output => "an output",
            Self::Param => "a param",
        }
    }
}

impl Kernel {
    pub(crate) fn new(args: AttrArgs, item: Declaration) -> syn::Result<Self> {
        let options = Options::new(args)?;
        let Declaration {
            attrs,
            vis,
            sig,
            body,
        } = item;
        check_signature_shape(&sig, body.as_ref())?;
        let (shared_attrs, docs) = split_attrs(attrs)?;
        let abi = options.abi.ok_or_else(|| {
            Error::new(
                Span::call_site(),
                "missing `abi` option: write `abi = scalar`, `abi = vectorized(W)`, `abi = strided(R)` or `abi = custom`",
            )
        })?;
        if let (Some((key, _)), false) = (&options.covers, matches!(abi, Abi::Custom)) {
            return Err(Error::new(
                key.span(),
                "`covers` is an option of `abi = custom` kernels: the other abis always cover `n` elements",
            ));
        }
        let symbol = options
            .symbol
            .unwrap_or_else(|| LitStr::new(&names::unraw(&sig.ident), sig.ident.span()));
        let (inputs, outputs, params, order, lens) = arguments(&sig, matches!(abi, Abi::Custom))?;
        let custom = match abi {
            Abi::Custom => Some(custom_extents(
                &inputs,
                &outputs,
                &params,
                &order,
                lens,
                options.covers,
            )?),
            _ => None,
        };
        if outputs.is_empty() {
            return Err(Error::new(
                sig.paren_token.span.join(),
                "a kernel needs at least one output: declare it as `name: Out<T>` after the inputs",
            ));
        }
        if let Abi::Vectorized { width, .. } = abi {
            check_vector_width(width, inputs.iter().chain(&outputs))?;
        }
        let type_name = names::upper_camel(&sig.ident);
        Ok(Self {
            shared_attrs,
            docs,
            vis,
            args_name: names::with_suffix(&type_name, "Args"),
            type_name,
            fn_name: sig.ident,
            abi,
            symbol,
            inputs,
            outputs,
            params,
            order,
            custom,
        })
    }
}

/// Compiles each pointer's `#[len]` and the `covers` expression against the params.
fn custom_extents(
    inputs: &[Operand],
    outputs: &[Operand],
    params: &[Param],
    order: &[Field],
    lens: Vec<Option<syn::Expr>>,
    covers: Option<(Ident, syn::Expr)>,
) -> syn::Result<Custom> {
    let lookup = |name: &str| -> Option<Named> {
        if let Some(index) = params.iter().position(|p| p.name == name) {
            let scalar = params[index].scalar;
            return Some(Named::Param {
                index: u16::try_from(index).unwrap_or(u16::MAX),
                integer: !matches!(scalar.name, "f32" | "f64" | "f16" | "bf16"),
                ty: scalar.name,
            });
        }
        inputs
            .iter()
            .chain(outputs)
            .any(|o| o.name == name)
            .then_some(Named::Pointer)
    };
    let mut code = Vec::new();
    for (field, len) in order.iter().zip(lens) {
        let operand = match *field {
            Field::Input(k) => &inputs[k],
            Field::Output(m) => &outputs[m],
            Field::Param(_) => continue,
        };
        let Some(len) = len else {
            return Err(Error::new(
                operand.name.span(),
                format!(
                    "pointer `{name}` needs its extent: write `#[len(EXPR)]` before it, as in `#[len(n)] {name}: ...`",
                    name = operand.name
                ),
            ));
        };
        push_program(&len, Site::Len, &lookup, &mut code)?;
    }
    let covered = covers.is_some();
    if let Some((_, expr)) = covers {
        push_program(&expr, Site::Covers, &lookup, &mut code)?;
    }
    Ok(Custom {
        code,
        covers: covered,
    })
}

fn push_program(
    expr: &syn::Expr,
    site: Site,
    lookup: &dyn Fn(&str) -> Option<Named>,
    code: &mut Vec<(Op, Span)>,
) -> syn::Result<()> {
    let mut ops = Vec::new();
    extent::compile(expr, site, lookup, &mut ops)?;
    let span = expr.span();
    code.extend(ops.into_iter().map(|op| (op, span)));
    Ok(())
}

/// The options after checking names, values and duplicates.
struct Options {
    abi: Option<Abi>,
    symbol: Option<LitStr>,
    /// `covers = EXPR`, with its key for errors about the option itself.
    covers: Option<(Ident, syn::Expr)>,
}

impl Options {
    fn new(args: AttrArgs) -> syn::Result<Self> {
        let mut options = Self {
            abi: None,
            symbol: None,
            covers: None,
        };
        let mut seen: Vec<String> = Vec::new();
        for RawOption { key, value } in args.options {
            let name = key.to_string();
            if seen.contains(&name) {
                return Err(Error::new(
                    key.span(),
                    format!("duplicate `{name}` option: each option may be given once"),
                ));
            }
            match name.as_str() {
                "abi" => options.abi = Some(abi(value)?),
                "symbol" => options.symbol = Some(symbol(value)?),
                "covers" => match value {
                    RawValue::Expr(expr) => options.covers = Some((key.clone(), *expr)),
                    other => {
                        return Err(Error::new(
                            value_span(&other),
                            "`covers` takes the element count the kernel covers, as in `covers = n`",
                        ));
                    }
                },
                _ => {
                    return Err(Error::new(
                        key.span(),
                        format!("unknown option `{name}`: expected `abi`, `symbol` or `covers`"),
                    ));
                }
            }
            seen.push(name);
        }
        Ok(options)
    }
}

const ABI_SPELLINGS: &str = "expected `scalar`, `vectorized(W)` with W in 2, 4, 8, `strided(R)` with R in 1..=8, or `custom`";

fn abi(value: RawValue) -> syn::Result<Abi> {
    let RawValue::Word { name, args, parens } = value else {
        return Err(Error::new(
            value_span(&value),
            format!("invalid abi: {ABI_SPELLINGS}"),
        ));
    };
    let kind = name.to_string();
    let number = |what: &str| -> syn::Result<(u8, Span)> {
        let args = args.as_ref().ok_or_else(|| {
            Error::new(
                name.span(),
                format!("`{kind}` needs a {what}, as in `{kind}(4)`"),
            )
        })?;
        let mut values = args.iter();
        let (Some(Lit::Int(lit)), None) = (values.next(), values.next()) else {
            return Err(Error::new(
                parens.unwrap_or_else(|| name.span()),
                format!("`{kind}` takes one integer {what}, as in `{kind}(4)`"),
            ));
        };
        let value = lit
            .base10_parse::<u8>()
            .map_err(|_| Error::new(lit.span(), format!("`{lit}` is not a valid {what}")))?;
        Ok((value, lit.span()))
    };
    match kind.as_str() {
        "scalar" => match parens {
            Some(span) => Err(Error::new(span, "`scalar` takes no argument")),
            None => Ok(Abi::Scalar),
        },
        "custom" => match parens {
            Some(span) => Err(Error::new(
                span,
                "`custom` takes no argument: declare each pointer's extent with `#[len(EXPR)]`",
            )),
            None => Ok(Abi::Custom),
        },
        "vectorized" => {
            let (width, span) = number("width")?;
            if matches!(width, 2 | 4 | 8) {
                Ok(Abi::Vectorized { width, span })
            } else {
                Err(Error::new(
                    span,
                    format!(
                        "vector width {width} is not supported: the vectorized abi takes a width of 2, 4 or 8"
                    ),
                ))
            }
        }
        "strided" => {
            let (rank, span) = number("rank")?;
            if (1..=MAX_RANK).contains(&rank) {
                Ok(Abi::Strided { rank })
            } else {
                Err(Error::new(
                    span,
                    format!(
                        "rank {rank} is not supported: the strided abi takes a rank from 1 to {MAX_RANK}"
                    ),
                ))
            }
        }
        _ => Err(Error::new(
            name.span(),
            format!("unknown abi `{kind}`: {ABI_SPELLINGS}"),
        )),
    }
}

fn symbol(value: RawValue) -> syn::Result<LitStr> {
    match value {
        RawValue::Lit(Lit::Str(lit)) if !lit.value().is_empty() => Ok(lit),
        other => Err(Error::new(
            value_span(&other),
            "`symbol` takes the kernel's entry point as a non-empty string, as in `symbol = \"add_f32\"`",
        )),
    }
}

fn value_span(value: &RawValue) -> Span {
    match value {
        RawValue::Lit(lit) => lit.span(),
        RawValue::Word { name, parens, .. } => parens
            .and_then(|parens| name.span().join(parens))
            .unwrap_or_else(|| name.span()),
        RawValue::Expr(expr) => expr.span(),
    }
}

/// A kernel declaration is a plain fn signature: no body, generics, qualifiers or return type.
fn check_signature_shape(sig: &syn::Signature, body: Option<&syn::Block>) -> syn::Result<()> {
    if let Some(body) = body {
        return Err(Error::new(
            body.span(),
            "a kernel declaration has no body: end it with `;` (the kernel itself is the artifact)",
        ));
    }
    let qualifier = [
        sig.constness.map(|t| t.span),
        sig.asyncness.map(|t| t.span),
        sig.unsafety.map(|t| t.span),
        sig.abi.as_ref().map(|a| a.extern_token.span),
    ];
    if let Some(span) = qualifier.into_iter().flatten().next() {
        return Err(Error::new(
            span,
            "a kernel declaration is a plain `fn`: remove this qualifier",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(Error::new(
            sig.generics.span(),
            "a kernel declaration cannot be generic: a kernel artifact has one fixed signature",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        return Err(Error::new(
            variadic.span(),
            "a kernel declaration cannot be variadic",
        ));
    }
    if let syn::ReturnType::Type(arrow, ty) = &sig.output {
        return Err(Error::new(
            arrow.spans[0].join(ty.span()).unwrap_or(arrow.spans[0]),
            "a kernel declaration returns nothing: kernels write their results to `Out<T>` operands",
        ));
    }
    Ok(())
}

/// Attributes on the declaration: docs go to the signature type; `cfg`, `cfg_attr` and lint
/// levels go to every generated item; anything else has no meaning on the generated items.
fn split_attrs(attrs: Vec<Attribute>) -> syn::Result<(Vec<Attribute>, Vec<Attribute>)> {
    let mut shared = Vec::new();
    let mut docs = Vec::new();
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("doc") {
            docs.push(attr);
        } else if [
            "cfg", "cfg_attr", "allow", "expect", "warn", "deny", "forbid",
        ]
        .iter()
        .any(|name| path.is_ident(name))
        {
            shared.push(attr);
        } else {
            return Err(Error::new(
                attr.span(),
                "unsupported attribute on a kernel declaration: only docs, `cfg`, `cfg_attr` and lint levels carry over to the generated items",
            ));
        }
    }
    Ok((shared, docs))
}

type Arguments = (
    Vec<Operand>,
    Vec<Operand>,
    Vec<Param>,
    Vec<Field>,
    Vec<Option<syn::Expr>>,
);

/// The arguments by kind, their declaration order, and each one's `#[len(EXPR)]` (only custom
/// kernels take it; for them the order is free).
fn arguments(sig: &syn::Signature, custom: bool) -> syn::Result<Arguments> {
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let mut params: Vec<Param> = Vec::new();
    let mut order = Vec::new();
    let mut lens = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut latest: Option<(Role, Ident)> = None;
    for arg in &sig.inputs {
        let FnArg::Typed(typed) = arg else {
            return Err(Error::new(
                arg.span(),
                "a kernel declaration takes no `self`: it declares a free-standing kernel",
            ));
        };
        let Pat::Ident(pat) = &*typed.pat else {
            return Err(Error::new(
                typed.pat.span(),
                "name each kernel argument with a plain identifier",
            ));
        };
        if pat.by_ref.is_some() || pat.mutability.is_some() || pat.subpat.is_some() {
            return Err(Error::new(
                typed.pat.span(),
                "name each kernel argument with a plain identifier",
            ));
        }
        let name = pat.ident.clone();
        let text = name.to_string();
        if names.contains(&text) {
            return Err(Error::new(
                name.span(),
                format!("duplicate argument `{text}`"),
            ));
        }
        names.push(text);
        let elem = operand(&typed.ty)?;
        let role = elem.as_ref().map_or(Role::Param, |(role, ..)| *role);
        lens.push(len_attr(&typed.attrs, &name, role, custom)?);
        if !custom
            && let Some((before, before_name)) = &latest
            && *before > role
        {
            return Err(Error::new(
                name.span(),
                format!(
                    "{} `{name}` comes after {} `{before_name}`: declare inputs, then outputs, then params",
                    role.article(),
                    before.article(),
                ),
            ));
        }
        latest = Some((role, name.clone()));
        match elem {
            Some((role, elem, marker)) => {
                let operand = Operand {
                    name,
                    elem,
                    marker,
                    span: typed.ty.span(),
                };
                match role {
                    Role::Input => {
                        order.push(Field::Input(inputs.len()));
                        inputs.push(operand);
                    }
                    _ => {
                        order.push(Field::Output(outputs.len()));
                        outputs.push(operand);
                    }
                }
            }
            None => {
                order.push(Field::Param(params.len()));
                params.push(param(name, &typed.ty)?);
            }
        }
    }
    Ok((inputs, outputs, params, order, lens))
}

/// The `#[len(EXPR)]` on one argument: at most one, only on a pointer of a custom kernel; no
/// other attribute means anything on a kernel argument.
fn len_attr(
    attrs: &[Attribute],
    name: &Ident,
    role: Role,
    custom: bool,
) -> syn::Result<Option<syn::Expr>> {
    let mut found: Option<syn::Expr> = None;
    for attr in attrs {
        if !attr.path().is_ident("len") {
            return Err(Error::new(
                attr.meta.span(),
                "unsupported attribute on a kernel argument: only `#[len(EXPR)]`, on the pointers of an `abi = custom` kernel",
            ));
        }
        if !custom {
            return Err(Error::new(
                attr.meta.span(),
                "`#[len]` declares a pointer's extent in an `abi = custom` kernel; the operands of this abi all cover the launch's `n` elements",
            ));
        }
        if role == Role::Param {
            return Err(Error::new(
                attr.meta.span(),
                format!(
                    "`#[len]` belongs on a pointer (`In<T>` or `Out<T>`); `{name}` is passed by value"
                ),
            ));
        }
        if found.is_some() {
            return Err(Error::new(
                attr.meta.span(),
                format!("duplicate `#[len]` on `{name}`: a pointer has one extent"),
            ));
        }
        let expr = match &attr.meta {
            syn::Meta::List(list) => list.parse_args::<syn::Expr>()?,
            _ => {
                return Err(Error::new(
                    attr.meta.span(),
                    "`#[len]` takes the pointer's extent in parentheses, as in `#[len(n)]`",
                ));
            }
        };
        found = Some(expr);
    }
    Ok(found)
}

/// The `In`/`Out` markers of a declaration that may not have passed the checks, generics
/// removed: what the user imported to write it.
pub(crate) fn markers(sig: &syn::Signature) -> Vec<syn::Path> {
    sig.inputs
        .iter()
        .filter_map(|arg| match arg {
            FnArg::Typed(typed) => operand(&typed.ty).ok().flatten(),
            FnArg::Receiver(_) => None,
        })
        .map(|(_, _, marker)| marker)
        .collect()
}

/// `In<T>` or `Out<T>` (by their last path segment, so `jitseam::In<T>` works too); `None` for
/// anything else, which must then be a param.
fn operand(ty: &Type) -> syn::Result<Option<(Role, Elem, syn::Path)>> {
    let Type::Path(path) = ty else {
        return Ok(None);
    };
    let Some(last) = path.path.segments.last() else {
        return Ok(None);
    };
    let role = if last.ident == "In" {
        Role::Input
    } else if last.ident == "Out" {
        Role::Output
    } else {
        return Ok(None);
    };
    let wrapper = &last.ident;
    let syn::PathArguments::AngleBracketed(generics) = &last.arguments else {
        return Err(Error::new(
            ty.span(),
            format!("`{wrapper}` needs its element type, as in `{wrapper}<f32>`"),
        ));
    };
    let mut args = generics.args.iter();
    let (Some(syn::GenericArgument::Type(elem)), None) = (args.next(), args.next()) else {
        return Err(Error::new(
            generics.span(),
            format!("`{wrapper}` takes exactly one element type, as in `{wrapper}<f32>`"),
        ));
    };
    let elem = match Scalar::from_type(elem) {
        Some(scalar) => Elem::Known {
            scalar,
            span: elem.span(),
        },
        None => Elem::Other(Box::new(elem.clone())),
    };
    let mut marker = path.path.clone();
    if let Some(last) = marker.segments.last_mut() {
        last.arguments = syn::PathArguments::None;
    }
    Ok(Some((role, elem, marker)))
}

fn param(name: Ident, ty: &Type) -> syn::Result<Param> {
    match Scalar::from_type(ty) {
        Some(scalar) => Ok(Param {
            name,
            scalar,
            span: ty.span(),
        }),
        None => Err(Error::new(
            ty.span(),
            format!(
                "unsupported param type `{}`: params travel by value as one of {}; operands are declared as `In<T>` or `Out<T>`",
                quote::ToTokens::to_token_stream(ty)
                    .to_string()
                    .replace(" ", ""),
                scalars::supported_list(),
            ),
        )),
    }
}

/// `W · size_of(T) ≤ 16` for every operand the macro can size by name; other element types are
/// held to it by a static assertion in the generated code.
fn check_vector_width<'o>(
    width: u8,
    operands: impl Iterator<Item = &'o Operand>,
) -> syn::Result<()> {
    for operand in operands {
        if let Elem::Known { scalar, span } = operand.elem {
            let bytes = usize::from(width) * scalar.size;
            if bytes > MAX_VECTOR_BYTES {
                let widest = MAX_VECTOR_BYTES / scalar.size;
                return Err(Error::new(
                    span,
                    format!(
                        "`vectorized({width})` over `{}` needs {bytes}-byte vectors, but a vector may span at most {MAX_VECTOR_BYTES} bytes: use a width of at most {widest} for `{}`",
                        scalar.name, scalar.name,
                    ),
                ));
            }
        }
    }
    Ok(())
}
