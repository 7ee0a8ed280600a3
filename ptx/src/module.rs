//! The module parser: header directives, `.entry`/`.func` signatures, and body extents.
//!
//! Signatures go through the lexer token by token, except parameters of the common shapes
//! (`.param .u64 name`, `.param .align 16 .b8 name[8]`, …), which [`crate::fast`] reads
//! with a byte scan and hands back to the lexer on anything unusual. Bodies and other braced
//! blocks are skipped by [`crate::skip`] and only their byte ranges are kept, so a large module
//! costs little more than a byte scan. Module-level directives the model does not describe
//! (variables, `.file`, `.section`, …) are skipped to their end.
//!
//! The parser builds a borrowed [`ModuleIndex`]; the owned [`Module`] is converted from it.

use std::ops::Range;

use crate::cursor::{Cursor, PResult};
use crate::error::{ParseError, ParseErrorKind, excerpt};
use crate::fast::{FastParam, fast_dims, fast_entry_directive, fast_name_paren, fast_param};
use crate::index::{Dims, DirectiveRef, EntrySlot, FunctionSlot, ModuleIndex, ParamRef};
use crate::lexer::{Lexer, Punct, TokenKind, parse_int};
use crate::model::{Linkage, Module, PtrAttr, ScalarType, StateSpace, Target, Version};
use crate::skip::{Unterminated, skip_block};

/// Parses a PTX module's header, entries and functions into the owned model.
///
/// Equivalent to `scan_module(src).map(|index| index.to_module())`. Fails with a positioned
/// [`ParseError`] on malformed signatures, unterminated blocks, comments or strings, and when
/// `.version` or `.target` is missing. Never panics.
pub fn parse_module(src: &str) -> Result<Module, ParseError> {
    scan_module(src).map(|index| index.to_module())
}

/// Scans a PTX module's header, entries and functions into a [`ModuleIndex`] that borrows
/// `src`.
///
/// Does the same validation as [`parse_module`] and fails with the same [`ParseError`] on the
/// same input, but allocates only a few growing vectors for the whole module instead of several
/// allocations per entry. Never panics.
pub fn scan_module(src: &str) -> Result<ModuleIndex<'_>, ParseError> {
    Parser::new(src, true).module().map_err(|error| *error)
}

/// [`scan_module`] without the parameter fast path: every token goes through the lexer. The
/// reference the fast path is tested against.
#[cfg(test)]
pub(crate) fn scan_module_lexer_only(src: &str) -> Result<ModuleIndex<'_>, ParseError> {
    Parser::new(src, false).module().map_err(|error| *error)
}

/// Directives that begin a top-level construct; skipping an unknown statement stops before one,
/// so a statement missing its `;` cannot swallow the next kernel.
fn starts_top_level(directive: &str) -> bool {
    matches!(
        directive,
        ".entry"
            | ".func"
            | ".visible"
            | ".weak"
            | ".extern"
            | ".version"
            | ".target"
            | ".address_size"
    )
}

/// Makes room for one more element of a shared vector that is filled while scanning `total`
/// bytes, `done` of which have been read.
///
/// A full vector is grown to the size its fill rate so far predicts for the whole input (plus
/// an eighth), so on a large module each vector is reallocated a few times instead of doubling
/// a dozen times, each doubling copying everything and touching fresh pages. The growth is at
/// least 1.5 times the current length, so it never stalls, and at most 16 times it or one
/// element per 128 input bytes, whichever is more, so a skewed prefix cannot reserve wildly
/// more than the input can fill.
#[inline(always)]
fn reserve_one<T>(vec: &mut Vec<T>, done: usize, total: usize) {
    if vec.len() == vec.capacity() {
        grow(vec, done, total);
    }
}

