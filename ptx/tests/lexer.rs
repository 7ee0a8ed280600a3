//! The lexer: every token kind, comments, literals, register ranges and predicates.

use jitseam_ptx::{FloatValue, LexErrorKind, Lexer, Punct, TokenKind, parse_float, parse_int};

/// (kind, text) of every token, or the first error's kind.
fn lex(src: &str) -> Result<Vec<(TokenKind, &str)>, LexErrorKind> {
    Lexer::new(src)
        .map(|t| t.map(|t| (t.kind, t.text)).map_err(|e| e.kind))
        .collect()
}

fn kinds(src: &str) -> Vec<TokenKind> {
    lex(src)
        .unwrap_or_default()
        .into_iter()
        .map(|(k, _)| k)
        .collect()
}

use TokenKind::{Directive as D, Float as F, Ident as I, Int as N, Str as S};

const fn p(punct: Punct) -> TokenKind {
    TokenKind::Punct(punct)
}

#[test]
fn directives_and_identifiers() {
    assert_eq!(
        lex(".visible .entry k_1($a, %r1, _x, sm_90a)"),
        Ok(vec![
            (D, ".visible"),
            (D, ".entry"),
            (I, "k_1"),
            (p(Punct::LParen), "("),
            (I, "$a"),
            (p(Punct::Comma), ","),
            (I, "%r1"),
            (p(Punct::Comma), ","),
            (I, "_x"),
            (p(Punct::Comma), ","),
            (I, "sm_90a"),
            (p(Punct::RParen), ")"),
        ])
    );
}

#[test]
fn instruction_with_modifiers() {
    assert_eq!(
        lex("ld.global.nc.f32 %f1, [%rd12+4];"),
        Ok(vec![
            (I, "ld"),
            (D, ".global"),
            (D, ".nc"),
            (D, ".f32"),
            (I, "%f1"),
            (p(Punct::Comma), ","),
            (p(Punct::LBracket), "["),
            (I, "%rd12"),
            (p(Punct::Plus), "+"),
            (N, "4"),
            (p(Punct::RBracket), "]"),
            (p(Punct::Semi), ";"),
        ])
    );
    assert_eq!(
        lex("mov.u32 %r1, %ctaid.x;").map(|t| t[4]),
        Ok((I, "%ctaid"))
    );
    assert_eq!(lex("%ctaid.x").map(|t| t[1]), Ok((D, ".x")));
    // Modifiers may start with a digit or contain `::` segments.
    assert_eq!(
        lex("tex.2d ld.L2::64B cp.async.bulk.shared::cluster"),
        Ok(vec![
            (I, "tex"),
            (D, ".2d"),
            (I, "ld"),
            (D, ".L2::64B"),
            (I, "cp"),
            (D, ".async"),
            (D, ".bulk"),
            (D, ".shared::cluster"),
        ])
    );
}

#[test]
fn register_ranges_and_predicates() {
    assert_eq!(
        kinds(".reg .f32 %f<5>;"),
        [D, D, I, p(Punct::Lt), N, p(Punct::Gt), p(Punct::Semi)]
    );
    assert_eq!(
        lex("@%p1 bra $L__BB0_3;"),
        Ok(vec![
            (p(Punct::At), "@"),
            (I, "%p1"),
            (I, "bra"),
            (I, "$L__BB0_3"),
            (p(Punct::Semi), ";"),
        ])
    );
    assert_eq!(
        kinds("@!%p2 ret;"),
        [p(Punct::At), p(Punct::Bang), I, I, p(Punct::Semi)]
    );
    assert_eq!(kinds("$L__BB0_2:"), [I, p(Punct::Colon)]);
}

#[test]
fn scoped_blocks_and_vector_operands() {
    assert_eq!(
        kinds("{ mov.b64 {%r1,%r2}, %rd1; }"),
        [
            p(Punct::LBrace),
            I,
            D,
            p(Punct::LBrace),
            I,
            p(Punct::Comma),
            I,
            p(Punct::RBrace),
            p(Punct::Comma),
            I,
            p(Punct::Semi),
            p(Punct::RBrace),
        ]
    );
}

#[test]
fn every_punctuation() {
    let src = "; , { } ( ) [ ] < > @ ! + - : = | * / & ~ ^ % ?";
    let expected = [
        Punct::Semi,
        Punct::Comma,
        Punct::LBrace,
        Punct::RBrace,
        Punct::LParen,
        Punct::RParen,
        Punct::LBracket,
        Punct::RBracket,
        Punct::Lt,
        Punct::Gt,
        Punct::At,
        Punct::Bang,
        Punct::Plus,
        Punct::Minus,
        Punct::Colon,
        Punct::Eq,
        Punct::Pipe,
        Punct::Star,
        Punct::Slash,
        Punct::Amp,
        Punct::Tilde,
        Punct::Caret,
        Punct::Percent,
        Punct::Question,
    ];
    assert_eq!(kinds(src), expected.map(TokenKind::Punct));
}

#[test]
fn integer_literals() {
    for (text, value) in [
        ("0", 0),
        ("42", 42),
        ("42U", 42),
        ("0x2A", 42),
        ("0X2aU", 42),
        ("052", 42),
        ("0b101010", 42),
        ("0B1U", 1),
        ("18446744073709551615", u64::MAX),
    ] {
        let tokens = Lexer::new(text).collect::<Vec<_>>();
        let token = tokens.first().and_then(|t| t.as_ref().ok()).copied();
        assert_eq!(token.map(|t| (t.kind, t.text)), Some((N, text)), "{text}");
        assert_eq!(token.and_then(|t| t.int_value()), Some(value), "{text}");
        assert_eq!(tokens.len(), 1, "{text}");
    }
    assert_eq!(parse_int("18446744073709551616"), None);
    // A sign is punctuation, never part of the literal.
    assert_eq!(lex("-1"), Ok(vec![(p(Punct::Minus), "-"), (N, "1")]));
}

