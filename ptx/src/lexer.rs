//! The one PTX lexer: module headers and (later) instruction bodies both go through it.
//!
//! Tokens borrow the source and carry a byte offset; line and column are derived only when an
//! error is reported (see [`crate::LineIndex`]), so lexing stays allocation-free.
//!
//! Two PTX-specific choices:
//! - A directive is `.` followed by identifier characters *including a leading digit*, so that
//!   instruction modifiers such as `tex.2d` lex as `tex` + `.2d`. Consequently a float literal must
//!   start with a digit (`0.5`, never `.5`).
//! - A directive may contain `::` segments (`.L2::64B`, `.shared::cta`, `.L1::evict_last`) because
//!   the segment after `::` may start with a digit and would otherwise be a malformed number.

use std::ops::Range;

use thiserror::Error;

/// What a [`Token`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// `.entry`, `.param`, `.u64`, `.L2::64B`: a dot followed by identifier characters.
    Directive,
    /// `foo`, `%r1`, `$L__BB0_3`, `_`, `sm_90a`.
    Ident,
    /// Decimal, `0x` hex, octal, `0b` binary, each with an optional `U` suffix. Never signed:
    /// a leading `-` is a separate [`Punct::Minus`].
    Int,
    /// `0f` + 8 hex digits (f32 bits), `0d` + 16 hex digits (f64 bits), or a decimal float.
    Float,
    /// A double-quoted string; the token text includes the quotes.
    Str,
    /// One punctuation character.
    Punct(Punct),
}

/// Single-character punctuation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Punct {
    /// `;`
    Semi,
    /// `,`
    Comma,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `@`
    At,
    /// `!`
    Bang,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `:`
    Colon,
    /// `=`
    Eq,
    /// `|`
    Pipe,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `&`
    Amp,
    /// `~`
    Tilde,
    /// `^`
    Caret,
    /// `%` not followed by an identifier character (the modulo operator of constant expressions).
    Percent,
    /// `?`
    Question,
}

impl Punct {
    fn from_byte(b: u8) -> Option<Self> {
        Some(match b {
            b';' => Self::Semi,
            b',' => Self::Comma,
            b'{' => Self::LBrace,
            b'}' => Self::RBrace,
            b'(' => Self::LParen,
            b')' => Self::RParen,
            b'[' => Self::LBracket,
            b']' => Self::RBracket,
            b'<' => Self::Lt,
            b'>' => Self::Gt,
            b'@' => Self::At,
            b'!' => Self::Bang,
            b'+' => Self::Plus,
            b'-' => Self::Minus,
            b':' => Self::Colon,
            b'=' => Self::Eq,
            b'|' => Self::Pipe,
            b'*' => Self::Star,
            b'/' => Self::Slash,
            b'&' => Self::Amp,
            b'~' => Self::Tilde,
            b'^' => Self::Caret,
            b'%' => Self::Percent,
            b'?' => Self::Question,
            _ => return None,
        })
    }
}

/// One token: its kind and the exact source slice it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    /// What the token is.
    pub kind: TokenKind,
    /// Byte offset of the first byte of `text` in the lexed source.
    pub offset: usize,
    /// The token's source text (for [`TokenKind::Str`], including the quotes).
    pub text: &'a str,
}

impl Token<'_> {
    /// Byte offset one past the token's last byte.
    pub fn end(&self) -> usize {
        self.offset + self.text.len()
    }

    /// The token's byte range in the lexed source.
    pub fn range(&self) -> Range<usize> {
        self.offset..self.end()
    }

    /// Whether this token is the given punctuation.
    pub fn is_punct(&self, punct: Punct) -> bool {
        self.kind == TokenKind::Punct(punct)
    }

    /// Whether this token is the directive `name` (which includes the dot, e.g. `".entry"`).
    pub fn is_directive(&self, name: &str) -> bool {
        self.kind == TokenKind::Directive && self.text == name
    }

    /// The value of an [`TokenKind::Int`] token; `None` for other kinds or on overflow.
    pub fn int_value(&self) -> Option<u64> {
        if self.kind != TokenKind::Int {
            return None;
        }
        parse_int(self.text)
    }

    /// The value of a [`TokenKind::Float`] token; `None` for other kinds.
    pub fn float_value(&self) -> Option<FloatValue> {
        if self.kind != TokenKind::Float {
            return None;
        }
        parse_float(self.text)
    }
}

