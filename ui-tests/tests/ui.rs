//! Misuse of jitseam that must not compile, one mistake per file under `ui/<area>/`, each with
//! the diagnostic a user gets recorded next to it (`TRYBUILD=overwrite` rewrites them; review
//! the diff). Compiler wording changes between releases, so the run is pinned to the rustc the
//! snapshots were recorded with.

#[rustversion::attr(
    not(stable(1.95)),
    ignore = "stderr snapshots were recorded with rustc 1.95"
)]
#[test]
fn ui() {
    // One `TestCases` for every area: trybuild builds all cases in one cargo invocation.
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*/*.rs");
}
