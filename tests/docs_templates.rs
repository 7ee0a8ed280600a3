//! Every CUDA template of docs/abi.md, compiled by NVRTC as the docs say and loaded under the
//! ABI its heading names: each must be proven (`load()`), so a newcomer who copies one gets a
//! kernel jitseam launches, not a decline. The templates are read from the docs themselves.
//!
//! Needs libnvrtc (`scripts/install-nvrtc`, its output on LD_LIBRARY_PATH); without it the
//! test prints a notice and passes, except under CI, where it fails.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::nvrtc_env::{self, ready};
use jitseam::nvrtc;
use jitseam::{AbiKind, AbiSpec, Artifact, ElementKind, Kernel};

const DOCS: &str = include_str!("../docs/abi.md");

/// `(heading, entry, source)` of every ```cuda block under a `### `abi`: …` heading.
fn templates() -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut lines = DOCS.lines();
    while let Some(line) = lines.next() {
        if let Some(h) = line.strip_prefix("### ") {
            heading = h.to_owned();
        }
        if line.trim() == "```cuda" {
            let source: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
            let source = source.join("\n");
            let entry = source
                .split("void ")
                .nth(1)
                .and_then(|rest| rest.split('(').next())
                .unwrap_or_else(|| panic!("no entry in the template under {heading}"))
                .trim()
                .to_owned();
            out.push((heading.clone(), entry, source));
        }
    }
    out
}

/// The spec a template's heading names: its ABI over f32 operands, one input per `const`
/// pointer, and the by-value params after the count.
fn spec_for(heading: &str, source: &str) -> AbiSpec {
    let abi = heading
        .split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("no ABI in `{heading}`"));
    let abi: AbiKind = abi.parse().unwrap_or_else(|e| panic!("`{abi}`: {e:?}"));
    let signature = source
        .split_once('(')
        .and_then(|(_, rest)| rest.split_once(')'))
        .map_or("", |(list, _)| list);
    let pointers = signature.matches("__restrict__").count();
    let inputs = signature.matches("const ").count();
    let outputs = pointers - inputs;
    let params = if source.contains("float alpha") {
        vec![ElementKind::F32]
    } else {
        vec![]
    };
    AbiSpec::owned(
        abi,
        vec![ElementKind::F32; inputs],
        vec![ElementKind::F32; outputs],
        params,
    )
}

#[test]
fn every_template_in_the_abi_docs_is_proven() {
    let found = templates();
    assert!(found.len() >= 3, "{} templates", found.len());
    if !ready("every_template_in_the_abi_docs_is_proven") {
        return;
    }
    let mut declined = Vec::new();
    for (heading, entry, source) in &found {
        let compiled = nvrtc::compile(
            source,
            &nvrtc_env::options("compute_80").named(format!("{entry}.cu")),
        )
        .unwrap_or_else(|e| panic!("{heading}: {e}"));
        let spec = spec_for(heading, source);
        let artifact = Artifact::ptx(compiled.ptx(), entry, spec);
        if let Err(e) = Kernel::describe(artifact).unwrap().load() {
            declined.push(format!("{heading}: {}", e.error));
        }
    }
    assert!(declined.is_empty(), "declined:\n{}", declined.join("\n"));
}
