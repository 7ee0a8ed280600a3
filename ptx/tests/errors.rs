//! Parse errors: kinds, positions (1-based line and column) and messages.

mod common;

use jitseam_ptx::{ParseError, ParseErrorKind, parse_module};

fn error(src: &str) -> ParseError {
    match parse_module(src) {
        Ok(module) => unreachable!("expected an error, parsed {module:?}"),
        Err(error) => error,
    }
}

const HEADER: &str = ".version 8.8\n.target sm_80\n.address_size 64\n";

#[test]
fn malformed_param_list_reports_line_and_column() {
    // Line 5: a missing comma between two parameters.
    let src = format!(
        "{HEADER}.visible .entry k(\n\t.param .u64 k_param_0\n\t.param .u64 k_param_1\n)\n{{ ret; }}\n"
    );
    let err = error(&src);
    assert_eq!((err.line, err.col), (6, 2));
    assert_eq!(&src[err.offset..err.offset + 6], ".param");
    assert_eq!(
        err.kind,
        ParseErrorKind::UnexpectedToken {
            expected: "`,` or `)` after a parameter",
            found: ".param".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "line 6, column 2: expected `,` or `)` after a parameter, found `.param`"
    );
}

#[test]
fn unknown_param_type() {
    let src = format!("{HEADER}.entry k(.param .u65 x) {{ }}");
    let err = error(&src);
    assert_eq!(
        err.kind,
        ParseErrorKind::UnknownParamType {
            found: ".u65".into()
        }
    );
    assert_eq!((err.line, err.col), (4, 17));
    assert_eq!(
        err.to_string(),
        "line 4, column 17: unknown parameter type `.u65`"
    );
    let pred = error(&format!("{HEADER}.entry k(.param .pred p) {{ }}"));
    assert!(matches!(pred.kind, ParseErrorKind::UnknownParamType { .. }));
}

#[test]
fn param_without_type_or_name() {
    let no_type = error(&format!("{HEADER}.entry k(.param x) {{ }}"));
    assert!(matches!(no_type.kind, ParseErrorKind::UnexpectedToken { found, .. } if found == "x"));
    let no_name = error(&format!("{HEADER}.entry k(.param .u32) {{ }}"));
    assert!(matches!(no_name.kind, ParseErrorKind::UnexpectedToken { found, .. } if found == ")"));
    let bad_len = error(&format!("{HEADER}.entry k(.param .b8 x[4294967296]) {{ }}"));
    assert_eq!(
        bad_len.kind,
        ParseErrorKind::BadNumber {
            text: "4294967296".into()
        }
    );
}

#[test]
fn unterminated_body_points_at_its_brace() {
    let src = format!("{HEADER}.entry k()\n{{\n  ret;\n");
    let err = error(&src);
    assert_eq!(err.kind, ParseErrorKind::UnterminatedBlock);
    assert_eq!((err.line, err.col), (5, 1));
    assert_eq!(
        err.to_string(),
        "line 5, column 1: unterminated block: `{` is never closed"
    );
}

#[test]
fn unterminated_comment_and_string() {
    let comment = error(&format!("{HEADER}/* never closed"));
    assert_eq!(
        (comment.kind, comment.line, comment.col),
        (ParseErrorKind::UnterminatedComment, 4, 1)
    );
    let in_body = error(&format!("{HEADER}.entry k() {{ /* }} "));
    assert_eq!(
        (in_body.kind, in_body.line, in_body.col),
        (ParseErrorKind::UnterminatedComment, 4, 14)
    );
    let string = error(&format!("{HEADER}.entry k() {{ \"}} "));
    assert_eq!(string.kind, ParseErrorKind::UnterminatedString);
}

#[test]
fn header_errors() {
    let eof = error(".version");
    assert_eq!(
        eof.kind,
        ParseErrorKind::UnexpectedEof {
            expected: "a version number MAJOR.MINOR after .version"
        }
    );
    assert_eq!(
        eof.to_string(),
        "line 1, column 9: expected a version number MAJOR.MINOR after .version, found end of input"
    );
    assert!(matches!(
        error(".version foo").kind,
        ParseErrorKind::UnexpectedToken { .. }
    ));
    assert!(matches!(
        error(".version 8.8e1").kind,
        ParseErrorKind::BadNumber { .. }
    ));
    let dup = error(".version 8.8\n.version 8.8\n");
    assert_eq!(
        (dup.kind, dup.line),
        (
            ParseErrorKind::Duplicate {
                directive: ".version"
            },
            2
        )
    );
    assert_eq!(
        error(".version 8.8\n.target debug\n").kind,
        ParseErrorKind::MissingTargetArch
    );
    assert_eq!(
        error(".version 8.8\n.target sm_80, sm_90\n").kind,
        ParseErrorKind::Duplicate {
            directive: "architecture in .target"
        }
    );
    assert_eq!(
        error(".version 8.8\n.target sm_80\n.address_size 48").kind,
        ParseErrorKind::BadAddressSize(48)
    );
}

#[test]
fn stray_tokens_and_characters() {
    let stray = error(&format!("{HEADER}foo"));
    assert_eq!((stray.line, stray.col), (4, 1));
    assert!(matches!(
        stray.kind,
        ParseErrorKind::UnexpectedToken {
            expected: "a module-level directive",
            ..
        }
    ));
    let non_ascii = error(&format!("{HEADER}.entry kä() {{ }}"));
    assert_eq!(
        (non_ascii.kind, non_ascii.col),
        (ParseErrorKind::UnexpectedChar('ä'), 9)
    );
    let too_many = error(&format!("{HEADER}.entry k() .maxntid 1, 2, 3, 4 {{ }}"));
    assert!(matches!(
        too_many.kind,
        ParseErrorKind::UnexpectedToken {
            expected: "at most three dimensions",
            ..
        }
    ));
}

#[test]
fn unknown_statement_without_semicolon_does_not_swallow_the_next_entry() {
    let src = format!("{HEADER}.global .u32 x\n.visible .entry k() {{ }}\n");
    let module = parse_module(&src).map_err(|e| e.to_string());
    assert_eq!(
        module.map(|m| m.entry_names().map(str::to_owned).collect::<Vec<_>>()),
        Ok(vec!["k".to_owned()])
    );
}

#[test]
fn long_tokens_are_shortened_in_messages() {
    let long = "x".repeat(500);
    let err = error(&format!("{HEADER}{long}"));
    let ParseErrorKind::UnexpectedToken { found, .. } = err.kind else {
        unreachable!("{err}")
    };
    assert_eq!(found.chars().count(), 41);
    assert!(found.ends_with('…'));
}

#[test]
fn errors_are_std_errors() {
    let err: Box<dyn std::error::Error> = Box::new(error(""));
    assert_eq!(
        err.to_string(),
        "line 1, column 1: missing .version directive"
    );
}
