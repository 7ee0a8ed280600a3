//! `jitseam check` and `inspect` of kernels `load()` guards at run time: the guarded accesses
//! and their lines in the text report, `--no-guards` refusing them, and the JSON listing them.

use std::process::Command;

const PTX: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/guards/gather.ptx"
);
const SCALAR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/guards/gather_scalar.ptx"
);
const EMBEDDING: &str = "table: in f32[vocab * dim], ids: in i32[tokens], \
                         out: out f32[tokens * dim], dim: i32, tokens: i32, vocab: i32";
/// The scalar gather's data-dependent load.
const SCALAR_LINE: u32 = 38;

fn jitseam(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_jitseam"))
        .args(args)
        .output()
        .expect("run jitseam");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn check_embedding(extra: &[&str]) -> (i32, String) {
    let mut args = vec![
        "check",
        PTX,
        "--entry",
        "embedding",
        "--signature",
        EMBEDDING,
    ];
    args.extend_from_slice(extra);
    jitseam(&args)
}

fn scalar_args(command: &str) -> Vec<&str> {
    vec![
        command,
        SCALAR,
        "--entry",
        "gather",
        "--abi",
        "scalar",
        "--inputs",
        "f32,i32",
        "--outputs",
        "f32",
    ]
}

#[test]
fn check_prints_the_guarded_accesses_and_no_guards_refuses_them() {
    let (code, text) = check_embedding(&[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("body proven safe"), "{text}");
    let summary = text
        .lines()
        .find(|l| l.starts_with("guarded: "))
        .unwrap_or_else(|| panic!("no guarded line:\n{text}"));
    // `guarded: N of M accesses (lines …)`, N ≤ M, N lines named.
    let words: Vec<&str> = summary.split_whitespace().collect();
    let (n, m): (usize, usize) = (words[1].parse().unwrap(), words[3].parse().unwrap());
    assert!(n >= 1 && n <= m, "{summary}");
    let lines = summary.split_once('(').unwrap().1.trim_end_matches(')');
    assert_eq!(lines.split(", ").count(), n, "{summary}");
    let (code, text) = check_embedding(&["--no-guards"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("body not proven"), "{text}");
    assert!(!text.contains("guarded: "), "{text}");

    let (code, text) = jitseam(&scalar_args("check"));
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(&format!("guarded: 1 of 3 accesses (line {SCALAR_LINE})")),
        "{text}"
    );
    let mut strict = scalar_args("check");
    strict.push("--no-guards");
    let (code, text) = jitseam(&strict);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains(&format!("line {SCALAR_LINE}")), "{text}");
}

#[test]
fn check_and_inspect_json_list_the_guards() {
    let mut args = scalar_args("check");
    args.push("--json");
    let (code, text) = jitseam(&args);
    assert_eq!(code, 0, "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let guards = doc["guards"].as_array().expect("a guards list");
    assert_eq!(guards.len(), 1, "{doc}");
    assert_eq!(guards[0]["line"], SCALAR_LINE);
    // Named as the ABI declares it, in the operand and in why it is guarded.
    assert_eq!(guards[0]["operand"], "in0");
    let why = guards[0]["why"].as_str().expect("why");
    assert!(
        why.contains("`in0`") && !why.contains("gather_param_0"),
        "{why}"
    );
    assert_eq!(guards[0]["kind"], "load");
    assert_eq!(guards[0]["bytes"], 4);
    assert_eq!(guards[0]["reason"], "data_dependent_index");

    let (code, text) = jitseam(&[
        "inspect",
        "--json",
        SCALAR,
        "--abi",
        "scalar",
        "--inputs",
        "f32,i32",
        "--outputs",
        "f32",
    ]);
    assert_eq!(code, 0, "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let verdict = &doc["entries"][0]["verification"];
    assert_eq!(verdict["guards"][0]["line"], SCALAR_LINE, "{doc}");

    let (code, text) = jitseam(&[
        "inspect",
        SCALAR,
        "--abi",
        "scalar",
        "--inputs",
        "f32,i32",
        "--outputs",
        "f32",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(&format!(
            "guarded at run time: line {SCALAR_LINE} (load of 4 bytes"
        )),
        "{text}"
    );

    let (code, text) = check_embedding(&["--json"]);
    assert_eq!(code, 0, "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert!(
        doc["guards"].as_array().is_some_and(|g| !g.is_empty()),
        "{doc}"
    );
}

/// `--proof-cache DIR`: the first check verifies and keeps the proof, the next takes it from
/// disk and reports the same verdict; `JITSEAM_PROOF_CACHE` does the same.
#[test]
fn check_keeps_and_reuses_proofs_on_disk() {
    let dir = std::env::temp_dir().join(format!("jitseam-cli-proofs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_arg = dir.to_str().expect("utf-8 temp dir");
    let (code, first) = check_embedding(&["--proof-cache", dir_arg]);
    assert_eq!(code, 0, "{first}");
    assert!(first.contains(": 0 hits, 1 miss"), "{first}");
    let (code, second) = check_embedding(&["--proof-cache", dir_arg]);
    assert_eq!(code, 0, "{second}");
    assert!(second.contains(": 1 hit, 0 misses"), "{second}");
    let verdict = |text: &str| {
        text.lines()
            .filter(|l| !l.starts_with("proof cache"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(verdict(&first), verdict(&second));
    let out = Command::new(env!("CARGO_BIN_EXE_jitseam"))
        .args([
            "check",
            PTX,
            "--entry",
            "embedding",
            "--signature",
            EMBEDDING,
        ])
        .env("JITSEAM_PROOF_CACHE", &dir)
        .output()
        .expect("run jitseam");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains(": 1 hit, 0 misses"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
