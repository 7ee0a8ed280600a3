//! Byte-scanning readers for the common shapes of a `.param` declaration and of the dimensions
//! of `.maxntid`/`.reqntid`.
//!
//! NVRTC writes parameters as `.param .u64 name`, `.param .u64 .ptr .global .align 16 name` or
//! `.param .align 8 .b8 name[24]`, separated by blanks only. [`fast_param`] reads exactly such a
//! parameter plus the `,` or `)` after it, with the same meaning the token-by-token parser gives
//! it, and declines (returns `None`) on anything else: comments, `::` or other unusual
//! directive spellings, numbers other than plain decimals, `%` names, blanks inside `[…]`,
//! unknown or repeated types, and every malformed input. [`fast_dims`] does the same for
//! `256, 1, 1`. Whatever is declined is re-read by the lexer from the same offset, so errors are
//! always reported by the one general path.
//!
//! Acceptance is deliberately narrower than the grammar: each accepted token must be followed by
//! a byte that ends it for the lexer too (a blank, or the punctuation the grammar expects next),
//! so the fast reading never splits text differently from the lexer.

use crate::index::{Dims, ParamRef};
use crate::lexer::{ident_run_end, is_ident_start};
use crate::model::{PtrAttr, ScalarType, StateSpace};

/// A parameter read by [`fast_param`].
#[derive(Debug)]
pub(crate) struct FastParam<'a> {
    pub(crate) param: ParamRef<'a>,
    /// Offset just past the `,` or `)` that follows the parameter.
    pub(crate) end: usize,
    /// Whether that was the list's closing `)`.
    pub(crate) closed: bool,
}

/// Blanks as the lexer defines them (form feed and vertical tab included), as a bit set.
const BLANKS: u64 = 1 << b' ' | 1 << b'\t' | 1 << b'\n' | 1 << b'\r' | 1 << 0x0b | 1 << 0x0c;

/// Whether `b` is a blank, with one shift and mask.
#[inline(always)]
fn is_blank(b: u8) -> bool {
    b < 64 && (BLANKS >> b) & 1 != 0
}

#[inline]
fn skip_blanks(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(|&b| is_blank(b)) {
        pos += 1;
    }
    pos
}

/// A plain decimal literal at `pos` (no leading zero unless it is `0`, at most 9 digits, so it
/// fits a `u32` and means the same to [`crate::parse_int`]); returns the value and its end.
#[inline(always)]
fn small_decimal(bytes: &[u8], pos: usize) -> Option<(u32, usize)> {
    let mut value: u32 = 0;
    let mut end = pos;
    while let Some(&b) = bytes.get(end) {
        if !b.is_ascii_digit() {
            break;
        }
        if end - pos == 9 {
            return None;
        }
        value = value * 10 + u32::from(b - b'0');
        end += 1;
    }
    match end - pos {
        0 => None,
        1 => Some((value, end)),
        _ if bytes.get(pos) == Some(&b'0') => None,
        _ => Some((value, end)),
    }
}

/// A directive name of at most eight bytes (without its dot), packed little-endian into a
/// `u64` so that it is recognized with one integer comparison.
const fn key(name: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    let mut i = 0;
    while i < name.len() && i < 8 {
        bytes[i] = name[i];
        i += 1;
    }
    u64::from_le_bytes(bytes)
}

/// At a `.`: the packed name (see [`key`]) of the one to seven bytes before the first byte
/// `<= 0x20`, provided that byte is a blank, and the offset of that blank; `None` otherwise.
///
/// The name is not checked for identifier characters here: the caller accepts it only when it
/// equals one of [`PARAM_DIRECTIVES`], which are all identifier characters, so the lexer would
/// read exactly the same directive. One eight-byte load finds the end and supplies the key.
#[inline(always)]
fn short_directive(bytes: &[u8], dot: usize) -> Option<(u64, usize)> {
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    const LOW7: u64 = u64::from_ne_bytes([0x7f; 8]);
    const TO_21: u64 = u64::from_ne_bytes([0x80 - 0x21; 8]);
    let chunk = bytes.get(dot + 1..)?.first_chunk::<8>()?;
    let word = u64::from_le_bytes(*chunk);
    // High bit of each byte below 0x21: ASCII (high bit clear) and `(b & 0x7f) + 0x5f < 0x80`.
    // No byte of the sum exceeds 0xde, so no carry crosses bytes.
    let controls = !((word & LOW7) + TO_21) & !word & HIGH;
    let len = (controls.trailing_zeros() / 8) as usize;
    if len == 0 || !is_blank(*chunk.get(len)?) {
        return None;
    }
    Some((word & (u64::MAX >> (64 - 8 * len)), dot + 1 + len))
}

