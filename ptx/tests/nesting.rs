//! Nesting limits: every recursive reading of PTX text refuses nesting past its limit while it
//! reads, with an error that names the limit, so no input can overflow the stack. Each limit is
//! run at ten times its depth, and at the depth of the report that found the overflow, on a
//! thread with a 256 KiB stack; the parsers that only skip nested text are run there too.

use jitseam_ptx::body::{MAX_INITIALIZER_NESTING, MAX_OPERAND_NESTING, parse_body};
use jitseam_ptx::resolve::ResolvedModule;
use jitseam_ptx::{ParseError, ParseErrorKind, module_variables, parse_module, scan_module};

const HEADER: &str = ".version 8.8\n.target sm_80\n.address_size 64\n";

/// Runs `parse` on a thread with a 256 KiB stack: a parser that recursed once per level of its
/// input without a limit would overflow it (and abort the test binary) long before the depths
/// used here.
fn on_a_small_stack<T: Send + 'static>(parse: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(parse)
        .expect("a thread starts")
        .join()
        .expect("the parser returns instead of panicking")
}

fn nested(levels: usize, open: &str, inner: &str, close: &str) -> String {
    format!("{}{inner}{}", open.repeat(levels), close.repeat(levels))
}

/// A module with one entry `k` whose body is `body`.
fn module(body: &str) -> String {
    module_with(&[], body)
}

/// A module with module-scope `declarations` and one entry `k` whose body is `body`.
fn module_with(declarations: &[&str], body: &str) -> String {
    format!(
        "{HEADER}{}\n.visible .entry k(.param .u64 k_p0)\n{{\n{body}\n}}\n",
        declarations.join("\n")
    )
}

/// The body parser on `k`'s body, on a small stack.
fn body_error(src: String) -> Option<ParseError> {
    on_a_small_stack(move || {
        let range = parse_module(&src).ok()?.entry("k")?.body.clone()?;
        parse_body(&src, range).err()
    })
}

/// The resolver (`ResolvedModule::new` reads module variables, `entry` the body) on a small
/// stack.
fn resolve_error(src: String) -> Option<ParseError> {
    on_a_small_stack(move || {
        ResolvedModule::new(&src)
            .and_then(|resolved| resolved.entry(&src, "k"))
            .err()
    })
}

fn too_deep(limit: usize) -> Option<ParseErrorKind> {
    Some(ParseErrorKind::NestedTooDeep { limit })
}

/// The operand forms that nest: a vector `{…}`, a call's list `(…)`, and a texture operand
/// `[t, …]`, which holds the others.
fn nested_operands(levels: usize) -> [String; 3] {
    [
        format!("\tmov.b32 {};", nested(levels, "{", "%r1", "}")),
        format!("\tcall f, {};", nested(levels, "(", "%r1", ")")),
        format!(
            "\ttex.1d.v4.f32.s32 %r1, [t, {}];",
            nested(levels, "{", "%r1", "}")
        ),
    ]
}

#[test]
fn operands_nested_ten_times_the_limit_are_refused_while_parsing() {
    for statement in nested_operands(10 * MAX_OPERAND_NESTING) {
        let src = module(&format!("\t.reg .b32 %r<2>;\n{statement}"));
        let error = body_error(src.clone());
        assert_eq!(
            error.as_ref().map(|e| &e.kind),
            too_deep(MAX_OPERAND_NESTING).as_ref(),
            "{statement}"
        );
        // The level past the limit is refused at its own opening token, with the limit's
        // levels open before it.
        let at = error.map(|e| e.offset).unwrap_or_default();
        let start = src.find(statement.as_str()).unwrap_or_default();
        assert!(
            src[at..].starts_with(['{', '(']),
            "{statement}: refused at {at}"
        );
        let open_before = src[start..at].matches(['{', '(', '[']).count();
        assert_eq!(open_before, MAX_OPERAND_NESTING, "{statement}");
        assert_eq!(
            resolve_error(src).map(|e| e.kind),
            too_deep(MAX_OPERAND_NESTING),
            "{statement}"
        );
    }
    // The message names the limit.
    let src = module(&nested_operands(10 * MAX_OPERAND_NESTING)[0]);
    let shown = body_error(src).map(|e| e.to_string()).unwrap_or_default();
    assert!(
        shown.ends_with(&format!(
            "nested more than {MAX_OPERAND_NESTING} levels deep"
        )),
        "{shown}"
    );
}

