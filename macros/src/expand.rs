//! Code for a validated [`Kernel`]: the signature type, its argument struct and constructor, the
//! declaration (jitseam makes every declaration a `Signature`), and static assertions of what
//! the ABI requires. After an error, a stub of the types, so the user sees the one error and not
//! every use of the missing names.

use jitseam_abi::{AbiKind, ExtentOp, MAX_VECTOR_BYTES};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use crate::model::{Abi, Elem, Field, Kernel, Operand, Param};
use crate::names;
use crate::parse::{self, AttrArgs, Declaration};
use crate::scalars;

/// The attribute's entry point, on `proc_macro2` tokens so tests can drive it.
pub(crate) fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let model = syn::parse2::<AttrArgs>(attr).and_then(|args| {
        let declaration = syn::parse2::<Declaration>(item.clone())?;
        Kernel::new(args, declaration)
    });
    match model {
        Ok(kernel) => kernel.expand(),
        Err(error) => {
            let mut tokens = error.to_compile_error();
            tokens.extend(stub(&item));
            tokens
        }
    }
}

/// The signature type and an empty argument struct under the declared names, so that code
/// naming them compiles on to the next real mistake instead of reporting each use.
fn stub(item: &TokenStream) -> TokenStream {
    let Some(declaration) = parse::stub_target(item) else {
        return TokenStream::new();
    };
    let vis = &declaration.vis;
    let fn_name = &declaration.sig.ident;
    // Naming the markers keeps the user's `use jitseam::{In, Out}` from being reported unused
    // next to the real error.
    let markers = crate::model::markers(&declaration.sig)
        .into_iter()
        .map(|marker| quote!(let _: ::core::marker::PhantomData<#marker<'static, ()>>;));
    let type_name = names::upper_camel(fn_name);
    let args_name = names::with_suffix(&type_name, "Args");
    quote! {
        const _: () = {
            #(#markers)*
        };
        #[allow(dead_code)]
        #vis struct #type_name;
        #[allow(dead_code)]
        #vis struct #args_name<'a>(::core::marker::PhantomData<&'a ()>);
    }
}

impl Kernel {
    fn expand(&self) -> TokenStream {
        let mut tokens = self.signature_type();
        tokens.extend(self.args_struct());
        tokens.extend(self.constructor());
        tokens.extend(self.signature_impl());
        tokens.extend(self.assertions());
        tokens
    }

    fn signature_type(&self) -> TokenStream {
        let Self {
            shared_attrs,
            docs,
            vis,
            fn_name,
            type_name,
            args_name,
            ..
        } = self;
        let summary = format!(
            " Signature of the `{}` kernel (`{}` abi, entry point `{}`). Launch a bound kernel \
             with [`{type_name}::args`] / [`{args_name}`].",
            names::unraw(fn_name),
            self.abi_spelling(),
            self.symbol.value(),
        );
        let separator = (!docs.is_empty()).then(|| quote!(#[doc = ""]));
        quote! {
            #(#shared_attrs)*
            #(#docs)*
            #separator
            #[doc = #summary]
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
            #vis struct #type_name;
        }
    }

    fn args_struct(&self) -> TokenStream {
        let Self {
            shared_attrs,
            vis,
            type_name,
            args_name,
            ..
        } = self;
        let doc = format!(" Launch arguments of [`{type_name}`], by their declared names.");
        let fields = self.fields().map(|field| match field {
            Arg::Operand(operand, handle) => {
                let name = &operand.name;
                let elem = operand.elem.rust_type();
                quote!(#vis #name: ::jitseam::__private::#handle<'a, #elem>)
            }
            Arg::Param(param) => {
                let name = &param.name;
                let ty = scalars::rust_type(param.kind, param.span);
                quote!(#vis #name: #ty)
            }
        });
        quote! {
            #(#shared_attrs)*
            #[doc = #doc]
            #[derive(Debug)]
            #vis struct #args_name<'a> {
                #(#fields,)*
            }
        }
    }

    fn constructor(&self) -> TokenStream {
        let Self {
            shared_attrs,
            vis,
            type_name,
            args_name,
            ..
        } = self;
        let doc = format!(
            " Collects the launch arguments of [`{type_name}`]: inputs by shared reference, \
             outputs by `&mut`, params by value."
        );
        let args = self.fields().map(|field| match field {
            Arg::Operand(operand, handle) => {
                let name = &operand.name;
                let elem = operand.elem.rust_type();
                let conversion = format_ident!("Into{}", handle);
                let bound =
                    quote_spanned!(operand.span=> ::jitseam::__private::#conversion<'a, #elem>);
                quote!(#name: impl #bound)
            }
            Arg::Param(param) => {
                let name = &param.name;
                let ty = scalars::rust_type(param.kind, param.span);
                quote!(#name: #ty)
            }
        });
        let fields = self.fields().map(|field| match field {
            Arg::Operand(operand, handle) => {
                let name = &operand.name;
                let conversion = format_ident!("Into{}", handle);
                quote!(#name: ::jitseam::__private::#conversion::into_handle(#name))
            }
            Arg::Param(param) => {
                let name = &param.name;
                quote!(#name)
            }
        });
        quote! {
            #(#shared_attrs)*
            impl #type_name {
                #[doc = #doc]
                #[allow(clippy::too_many_arguments)]
                #vis fn args<'a>(#(#args,)*) -> #args_name<'a> {
                    #args_name {
                        #(#fields,)*
                    }
                }
            }
        }
    }

    fn signature_impl(&self) -> TokenStream {
        let Self {
            shared_attrs,
            type_name,
            args_name,
            symbol,
            ..
        } = self;
        let inputs = self.inputs.iter().map(|operand| operand.elem.kind());
        let outputs = self.outputs.iter().map(|operand| operand.elem.kind());
        let params = self
            .params
            .iter()
            .map(|param| scalars::kind_tokens(param.kind, param.span));

        let args = names::hidden("args");
        // Operands go to the launch as the borrowed handles they are, which carry what orders
        // their memory across streams; never as bare descriptions. The launch shape is the one
        // the operands agree on, so an error names the operand that differs.
        let input_args = self.inputs.iter().map(|operand| {
            let name = &operand.name;
            quote!(::jitseam::__private::Arg::from(#args.#name))
        });
        let output_args = self.outputs.iter().map(|operand| {
            let name = &operand.name;
            quote!(::jitseam::__private::ArgMut::from(#args.#name))
        });
        let param_values = self.params.iter().map(|param| {
            let name = &param.name;
            quote!(::jitseam::__private::ParamValue::from(#args.#name))
        });
        let (spec, run) = match &self.abi {
            Abi::Fixed { kind, .. } => (
                {
                    let abi = abi_tokens(kind);
                    quote! {
                    ::jitseam::__private::AbiSpec::new(
                        #abi,
                        &[#(#inputs),*],
                        &[#(#outputs),*],
                        &[#(#params),*],
                    )
                    }
                },
                quote!(run_agreed),
            ),
            Abi::Custom(custom) => {
                let table = self.order.iter().map(|field| {
                    let (name, kind, lanes) = match *field {
                        Field::Input(k) => {
                            let o = &self.inputs[k];
                            (&o.name, wrap("In", o.elem.kind()), o.elem.lanes())
                        }
                        Field::Output(m) => {
                            let o = &self.outputs[m];
                            (&o.name, wrap("Out", o.elem.kind()), o.elem.lanes())
                        }
                        Field::Param(p) => {
                            let param = &self.params[p];
                            (
                                &param.name,
                                wrap("Value", scalars::kind_tokens(param.kind, param.span)),
                                1,
                            )
                        }
                    };
                    let name = names::unraw(name);
                    if lanes > 1 {
                        quote!(::jitseam::__private::CustomParam::vector(#name, #kind, #lanes))
                    } else {
                        quote!(::jitseam::__private::CustomParam::new(#name, #kind))
                    }
                });
                let code = custom.code.iter().map(|(op, span)| op_tokens(*op, *span));
                let covers = custom.covers;
                let declared_shared = custom.shared.then(|| quote!(.with_declared_shared()));
                let custom_abi = match custom.block {
                    None => quote! {
                        ::jitseam::__private::CustomAbi::new(PARAMS, &[#(#code),*], #covers)
                    },
                    Some([x, y, z]) => quote! {
                        ::jitseam::__private::CustomAbi::with_block(
                            PARAMS,
                            &[#(#code),*],
                            #covers,
                            [#x, #y, #z],
                        )
                    },
                };
                (
                    // The table in a const item of its own: a `&[..]` of values with a
                    // destructor (the names are `Cow`s) is `'static` only there.
                    quote! {{
                        const PARAMS: &[::jitseam::__private::CustomParam] = &[#(#table),*];
                        ::jitseam::__private::AbiSpec::new_custom(
                            #custom_abi #declared_shared,
                            &[#(#inputs),*],
                            &[#(#outputs),*],
                            &[#(#params),*],
                        )
                    }},
                    quote!(run_custom),
                )
            }
        };
        // Which launch faces the kernel has, so that a launch without a grid jitseam can choose,
        // or a configuration for a kernel whose grid jitseam chooses, does not compile.
        let (chooses_grid, takes_config) = match &self.abi {
            Abi::Fixed { .. } => (true, false),
            Abi::Custom(custom) => (custom.covers, true),
        };
        let chooses_grid = chooses_grid.then(|| {
            quote! {
                #(#shared_attrs)*
                impl ::jitseam::__private::ChoosesGrid for #type_name {}
            }
        });
        let takes_config = takes_config.then(|| {
            quote! {
                #(#shared_attrs)*
                impl ::jitseam::__private::TakesConfig for #type_name {}
            }
        });
        // The declared names, in the spec's order (inputs, outputs, params): what errors about
        // the signature print.
        let names = self
            .inputs
            .iter()
            .chain(&self.outputs)
            .map(|operand| names::unraw(&operand.name))
            .chain(self.params.iter().map(|param| names::unraw(&param.name)));
        quote! {
            #chooses_grid
            #takes_config
            #(#shared_attrs)*
            impl ::jitseam::__private::Declared for #type_name {
                const SPEC: ::jitseam::__private::AbiSpec = #spec;
                const SYMBOL: &'static str = #symbol;
                const NAMES: &'static [&'static str] = &[#(#names),*];
                type Args<'a> = #args_name<'a>;

                fn launch(
                    launch: ::jitseam::__private::Launch<'_>,
                    #args: #args_name<'_>,
                ) -> ::core::result::Result<(), ::jitseam::__private::Error> {
                    launch.#run(
                        &[#(#input_args),*],
                        &[#(#output_args),*],
                        &[#(#param_values),*],
                    )
                }
            }
        }
    }

    /// What rustc must prove about what the macro read by name: each `In`/`Out` marker is
    /// jitseam's, each operand's element type is an `Element`, and for vectors
    /// `W · size ≤ MAX_VECTOR_BYTES`.
    fn assertions(&self) -> TokenStream {
        let mut checks = TokenStream::new();
        // Each distinct check once: repeating one would repeat its error.
        let mut markers: Vec<String> = Vec::new();
        for operand in self.inputs.iter().chain(&self.outputs) {
            let marker = &operand.marker;
            let key = quote!(#marker).to_string();
            if markers.contains(&key) {
                continue;
            }
            markers.push(key);
            let span = syn::spanned::Spanned::span(marker);
            let elem = operand.elem.rust_type();
            let canonical = marker.segments.last().map(|s| &s.ident);
            checks.extend(quote_spanned! {span=>
                let _: ::core::marker::PhantomData<#marker<'static, #elem>> =
                    ::core::marker::PhantomData::<::jitseam::__private::#canonical<'static, #elem>>;
            });
        }
        // The vector-size fact once per distinct element type, for the same reason. Element
        // types the macro knows were sized in the model already, with a spanned error; this
        // holds the rest (aliases, paths) to it. A const `assert!` rather than
        // `static_assertions::const_assert!`, whose failure reads "attempt to compute
        // `0_usize - 1_usize`"; this one names the ABI, the type and the limit. Whether an
        // unknown type is an `Element` at all is checked by the `<T as Element>::KIND` in `SPEC`,
        // spanned at the user's type, which rustc reports once however often it recurs.
        if let Abi::Fixed {
            kind: AbiKind::Vectorized { width },
            span,
        } = self.abi
        {
            let mut sized: Vec<String> = Vec::new();
            for operand in self.inputs.iter().chain(&self.outputs) {
                let kind = operand.elem.kind();
                let key = kind.to_string();
                if sized.contains(&key) {
                    continue;
                }
                sized.push(key);
                let elem = operand.elem.rust_type();
                let message = format!(
                    "`vectorized({width})` over `{elem}`: {width} lanes of `{elem}` span more than the {MAX_VECTOR_BYTES} bytes a vector may span; use a smaller width",
                    elem = operand.elem.spelling(),
                )
                // The message is a format string: a brace in a const generic must stay literal.
                .replace('{', "{{")
                .replace('}', "}}");
                let width = usize::from(width);
                let limit = proc_macro2::Literal::usize_unsuffixed(MAX_VECTOR_BYTES);
                checks.extend(quote_spanned! {span=>
                    ::core::assert!(
                        #width * ::core::mem::size_of::<#elem>() <= #limit,
                        #message,
                    );
                });
            }
        }
        let shared_attrs = &self.shared_attrs;
        quote! {
            #(#shared_attrs)*
            const _: () = {
                #checks
            };
        }
    }

    /// Every argument in declaration order; operands with the handle type each lowers to.
    fn fields(&self) -> impl Iterator<Item = Arg<'_>> {
        let strided = matches!(
            self.abi,
            Abi::Fixed {
                kind: AbiKind::Strided { .. },
                ..
            }
        );
        let handle = move |name: &str| {
            let name = if strided {
                format!("{name}Strided")
            } else {
                name.to_owned()
            };
            syn::Ident::new(&name, Span::call_site())
        };
        self.order.iter().filter_map(move |field| match *field {
            Field::Input(k) => self.inputs.get(k).map(|o| Arg::Operand(o, handle("In"))),
            Field::Output(m) => self.outputs.get(m).map(|o| Arg::Operand(o, handle("Out"))),
            Field::Param(p) => self.params.get(p).map(Arg::Param),
        })
    }

    fn abi_spelling(&self) -> String {
        match &self.abi {
            Abi::Fixed {
                kind: AbiKind::Vectorized { width },
                ..
            } => format!("vectorized({width})"),
            Abi::Fixed {
                kind: AbiKind::Strided { rank },
                ..
            } => format!("strided({rank})"),
            Abi::Fixed { kind, .. } => kind.name().to_owned(),
            Abi::Custom(_) => "custom".to_owned(),
        }
    }
}

/// One argument of the generated struct and constructor.
enum Arg<'k> {
    Operand(&'k Operand, syn::Ident),
    Param(&'k Param),
}

/// `::jitseam::__private::AbiKind::Vectorized { width: 4 }`.
fn abi_tokens(kind: &AbiKind) -> TokenStream {
    match kind {
        AbiKind::Scalar => quote!(::jitseam::__private::AbiKind::Scalar),
        AbiKind::Vectorized { width } => {
            quote!(::jitseam::__private::AbiKind::Vectorized { width: #width })
        }
        AbiKind::Strided { rank } => quote!(::jitseam::__private::AbiKind::Strided { rank: #rank }),
        // The model keeps a custom ABI as its compiled extents, spelled by `signature_impl`.
        AbiKind::Custom(_) => quote!(::core::compile_error!(
            "jitseam-macros: a custom abi has no fixed spelling"
        )),
    }
}

/// `::jitseam::__private::ExtentOp::Mul`, spanned at `span`.
fn op_tokens(op: ExtentOp, span: Span) -> TokenStream {
    let path = quote_spanned!(span=> ::jitseam::__private::ExtentOp);
    match op {
        ExtentOp::Lit(value) => quote_spanned!(span=> #path::Lit(#value)),
        ExtentOp::Param(p) => quote_spanned!(span=> #path::Param(#p)),
        ExtentOp::Grid(axis) => quote_spanned!(span=> #path::Grid(#axis)),
        ExtentOp::Block(axis) => quote_spanned!(span=> #path::Block(#axis)),
        ExtentOp::Add => quote_spanned!(span=> #path::Add),
        ExtentOp::Sub => quote_spanned!(span=> #path::Sub),
        ExtentOp::Mul => quote_spanned!(span=> #path::Mul),
        ExtentOp::Div => quote_spanned!(span=> #path::Div),
        ExtentOp::DivCeil => quote_spanned!(span=> #path::DivCeil),
        ExtentOp::End => quote_spanned!(span=> #path::End),
    }
}

/// `::jitseam::__private::CustomKind::In(<kind>)`.
fn wrap(variant: &str, kind: TokenStream) -> TokenStream {
    let variant = syn::Ident::new(variant, Span::call_site());
    quote!(::jitseam::__private::CustomKind::#variant(#kind))
}

impl Elem {
    /// The type as the user wrote it, for messages.
    fn spelling(&self) -> String {
        match self {
            Self::Known { kind, .. } => kind.name().to_owned(),
            Self::Vector { kind, lanes, .. } => format!("[{kind}; {lanes}]"),
            Self::Other(ty) => quote!(#ty).to_string().replace(' ', ""),
        }
    }

    /// Elements per vector: 1 but for a vector element.
    fn lanes(&self) -> u8 {
        match self {
            Self::Vector { lanes, .. } => *lanes,
            Self::Known { .. } | Self::Other(_) => 1,
        }
    }

    fn rust_type(&self) -> TokenStream {
        match self {
            // A vector's operand is a buffer of its scalars.
            Self::Known { kind, span } | Self::Vector { kind, span, .. } => {
                scalars::rust_type(*kind, *span)
            }
            Self::Other(ty) => quote!(#ty),
        }
    }

    fn kind(&self) -> TokenStream {
        match self {
            Self::Known { kind, span } | Self::Vector { kind, span, .. } => {
                scalars::kind_tokens(*kind, *span)
            }
            Self::Other(ty) => {
                let span = syn::spanned::Spanned::span(&**ty);
                quote_spanned!(span=> <#ty as ::jitseam::__private::Element>::KIND)
            }
        }
    }
}