/// What a directive inside a parameter declaration says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ParamDirective {
    Align,
    Ptr,
    Space(StateSpace),
    Type(ScalarType),
}

/// Every directive name a parameter declaration may use, with its meaning; the same
/// vocabulary as [`StateSpace::from_directive`] and [`ScalarType::from_directive`].
const PARAM_DIRECTIVES: [(&[u8], ParamDirective); 26] = {
    use ParamDirective::{Align, Ptr, Space, Type};
    [
        (b"align", Align),
        (b"ptr", Ptr),
        (b"global", Space(StateSpace::Global)),
        (b"const", Space(StateSpace::Const)),
        (b"local", Space(StateSpace::Local)),
        (b"shared", Space(StateSpace::Shared)),
        (b"b8", Type(ScalarType::B8)),
        (b"b16", Type(ScalarType::B16)),
        (b"b32", Type(ScalarType::B32)),
        (b"b64", Type(ScalarType::B64)),
        (b"b128", Type(ScalarType::B128)),
        (b"u8", Type(ScalarType::U8)),
        (b"u16", Type(ScalarType::U16)),
        (b"u32", Type(ScalarType::U32)),
        (b"u64", Type(ScalarType::U64)),
        (b"s8", Type(ScalarType::S8)),
        (b"s16", Type(ScalarType::S16)),
        (b"s32", Type(ScalarType::S32)),
        (b"s64", Type(ScalarType::S64)),
        (b"f16", Type(ScalarType::F16)),
        (b"f16x2", Type(ScalarType::F16x2)),
        (b"bf16", Type(ScalarType::BF16)),
        (b"bf16x2", Type(ScalarType::BF16x2)),
        (b"f32", Type(ScalarType::F32)),
        (b"f64", Type(ScalarType::F64)),
        (b"pred", Type(ScalarType::Pred)),
    ]
};

/// Multiplier of a perfect hash of the packed [`PARAM_DIRECTIVES`] names into 64 slots (found
/// by search; the `param_directive_table_is_perfect` test checks it), so that classifying a
/// directive costs one multiply and one load instead of a chain of unpredictable branches.
const HASH_MUL: u64 = 0x483a_fab3_25e1_05f1;

const fn slot(key: u64) -> usize {
    (key.wrapping_mul(HASH_MUL) >> 58) as usize
}

/// `PARAM_DIRECTIVES` by hash slot: the packed name (0 for an empty slot) and its meaning.
static PARAM_DIRECTIVE_TABLE: [(u64, Option<ParamDirective>); 64] = {
    let mut table = [(0, None); 64];
    let mut i = 0;
    while i < PARAM_DIRECTIVES.len() {
        let (name, directive) = PARAM_DIRECTIVES[i];
        table[slot(key(name))] = (key(name), Some(directive));
        i += 1;
    }
    table
};

/// Classifies a packed directive name exactly as the token path does with
/// [`StateSpace::from_directive`] and [`ScalarType::from_directive`].
#[inline(always)]
fn param_directive(packed: u64) -> Option<ParamDirective> {
    match PARAM_DIRECTIVE_TABLE.get(slot(packed)) {
        Some(&(name, directive)) if name == packed => directive,
        _ => None,
    }
}

