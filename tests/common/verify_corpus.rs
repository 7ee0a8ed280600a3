//! The body-verifier corpus of tests/fixtures/verify/ (made by the gen-verify-corpus script):
//! every entry with its ABI and expectation, read from manifest.json.

use std::path::{Path, PathBuf};

use jitseam::{AbiKind, AbiSpec, ElementKind};
use serde_json::Value;

/// What the verifier must say about an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    Accept,
    Reject {
        kind: String,
        line: u32,
        instruction: String,
    },
}

/// One corpus entry.
#[derive(Debug, Clone)]
pub struct CorpusEntry {
    pub file: String,
    pub entry: String,
    pub ptx: String,
    pub spec: AbiSpec,
    pub expect: Expect,
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verify")
}

fn kinds(e: &Value, key: &str) -> Vec<ElementKind> {
    e[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| d.as_str().and_then(ElementKind::from_name))
                .collect()
        })
        .unwrap_or_default()
}

/// Every entry of the corpus.
pub fn entries() -> Vec<CorpusEntry> {
    let text = std::fs::read_to_string(dir().join("manifest.json")).expect("manifest.json");
    let manifest: Vec<Value> = serde_json::from_str(&text).expect("manifest is JSON");
    manifest
        .iter()
        .map(|e| {
            let file = e["file"].as_str().expect("file").to_owned();
            let ptx = std::fs::read_to_string(dir().join(&file)).expect("ptx file");
            let abi: AbiKind = e["abi"].as_str().expect("abi").parse().expect("abi parses");
            let spec = AbiSpec::owned(
                abi,
                kinds(e, "inputs"),
                kinds(e, "outputs"),
                kinds(e, "params"),
            );
            let expect = if e["expect"] == "accept" {
                Expect::Accept
            } else {
                let r = &e["expect"]["reject"];
                Expect::Reject {
                    kind: r["kind"].as_str().unwrap_or_default().to_owned(),
                    line: r["line"].as_u64().unwrap_or_default() as u32,
                    instruction: r["instruction"].as_str().unwrap_or_default().to_owned(),
                }
            };
            CorpusEntry {
                file,
                entry: e["entry"].as_str().expect("entry").to_owned(),
                ptx,
                spec,
                expect,
            }
        })
        .collect()
}
