//! The guarded rewrite of every real-corpus kernel `load()` guards is accepted by NVIDIA's real
//! assembler, `ptxas -arch=sm_80` and `-arch=sm_90`, with no warnings: the guard code is PTX a
//! GPU driver takes.
//!
//! ptxas is found as tests/common/ptxas.rs says. Without one the test fails under CI (env `CI`
//! set) and otherwise prints a notice and passes.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "common/real_corpus.rs"]
mod real_corpus;
#[path = "common/real_reference.rs"]
mod real_reference;

use std::process::Command;

use common::ptxas::find_ptxas;
use jitseam::abi::AbiContract;
use jitseam_verify::verify_guarded_entry;

#[test]
fn ptxas_accepts_every_guarded_rewrite() {
    let Some(ptxas) = find_ptxas() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "ptxas not found under CI: run scripts/install-ptxas first, or set JITSEAM_PTXAS"
        );
        eprintln!(
            "\n!!! NOTICE: ptxas not found — the guarded rewrites were NOT assembled.\n!!! Run \
             `scripts/install-ptxas` (or set JITSEAM_PTXAS) to check them.\n"
        );
        return;
    };
    let dir = std::env::temp_dir().join(format!("jitseam-guards-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut assembled = 0;
    let mut failed = Vec::new();
    for e in real_corpus::manifest() {
        let Ok(proof) = verify_guarded_entry(&e.ptx(), &e.entry, &e.spec.contract()) else {
            continue;
        };
        let Some(guarded) = proof.guarded() else {
            continue;
        };
        let path = dir.join(format!("{}.ptx", e.entry));
        std::fs::write(&path, &guarded.ptx).unwrap();
        for arch in ["sm_80", "sm_90"] {
            let out = Command::new(&ptxas)
                .arg(format!("-arch={arch}"))
                .arg(&path)
                .arg("-o")
                .arg(path.with_extension(format!("{arch}.cubin")))
                .output()
                .unwrap_or_else(|err| panic!("cannot run {}: {err}", ptxas.display()));
            let said = String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout);
            if !out.status.success() || !said.trim().is_empty() {
                failed.push(format!("{} ({arch}): {said}", e.entry));
            }
        }
        assembled += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("ptxas: {assembled} guarded rewrites assembled for sm_80 and sm_90");
    assert!(assembled >= 20, "only {assembled} guarded kernels");
    assert!(
        failed.is_empty(),
        "{} failed; the first:\n{}",
        failed.len(),
        failed[0]
    );
}