#[test]
fn float_literals() {
    let f32_one = Lexer::new("0f3F800000").next().and_then(Result::ok);
    assert_eq!(f32_one.map(|t| t.kind), Some(F));
    assert_eq!(
        f32_one.and_then(|t| t.float_value()),
        Some(FloatValue::F32(1.0))
    );
    assert_eq!(parse_float("0FBF800000"), Some(FloatValue::F32(-1.0)));
    assert_eq!(
        parse_float("0d3FF0000000000000"),
        Some(FloatValue::F64(1.0))
    );
    assert_eq!(
        parse_float("0D4000000000000000"),
        Some(FloatValue::F64(2.0))
    );
    let nan = parse_float("0f7FC00001");
    assert!(matches!(nan, Some(FloatValue::F32(v)) if v.to_bits() == 0x7FC0_0001));
    for (text, value) in [
        ("1.5", 1.5),
        ("0.25", 0.25),
        ("2.", 2.0),
        ("1e3", 1000.0),
        ("1.5E-2", 0.015),
    ] {
        assert_eq!(lex(text), Ok(vec![(F, text)]), "{text}");
        assert_eq!(parse_float(text), Some(FloatValue::F64(value)), "{text}");
    }
    assert_eq!(lex("8.8"), Ok(vec![(F, "8.8")]));
}

#[test]
fn malformed_numbers() {
    for text in [
        "0f3F80",
        "0f3F8000001",
        "0d3FF",
        "0x",
        "0b102",
        "08",
        "12abc",
        "1e+",
        "0fZZZZZZZZ",
    ] {
        assert_eq!(lex(text), Err(LexErrorKind::BadNumber), "{text}");
    }
    // The lexer resumes after the malformed literal.
    let after: Vec<_> = Lexer::new("12abc ;").map(|t| t.map(|t| t.kind)).collect();
    assert_eq!(after.len(), 2);
    assert_eq!(after.get(1), Some(&Ok(p(Punct::Semi))));
}

#[test]
fn strings() {
    assert_eq!(
        lex(r#".pragma "nounroll"; "a\"b""#),
        Ok(vec![
            (D, ".pragma"),
            (S, "\"nounroll\""),
            (p(Punct::Semi), ";"),
            (S, r#""a\"b""#)
        ])
    );
    assert_eq!(lex("\"open"), Err(LexErrorKind::UnterminatedString));
    assert_eq!(lex("\"open\\"), Err(LexErrorKind::UnterminatedString));
}

#[test]
fn comments_are_skipped() {
    assert_eq!(
        lex("a // line } comment\n/* block\n { */ b /**/c//end"),
        Ok(vec![(I, "a"), (I, "b"), (I, "c")])
    );
    assert_eq!(lex("a /* open"), Err(LexErrorKind::UnterminatedComment));
    assert_eq!(
        lex("a / b"),
        Ok(vec![(I, "a"), (p(Punct::Slash), "/"), (I, "b")])
    );
}

#[test]
fn offsets_not_positions() {
    let src = "  .entry\n\tfoo";
    let tokens: Vec<_> = Lexer::new(src).filter_map(Result::ok).collect();
    assert_eq!(tokens.iter().map(|t| t.offset).collect::<Vec<_>>(), [2, 10]);
    assert_eq!(tokens.iter().map(|t| t.end()).collect::<Vec<_>>(), [8, 13]);
    assert_eq!(jitseam_ptx::line_col(src, 10), (2, 2));
    let index = jitseam_ptx::LineIndex::new(src);
    assert_eq!(index.line_col(src, 10), (2, 2));
    assert_eq!(index.line_col(src, 0), (1, 1));
    assert_eq!(index.line_col(src, 1_000), (2, 5));
}

#[test]
fn non_ascii_is_an_error_and_lexing_resumes() {
    let items: Vec<_> = Lexer::new("a é b").collect();
    assert_eq!(items.len(), 3);
    assert!(matches!(
        items.get(1),
        Some(Err(e)) if e.kind == LexErrorKind::UnexpectedChar('é') && e.offset == 2 && e.len == 2
    ));
    assert_eq!(
        items.get(2).and_then(|t| t.as_ref().ok()).map(|t| t.text),
        Some("b")
    );
    assert_eq!(lex("."), Err(LexErrorKind::UnexpectedChar('.')));
}

#[test]
fn with_range_keeps_absolute_offsets() {
    let src = "xx { ret; } yy";
    let tokens: Vec<_> = Lexer::with_range(src, 4..10)
        .filter_map(Result::ok)
        .collect();
    assert_eq!(
        tokens
            .iter()
            .map(|t| (t.text, t.offset))
            .collect::<Vec<_>>(),
        [("ret", 5), (";", 8)]
    );
    // Out-of-range and mid-character bounds are narrowed, never a panic.
    assert_eq!(Lexer::with_range("é", 1..100).count(), 0);
    let (start, end) = (5, 1);
    assert_eq!(Lexer::with_range("ab", start..end).count(), 0);
}