/// The value of a float literal, keeping the width that hex-bit forms spell exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FloatValue {
    /// `0fXXXXXXXX`: exact f32 bits (NaN payloads included).
    F32(f32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal literal.
    F64(f64),
}

/// Parses the text of an integer literal (`42`, `0x2aU`, `017`, `0b101`).
pub fn parse_int(text: &str) -> Option<u64> {
    let digits = text
        .strip_suffix('U')
        .or_else(|| text.strip_suffix('u'))
        .unwrap_or(text);
    let (radix, body) = if let Some(hex) = strip_prefix2(digits, b'x') {
        (16, hex)
    } else if let Some(bin) = strip_prefix2(digits, b'b') {
        (2, bin)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, digits.get(1..)?)
    } else {
        (10, digits)
    };
    // from_str_radix accepts a leading `+`, which is not part of a PTX literal.
    if body.is_empty() || body.starts_with('+') {
        return None;
    }
    u64::from_str_radix(body, radix).ok()
}

/// Parses the text of a float literal (`0f3F800000`, `0d3FF0000000000000`, `1.5e3`).
pub fn parse_float(text: &str) -> Option<FloatValue> {
    if let Some(hex) = strip_prefix2(text, b'f') {
        if hex.len() != 8 {
            return None;
        }
        return u32::from_str_radix(hex, 16)
            .ok()
            .map(|bits| FloatValue::F32(f32::from_bits(bits)));
    }
    if let Some(hex) = strip_prefix2(text, b'd') {
        if hex.len() != 16 {
            return None;
        }
        return u64::from_str_radix(hex, 16)
            .ok()
            .map(|bits| FloatValue::F64(f64::from_bits(bits)));
    }
    if !text.bytes().next().is_some_and(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<f64>().ok().map(FloatValue::F64)
}

/// `0x…`/`0X…` style prefix split (`letter` given in lowercase).
fn strip_prefix2(text: &str, letter: u8) -> Option<&str> {
    let bytes = text.as_bytes();
    match (bytes.first(), bytes.get(1)) {
        (Some(b'0'), Some(&l)) if l.to_ascii_lowercase() == letter => text.get(2..),
        _ => None,
    }
}

/// Why the lexer could not produce a token.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LexErrorKind {
    /// A character that starts no PTX token.
    #[error("unexpected character `{0}`")]
    UnexpectedChar(char),
    /// `/*` without a matching `*/`.
    #[error("unterminated block comment")]
    UnterminatedComment,
    /// `"` without a closing quote.
    #[error("unterminated string")]
    UnterminatedString,
    /// A malformed numeric literal (`0f12`, `08`, `12abc`, `1e+`).
    #[error("malformed number")]
    BadNumber,
}

/// A lexing failure at a byte range of the source.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{kind}")]
pub struct LexError {
    /// Byte offset where the offending text starts.
    pub offset: usize,
    /// Length in bytes of the offending text (the lexer resumes after it).
    pub len: usize,
    /// What went wrong.
    pub kind: LexErrorKind,
}

/// Byte classes, looked up once per byte on the hot path.
const IDENT_CONTINUE: u8 = 1;
const IDENT_START: u8 = 2;
const DIGIT: u8 = 4;
const HEX: u8 = 8;
const SPACE: u8 = 16;

const fn byte_classes() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let mut class = 0;
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' {
            class |= IDENT_CONTINUE;
        }
        if b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b == b'%' {
            class |= IDENT_START;
        }
        if b.is_ascii_digit() {
            class |= DIGIT;
        }
        if b.is_ascii_hexdigit() {
            class |= HEX;
        }
        // PTX treats form feed and vertical tab like any other blank.
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            class |= SPACE;
        }
        table[i] = class;
        i += 1;
    }
    table
}

