//! Skipping `{ … }` blocks without tokenizing them.
//!
//! Entry bodies are most of a PTX module's bytes and the module parser only needs their extent,
//! so they are not lexed: one pass walks the [`marks`] — every `{`, `}`, `/` and `"`, found 64
//! bytes at a time — since only braces, comments and strings can change where a block ends.
//! Comments and strings are skipped with `memchr` searches for their end, and the walk resumes
//! after them; no byte is looked at twice.

use memchr::{memchr, memchr2};

#[cfg(target_arch = "x86_64")]
use crate::marks::marks_avx2;
use crate::marks::{WINDOW, marks};

/// Why a block could not be skipped. Offsets are absolute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unterminated {
    /// The block opened at this offset (of its `{`) never closes.
    Block(usize),
    /// A `/*` at this offset never closes.
    Comment(usize),
    /// A `"` at this offset never closes.
    String(usize),
}

/// Given the offset of a `{`, returns the offset just past its matching `}`.
///
/// Braces inside comments and strings (with `\` escapes) do not count, and comment markers
/// inside strings do not start comments.
pub(crate) fn skip_block(bytes: &[u8], open: usize) -> Result<usize, Unterminated> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { skip_block_avx2(bytes, open) };
    }
    walk(bytes, open, marks)
}

/// [`skip_block`] with AVX2 enabled, so that [`marks_avx2`] is inlined into the walk.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn skip_block_avx2(bytes: &[u8], open: usize) -> Result<usize, Unterminated> {
    // SAFETY: this function runs only where AVX2 is present (its contract).
    walk(bytes, open, |bytes, base| unsafe {
        marks_avx2(bytes, base)
    })
}

/// The one pass: walks the marks of each window from the block's start, skipping comments and
/// strings as it meets them, until the block's `}`. `marks` is [`marks`] or a faster spelling of
/// it.
#[inline(always)]
fn walk(
    bytes: &[u8],
    open: usize,
    marks: impl Fn(&[u8], usize) -> u64,
) -> Result<usize, Unterminated> {
    let (mut depth, pos) = opened(bytes, open);
    // The window starting at `base`, and the marks in it not yet walked.
    let mut base = pos;
    let mut pending = marks(bytes, base);
    loop {
        if pending == 0 {
            base += WINDOW;
            if base >= bytes.len() {
                return Err(Unterminated::Block(open));
            }
            pending = marks(bytes, base);
            continue;
        }
        let at = base + pending.trailing_zeros() as usize;
        pending &= pending - 1;
        let resume = match bytes.get(at) {
            Some(b'{') => {
                depth += 1;
                continue;
            }
            Some(b'}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Ok(at + 1);
                }
                continue;
            }
            Some(b'"') => skip_string(bytes, at)?,
            _ => skip_comment(bytes, at)?,
        };
        // A `/` that starts no comment resumes at the next byte, still in this window.
        if resume == at + 1 {
            continue;
        }
        base = resume;
        pending = marks(bytes, base);
    }
}

/// The depth and search position to start from: inside the block when `open` is its `{` (as
/// callers promise), which saves a search that would only find that brace.
#[inline]
fn opened(bytes: &[u8], open: usize) -> (usize, usize) {
    if bytes.get(open) == Some(&b'{') {
        (1, open + 1)
    } else {
        (0, open)
    }
}

/// At a `/`: the offset after the comment it starts, or after the `/` if it starts none.
fn skip_comment(bytes: &[u8], slash: usize) -> Result<usize, Unterminated> {
    let rest = bytes.get(slash + 2..).unwrap_or_default();
    match bytes.get(slash + 1) {
        // A line comment that runs to the end of input leaves the block unterminated, which the
        // caller reports when the next search finds nothing.
        Some(b'/') => Ok(memchr(b'\n', rest).map_or(bytes.len(), |i| slash + 2 + i + 1)),
        Some(b'*') => crate::lexer::find_comment_end(rest)
            .map(|i| slash + 2 + i + 2)
            .ok_or(Unterminated::Comment(slash)),
        _ => Ok(slash + 1),
    }
}

