//! The validated kernel declaration. Every error a user can see is raised here, spanned at the
//! tokens that caused it, in lowercase without a trailing period.

use jitseam_abi::{
    AbiKind, BlockError, ElementKind, ExtentNames, ExtentOp, ExtentSite, MAX_RANK,
    MAX_VECTOR_BYTES, VECTOR_WIDTHS, validate_block,
};
use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{Attribute, Error, FnArg, Ident, Lit, LitStr, Pat, Type, Visibility};

use crate::extent;
use crate::names;
use crate::parse::{AttrArgs, Declaration, RawOption, RawValue};
use crate::scalars;

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
}

/// One argument by its kind and index among its kind.
#[derive(Clone, Copy)]
pub(crate) enum Field {
    Input(usize),
    Output(usize),
    Param(usize),
}

/// The compiled extents of a custom kernel: one program per pointer in declaration order,
/// then the covered count's, then the declared shared size's, each ending with `ExtentOp::End`;
/// each op with the span of the tokens it came from.
pub(crate) struct Custom {
    pub(crate) code: Vec<(ExtentOp, Span)>,
    pub(crate) covers: bool,
    /// Whether the last program is the declared least dynamic shared bytes (`shared = EXPR`).
    pub(crate) shared: bool,
    /// The declared block (`block = (16, 16, 1)`), valid by jitseam-abi's rule.
    pub(crate) block: Option<[u32; 3]>,
}

/// The ABI: one of the fixed ABIs by its runtime value, valid by jitseam-abi's rules, or the
/// custom ABI with its compiled extents.
pub(crate) enum Abi {
    /// Scalar, vectorized or strided; `span` is its spelling's (the width's, for vectors).
    Fixed {
        kind: AbiKind,
        span: Span,
    },
    Custom(Custom),
}

/// The `abi` option as written, before a custom kernel's arguments give it its extents.
enum AbiOption {
    Fixed { kind: AbiKind, span: Span },
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
    Known {
        kind: ElementKind,
        span: Span,
    },
    /// `[f32; 4]`: a vector of `lanes` elements of `kind` (custom kernels only); the operand is
    /// a buffer of `kind` and the extent counts vectors.
    Vector {
        kind: ElementKind,
        lanes: u8,
        span: Span,
    },
    Other(Box<Type>),
}

/// A by-value param.
pub(crate) struct Param {
    pub(crate) name: Ident,
    pub(crate) kind: ElementKind,
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
        let custom = matches!(abi, AbiOption::Custom);
        if let (Some((key, _)), false) = (&options.covers, custom) {
            return Err(Error::new(
                key.span(),
                "`covers` is an option of `abi = custom` kernels: the other abis always cover `n` elements",
            ));
        }
        if let (Some((key, _)), false) = (&options.shared, custom) {
            return Err(Error::new(
                key.span(),
                "`shared` declares the dynamic shared memory of an `abi = custom` kernel: the other abis launch with none",
            ));
        }
        if let (Some((key, _)), false) = (&options.block, custom) {
            return Err(Error::new(
                key.span(),
                "`block` declares the launch shape of an `abi = custom` kernel: the other abis launch in blocks jitseam chooses",
            ));
        }
        let block = options
            .block
            .map(|(_, value)| block(value, options.covers.is_some()))
            .transpose()?;
        let symbol = options
            .symbol
            .unwrap_or_else(|| LitStr::new(&names::unraw(&sig.ident), sig.ident.span()));
        let (inputs, outputs, params, order, lens) = arguments(&sig, custom)?;
        let abi = match abi {
            AbiOption::Fixed { kind, span } => Abi::Fixed { kind, span },
            AbiOption::Custom => Abi::Custom(Custom {
                block,
                ..custom_extents(
                    &inputs,
                    &outputs,
                    &params,
                    &order,
                    lens,
                    options.covers,
                    options.shared,
                )?
            }),
        };
        if outputs.is_empty() {
            return Err(Error::new(
                sig.paren_token.span.join(),
                "a kernel needs at least one output: declare it as `name: Out<T>` after the inputs",
            ));
        }
        if let Abi::Fixed { kind, .. } = &abi {
            if let Some(span) = inputs.iter().chain(&outputs).find_map(|o| match o.elem {
                Elem::Vector { span, .. } => Some(span),
                _ => None,
            }) {
                return Err(Error::new(
                    span,
                    "a vector element type (`[f32; 4]`) is for `abi = custom` kernels, whose extents count vectors; the other abis take scalar elements",
                ));
            }
            check_vector_width(kind, inputs.iter().chain(&outputs))?;
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
        })
    }
}