static CLASSES: [u8; 256] = byte_classes();

#[inline]
fn class(b: u8) -> u8 {
    CLASSES[b as usize]
}

/// Whether `b` may continue a PTX identifier (letters, digits, `_`, `$`).
#[inline]
pub fn is_ident_continue(b: u8) -> bool {
    class(b) & IDENT_CONTINUE != 0
}

/// Whether `b` may start a PTX identifier (letters, `_`, `$`, `%`).
#[inline]
pub fn is_ident_start(b: u8) -> bool {
    class(b) & IDENT_START != 0
}

/// `b` in every byte of a `u64`.
const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// For eight bytes at once (SWAR): the high bit of each byte that is *not* an identifier
/// character ([`is_ident_continue`]), all other bits clear.
///
/// Each range test adds a per-byte constant to the low seven bits of a byte, so no sum exceeds
/// `0xFF` and no carry crosses into the next byte; the high bit of `y + (0x80 - lo)` says
/// `y >= lo`, that of `y + (0x7F - hi)` says `y > hi`.
#[inline(always)]
fn non_ident_bytes(x: u64) -> u64 {
    const HIGH: u64 = splat(0x80);
    let y = x & !HIGH;
    let in_range = |v: u64, lo: u8, hi: u8| {
        v.wrapping_add(splat(0x80 - lo)) & !v.wrapping_add(splat(0x7F - hi))
    };
    let letter = in_range(y | splat(0x20), b'a', b'z');
    let digit = in_range(y, b'0', b'9');
    let underscore = in_range(y, b'_', b'_');
    let dollar = in_range(y, b'$', b'$');
    // A byte with its high bit set (non-ASCII) is never an identifier character.
    !((letter | digit | underscore | dollar) & !x) & HIGH
}

/// The end of the run of identifier characters (letters, digits, `_`, `$`) starting at `pos`:
/// the first offset at or after `pos` whose byte is no identifier character, or `bytes.len()`.
///
/// Names in generated PTX are long (`kernel_name_param_12`), so they are checked eight bytes at
/// a time.
#[inline(always)]
pub(crate) fn ident_run_end(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(chunk) = bytes.get(pos..).and_then(|rest| rest.first_chunk::<8>()) {
        let stops = non_ident_bytes(u64::from_le_bytes(*chunk));
        if stops != 0 {
            return pos + (stops.trailing_zeros() / 8) as usize;
        }
        pos += 8;
    }
    while bytes.get(pos).is_some_and(|&b| is_ident_continue(b)) {
        pos += 1;
    }
    pos
}

/// A streaming lexer over a `&str`; yields tokens with absolute byte offsets.
///
/// After an error it resumes past the offending text, so iteration always terminates and a caller
/// may keep going to collect more diagnostics.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    src: &'a str,
    /// `src` up to the end of the lexed range: one bounds check covers both.
    bytes: &'a [u8],
    pos: usize,
    /// Start of the token (or error) most recently scanned; it ends at `pos`.
    start: usize,
}

impl<'a> Lexer<'a> {
    /// Lexes the whole of `src`.
    pub fn new(src: &'a str) -> Self {
        Self {
            src,
            bytes: src.as_bytes(),
            pos: 0,
            start: 0,
        }
    }

    /// Lexes only `src[range]` while reporting offsets relative to the whole `src`, so that a
    /// body recorded by the module parser can be lexed later with diagnostics that still point
    /// into the original text. Out-of-bounds or mid-character bounds are narrowed inward.
    pub fn with_range(src: &'a str, range: Range<usize>) -> Self {
        let end = floor_char_boundary(src, range.end.min(src.len()));
        let start = ceil_char_boundary(src, range.start.min(end)).min(end);
        Self {
            src,
            bytes: src.as_bytes().get(..end).unwrap_or_default(),
            pos: start,
            start,
        }
    }

