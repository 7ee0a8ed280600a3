//! Skipping `{ … }` blocks without tokenizing them.
//!
//! Entry bodies are most of a PTX module's bytes and the module parser only needs their extent,
//! so they are scanned with SIMD byte searches (`memchr`) instead of the lexer; no byte loop
//! runs over a body. Only `{`, `}`, comments and strings can change where a block ends. Strings
//! are rare in bodies, so the first scan ignores them, and one `memchr` over the scanned bytes
//! checks that no `"` was there; a block with strings is rescanned by a search that also stops
//! at quotes.

use memchr::{memchr, memchr2, memchr3};

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
    let (result, scanned_to) = skip_fast(bytes, open);
    let scanned = bytes.get(open..scanned_to).unwrap_or_default();
    if memchr(b'"', scanned).is_some() {
        skip_with_strings(bytes, open)
    } else {
        result
    }
}

/// Brace matching that honours comments but not strings. Also returns how far it looked, so
/// the caller can tell whether a string could have misled it.
fn skip_fast(bytes: &[u8], open: usize) -> (Result<usize, Unterminated>, usize) {
    let (mut depth, mut pos) = opened(bytes, open);
    loop {
        let rest = bytes.get(pos..).unwrap_or_default();
        let Some(found) = memchr3(b'{', b'}', b'/', rest) else {
            return (Err(Unterminated::Block(open)), bytes.len());
        };
        let at = pos + found;
        match rest.get(found) {
            Some(b'{') => depth += 1,
            Some(b'}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return (Ok(at + 1), at + 1);
                }
            }
            _ => match skip_comment(bytes, at) {
                Ok(next) => {
                    pos = next;
                    continue;
                }
                Err(error) => return (Err(error), bytes.len()),
            },
        }
        pos = at + 1;
    }
}

/// Brace matching that also honours strings: `memchr3` finds the next brace or `/`, and a
/// `memchr` over the bytes before it finds a `"` whose string could hide it.
fn skip_with_strings(bytes: &[u8], open: usize) -> Result<usize, Unterminated> {
    let (mut depth, mut pos) = opened(bytes, open);
    loop {
        let rest = bytes.get(pos..).unwrap_or_default();
        let found = memchr3(b'{', b'}', b'/', rest);
        let before = rest.get(..found.unwrap_or(rest.len())).unwrap_or_default();
        if let Some(quote) = memchr(b'"', before) {
            pos = skip_string(bytes, pos + quote)?;
            continue;
        }
        let Some(found) = found else {
            return Err(Unterminated::Block(open));
        };
        let at = pos + found;
        match rest.get(found) {
            Some(b'{') => depth += 1,
            Some(b'}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Ok(at + 1);
                }
            }
            _ => {
                pos = skip_comment(bytes, at)?;
                continue;
            }
        }
        pos = at + 1;
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
    use super::*;

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