/// At a `"`: the offset after its closing quote.
fn skip_string(bytes: &[u8], quote: usize) -> Result<usize, Unterminated> {
    let mut pos = quote + 1;
    loop {
        let rest = bytes.get(pos..).unwrap_or_default();
        match memchr2(b'"', b'\\', rest) {
            Some(i) if rest.get(i) == Some(&b'"') => return Ok(pos + i + 1),
            Some(i) => pos += i + 2,
            None => return Err(Unterminated::String(quote)),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The meaning of a block, one byte at a time: what [`skip_block`] must agree with.
    fn reference(bytes: &[u8], open: usize) -> Result<usize, Unterminated> {
        let (mut depth, mut i) = opened(bytes, open);
        while let Some(&b) = bytes.get(i) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(i + 1);
                    }
                }
                b'"' => {
                    let quote = i;
                    i += 1;
                    loop {
                        match bytes.get(i) {
                            None => return Err(Unterminated::String(quote)),
                            Some(b'"') => break,
                            Some(b'\\') => i += 2,
                            Some(_) => i += 1,
                        }
                    }
                }
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    while bytes.get(i).is_some_and(|&b| b != b'\n') {
                        i += 1;
                    }
                }
                b'/' if bytes.get(i + 1) == Some(&b'*') => {
                    let slash = i;
                    i += 2;
                    while bytes.get(i..i + 2) != Some(b"*/") {
                        if i + 2 > bytes.len() {
                            return Err(Unterminated::Comment(slash));
                        }
                        i += 1;
                    }
                    i += 1;
                }
                _ => {}
            }
            i += 1;
        }
        Err(Unterminated::Block(open))
    }

    /// Pieces of block text: braces, strings with braces, escaped quotes and comment markers,
    /// comments with braces and quotes, and runs that carry the marks across 64-byte windows.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => prop::sample::select(vec![
                "{", "}", "\"", "\\", "\\\"", "/", "*", "//", "/*", "*/", "\n", " ", "a",
                ";", ".pragma \"nounroll\";",
                "\"}{//\"",
                "\"a\\\"}\"",
                "\"/*\"",
                "// } \" {\n",
                "/* } \" { */",
                "{%f1, %f2}",
            ])
            .prop_map(str::to_owned),
            1 => (0..70usize).prop_map(|n| "x".repeat(n)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn one_pass_agrees_with_the_byte_by_byte_reading(
            pieces in prop::collection::vec(piece(), 0..40),
            open in any::<prop::sample::Index>(),
        ) {
            let src = format!("{{{}", pieces.concat());
            let bytes = src.as_bytes();
            prop_assert_eq!(skip_block(bytes, 0), reference(bytes, 0), "{:?}", src);
            let open = open.index(bytes.len());
            prop_assert_eq!(skip_block(bytes, open), reference(bytes, open), "{:?} at {}", src, open);
        }
    }

    fn end_of(src: &str) -> Result<usize, Unterminated> {
        skip_block(src.as_bytes(), src.find('{').unwrap_or(0))
    }

    #[test]
    fn nested_blocks_comments_and_strings() {
        assert_eq!(end_of("{ { } }x"), Ok(7));
        assert_eq!(end_of("{ // }\n }x"), Ok(9));
        assert_eq!(end_of("{ /* } */ }x"), Ok(11));
        assert_eq!(end_of("{ \"}\" }x"), Ok(7));
        assert_eq!(end_of("{ \"\\\"}\" }x"), Ok(9));
        assert_eq!(end_of("{ a / b }x"), Ok(9));
    }

    #[test]
    fn strings_hide_braces_and_comment_markers() {
        assert_eq!(end_of("{ \"/*\" }x"), Ok(8));
        assert_eq!(end_of("{ \"//\" }x"), Ok(8));
        assert_eq!(end_of("{ \"{\" }x"), Ok(7));
        assert_eq!(end_of("{ /* \" */ }x"), Ok(11));
        assert_eq!(end_of("{ // \"\n }x"), Ok(9));
        assert_eq!(end_of("{ \"a\" { \"}\" } }x"), Ok(15));
    }

    #[test]
    fn unterminated() {
        assert_eq!(end_of("{ { }"), Err(Unterminated::Block(0)));
        assert_eq!(end_of("{ /* }"), Err(Unterminated::Comment(2)));
        assert_eq!(end_of("{ \"}"), Err(Unterminated::String(2)));
        assert_eq!(end_of("{ // }"), Err(Unterminated::Block(0)));
        assert_eq!(end_of("{ \"a\" "), Err(Unterminated::Block(0)));
        assert_eq!(end_of("{ // \""), Err(Unterminated::Block(0)));
        assert_eq!(end_of("{ /* \" "), Err(Unterminated::Comment(2)));
    }
}
