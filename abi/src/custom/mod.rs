//! The custom ABI: a kernel's parameters in its own order — pointers (inputs and outputs, each
//! with an extent expression over the integer params and the launch geometry) and by-value
//! scalars interleaved — launched with an explicit launch configuration or, for a kernel that
//! `covers` an element count, one thread per element.
//!
//! [`CustomAbi`] is the runtime table: every parameter with its name and kind, and the extents
//! as one compact postfix program (see [`ExtentOp`]), evaluated with checked arithmetic and no
//! allocation at every launch.

mod block;
mod compile;
mod extent;
mod grammar;
mod param;
mod text;

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use block::{BlockError, BlockShape, MAX_BLOCK, MAX_BLOCK_THREADS, validate_block};
pub use compile::{
    ExtentCompiler, ExtentError, ExtentNames, ExtentSite, MAX_EXTENT_NESTING, MAX_EXTENT_STEPS,
};
use extent::write_infix;
pub use extent::{ExtentEnv, ExtentOp, ExtentProblem, MAX_EXTENT_DEPTH, eval_next};
pub use grammar::{ExtentLexer, ExtentToken, parse_extent};
pub use param::{CustomKind, CustomParam, vector_type};
pub use text::{SignatureError, SignatureProblem};

use crate::ElementKind;

/// The parameter table of a custom kernel: every parameter in order, and one extent program per
/// pointer (in order) followed, for a kernel that covers an element count, by that count's
/// program. Built by `#[jitseam::kernel(abi = custom)]`, by [`CustomAbi::parse`] from text (the
/// CLI's `--signature`, and serde), or by hand.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "CustomText", into = "CustomText")]
pub struct CustomAbi {
    /// Every parameter, in the kernel's order.
    pub params: Cow<'static, [CustomParam]>,
    /// The extent programs, each ending with [`ExtentOp::End`]: one per pointer in order, then
    /// the covered count if `covers`.
    pub code: Cow<'static, [ExtentOp]>,
    /// Whether the last program is the element count the kernel covers with one thread each
    /// (`covers = EXPR`), which lets it launch without an explicit config.
    pub covers: bool,
    /// The exact block every launch must use (`block = (16, 16, 1)`), for a body written for a
    /// fixed block: checked at every launch, and a fact for the body verifier.
    pub block: Option<[u32; 3]>,
    /// Whether the last program is the least dynamic shared bytes every launch must give
    /// (`shared = EXPR`), for a body whose dynamic shared array is sized by its params
    /// (`4 * (32 + ncols)` for a row cache after 32 warp slots): checked at every launch, and a
    /// fact for the body verifier.
    pub shared: bool,
}

impl CustomAbi {
    /// A table over static lists, usable in `const` items.
    pub const fn new(
        params: &'static [CustomParam],
        code: &'static [ExtentOp],
        covers: bool,
    ) -> Self {
        Self {
            params: Cow::Borrowed(params),
            code: Cow::Borrowed(code),
            covers,
            block: None,
            shared: false,
        }
    }

    /// A table over static lists with a declared launch shape: every launch must use exactly
    /// `block` (see [`CustomAbi::block`]). Usable in `const` items.
    pub const fn with_block(
        params: &'static [CustomParam],
        code: &'static [ExtentOp],
        covers: bool,
        block: [u32; 3],
    ) -> Self {
        Self {
            params: Cow::Borrowed(params),
            code: Cow::Borrowed(code),
            covers,
            block: Some(block),
            shared: false,
        }
    }

    /// The table whose last program is the least dynamic shared bytes every launch gives (see
    /// [`CustomAbi::shared`]). Usable in `const` items.
    pub const fn with_declared_shared(mut self) -> Self {
        self.shared = true;
        self
    }

    /// Element types of the input pointers, in order.
    pub fn inputs(&self) -> Vec<ElementKind> {
        self.kinds(|k| matches!(k, CustomKind::In(_)))
    }

    /// Element types of the output pointers, in order.
    pub fn outputs(&self) -> Vec<ElementKind> {
        self.kinds(|k| matches!(k, CustomKind::Out(_)))
    }

    /// Types of the by-value params, in order.
    pub fn values(&self) -> Vec<ElementKind> {
        self.kinds(|k| matches!(k, CustomKind::Value(_)))
    }

