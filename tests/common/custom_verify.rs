//! Custom-contract verification helpers shared by the verifier's custom-ABI tests: verify an
//! entry against a signature's contract, mutate one entry's text, and assert a rejection's kind
//! and line.

use jitseam::AbiSpec;
use jitseam::abi::AbiContract;
use jitseam_verify::{Proof, RejectKind, Rejection, verify_entry};

pub(crate) fn verify(text: &str, entry: &str, signature: &str) -> Result<Proof, Rejection> {
    let spec = AbiSpec::parse_custom(signature, None).unwrap();
    verify_entry(text, entry, &spec.contract())
}

/// The byte range of entry `entry` in `text`: from its `.entry` line to its closing brace.
pub(crate) fn span(text: &str, entry: &str) -> (usize, usize) {
    let start = text.find(&format!(".entry {entry}(")).unwrap();
    let end = start + text[start..].find("\n}\n").unwrap();
    (start, end)
}

/// `text` with `from` (which must occur exactly once in entry `entry`) replaced by `to`.
pub(crate) fn mutate(text: &str, entry: &str, from: &str, to: &str) -> String {
    let (start, end) = span(text, entry);
    let body = &text[start..end];
    assert_eq!(body.matches(from).count(), 1, "`{from}` must occur once");
    format!(
        "{}{}{}",
        &text[..start],
        body.replacen(from, to, 1),
        &text[end..]
    )
}

/// The 1-based line of the only line of entry `entry` in `text` that contains `needle`.
pub(crate) fn line_of(text: &str, entry: &str, needle: &str) -> u32 {
    let (start, end) = span(text, entry);
    let first = text[..start].matches('\n').count();
    let lines: Vec<usize> = text[start..end]
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| first + i + 1)
        .collect();
    assert_eq!(lines.len(), 1, "`{needle}` must be on one line");
    lines[0] as u32
}

pub(crate) fn rejects(text: &str, entry: &str, signature: &str, kind: RejectKind, at: &str) {
    match verify(text, entry, signature) {
        Ok(proof) => panic!("{entry} ({signature}): accepted: {proof:?}"),
        Err(r) => {
            assert_eq!(r.kind, kind, "{entry}: {r}");
            assert_eq!(r.line, line_of(text, entry, at), "{entry}: {r}");
        }
    }
}