/// Compiles each pointer's `#[len]`, the `covers` expression and the `shared` size against the
/// params, by jitseam-abi's extent grammar and rules.
fn custom_extents(
    inputs: &[Operand],
    outputs: &[Operand],
    params: &[Param],
    order: &[Field],
    lens: Vec<Option<Len>>,
    covers: Option<(Ident, TokenStream)>,
    shared: Option<(Ident, TokenStream)>,
) -> syn::Result<Custom> {
    let value_names: Vec<String> = params.iter().map(|p| names::unraw(&p.name)).collect();
    let pointer_names: Vec<String> = inputs
        .iter()
        .chain(outputs)
        .map(|o| names::unraw(&o.name))
        .collect();
    let mut scope = ExtentNames::default();
    for (name, param) in value_names.iter().zip(params) {
        scope.value(name, param.kind);
    }
    for name in &pointer_names {
        scope.pointer(name);
    }
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
        push_program(len.tokens, len.end, ExtentSite::Len, &scope, &mut code)?;
    }
    let covered = covers.is_some();
    if let Some((key, tokens)) = covers {
        if tokens.is_empty() {
            return Err(Error::new(
                key.span(),
                "`covers` takes the element count the kernel covers, as in `covers = n`",
            ));
        }
        push_program(tokens, key.span(), ExtentSite::Covers, &scope, &mut code)?;
    }
    let declared = shared.is_some();
    if let Some((key, tokens)) = shared {
        if tokens.is_empty() {
            return Err(Error::new(
                key.span(),
                "`shared` takes the least dynamic shared bytes, as in `shared = 4 * (32 + ncols)`",
            ));
        }
        push_program(tokens, key.span(), ExtentSite::Shared, &scope, &mut code)?;
    }
    Ok(Custom {
        code,
        covers: covered,
        shared: declared,
        block: None,
    })
}

/// `block = (x, y, z)`: three integer literals, a block some device can launch by
/// jitseam-abi's rule (one-dimensional for a kernel that `covers` a count), each problem spanned
/// at the extent that causes it.
fn block(value: RawValue, covers: bool) -> syn::Result<[u32; 3]> {
    const EXAMPLE: &str = "as in `block = (16, 16, 1)`";
    let RawValue::Tuple { elems, parens } = value else {
        return Err(Error::new(
            value_span(&value),
            format!("`block` takes the block's x, y and z in parentheses, {EXAMPLE}"),
        ));
    };
    if elems.len() != 3 {
        return Err(Error::new(
            parens,
            format!(
                "`block` takes three extents (x, y and z), {EXAMPLE}; this list has {}",
                elems.len()
            ),
        ));
    }
    let mut dims = [0u32; 3];
    let mut spans = [parens; 3];
    for ((dim, span), elem) in dims.iter_mut().zip(&mut spans).zip(&elems) {
        *span = elem.span();
        let syn::Expr::Lit(syn::ExprLit {
            lit: Lit::Int(lit), ..
        }) = elem
        else {
            return Err(Error::new(
                elem.span(),
                format!(
                    "`{}` is not an integer literal: `block` takes literal extents, {EXAMPLE}",
                    quote::ToTokens::to_token_stream(elem)
                        .to_string()
                        .replace(" ", "")
                ),
            ));
        };
        *dim = lit.base10_parse::<u32>().map_err(|_| {
            Error::new(
                lit.span(),
                format!("`{lit}` is not a block extent: extents are 32-bit unsigned integers"),
            )
        })?;
    }
    // The runtime's own rule decides, spanned at the extent it names.
    let at = |axis: u8| spans.get(usize::from(axis)).copied().unwrap_or(parens);
    let refused = |e: BlockError| {
        let span = match e {
            BlockError::Empty { axis } | BlockError::AxisTooLarge { axis, .. } => at(axis),
            _ => parens,
        };
        Error::new(span, e.to_string())
    };
    validate_block(dims).map_err(refused)?;
    if covers && (dims[1] != 1 || dims[2] != 1) {
        return Err(refused(BlockError::CoversTwoDimensional { block: dims }));
    }
    Ok(dims)
}