    fn kinds(&self, keep: impl Fn(CustomKind) -> bool) -> Vec<ElementKind> {
        self.params
            .iter()
            .map(|p| p.kind)
            .filter(|&k| keep(k))
            .map(CustomKind::dtype)
            .collect()
    }

    /// The name of by-value param `p` (its index among the by-value params).
    pub fn value_name(&self, p: u16) -> String {
        self.params
            .iter()
            .filter(|param| !param.kind.is_pointer())
            .nth(usize::from(p))
            .map_or_else(|| format!("p{p}"), |param| param.name.clone().into_owned())
    }

    /// The text of every extent program in order (pointers, then the covered count).
    pub fn extent_texts(&self) -> Vec<String> {
        let mut texts = Vec::new();
        let mut cursor = 0;
        let name = |p: u16| self.value_name(p);
        while cursor < self.code.len() {
            texts.push(write_infix(&self.code, &mut cursor, &name));
        }
        texts
    }

    /// Every extent program's value for `env`, in order: one per pointer, then the covered
    /// count (each `Err` where it has none). For tools that size buffers from a signature.
    pub fn evaluate(&self, env: &ExtentEnv<'_>) -> Vec<Result<u64, ExtentProblem>> {
        let mut values = Vec::new();
        let mut cursor = 0;
        while cursor < self.code.len() {
            values.push(eval_next(&self.code, &mut cursor, env));
        }
        values
    }

    /// The text of pointer `index`'s extent (its index among all pointers, in order).
    pub fn extent_text(&self, pointer: usize) -> String {
        self.extent_texts()
            .get(pointer)
            .cloned()
            .unwrap_or_default()
    }

    /// The text of the covered count, if the kernel covers one.
    pub fn covers_text(&self) -> Option<String> {
        let pointers = self.params.iter().filter(|p| p.kind.is_pointer()).count();
        self.covers
            .then(|| self.extent_texts().get(pointers).cloned())
            .flatten()
    }

    /// The text of the declared least dynamic shared bytes, if the kernel declares them.
    pub fn shared_text(&self) -> Option<String> {
        let programs =
            self.params.iter().filter(|p| p.kind.is_pointer()).count() + usize::from(self.covers);
        self.shared
            .then(|| self.extent_texts().get(programs).cloned())
            .flatten()
    }

    /// The declared least dynamic shared bytes' program (ending with [`ExtentOp::End`]), if
    /// the kernel declares them: the last program.
    pub fn shared_code(&self) -> Option<&[ExtentOp]> {
        if !self.shared {
            return None;
        }
        let body = self.code.strip_suffix(&[ExtentOp::End])?;
        let start = body
            .iter()
            .rposition(|op| *op == ExtentOp::End)
            .map_or(0, |i| i + 1);
        self.code.get(start..)
    }

    /// Refuses a table no kernel can have: duplicate or empty names, a program count that is not
    /// one per pointer (plus the covered count), or a program that breaks a rule of the extent
    /// language ([`ExtentCompiler::push`]: a param that is missing or not an integer, a geometry
    /// axis other than x, y, z, a covered count that names the geometry, a malformed program or
    /// one deeper than [`MAX_EXTENT_DEPTH`]), or a declared block no device launches
    /// ([`validate_block`]; one-dimensional for a kernel that `covers` a count).
    pub fn validate(&self) -> Result<(), String> {
        if let Some(block) = self.block {
            self.validate_block(block).map_err(|e| e.to_string())?;
        }
        let mut seen_names = HashSet::with_capacity(self.params.len());
        for (i, param) in self.params.iter().enumerate() {
            if param.name.is_empty() {
                return Err(format!("parameter {i} has no name"));
            }
            if !seen_names.insert(&*param.name) {
                return Err(format!("two parameters are named `{}`", param.name));
            }
        }
        let pointers = self.params.iter().filter(|p| p.kind.is_pointer()).count();
        let covered = pointers + usize::from(self.covers);
        let programs = covered + usize::from(self.shared);
        if self.code.last().is_some_and(|op| *op != ExtentOp::End) {
            return Err("the last extent program does not end".to_owned());
        }
        let names = ExtentNames::of(&self.params);
        let mut seen = 0usize;
        for program in self.code.split_inclusive(|op| *op == ExtentOp::End) {
            let site = if seen >= covered {
                ExtentSite::Shared
            } else if self.covers && seen + 1 == covered {
                ExtentSite::Covers
            } else {
                ExtentSite::Len
            };
            let mut compiler = ExtentCompiler::new(&names, site);
            for &op in program.iter().filter(|op| **op != ExtentOp::End) {
                compiler.push(op).map_err(|e| e.to_string())?;
            }
            compiler.finish().map_err(|e| e.to_string())?;
            seen += 1;
        }
        if seen != programs {
            return Err(format!(
                "{seen} extent programs for {pointers} pointers{}{}",
                if self.covers {
                    " and a covered count"
                } else {
                    ""
                },
                if self.shared {
                    " and a shared size"
                } else {
                    ""
                }
            ));
        }
        Ok(())
    }