/// Reads one parameter starting at `pos` (just after the `(` or `,` in front of it), or
/// declines. Never panics.
///
/// `owner` is the name of the entry or function the list belongs to, when known: NVRTC names
/// parameters `<owner>_param_<i>`, and a parameter name that starts with `owner` only needs its
/// remaining bytes checked, since `owner` was lexed as an identifier already.
#[inline]
pub(crate) fn fast_param<'a>(src: &'a str, pos: usize, owner: &str) -> Option<FastParam<'a>> {
    let bytes = src.as_bytes();
    let start = skip_blanks(bytes, pos);
    if bytes.get(start..start + 6)? != b".param" || !is_blank(*bytes.get(start + 6)?) {
        return None;
    }
    let mut at = skip_blanks(bytes, start + 7);
    let mut ty = None;
    let mut align = None;
    let mut ptr: Option<PtrAttr> = None;
    while bytes.get(at) == Some(&b'.') {
        // Every directive of a parameter is followed by a blank here; anything else (`::`, a
        // missing name, punctuation) is left to the lexer.
        let (key, end) = short_directive(bytes, at)?;
        let directive = param_directive(key)?;
        // `short_directive` saw a blank at `end` already.
        at = skip_blanks(bytes, end + 1);
        // The same decisions, in the same order, as `Parser::param`; every case in which the
        // token path reports an error declines instead.
        match (directive, &mut ptr) {
            (ParamDirective::Align, _) => {
                let (value, end) = small_decimal(bytes, at)?;
                if !is_blank(*bytes.get(end)?) {
                    return None;
                }
                match &mut ptr {
                    Some(ptr) => ptr.align = Some(value),
                    None => align = Some(value),
                }
                at = skip_blanks(bytes, end + 1);
            }
            (ParamDirective::Ptr, None) => {
                ptr = Some(PtrAttr {
                    space: None,
                    align: None,
                });
            }
            (
                ParamDirective::Space(parsed),
                Some(PtrAttr {
                    space: space @ None,
                    ..
                }),
            ) => *space = Some(parsed),
            (ParamDirective::Type(parsed), _) if parsed != ScalarType::Pred && ty.is_none() => {
                ty = Some(parsed);
            }
            _ => return None,
        }
    }
    let ty = ty?;
    let name_start = at;
    if !bytes
        .get(name_start)
        .is_some_and(|&b| is_ident_start(b) && b != b'%')
    {
        return None;
    }
    let checked = match bytes.get(name_start..name_start + owner.len()) {
        Some(prefix) if owner.len() > 1 && prefix == owner.as_bytes() => {
            // `_param_` is identifier characters too; only the index remains to be checked.
            let after = name_start + owner.len();
            if bytes.get(after..after + 7) == Some(b"_param_") {
                after + 7
            } else {
                after
            }
        }
        _ => name_start + 1,
    };
    let name_end = ident_run_end(bytes, checked);
    let name = substr(src, name_start, name_end)?;
    let mut at = name_end;
    let mut array_len = None;
    if bytes.get(at) == Some(&b'[') {
        let (len, end) = small_decimal(bytes, at + 1)?;
        if bytes.get(end) != Some(&b']') {
            return None;
        }
        array_len = Some(len);
        at = end + 1;
    }
    at = skip_blanks(bytes, at);
    let closed = match bytes.get(at)? {
        b',' => false,
        b')' => true,
        _ => return None,
    };
    Some(FastParam {
        param: ParamRef {
            name,
            ty,
            align,
            array_len,
            ptr,
            reg: false,
            offset: start,
        },
        end: at + 1,
        closed,
    })
}

/// After a linkage directive (`.visible`, `.weak`, `.extern`) ending at `pos`: the offset just
/// past the `.entry` that follows it after blanks, or declines.
///
/// `.entry` must be followed by a blank, so the lexer would read exactly that directive there.
#[inline]
pub(crate) fn fast_entry_directive(bytes: &[u8], pos: usize) -> Option<usize> {
    let at = skip_blanks(bytes, pos);
    if bytes.get(at..at + 6)? != b".entry" || !is_blank(*bytes.get(at + 6)?) {
        return None;
    }
    Some(at + 6)
}

/// After `.entry` or `.func` ending at `pos`: the name and the offset just past the `(` that
/// follows it after blanks, or declines (on `%` names, comments, and anything but `(` after the
/// name, which the lexer then reads as usual).
#[inline]
pub(crate) fn fast_name_paren(src: &str, pos: usize) -> Option<(&str, usize)> {
    let bytes = src.as_bytes();
    let start = skip_blanks(bytes, pos);
    if !bytes
        .get(start)
        .is_some_and(|&b| is_ident_start(b) && b != b'%')
    {
        return None;
    }
    let end = ident_run_end(bytes, start + 1);
    let name = substr(src, start, end)?;
    let paren = skip_blanks(bytes, end);
    (*bytes.get(paren)? == b'(').then_some((name, paren + 1))
}

/// `src[start..end]` if both are character boundaries, through `split_at_checked`, which
/// inlines where `str::get` with a range stays a call.
#[inline(always)]
fn substr(src: &str, start: usize, end: usize) -> Option<&str> {
    let (head, _) = src.split_at_checked(end)?;
    let (_, name) = head.split_at_checked(start)?;
    Some(name)
}