/// A pointer's `#[len(..)]`: its tokens, and its closing parenthesis for errors at their end.
struct Len {
    tokens: TokenStream,
    end: Span,
}

fn push_program(
    tokens: TokenStream,
    end: Span,
    site: ExtentSite,
    scope: &ExtentNames<'_>,
    code: &mut Vec<(ExtentOp, Span)>,
) -> syn::Result<()> {
    let span = tokens
        .clone()
        .into_iter()
        .next()
        .map_or(end, |first| first.span());
    let ops = extent::compile(tokens, end, scope, site)?;
    code.extend(ops.into_iter().map(|op| (op, span)));
    Ok(())
}

/// The options after checking names, values and duplicates.
struct Options {
    abi: Option<AbiOption>,
    symbol: Option<LitStr>,
    /// `covers = EXPR`, with its key for errors about the option itself.
    covers: Option<(Ident, TokenStream)>,
    /// `block = (x, y, z)` as written, with its key.
    block: Option<(Ident, RawValue)>,
    /// `shared = EXPR`, with its key.
    shared: Option<(Ident, TokenStream)>,
}

impl Options {
    fn new(args: AttrArgs) -> syn::Result<Self> {
        let mut options = Self {
            abi: None,
            symbol: None,
            covers: None,
            block: None,
            shared: None,
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
                    RawValue::Tokens(tokens) => options.covers = Some((key.clone(), tokens)),
                    other => {
                        return Err(Error::new(
                            value_span(&other),
                            "`covers` takes the element count the kernel covers, as in `covers = n`",
                        ));
                    }
                },
                "block" => options.block = Some((key.clone(), value)),
                "shared" => match value {
                    RawValue::Tokens(tokens) => options.shared = Some((key.clone(), tokens)),
                    other => {
                        return Err(Error::new(
                            value_span(&other),
                            "`shared` takes the least dynamic shared bytes, as in `shared = 4 * (32 + ncols)`",
                        ));
                    }
                },
                _ => {
                    return Err(Error::new(
                        key.span(),
                        format!(
                            "unknown option `{name}`: expected `abi`, `symbol`, `covers`, `block` or `shared`"
                        ),
                    ));
                }
            }
            seen.push(name);
        }
        Ok(options)
    }
}

/// What the `abi` option may say, with jitseam-abi's widths and ranks.
fn abi_spellings() -> String {
    let widths = VECTOR_WIDTHS.map(|w| w.to_string()).join(", ");
    format!(
        "expected `scalar`, `vectorized(W)` with W in {widths}, `strided(R)` with R in 1..={MAX_RANK}, or `custom`"
    )
}