    /// [`validate_block`], and for a kernel that `covers` a count a one-dimensional block.
    fn validate_block(&self, block: [u32; 3]) -> Result<(), BlockError> {
        validate_block(block)?;
        if self.covers && (block[1] != 1 || block[2] != 1) {
            return Err(BlockError::CoversTwoDimensional { block });
        }
        Ok(())
    }

    /// The signature as text: `out: out f32[n], x: in f32[n], n: i32, a: f32`, and the declared
    /// block and shared size after a `;` each: `…, n: u32; block = (16, 16, 1); shared = 4 * n`.
    pub fn signature_text(&self) -> String {
        let texts = self.extent_texts();
        let mut extents = texts.iter();
        let mut out = String::new();
        for (i, param) in self.params.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let mut extent = || extents.next().map_or("?", String::as_str);
            let item = match param.kind {
                CustomKind::In(_) => {
                    format!("{}: in {}[{}]", param.name, param.type_name(), extent())
                }
                CustomKind::Out(_) => {
                    format!("{}: out {}[{}]", param.name, param.type_name(), extent())
                }
                CustomKind::Value(d) => format!("{}: {d}", param.name),
            };
            out.push_str(&item);
        }
        if let Some(block) = self.block {
            out.push_str(&format!("; block = {}", BlockShape(block)));
        }
        if let Some(shared) = self.shared_text() {
            out.push_str(&format!("; shared = {shared}"));
        }
        out
    }

    /// Parses a signature (`out: out f32[n], x: in f32[n], n: i32, a: f32`: pointers as
    /// `name: in|out DTYPE[EXTENT]`, scalars as `name: DTYPE`) and an optional covered count,
    /// both over the extent grammar: integer literals, integer params by name, `grid.{x,y,z}`,
    /// `block.{x,y,z}`, `+ - * /`, `div_ceil(a, b)`, parentheses. After the parameters, `;
    /// block = (x, y, z)` declares the exact block every launch uses, and `; shared = EXPR`
    /// (over the same grammar, in bytes) the least dynamic shared memory every launch gives.
    pub fn parse(signature: &str, covers: Option<&str>) -> Result<Self, SignatureError> {
        let parsed = text::parse(signature, covers)?;
        let custom = Self {
            params: Cow::Owned(parsed.params),
            code: Cow::Owned(parsed.code),
            covers: covers.is_some(),
            block: parsed.block.map(|(block, _)| block),
            shared: parsed.shared,
        };
        if let Some((block, offset)) = parsed.block {
            custom
                .validate_block(block)
                .map_err(|problem| SignatureError {
                    offset,
                    problem: SignatureProblem::Block(problem),
                })?;
        }
        custom.validate().map_err(|reason| SignatureError {
            offset: 0,
            problem: SignatureProblem::Table(reason),
        })?;
        Ok(custom)
    }
}

impl fmt::Display for CustomAbi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.signature_text())?;
        if let Some(covers) = self.covers_text() {
            write!(f, "; covers {covers}")?;
        }
        Ok(())
    }
}

/// The serde form of a [`CustomAbi`]: its signature (with its declared block, if any) and
/// covered count as text.
#[derive(Serialize, Deserialize)]
struct CustomText {
    signature: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    covers: Option<String>,
}

impl TryFrom<CustomText> for CustomAbi {
    type Error = SignatureError;
    fn try_from(text: CustomText) -> Result<Self, Self::Error> {
        Self::parse(&text.signature, text.covers.as_deref())
    }
}

impl From<CustomAbi> for CustomText {
    fn from(custom: CustomAbi) -> Self {
        Self {
            signature: custom.signature_text(),
            covers: custom.covers_text(),
        }
    }
}
