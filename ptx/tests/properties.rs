//! Robustness: no input, however mangled, makes the lexer or the module parser panic.

mod common;

use jitseam_ptx::{Lexer, LineIndex, line_col, parse_module, scan_module};
use proptest::prelude::*;
use proptest::sample::Index;

/// Runs everything public that consumes text, checking the invariants that hold for any input.
fn exercise(src: &str) {
    let mut previous_end = 0;
    for item in Lexer::new(src) {
        let (offset, end) = match item {
            Ok(token) => (token.offset, token.end()),
            Err(error) => (error.offset, error.offset + error.len),
        };
        assert!(offset >= previous_end && end <= src.len() && end > offset);
        previous_end = end;
    }
    let parsed = parse_module(src);
    // The borrowed scan and the owned parse fail together, or agree entirely.
    assert_eq!(scan_module(src).map(|index| index.to_module()), parsed);
    match parsed {
        Ok(module) => {
            for body in module.entries.iter().filter_map(|e| e.body.clone()) {
                assert!(src.get(body.clone()).is_some());
                Lexer::with_range(src, body).for_each(drop);
            }
        }
        Err(error) => {
            assert!(error.offset <= src.len());
            assert_eq!((error.line, error.col), line_col(src, error.offset));
            assert_eq!(
                (error.line, error.col),
                LineIndex::new(src).line_col(src, error.offset)
            );
            assert!(!error.to_string().is_empty());
        }
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Insert(Index, u8),
    Delete(Index),
    Replace(Index, u8),
}

/// Bytes that matter to PTX syntax are over-represented so edits hit interesting states.
fn interesting_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => prop::sample::select(b"{}()[];,.\"/*%@!<>:=\\\n 0fdx".to_vec()),
        1 => any::<u8>(),
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<Index>(), interesting_byte()).prop_map(|(at, b)| Edit::Insert(at, b)),
        any::<Index>().prop_map(Edit::Delete),
        (any::<Index>(), interesting_byte()).prop_map(|(at, b)| Edit::Replace(at, b)),
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

const SAMPLES: [&str; 3] = [common::NVRTC_SCALAR, common::MIXED, common::DEBUG];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        exercise(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn edited_samples_never_panic(
        sample in 0..SAMPLES.len(),
        edits in prop::collection::vec(edit(), 1..8),
    ) {
        exercise(&apply(SAMPLES[sample], &edits));
    }

    #[test]
    fn ptx_like_token_soup_never_panics(
        words in prop::collection::vec(
            prop::sample::select(vec![
                ".version", "8.8", ".target", "sm_90a", ",", ".address_size", "64", ".entry",
                ".func", ".visible", ".param", ".u64", ".b8", ".align", "16", ".ptr", ".global",
                "k", "(", ")", "[", "2", "]", "{", "}", ";", ".maxntid", "256", "//", "/*", "*/",
                "\"", "=", ".extern", ".file", "\n", "0f3F800000", ".pragma",
            ]),
            0..48,
        ),
    ) {
        exercise(&words.join(" "));
    }
}

#[test]
fn samples_parse_cleanly() {
    for sample in SAMPLES {
        assert!(parse_module(sample).is_ok());
        assert_eq!(
            scan_module(sample).map(|index| index.to_module()),
            parse_module(sample)
        );
        assert!(Lexer::new(sample).all(|t| t.is_ok()));
    }
}
