//! The body-verifier corpus of tests/fixtures/verify/ is well formed: every manifest entry names
//! a PTX file that parses, holds the entry, and has exactly the `.param` list of its declared ABI
//! (checked by `describe → load`); every reject names a global access on the line it gives (or,
//! for `unsupported`, the instruction a verifier cannot follow).
//! Whether the verifier accepts or rejects each entry is the verifier's own test, not this one.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use jitseam::{AbiKind, AbiSpec, Artifact, ElementKind, Kernel};
use serde_json::Value;

const KINDS: [&str; 9] = [
    "store_through_input",
    "unattributed_address",
    "out_of_bounds",
    "wrong_width",
    "misaligned",
    "crossed_stride",
    "data_dependent_index",
    "may_wrap",
    "unsupported",
];

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verify")
}

fn manifest() -> Vec<Value> {
    let text = std::fs::read_to_string(corpus().join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn text<'a>(e: &'a Value, key: &str) -> &'a str {
    e[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is not a string in {e}"))
}

fn kinds(e: &Value, key: &str) -> Vec<ElementKind> {
    e[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is not an array in {e}"))
        .iter()
        .map(|d| {
            let name = d.as_str().unwrap();
            ElementKind::from_name(name).unwrap_or_else(|| panic!("unknown dtype {name}"))
        })
        .collect()
}

fn spec(e: &Value) -> AbiSpec {
    let abi: AbiKind = text(e, "abi").parse().unwrap();
    AbiSpec::owned(
        abi,
        kinds(e, "inputs"),
        kinds(e, "outputs"),
        kinds(e, "params"),
    )
}

/// The opcode on a 1-based line, past any `{`, and predicate guard.
fn opcode_at(ptx: &str, line: usize) -> Option<&str> {
    let t = ptx.lines().nth(line.checked_sub(1)?)?.trim();
    let t = t.trim_start_matches('{').trim_start();
    let t = match t.strip_prefix('@') {
        Some(guarded) => guarded.split_once(char::is_whitespace)?.1.trim_start(),
        None => t,
    };
    t.split_whitespace()
        .next()
        .map(|op| op.trim_end_matches(';'))
}

#[test]
fn every_entry_loads_with_its_declared_abi() {
    let entries = manifest();
    let accepted = entries.iter().filter(|e| e["expect"] == "accept").count();
    let rejected = entries.len() - accepted;
    assert!(accepted >= 30, "{accepted} accepted entries");
    assert!(rejected >= 20, "{rejected} rejected entries");
    for e in &entries {
        let file = text(e, "file");
        let entry = text(e, "entry");
        assert!(
            corpus().join(text(e, "source")).is_file(),
            "{file}: no source"
        );
        let ptx = std::fs::read_to_string(corpus().join(file)).unwrap();
        let module = jitseam_ptx::parse_module(&ptx).unwrap_or_else(|err| panic!("{file}: {err}"));
        assert!(
            module.entries.iter().any(|x| x.name == entry),
            "{file}: no entry {entry}"
        );
        let spec = spec(e);
        let expected = spec.expected_params().len();
        let described = Kernel::describe(Artifact::ptx(ptx.as_str(), entry, spec))
            .unwrap_or_else(|err| panic!("{file}: {err}"));
        // The parameter list only: the bodies (rejects among them) are the verifier's tests.
        // SAFETY: the kernel is inspected and dropped, never bound or launched.
        let kernel = unsafe { described.load_unverified() }
            .unwrap_or_else(|err| panic!("{file}: {}", err.error));
        assert_eq!(
            kernel.loaded().entry().map(|e| e.name.as_str()),
            Some(entry)
        );
        assert_eq!(kernel.loaded().layout().params().len(), expected, "{file}");
        assert!(e["features"].as_array().is_some(), "{file}: no features");
    }
}

#[test]
fn every_reject_names_its_instruction_on_its_line() {
    for e in manifest() {
        let file = text(&e, "file");
        let group = file.split('/').next().unwrap();
        if e["expect"] == "accept" {
            assert_eq!(group, "accept", "{file}");
            continue;
        }
        assert_eq!(group, "reject", "{file}");
        let r = &e["expect"]["reject"];
        let kind = text(r, "kind");
        assert!(KINDS.contains(&kind), "{file}: kind {kind}");
        let line = usize::try_from(r["line"].as_u64().unwrap()).unwrap();
        let instruction = text(r, "instruction");
        let ptx = std::fs::read_to_string(corpus().join(file)).unwrap();
        let op = opcode_at(&ptx, line).unwrap_or_else(|| panic!("{file}: no line {line}"));
        assert!(
            op.starts_with(instruction),
            "{file}:{line}: {op} is not {instruction}"
        );
        if kind == "unsupported" {
            // What a verifier cannot follow need not be a memory access (an indirect call).
            continue;
        }
        let head = op.split('.').next().unwrap();
        assert!(
            ["ld", "st", "atom", "red"].contains(&head),
            "{file}:{line}: {op} is not a memory access"
        );
        assert!(
            !op.split('.')
                .any(|s| ["param", "shared", "local", "const"].contains(&s)),
            "{file}:{line}: {op} is not a global access"
        );
    }
}

#[test]
fn every_ptx_in_the_corpus_is_in_the_manifest() {
    let listed: BTreeSet<String> = manifest()
        .iter()
        .map(|e| text(e, "file").to_owned())
        .collect();
    for group in ["accept", "reject"] {
        for f in std::fs::read_dir(corpus().join(group)).unwrap() {
            let name = f.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".ptx") {
                let path = format!("{group}/{name}");
                assert!(listed.contains(&path), "{path} is not in manifest.json");
            }
        }
    }
}