    /// The whole source this lexer reports offsets into.
    pub fn source(&self) -> &'a str {
        self.src
    }

    /// Byte offset of the next unread byte.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Continues lexing at `offset` (clamped to the lexed range and moved forward to a character
    /// boundary); used to jump over a block skipped by other means.
    pub fn seek(&mut self, offset: usize) {
        self.pos = ceil_char_boundary(self.src, offset.min(self.bytes.len()));
    }

    /// The next token, `None` at the end, or an error for text that is no token.
    #[inline]
    pub fn next_token(&mut self) -> Option<Result<Token<'a>, LexError>> {
        match self.next_kind() {
            Ok(None) => None,
            Ok(Some(kind)) => Some(Ok(Token {
                kind,
                offset: self.start,
                text: self.scanned_text(),
            })),
            Err(kind) => Some(Err(LexError {
                offset: self.start,
                len: self.pos - self.start,
                kind,
            })),
        }
    }

    /// Scans one token and leaves its extent in [`Self::scanned_range`].
    ///
    /// This is the allocation-free core behind [`Self::next_token`]: it returns only the kind,
    /// small enough for registers, so a parser that reads the extent from the lexer avoids
    /// copying whole tokens around its hot loop.
    #[inline]
    pub fn next_kind(&mut self) -> Result<Option<TokenKind>, LexErrorKind> {
        let bytes = self.bytes;
        let mut pos = self.pos;
        let first = loop {
            let Some(&b) = bytes.get(pos) else {
                self.pos = pos;
                self.start = pos;
                return Ok(None);
            };
            if class(b) & SPACE != 0 {
                pos += 1;
            } else if b == b'/' && matches!(bytes.get(pos + 1), Some(b'/' | b'*')) {
                pos = self.skip_comment(pos)?;
            } else {
                break b;
            }
        };
        self.start = pos;
        if class(first) & IDENT_START != 0 && first != b'%' {
            self.pos = self.run_end(pos + 1, IDENT_CONTINUE);
            Ok(Some(TokenKind::Ident))
        } else if first == b'.' && self.has_class(pos + 1, IDENT_CONTINUE) {
            self.pos = self.directive_end(pos + 1);
            Ok(Some(TokenKind::Directive))
        } else {
            self.lex_other(pos, first).map(Some)
        }
    }

    /// Records the `{` at `at` as the token just scanned, for a caller that found it by other
    /// means; the same state [`Self::seek`] to `at` and [`Self::next_kind`] would leave.
    /// Ignored unless the byte at `at` is `{`.
    #[inline]
    pub(crate) fn set_scanned_lbrace(&mut self, at: usize) {
        if self.bytes.get(at) == Some(&b'{') {
            self.start = at;
            self.pos = at + 1;
        }
    }

    /// Byte range of the token or error most recently returned by [`Self::next_kind`].
    #[inline]
    pub fn scanned_range(&self) -> Range<usize> {
        self.start..self.pos
    }

    /// Start of [`Self::scanned_range`].
    #[inline]
    pub fn scanned_start(&self) -> usize {
        self.start
    }

    /// End of [`Self::scanned_range`].
    #[inline]
    pub fn scanned_end(&self) -> usize {
        self.pos
    }

    /// Text of the token most recently returned by [`Self::next_kind`].
    #[inline]
    pub fn scanned_text(&self) -> &'a str {
        // Every scanning path stops at ASCII bytes or whole characters, so both ends are char
        // boundaries and this never falls back to the empty string.
        self.src
            .split_at_checked(self.pos)
            .and_then(|(head, _)| head.split_at_checked(self.start))
            .map_or("", |(_, text)| text)
    }

    /// The less frequent token kinds, kept out of line so the identifier and directive paths stay
    /// small.
    #[inline(never)]
    fn lex_other(&mut self, start: usize, first: u8) -> Result<TokenKind, LexErrorKind> {
        if first == b'%' && self.has_class(start + 1, IDENT_CONTINUE) {
            self.pos = self.run_end(start + 1, IDENT_CONTINUE);
            Ok(TokenKind::Ident)
        } else if class(first) & DIGIT != 0 {
            self.lex_number(start)
        } else if first == b'"' {
            self.lex_string(start)
        } else if let Some(punct) = Punct::from_byte(first) {
            self.pos = start + 1;
            Ok(TokenKind::Punct(punct))
        } else {
            Err(self.unexpected_char(start))
        }
    }

    /// At `//` or `/*`: the offset after the comment. An unterminated block comment is an error
    /// that leaves the lexer at the end.
    #[inline(never)]
    fn skip_comment(&mut self, slash: usize) -> Result<usize, LexErrorKind> {
        let bytes = self.bytes;
        let rest = bytes.get(slash + 2..).unwrap_or_default();
        if bytes.get(slash + 1) == Some(&b'/') {
            return Ok(memchr::memchr(b'\n', rest).map_or(bytes.len(), |i| slash + 2 + i + 1));
        }
        match find_comment_end(rest) {
            Some(i) => Ok(slash + 2 + i + 2),
            None => {
                self.start = slash;
                self.pos = bytes.len();
                Err(LexErrorKind::UnterminatedComment)
            }
        }
    }

    #[inline]
    fn has_class(&self, at: usize, wanted: u8) -> bool {
        self.bytes.get(at).is_some_and(|&b| class(b) & wanted != 0)
    }

    #[inline]
    fn run_end(&self, mut at: usize, wanted: u8) -> usize {
        if wanted == IDENT_CONTINUE {
            return ident_run_end(self.bytes, at);
        }
        while self.has_class(at, wanted) {
            at += 1;
        }
        at
    }

    #[inline]
    fn directive_end(&self, at: usize) -> usize {
        let mut end = self.run_end(at, IDENT_CONTINUE);
        while self.bytes.get(end) == Some(&b':')
            && self.bytes.get(end + 1) == Some(&b':')
            && self.has_class(end + 2, IDENT_CONTINUE)
        {
            end = self.run_end(end + 2, IDENT_CONTINUE);
        }
        end
    }

    fn lex_number(&mut self, start: usize) -> Result<TokenKind, LexErrorKind> {
        let bytes = self.bytes;
        let second = bytes.get(start + 1).map(u8::to_ascii_lowercase);
        let (kind, end) = match (bytes.get(start), second) {
            (Some(b'0'), Some(b'x')) => (TokenKind::Int, self.radix_end(start + 2, HEX)),
            (Some(b'0'), Some(b'b')) => {
                let end = self.run_end(start + 2, DIGIT);
                let valid = end > start + 2
                    && bytes
                        .get(start + 2..end)
                        .is_some_and(|d| d.iter().all(|&b| b == b'0' || b == b'1'));
                (TokenKind::Int, valid.then_some(end))
            }
            (Some(b'0'), Some(b'f')) => (TokenKind::Float, self.hex_bits_end(start, 8)),
            (Some(b'0'), Some(b'd')) => (TokenKind::Float, self.hex_bits_end(start, 16)),
            _ => self.decimal_end(start),
        };
        let end = end.map(|end| {
            // The `U` suffix marks an unsigned integer literal.
            let suffixed = kind == TokenKind::Int && matches!(bytes.get(end), Some(b'U' | b'u'));
            if suffixed { end + 1 } else { end }
        });
        match end {
            // A literal glued to identifier characters (`12abc`) is one malformed number.
            Some(end) if !self.has_class(end, IDENT_CONTINUE) => {
                self.pos = end;
                Ok(kind)
            }
            _ => {
                self.pos = self.run_end(start, IDENT_CONTINUE);
                Err(LexErrorKind::BadNumber)
            }
        }
    }

    fn radix_end(&self, at: usize, digits: u8) -> Option<usize> {
        let end = self.run_end(at, digits);
        (end > at).then_some(end)
    }

    fn hex_bits_end(&self, start: usize, count: usize) -> Option<usize> {
        let end = self.run_end(start + 2, HEX);
        (end == start + 2 + count).then_some(end)
    }

    /// Decimal integer, octal integer (leading `0`) or decimal float.
    fn decimal_end(&self, start: usize) -> (TokenKind, Option<usize>) {
        let bytes = self.bytes;
        let mut end = self.run_end(start, DIGIT);
        let mut kind = TokenKind::Int;
        // `1.u32` never occurs, but `1.` followed by a letter is safer read as int + directive.
        if bytes.get(end) == Some(&b'.') && !self.has_class(end + 1, IDENT_START) {
            kind = TokenKind::Float;
            end = self.run_end(end + 1, DIGIT);
        }
        if matches!(bytes.get(end), Some(b'e' | b'E')) {
            let mut digits = end + 1;
            if matches!(bytes.get(digits), Some(b'+' | b'-')) {
                digits += 1;
            }
            let exp_end = self.run_end(digits, DIGIT);
            if exp_end == digits {
                return (TokenKind::Float, None);
            }
            kind = TokenKind::Float;
            end = exp_end;
        }
        let octal_ok = kind != TokenKind::Int
            || bytes.get(start) != Some(&b'0')
            || bytes
                .get(start..end)
                .is_some_and(|d| d.iter().all(|&b| (b'0'..=b'7').contains(&b)));
        (kind, octal_ok.then_some(end))
    }

    fn lex_string(&mut self, start: usize) -> Result<TokenKind, LexErrorKind> {
        let bytes = self.bytes;
        let mut at = start + 1;
        while let Some(hay) = bytes.get(at..) {
            match memchr::memchr2(b'"', b'\\', hay) {
                Some(i) if hay.get(i) == Some(&b'"') => {
                    self.pos = at + i + 1;
                    return Ok(TokenKind::Str);
                }
                // An escape consumes the next byte, which may be a quote. A multi-byte
                // character after the backslash is skipped by the next search anyway.
                Some(i) => at += i + 2,
                None => break,
            }
        }
        self.pos = bytes.len();
        Err(LexErrorKind::UnterminatedString)
    }

    fn unexpected_char(&mut self, start: usize) -> LexErrorKind {
        let ch = self
            .src
            .get(start..)
            .and_then(|rest| rest.chars().next())
            .unwrap_or(char::REPLACEMENT_CHARACTER);
        self.pos = start + ch.len_utf8();
        LexErrorKind::UnexpectedChar(ch)
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Result<Token<'a>, LexError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_token()
    }
}