/// `2, 4 or 8`.
fn widths_list() -> String {
    let widths = VECTOR_WIDTHS.map(|w| w.to_string());
    match widths.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn abi(value: RawValue) -> syn::Result<AbiOption> {
    let RawValue::Word { name, args, parens } = value else {
        return Err(Error::new(
            value_span(&value),
            format!("invalid abi: {}", abi_spellings()),
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
    let (kind, span) = match kind.as_str() {
        "scalar" => match parens {
            Some(span) => return Err(Error::new(span, "`scalar` takes no argument")),
            None => (AbiKind::Scalar, name.span()),
        },
        "custom" => match parens {
            Some(span) => {
                return Err(Error::new(
                    span,
                    "`custom` takes no argument: declare each pointer's extent with `#[len(EXPR)]`",
                ));
            }
            None => return Ok(AbiOption::Custom),
        },
        "vectorized" => {
            let (width, span) = number("width")?;
            (AbiKind::Vectorized { width }, span)
        }
        "strided" => {
            let (rank, span) = number("rank")?;
            (AbiKind::Strided { rank }, span)
        }
        _ => {
            return Err(Error::new(
                name.span(),
                format!("unknown abi `{kind}`: {}", abi_spellings()),
            ));
        }
    };
    // The runtime's own rule decides; the message says it in the attribute's spelling.
    kind.validate().map_err(|_| {
        let message = match kind {
            AbiKind::Vectorized { width } => format!(
                "vector width {width} is not supported: the vectorized abi takes a width of {}",
                widths_list()
            ),
            AbiKind::Strided { rank } => format!(
                "rank {rank} is not supported: the strided abi takes a rank from 1 to {MAX_RANK}"
            ),
            _ => format!("invalid abi `{kind}`"),
        };
        Error::new(span, message)
    })?;
    Ok(AbiOption::Fixed { kind, span })
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
        RawValue::Tokens(tokens) => tokens
            .clone()
            .into_iter()
            .next()
            .map_or_else(Span::call_site, |first| first.span()),
        RawValue::Tuple { parens, .. } => *parens,
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
    Vec<Option<Len>>,
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
) -> syn::Result<Option<Len>> {
    let mut found: Option<Len> = None;
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
        let len = match &attr.meta {
            syn::Meta::List(list) => Len {
                tokens: list.tokens.clone(),
                end: list.delimiter.span().close(),
            },
            _ => {
                return Err(Error::new(
                    attr.meta.span(),
                    "`#[len]` takes the pointer's extent in parentheses, as in `#[len(n)]`",
                ));
            }
        };
        found = Some(len);
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
    let elem = match (scalars::from_type(elem), elem) {
        (Some(kind), _) => Elem::Known {
            kind,
            span: elem.span(),
        },
        (None, Type::Array(array)) => vector(array)?,
        (None, _) => Elem::Other(Box::new(elem.clone())),
    };
    let mut marker = path.path.clone();
    if let Some(last) = marker.segments.last_mut() {
        last.arguments = syn::PathArguments::None;
    }
    Ok(Some((role, elem, marker)))
}

/// `[T; N]` as an operand's element: a vector jitseam-abi accepts (`f32x4`), or an error that
/// says which are.
fn vector(array: &syn::TypeArray) -> syn::Result<Elem> {
    let lanes = match &array.len {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) => n.base10_parse::<u8>().ok(),
        _ => None,
    };
    let written = quote::ToTokens::to_token_stream(array)
        .to_string()
        .replace(" ;", ";");
    let found = scalars::from_type(&array.elem).and_then(|kind| {
        let lanes = lanes?;
        jitseam_abi::vector_type(&format!("{kind}x{lanes}"))
    });
    match found {
        Some((kind, lanes)) => Ok(Elem::Vector {
            kind,
            lanes,
            span: array.span(),
        }),
        None => Err(Error::new(
            array.span(),
            format!(
                "unsupported vector element `{written}`: a vector is `[T; N]` of one of {} with N of 2, 4, 8 or 16 and at most 16 bytes in all, as in `[f32; 4]`",
                ElementKind::names()
            ),
        )),
    }
}

fn param(name: Ident, ty: &Type) -> syn::Result<Param> {
    match scalars::from_type(ty) {
        Some(kind) => Ok(Param {
            name,
            kind,
            span: ty.span(),
        }),
        None => Err(Error::new(
            ty.span(),
            format!(
                "unsupported param type `{}`: params travel by value as one of {}; operands are declared as `In<T>` or `Out<T>`",
                quote::ToTokens::to_token_stream(ty)
                    .to_string()
                    .replace(" ", ""),
                ElementKind::names(),
            ),
        )),
    }
}

/// `W · size_of(T) ≤ MAX_VECTOR_BYTES` for every operand the macro can size by name, by
/// jitseam-abi's rule; other element types are held to it by a static assertion in the
/// generated code.
fn check_vector_width<'o>(
    abi: &AbiKind,
    operands: impl Iterator<Item = &'o Operand>,
) -> syn::Result<()> {
    for operand in operands {
        if let Elem::Known { kind, span } = operand.elem
            && abi.validate_operand(kind).is_err()
        {
            let width = abi.width();
            let bytes = width * kind.size();
            let widest = MAX_VECTOR_BYTES / kind.size();
            return Err(Error::new(
                span,
                format!(
                    "`vectorized({width})` over `{kind}` needs {bytes}-byte vectors, but a vector may span at most {MAX_VECTOR_BYTES} bytes: use a width of at most {widest} for `{kind}`",
                ),
            ));
        }
    }
    Ok(())
}