#[cold]
#[inline(never)]
fn grow<T>(vec: &mut Vec<T>, done: usize, total: usize) {
    let len = vec.len();
    let predicted =
        u128::from(len as u64) * u128::from(total as u64) / u128::from(done.max(1) as u64);
    let predicted = usize::try_from(predicted).unwrap_or(usize::MAX);
    let floor = len.saturating_add(len / 2).saturating_add(16);
    let ceiling = len.saturating_mul(16).max(total / 128).saturating_add(16);
    let target = predicted
        .saturating_add(predicted / 8)
        .clamp(floor, ceiling);
    vec.reserve_exact(target - len);
}

/// Recursive descent over the [`Cursor`]'s one current token.
struct Parser<'a> {
    cur: Cursor<'a>,
    /// Whether parameter lists try the byte-scanning fast path first.
    fast: bool,
    /// Parameters of every entry and function, shared so that a signature costs no allocation.
    params: Vec<ParamRef<'a>>,
    /// Performance directives of every entry, shared likewise.
    directives: Vec<DirectiveRef>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, fast: bool) -> Self {
        Self {
            cur: Cursor::new(src, Lexer::new(src)),
            fast,
            params: Vec::new(),
            directives: Vec::new(),
        }
    }

    fn module(mut self) -> PResult<ModuleIndex<'a>> {
        let mut version = None;
        let mut target = None;
        let mut address_size = None;
        let mut entries = Vec::new();
        let mut functions = Vec::new();
        let mut linkage = Linkage::Default;
        self.cur.advance()?;
        while let Some(kind) = self.cur.kind {
            if kind != TokenKind::Directive {
                return Err(self.cur.unexpected("a module-level directive"));
            }
            let directive = self.cur.start();
            match self.cur.text() {
                ".visible" | ".weak" | ".extern" => {
                    linkage = match self.cur.text() {
                        ".visible" => Linkage::Visible,
                        ".weak" => Linkage::Weak,
                        _ => Linkage::Extern,
                    };
                    // `.visible .entry`: go straight to the entry when the next token is known
                    // to be `.entry` without lexing it.
                    if self.fast
                        && let Some(after) = fast_entry_directive(
                            self.cur.src.as_bytes(),
                            self.cur.lexer.scanned_end(),
                        )
                    {
                        let entry = self.entry(after - 6, after, linkage)?;
                        reserve_one(&mut entries, after, self.cur.src.len());
                        entries.push(entry);
                        linkage = Linkage::Default;
                        continue;
                    }
                    self.cur.advance()?;
                    continue;
                }
                ".version" => {
                    self.cur.advance()?;
                    let parsed = self.version()?;
                    self.set_once(&mut version, parsed, directive, ".version")?;
                }
                ".target" => {
                    self.cur.advance()?;
                    let parsed = self.target(directive)?;
                    self.set_once(&mut target, parsed, directive, ".target")?;
                }
                ".address_size" => {
                    self.cur.advance()?;
                    let parsed = self.address_size()?;
                    self.set_once(&mut address_size, parsed, directive, ".address_size")?;
                }
                ".entry" => {
                    let after = self.cur.lexer.scanned_end();
                    let entry = self.entry(directive, after, linkage)?;
                    reserve_one(&mut entries, directive, self.cur.src.len());
                    entries.push(entry);
                }
                ".func" => {
                    self.cur.advance()?;
                    let function = self.function(directive, linkage)?;
                    functions.push(function);
                }
                // These end at the line's end, not at a `;`.
                ".file" | ".loc" => self.skip_line()?,
                _ => {
                    self.cur.advance()?;
                    self.skip_statement()?;
                }
            }
            linkage = Linkage::Default;
        }
        let version = version.ok_or_else(|| self.cur.error(0, ParseErrorKind::MissingVersion))?;
        let target = target.ok_or_else(|| self.cur.error(0, ParseErrorKind::MissingTarget))?;
        Ok(ModuleIndex {
            version,
            target,
            address_size,
            entries,
            functions,
            params: self.params,
            directives: self.directives,
        })
    }

    fn version(&mut self) -> PResult<Version> {
        const EXPECTED: &str = "a version number MAJOR.MINOR after .version";
        if self.cur.kind != Some(TokenKind::Float) {
            return Err(self.cur.unexpected(EXPECTED));
        }
        let parsed = self.cur.text().split_once('.').and_then(|(major, minor)| {
            let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            if !all_digits(major) || !all_digits(minor) {
                return None;
            }
            Some(Version {
                major: major.parse().ok()?,
                minor: minor.parse().ok()?,
            })
        });
        let version = parsed.ok_or_else(|| self.cur.bad_number())?;
        self.cur.advance()?;
        self.cur.eat_punct(Punct::Semi)?;
        Ok(version)
    }

    fn target(&mut self, directive: usize) -> PResult<Target> {
        const EXPECTED: &str = "an architecture or modifier in .target";
        let mut arch: Option<String> = None;
        let mut modifiers = Vec::new();
        loop {
            if self.cur.kind != Some(TokenKind::Ident) {
                return Err(self.cur.unexpected(EXPECTED));
            }
            let item = self.cur.text();
            if item.starts_with("sm_") || item.starts_with("compute_") {
                let item_start = self.cur.start();
                self.set_once(
                    &mut arch,
                    item.to_owned(),
                    item_start,
                    "architecture in .target",
                )?;
            } else {
                modifiers.push(item.to_owned());
            }
            self.cur.advance()?;
            if !self.cur.eat_punct(Punct::Comma)? {
                break;
            }
        }
        self.cur.eat_punct(Punct::Semi)?;
        let arch =
            arch.ok_or_else(|| self.cur.error(directive, ParseErrorKind::MissingTargetArch))?;
        Ok(Target { arch, modifiers })
    }

    fn address_size(&mut self) -> PResult<u32> {
        const EXPECTED: &str = "32 or 64 after .address_size";
        if self.cur.kind != Some(TokenKind::Int) {
            return Err(self.cur.unexpected(EXPECTED));
        }
        let value = parse_int(self.cur.text()).ok_or_else(|| self.cur.bad_number())?;
        let size = match value {
            32 => 32,
            64 => 64,
            other => {
                return Err(self
                    .cur
                    .error(self.cur.start(), ParseErrorKind::BadAddressSize(other)));
            }
        };
        self.cur.advance()?;
        self.cur.eat_punct(Punct::Semi)?;
        Ok(size)
    }

    /// The entry whose `.entry` directive spans `directive..after`; the lexer is anywhere before
    /// `after`.
    fn entry(
        &mut self,
        directive: usize,
        after: usize,
        linkage: Linkage,
    ) -> PResult<EntrySlot<'a>> {
        let (name, params) = match self.fast.then(|| fast_name_paren(self.cur.src, after)) {
            Some(Some((name, paren_end))) => (name, self.param_list(paren_end, name)?),
            _ => {
                self.cur.lexer.seek(after);
                self.cur.advance()?;
                let name = self.cur.ident("an entry name after .entry")?;
                (name, self.optional_param_list(name)?)
            }
        };
        let (directives, body) = self.trailer(true)?;
        Ok(EntrySlot {
            name,
            linkage,
            params,
            directives,
            body,
            offset: directive,
        })
    }

    fn function(&mut self, directive: usize, linkage: Linkage) -> PResult<FunctionSlot<'a>> {
        let returns = self.optional_param_list("")?;
        let name = self.cur.ident("a function name after .func")?;
        let params = self.optional_param_list(name)?;
        // Performance directives on a function are tolerated but not part of the model.
        let (_, body) = self.trailer(false)?;
        Ok(FunctionSlot {
            name,
            linkage,
            returns,
            params,
            body,
            offset: directive,
        })
    }

    /// `( param, … )` if the current token is `(`; otherwise no parameters. Returns the range of
    /// the pushed parameters in `self.params`.
    ///
    /// Each parameter is first offered to the byte-scanning fast path, which either reads it
    /// exactly as the token path would or declines without side effects; a declined parameter
    /// is re-read by the lexer from the same offset, so results and errors are the same.
    ///
    /// `owner` is the entry or function name (empty when not known yet), a hint for
    /// [`fast_param`].
    fn optional_param_list(&mut self, owner: &str) -> PResult<Range<usize>> {
        let first = self.params.len();
        if !self.cur.at_punct(Punct::LParen) {
            return Ok(first..first);
        }
        self.param_list(self.cur.lexer.scanned_end(), owner)
    }

    /// The rest of a parameter list whose `(` ends at `pos`; the lexer is anywhere before it.
    /// Leaves the token after the `)` current.
    fn param_list(&mut self, mut pos: usize, owner: &str) -> PResult<Range<usize>> {
        let first = self.params.len();
        loop {
            if self.fast
                && let Some(FastParam { param, end, closed }) = fast_param(self.cur.src, pos, owner)
            {
                reserve_one(&mut self.params, pos, self.cur.src.len());
                self.params.push(param);
                if closed {
                    self.cur.lexer.seek(end);
                    self.cur.advance()?;
                    return Ok(first..self.params.len());
                }
                pos = end;
                continue;
            }
            self.cur.lexer.seek(pos);
            self.cur.advance()?;
            if self.params.len() == first && self.cur.eat_punct(Punct::RParen)? {
                return Ok(first..first);
            }
            let param = self.param()?;
            reserve_one(&mut self.params, pos, self.cur.src.len());
            self.params.push(param);
            if self.cur.eat_punct(Punct::RParen)? {
                return Ok(first..self.params.len());
            }
            if !self.cur.at_punct(Punct::Comma) {
                return Err(self.cur.unexpected("`,` or `)` after a parameter"));
            }
            pos = self.cur.lexer.scanned_end();
        }
    }

    fn param(&mut self) -> PResult<ParamRef<'a>> {
        let reg = self.cur.at_directive(".reg");
        if !reg && !self.cur.at_directive(".param") {
            return Err(self.cur.unexpected("`.param`"));
        }
        let directive = self.cur.start();
        self.cur.advance()?;
        let mut ty = None;
        let mut align = None;
        let mut ptr: Option<PtrAttr> = None;
        while self.cur.kind == Some(TokenKind::Directive) {
            let text = self.cur.text();
            match (text, &mut ptr) {
                (".align", _) => {
                    self.cur.advance()?;
                    let value = Some(self.cur.u32_value("an alignment")?);
                    match &mut ptr {
                        Some(ptr) => ptr.align = value,
                        None => align = value,
                    }
                    continue;
                }
                (".ptr", None) => {
                    ptr = Some(PtrAttr {
                        space: None,
                        align: None,
                    });
                }
                (
                    _,
                    Some(PtrAttr {
                        space: space @ None,
                        ..
                    }),
                ) if StateSpace::from_directive(text).is_some() => {
                    *space = StateSpace::from_directive(text);
                }
                _ => match ScalarType::from_directive(text) {
                    Some(parsed) if (reg || parsed != ScalarType::Pred) && ty.is_none() => {
                        ty = Some(parsed)
                    }
                    Some(_) if ty.is_some() => return Err(self.cur.unexpected("a parameter name")),
                    _ => {
                        let found = excerpt(text);
                        let kind = ParseErrorKind::UnknownParamType { found };
                        return Err(self.cur.error(self.cur.start(), kind));
                    }
                },
            }
            self.cur.advance()?;
        }
        let Some(ty) = ty else {
            return Err(self.cur.unexpected("a parameter type"));
        };
        let name = self.cur.ident("a parameter name")?;
        let array_len = if self.cur.eat_punct(Punct::LBracket)? {
            if self.cur.eat_punct(Punct::RBracket)? {
                Some(0)
            } else {
                let len = self.cur.u32_value("an array length")?;
                self.cur
                    .expect_punct(Punct::RBracket, "`]` after the array length")?;
                Some(len)
            }
        } else {
            None
        };
        Ok(ParamRef {
            name,
            ty,
            align,
            array_len,
            ptr,
            reg,
            offset: directive,
        })
    }

    /// Performance directives, then a `{ body }` or a `;`. Returns the range of the directives
    /// pushed to `self.directives` (none unless `keep`) and the body range.
    fn trailer(&mut self, keep: bool) -> PResult<(Range<usize>, Option<Range<usize>>)> {
        const EXPECTED: &str = "a body `{`, `;` or a performance directive";
        let first = self.directives.len();
        loop {
            match self.cur.kind {
                Some(TokenKind::Punct(Punct::LBrace)) => {
                    let body = self.skip_block()?;
                    return Ok((first..self.directives.len(), Some(body)));
                }
                Some(TokenKind::Punct(Punct::Semi)) => {
                    self.cur.advance()?;
                    return Ok((first..self.directives.len(), None));
                }
                Some(TokenKind::Directive) => {
                    let directive = self.cur.text();
                    // `dims` reads from just after the directive, so it advances by itself.
                    let parsed = match directive {
                        ".maxntid" => DirectiveRef::MaxNtid(self.dims()?),
                        ".reqntid" => DirectiveRef::ReqNtid(self.dims()?),
                        _ => {
                            self.cur.advance()?;
                            match self.other_directive(directive)? {
                                Some(parsed) => parsed,
                                None => continue,
                            }
                        }
                    };
                    if keep {
                        let done = self.cur.start();
                        reserve_one(&mut self.directives, done, self.cur.src.len());
                        self.directives.push(parsed);
                    }
                }
                _ => return Err(self.cur.unexpected(EXPECTED)),
            }
        }
    }

    /// A trailer directive other than `.maxntid`/`.reqntid`, after its name; `None` when it is
    /// not part of the model.
    fn other_directive(&mut self, directive: &str) -> PResult<Option<DirectiveRef>> {
        Ok(Some(match directive {
            ".minnctapersm" => {
                DirectiveRef::MinNctaPerSm(self.cur.u32_value("a count after .minnctapersm")?)
            }
            ".maxnreg" => DirectiveRef::MaxNreg(self.cur.u32_value("a count after .maxnreg")?),
            ".pragma" => {
                self.skip_pragma()?;
                return Ok(None);
            }
            // `.noreturn`, `.explicitcluster`, `.maxclusterrank n`,
            // `.reqnctapercluster x, y, z`, and directives newer than this parser.
            _ => {
                self.skip_numbers()?;
                return Ok(None);
            }
        }))
    }

    /// `x[, y[, z]]` of `.maxntid`/`.reqntid`, whose directive is the current token.
    fn dims(&mut self) -> PResult<Dims> {
        if self.fast
            && let Some((dims, next)) =
                fast_dims(self.cur.src.as_bytes(), self.cur.lexer.scanned_end())
        {
            if self.cur.src.as_bytes().get(next) == Some(&b'{') {
                // The body follows: no need to lex its brace.
                self.cur.lexer.set_scanned_lbrace(next);
                self.cur.kind = Some(TokenKind::Punct(Punct::LBrace));
            } else {
                self.cur.lexer.seek(next);
                self.cur.advance()?;
            }
            return Ok(dims);
        }
        self.cur.advance()?;
        let mut dims = Dims::new(self.cur.u32_value("a thread count")?);
        while self.cur.at_punct(Punct::Comma) {
            if dims.len() == 3 {
                return Err(self.cur.unexpected("at most three dimensions"));
            }
            self.cur.advance()?;
            // Fewer than three dimensions are stored, so this push always succeeds.
            dims.push(self.cur.u32_value("a thread count")?);
        }
        Ok(dims)
    }

    /// `.pragma "a", "b";` — the strings and the `;`.
    fn skip_pragma(&mut self) -> PResult<()> {
        loop {
            match self.cur.kind {
                Some(TokenKind::Str | TokenKind::Punct(Punct::Comma)) => self.cur.advance()?,
                Some(TokenKind::Punct(Punct::Semi)) => return self.cur.advance(),
                _ => return Err(self.cur.unexpected("`;` after .pragma")),
            }
        }
    }

    fn skip_numbers(&mut self) -> PResult<()> {
        while matches!(
            self.cur.kind,
            Some(TokenKind::Int | TokenKind::Punct(Punct::Comma))
        ) {
            self.cur.advance()?;
        }
        Ok(())
    }

    /// Skips an unknown module-level statement after its directive: through its `;`, through
    /// its block (`.section .x { … }`), or through `= { … };` for an initialized variable.
    fn skip_statement(&mut self) -> PResult<()> {
        let mut initializer = false;
        while let Some(kind) = self.cur.kind {
            match kind {
                TokenKind::Directive if starts_top_level(self.cur.text()) => return Ok(()),
                TokenKind::Punct(Punct::Semi) => return self.cur.advance(),
                TokenKind::Punct(Punct::LBrace) => {
                    self.skip_block()?;
                    if !initializer {
                        return Ok(());
                    }
                }
                TokenKind::Punct(Punct::Eq) => {
                    initializer = true;
                    self.cur.advance()?;
                }
                _ => self.cur.advance()?,
            }
        }
        Ok(())
    }

    /// Skips the current directive through the end of its line.
    fn skip_line(&mut self) -> PResult<()> {
        let rest = self
            .cur
            .src
            .as_bytes()
            .get(self.cur.lexer.scanned_end()..)
            .unwrap_or_default();
        let line_end = memchr::memchr(b'\n', rest)
            .map_or(self.cur.src.len(), |i| self.cur.lexer.scanned_end() + i);
        self.cur.lexer.seek(line_end);
        self.cur.advance()
    }

    /// Skips the block whose `{` is the current token; returns its interior byte range.
    fn skip_block(&mut self) -> PResult<Range<usize>> {
        let open = self.cur.start();
        let end = skip_block(self.cur.src.as_bytes(), open).map_err(|error| match error {
            Unterminated::Block(at) => self.cur.error(at, ParseErrorKind::UnterminatedBlock),
            Unterminated::Comment(at) => self.cur.error(at, ParseErrorKind::UnterminatedComment),
            Unterminated::String(at) => self.cur.error(at, ParseErrorKind::UnterminatedString),
        })?;
        self.cur.lexer.seek(end);
        self.cur.advance()?;
        Ok(open + 1..end.saturating_sub(1).max(open + 1))
    }

    /// Stores a header value, refusing a second occurrence.
    fn set_once<T>(
        &self,
        slot: &mut Option<T>,
        value: T,
        offset: usize,
        directive: &'static str,
    ) -> PResult<()> {
        if slot.is_some() {
            return Err(self
                .cur
                .error(offset, ParseErrorKind::Duplicate { directive }));
        }
        *slot = Some(value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The byte-scanning fast paths against the lexer-only reference: on any input both must
    //! produce the same index or the same error.

    use proptest::prelude::*;
    use proptest::sample::Index;

    use super::{scan_module, scan_module_lexer_only};

    use crate::test_samples as common;

    /// The shapes the fast paths accept, next to near misses they must decline.
    const SHAPES: &str = "
.version 8.8
.target sm_80
.address_size 64
.visible .entry k(
\t.param .u64 .ptr .global .align 16 k_param_0,
\t.param .u64 .ptr .align 8 .shared k_param_1,
\t.param .align 8 .u64 .ptr k_param_2,
\t.param .u64 .align 4 k_param_3,
\t.param .align 2 .b8 k_param_4[2],
\t.param .b8 k_param_5[0],
\t.param .u32 k_param_6 ,
\t.param .f16x2 %k_param_7,
\t.param .bf16x2 k_param_8 [ 4 ],
\t.param /* c */ .u8 k_param_9,
\t.param .b32 k_param_10[010],
\t.param .align 16 .b128 kk
)
.maxntid 256, 1, 1
.reqntid 32 ,2
{
\tret;
}
.entry j(.param .s16 j_param_0,.param .u16 jx).maxntid 1.reqntid 2{}
.entry m(.param .f64 m_param_0) .maxntid 1, 2, 3 .maxnreg 4 ;
";

    fn samples() -> [&'static str; 4] {
        [common::NVRTC_SCALAR, common::MIXED, common::DEBUG, SHAPES]
    }

    fn same(src: &str) {
        assert_eq!(scan_module(src), scan_module_lexer_only(src), "{src}");
    }

    #[test]
    fn samples_agree_and_parse() {
        for sample in samples() {
            same(sample);
            assert!(scan_module(sample).is_ok(), "{sample}");
        }
    }

    #[test]
    fn every_single_byte_deletion_agrees() {
        for sample in [SHAPES, common::MIXED] {
            for i in 0..sample.len() {
                let mut bytes = sample.as_bytes().to_vec();
                bytes.remove(i);
                same(&String::from_utf8_lossy(&bytes));
            }
        }
    }

    #[test]
    fn near_misses_agree() {
        let header = ".version 8.8\n.target sm_80\n";
        for params in [
            ".param .u64 a_param_0",
            ".param .u64 a",
            ".param .u64 a_param_0[",
            ".param .u64 a_param_0[1",
            ".param .u64 a_param_0[12345678901]",
            ".param .u64 a_param_0[999999999]",
            ".param .u64 a_param_0[0x10]",
            ".param .align 1.5 .u64 a",
            ".param .align 0 .u64 a",
            ".param .align 00 .u64 a",
            ".param .align 4294967296 .u64 a",
            ".param .u64 .u32 a",
            ".param .pred a",
            ".param .ptr .ptr .u64 a",
            ".param .u64 .global a",
            ".param .u64 .ptr .global .local a",
            ".param .u64::x a",
            ".param .u64 a.b",
            ".param .u64 a,",
            ".param .u64 a,,",
            ".param.u64 a",
            ".paramx .u64 a",
            ".param .verylongdirective a",
            ".param .u64 a\u{e9}",
            ".param .u64 a //",
            ".param .u64 a /*",
            ".param .u64 a\"",
        ] {
            for trailer in [
                "{}",
                ".maxntid 1 {}",
                ".maxntid 1, 2, 3, 4 {}",
                ".maxntid 1.5 {}",
                ".maxntid 1.maxnreg 2 {}",
                ".maxntid 1 .maxnreg 2 ;",
                ".maxntid 1,{}",
                ".maxntid 01 {}",
                ".maxntid 1 // c\n, 2 {}",
                ".maxntid 1U {}",
                ".maxntid",
            ] {
                for entry in ["a", "a_param_0", "a_"] {
                    same(&format!("{header}.entry {entry}({params}) {trailer}"));
                    same(&format!("{header}.entry {entry}({params}"));
                }
            }
        }
    }

    #[derive(Debug, Clone)]
    enum Edit {
        Insert(Index, u8),
        Delete(Index),
        Replace(Index, u8),
    }

    fn edit() -> impl Strategy<Value = Edit> {
        let byte = prop_oneof![
            3 => prop::sample::select(b"{}()[];,.\"/*%@!<>:=\\\n\t 0123456789fdxU_ap".to_vec()),
            1 => any::<u8>(),
        ];
        prop_oneof![
            (any::<Index>(), byte.clone()).prop_map(|(at, b)| Edit::Insert(at, b)),
            any::<Index>().prop_map(Edit::Delete),
            (any::<Index>(), byte).prop_map(|(at, b)| Edit::Replace(at, b)),
        ]
    }

    fn apply(sample: &str, edits: &[Edit]) -> String {
        let mut bytes = sample.as_bytes().to_vec();
        for edit in edits {
            match *edit {
                Edit::Insert(at, b) => bytes.insert(at.index(bytes.len() + 1), b),
                Edit::Delete(at) if !bytes.is_empty() => {
                    bytes.remove(at.index(bytes.len()));
                }
                Edit::Replace(at, b) if !bytes.is_empty() => {
                    let i = at.index(bytes.len());
                    bytes[i] = b;
                }
                _ => {}
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        #[test]
        fn fast_paths_agree_with_the_lexer_on_edited_samples(
            sample in 0..4usize,
            edits in prop::collection::vec(edit(), 1..6),
        ) {
            let src = apply(samples()[sample], &edits);
            prop_assert_eq!(scan_module(&src), scan_module_lexer_only(&src));
        }
    }
}