/// Offset of the `*/` that closes a block comment whose text (after `/*`) is `rest`.
///
/// A plain `memchr` for `*` avoids building a `memmem` searcher per comment; comments rarely
/// contain stray `*`.
pub(crate) fn find_comment_end(rest: &[u8]) -> Option<usize> {
    let mut from = 0;
    loop {
        let star = from + memchr::memchr(b'*', rest.get(from..)?)?;
        if rest.get(star + 1) == Some(&b'/') {
            return Some(star);
        }
        from = star + 1;
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i.min(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swar_class_matches_the_table() {
        for b in 0..=u8::MAX {
            for lane in 0..8 {
                // The other lanes hold an identifier byte or a non-identifier byte.
                for filler in [b'a', b' ', 0xff] {
                    let mut bytes = [filler; 8];
                    bytes[lane] = b;
                    let mask = non_ident_bytes(u64::from_le_bytes(bytes));
                    for (i, &byte) in bytes.iter().enumerate() {
                        let flagged = mask >> (i * 8) & 0xff;
                        let expected = if is_ident_continue(byte) { 0 } else { 0x80 };
                        assert_eq!(flagged, expected, "byte {byte:#04x} in lane {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn ident_run_end_matches_a_byte_loop() {
        let text = b"abcdefghijklmnopqrstuvwxyz_$0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.x\xc3\xa9";
        for start in 0..text.len() {
            for end in start..=text.len() {
                let bytes = &text[..end];
                let mut expected = start;
                while expected < bytes.len() && is_ident_continue(bytes[expected]) {
                    expected += 1;
                }
                assert_eq!(ident_run_end(bytes, start), expected, "{start}..{end}");
            }
        }
    }
}