/// Reads `x[, y[, z]]` after `.maxntid`/`.reqntid` starting at `pos` (just after the
/// directive), or declines. On success returns the dimensions and the offset of the next token,
/// which is known to be no `,` (so the list ends where the token path would end it).
#[inline]
pub(crate) fn fast_dims(bytes: &[u8], pos: usize) -> Option<(Dims, usize)> {
    let (x, mut number_end) = small_decimal(bytes, skip_blanks(bytes, pos))?;
    let mut dims = Dims::new(x);
    loop {
        let at = skip_blanks(bytes, number_end);
        match bytes.get(at)? {
            b',' if dims.len() < 3 => {
                let (value, end) = small_decimal(bytes, skip_blanks(bytes, at + 1))?;
                dims.push(value);
                number_end = end;
            }
            // A token that cannot continue the list: the body, the end of a prototype or the
            // next directive (which the lexer reads, or rejects, as usual). A `.` right after
            // the digits would make the lexer read one float literal instead.
            b'{' | b';' => return Some((dims, at)),
            b'.' if at > number_end => return Some((dims, at)),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param<'a>(src: &'a str, owner: &str) -> Option<(ParamRef<'a>, usize, bool)> {
        fast_param(src, 0, owner).map(|fast| (fast.param, fast.end, fast.closed))
    }

    #[test]
    fn reads_the_nvrtc_shapes() {
        let src = "\n\t.param .u64 .ptr .global .align 16 k_param_0,";
        let expected = ParamRef {
            name: "k_param_0",
            ty: ScalarType::U64,
            align: None,
            array_len: None,
            ptr: Some(PtrAttr {
                space: Some(StateSpace::Global),
                align: Some(16),
            }),
            reg: false,
            offset: 2,
        };
        assert_eq!(param(src, "k"), Some((expected.clone(), src.len(), false)));
        assert_eq!(param(src, ""), Some((expected, src.len(), false)));

        let src = " .param .align 2 .b8 k_param_5[2]\n)";
        let (read, end, closed) = param(src, "k").unwrap();
        assert_eq!(
            (read.name, read.ty, read.align),
            ("k_param_5", ScalarType::B8, Some(2))
        );
        assert_eq!(
            (read.array_len, read.ptr, end, closed),
            (Some(2), None, src.len(), true)
        );
    }

    #[test]
    fn declines_what_the_lexer_must_read() {
        for src in [
            ".param .u64 /* c */ k,",
            ".param .u64 k [2],",
            ".param .u64 %k,",
            ".param .u64 k.x,",
            ".param .u64::x k,",
            ".param .align 016 .b8 k[2],",
            ".param .align 0x10 .b8 k[2],",
            ".param .b8 k[1234567890],",
            ".param .u64 k",
            ".param .pred k,",
            ".param .u64 .s64 k,",
        ] {
            assert!(fast_param(src, 0, "k").is_none(), "{src}");
        }
    }

    #[test]
    fn param_directive_table_is_perfect() {
        for (name, directive) in PARAM_DIRECTIVES {
            assert_eq!(param_directive(key(name)), Some(directive));
            let text = format!(".{}", std::str::from_utf8(name).unwrap());
            let expected = match directive {
                ParamDirective::Space(space) => StateSpace::from_directive(&text) == Some(space),
                ParamDirective::Type(ty) => ScalarType::from_directive(&text) == Some(ty),
                ParamDirective::Align | ParamDirective::Ptr => true,
            };
            assert!(expected, "{text}");
        }
        for other in [
            &b"u63"[..],
            b"alignx",
            b"gl",
            b"ptrs",
            b"shared1",
            b"b",
            b"param",
        ] {
            assert_eq!(param_directive(key(other)), None);
        }
    }

    #[test]
    fn short_directive_stops_at_the_first_control_byte() {
        let read = |src: &[u8]| short_directive(src, 0);
        assert_eq!(read(b".u64 name"), Some((key(b"u64"), 4)));
        assert_eq!(read(b".global\tx"), Some((key(b"global"), 7)));
        assert_eq!(read(b".u64\x01 name"), None);
        assert_eq!(read(b". u64 name"), None);
        assert_eq!(read(b".abcdefgh x"), None);
        assert_eq!(read(b".u6\xe9 name"), Some((key(b"u6\xe9"), 4)));
        assert_eq!(param_directive(key(b"u6\xe9")), None);
        assert_eq!(read(b".u64"), None);
    }

    #[test]
    fn dims() {
        let read =
            |src: &str| fast_dims(src.as_bytes(), 0).map(|(d, at)| (d.as_slice().to_vec(), at));
        assert_eq!(read(" 256, 1, 1\n{"), Some((vec![256, 1, 1], 11)));
        assert_eq!(read(" 32 ;"), Some((vec![32], 4)));
        assert_eq!(read(" 32 .maxnreg"), Some((vec![32], 4)));
        for declined in [
            " 1.5 {",
            " 1.x {",
            " 1, 2, 3, 4 {",
            " 1 x",
            " 1U {",
            " 01 {",
            " 1 /**/ {",
            " 1",
        ] {
            assert_eq!(read(declined), None, "{declined}");
        }
    }
}