#[test]
fn operands_at_the_limit_still_parse() {
    let src = module(&format!(
        "\t.reg .b32 %r<2>;\n\tmov.b32 {};",
        nested(MAX_OPERAND_NESTING, "{", "%r1", "}")
    ));
    let parsed = on_a_small_stack(move || {
        let range = parse_module(&src).ok()?.entry("k")?.body.clone()?;
        parse_body(&src, range)
            .ok()
            .map(|statements| statements.len())
    });
    assert_eq!(parsed, Some(2));
}

/// The input of the report that found the overflow: an operand 30,000 levels deep (60 KB).
#[test]
fn thirty_thousand_nested_operands_are_refused_on_a_small_stack() {
    for statement in nested_operands(30_000) {
        let src = module(&statement);
        // The module parser skips bodies without reading them.
        let whole = src.clone();
        assert!(on_a_small_stack(move || parse_module(&whole).is_ok()));
        let whole = src.clone();
        assert!(on_a_small_stack(move || scan_module(&whole).is_ok()));
        assert_eq!(
            body_error(src.clone()).map(|e| e.kind),
            too_deep(MAX_OPERAND_NESTING)
        );
        assert_eq!(
            resolve_error(src).map(|e| e.kind),
            too_deep(MAX_OPERAND_NESTING)
        );
    }
}

/// `.global .u32 g[1] = {{{…}}};` at module scope, read by [`module_variables`] and the
/// resolver; and the same declaration in a body, read by the body parser.
fn nested_initializer(levels: usize) -> String {
    format!(".global .u32 g[1] = {};", nested(levels, "{", "1", "}"))
}

#[test]
fn initializers_nested_ten_times_the_limit_are_refused_while_parsing() {
    for levels in [10 * MAX_INITIALIZER_NESTING, 30_000] {
        let declaration = nested_initializer(levels);
        let src = module_with(&[&declaration], "\tret;");
        let whole = src.clone();
        let error = on_a_small_stack(move || module_variables(&whole).err());
        assert_eq!(
            error.as_ref().map(|e| &e.kind),
            too_deep(MAX_INITIALIZER_NESTING).as_ref()
        );
        // Refused at the `{` one level past the limit.
        let at = error.map(|e| e.offset).unwrap_or_default();
        let opens = src[..at].matches('{').count();
        assert_eq!((&src[at..at + 1], opens), ("{", MAX_INITIALIZER_NESTING));
        assert_eq!(
            resolve_error(src.clone()).map(|e| e.kind),
            too_deep(MAX_INITIALIZER_NESTING)
        );
        // The module parser skips the initializer without recursing.
        assert!(on_a_small_stack(move || parse_module(&src).is_ok()));
        // In a body.
        let src = module(&format!("\t{}", declaration.replace(".global", ".local")));
        assert_eq!(
            body_error(src).map(|e| e.kind),
            too_deep(MAX_INITIALIZER_NESTING)
        );
    }
}

#[test]
fn initializers_at_the_limit_still_parse() {
    let src = module_with(&[&nested_initializer(MAX_INITIALIZER_NESTING)], "\tret;");
    let vars = on_a_small_stack(move || module_variables(&src).map(|vars| vars.len()));
    assert_eq!(vars, Ok(1));
}

/// What is nested but only skipped (bodies, blocks inside bodies, unknown directives' braces,
/// attribute groups, initializer expressions) is skipped with counters, not recursion.
#[test]
fn skipped_nesting_does_not_recurse() {
    let levels = 100_000;
    let braces = nested(levels, "{", "", "}");
    let parens = nested(levels, "(", "1", ")");
    let sources = [
        // Blocks in a body: scopes the body parser lists flat, the resolver keeps on the heap.
        module(&format!(
            "{}\tret;\n{}",
            "{\n".repeat(levels),
            "}\n".repeat(levels)
        )),
        // An unknown directive's braces, in a body and at module scope.
        module(&format!("\t.unknown {braces};\n\tret;")),
        module_with(&[&format!(".section .x {braces}")], "\tret;"),
        // An initializer expression the model keeps unevaluated.
        module_with(&[&format!(".global .u32 g = 1 + {parens};")], "\tret;"),
        // An attribute group.
        module_with(&[&format!(".global .attribute{parens} .u32 g;")], "\tret;"),
    ];
    for src in sources {
        let whole = src.clone();
        let parsed = on_a_small_stack(move || parse_module(&whole).map(|m| m.entries.len()));
        assert!(matches!(parsed, Ok(1) | Err(_)), "{parsed:?}");
        let whole = src.clone();
        on_a_small_stack(move || module_variables(&whole).map(|v| v.len()).ok());
        let whole = src.clone();
        on_a_small_stack(move || {
            let range = parse_module(&whole).ok()?.entry("k")?.body.clone()?;
            parse_body(&whole, range).ok().map(|s| s.len())
        });
        on_a_small_stack(move || resolve_error(src));
    }
}
