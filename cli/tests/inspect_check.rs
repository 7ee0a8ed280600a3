//! `jitseam inspect` and `jitseam check` as a user runs them.

use std::process::Command;

fn fixture(name: &str) -> String {
    format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn jitseam(args: &[&str]) -> (i32, String) {
    let (code, stdout, stderr) = jitseam_streams(args);
    (code, stdout + &stderr)
}

/// Exit code, stdout and stderr, apart.
fn jitseam_streams(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_jitseam"))
        .args(args)
        .output()
        .expect("run jitseam");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn inspect_prints_every_entry_and_param() {
    let (code, text) = jitseam(&["inspect", &fixture("two_entries.ptx")]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("target sm_80"), "{text}");
    assert!(text.contains("entry baracuda_gen_neg_f32_scalar"), "{text}");
    assert!(text.contains("entry baracuda_gen_abs_f32_scalar"), "{text}");
    assert!(text.contains("func _Z10apply_signfi"), "{text}");
}

#[test]
fn inspect_json_is_machine_readable() {
    let (code, text) = jitseam(&["inspect", "--json", &fixture("axpb_f64_scalar.ptx")]);
    assert_eq!(code, 0, "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let params = &doc["entries"][0]["params"];
    assert_eq!(params.as_array().map(Vec::len), Some(5));
    assert_eq!(params[3]["type"], "f64");
    assert_eq!(params[3]["size"], 8);
}

#[test]
fn inspect_json_with_an_abi_reports_each_entrys_access_summary() {
    let (code, text) = jitseam(&[
        "inspect",
        "--json",
        &fixture("two_entries.ptx"),
        "--abi",
        "scalar",
        "--inputs",
        "f32",
        "--outputs",
        "f32",
    ]);
    assert_eq!(code, 0, "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let entries = doc["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 2);
    for entry in entries {
        let v = &entry["verification"];
        assert_eq!(v["verified"], true, "{v}");
        assert_eq!(v["coverage"], "grid_stride");
        assert_eq!(
            v["conditions"][0],
            format!("n + threads <= {}", i64::MAX),
            "{v}"
        );
        let accesses = v["accesses"].as_array().expect("accesses");
        assert_eq!(accesses.len(), 2, "{v}");
        let (input, output) = (&accesses[0], &accesses[1]);
        assert_eq!(
            (&input["param"], &input["role"]),
            (&0.into(), &"input 0".into())
        );
        assert_eq!(
            (&output["param"], &output["role"]),
            (&1.into(), &"output 0".into())
        );
        assert!(input["loads"].as_u64().is_some_and(|n| n > 0), "{v}");
        assert_eq!(
            (&input["stores"], &input["atomics"]),
            (&0.into(), &0.into())
        );
        assert!(output["stores"].as_u64().is_some_and(|n| n > 0), "{v}");
        assert_eq!((&output["loads"], &output["width"]), (&0.into(), &4.into()));
        assert_eq!(input["width"], 4);
    }
    // Without an ABI there is nothing to verify against: no verification field.
    let (code, text) = jitseam(&["inspect", "--json", &fixture("two_entries.ptx")]);
    assert_eq!(code, 0, "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert!(doc["entries"][0].get("verification").is_none(), "{doc}");
}

#[test]
fn inspect_with_an_abi_names_a_rejected_line_and_a_wrong_parameter_list() {
    let dir = tempfile::tempdir().unwrap();
    let ptx = dir.path().join("poke.ptx");
    // The right scalar parameter list, and a store through input 0.
    std::fs::write(
        &ptx,
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry poke(.param .u64 a, .param .u64 o, .param .u64 n)\n{\n\
         .reg .b64 %rd<3>;\n.reg .f32 %f<2>;\n\
         ld.param.u64 %rd1, [a];\ncvta.to.global.u64 %rd2, %rd1;\n\
         mov.f32 %f1, 0f3F800000;\nst.global.f32 [%rd2], %f1;\nret;\n}\n",
    )
    .unwrap();
    let poke = ptx.display().to_string();
    let abi = ["--abi", "scalar", "--inputs", "f32", "--outputs", "f32"];
    let (code, text) = jitseam(&[&["inspect", "--json", &poke][..], &abi[..]].concat());
    assert_eq!(code, 0, "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let v = &doc["entries"][0]["verification"];
    assert_eq!(v["verified"], false, "{v}");
    assert_eq!(v["rejection"]["line"], 11, "{v}");
    assert_eq!(v["rejection"]["kind"], "store_through_input", "{v}");
    assert_eq!(v["rejection"]["instruction"], "st.global.f32 [%rd2], %f1;");
    let (code, text) = jitseam(&[&["inspect", &poke][..], &abi[..]].concat());
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("  body: rejected: line 11 `st.global.f32 [%rd2], %f1;`"),
        "{text}"
    );
    // Two inputs claimed, one declared: the load error, not a proof.
    let (code, text) = jitseam(&[
        "inspect",
        "--json",
        &poke,
        "--abi",
        "scalar",
        "--inputs",
        "f32,f32",
        "--outputs",
        "f32",
    ]);
    assert_eq!(code, 0, "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let v = &doc["entries"][0]["verification"];
    assert_eq!(v["verified"], false, "{v}");
    assert!(
        v["error"].as_str().is_some_and(|e| e.contains("param")),
        "{v}"
    );
}

#[test]
fn check_accepts_the_true_abi() {
    let (code, text) = jitseam(&[
        "check",
        &fixture("add_f32_co_v4.ptx"),
        "--entry",
        "baracuda_gen_add_f32_co_v4",
        "--abi",
        "vectorized:4",
        "--inputs",
        "f32,f32",
        "--outputs",
        "f32",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.starts_with("ok\nbody proven safe; coverage: grid-stride"),
        "{text}"
    );
    assert!(
        text.contains("every launch checks: n + threads <="),
        "{text}"
    );
}

#[test]
fn check_names_the_line_of_a_body_it_cannot_prove_and_reports_a_proof_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let ptx = dir.path().join("poke.ptx");
    // The right scalar parameter list, and a store through input 0.
    std::fs::write(
        &ptx,
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry poke(.param .u64 a, .param .u64 o, .param .u64 n)\n{\n\
         .reg .b64 %rd<3>;\n.reg .f32 %f<2>;\n\
         ld.param.u64 %rd1, [a];\ncvta.to.global.u64 %rd2, %rd1;\n\
         mov.f32 %f1, 0f3F800000;\nst.global.f32 [%rd2], %f1;\nret;\n}\n",
    )
    .unwrap();
    let poke = ptx.display().to_string();
    let args = [
        "--entry",
        "poke",
        "--abi",
        "scalar",
        "--inputs",
        "f32",
        "--outputs",
        "f32",
    ];
    let (code, stdout, stderr) = jitseam_streams(&[&["check", &poke][..], &args[..]].concat());
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert!(
        stderr.contains("body rejected: line 11 `st.global.f32 [%rd2], %f1;`"),
        "{stderr}"
    );
    assert!(stderr.contains("a store through input 0"), "{stderr}");

    let (code, text) = jitseam(&[
        "check",
        "--json",
        &fixture("add_f32_scalar.ptx"),
        "--entry",
        "baracuda_gen_add_f32_scalar",
        "--abi",
        "scalar",
        "--inputs",
        "f32,f32",
        "--outputs",
        "f32",
    ]);
    assert_eq!(code, 0, "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(doc["verified"], true);
    assert_eq!(doc["coverage"], "grid_stride");
    assert_eq!(
        doc["accesses"][2]["stores"].as_u64().map(|s| s > 0),
        Some(true)
    );
    assert_eq!(doc["accesses"][0]["stores"], 0);
}

#[test]
fn check_prints_the_typed_decline_and_a_matching_prototype_on_stderr_and_exits_1() {
    let (code, stdout, text) = jitseam_streams(&[
        "check",
        &fixture("axpb_f64_scalar.ptx"),
        "--entry",
        "baracuda_gen_axpb_f64_scalar",
        "--abi",
        "scalar",
        "--inputs",
        "f64",
        "--outputs",
        "f64",
        "--params",
        "f32,f32",
    ]);
    assert_eq!(code, 1, "{text}");
    assert_eq!(stdout, "", "a decline goes to stderr");
    assert!(
        text.contains(
            "parameter 3 (runtime param 0) has the wrong class: expected .f32, found .f64"
        ),
        "{text}"
    );
    assert!(
        text.contains("the abi expects (.u64 in0, .u64 out0, .u64 n, .f32 p0, .f32 p1), the entry declares (.u64, .u64, .u64, .f64, .f64)"),
        "{text}"
    );
    assert!(
        text.contains(
            "extern \"C\" __global__ void baracuda_gen_axpb_f64_scalar(const double* __restrict__ in0, \
             double* __restrict__ out0, long long n, float p0, float p1);"
        ),
        "{text}"
    );
}

#[test]
fn inspect_reads_cubins_and_fatbins() {
    let (code, text) = jitseam(&["inspect", &fixture("cubin/two_entries.sm_80.cubin")]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("cubin sm_80"), "{text}");
    assert!(text.contains("entry baracuda_gen_neg_f32_scalar"), "{text}");
    assert!(text.contains("offset   16  size   8"), "{text}");
    let (code, text) = jitseam(&[
        "inspect",
        "--json",
        &fixture("fatbin/axpb_f64_scalar.fatbin"),
    ]);
    assert_eq!(code, 0, "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(doc["images"][0]["arch"], "sm_90");
    assert_eq!(doc["images"][1]["arch"], "compute_80");
    assert_eq!(
        doc["images"][0]["content"]["entries"][0]["params"][3]["size"],
        8
    );
}

#[test]
fn check_verifies_cubin_offsets_and_fatbin_ptx() {
    let cubin = fixture("cubin/add_scalar_mul_scalar_f32_scalar.sm_90.cubin");
    let entry = "baracuda_gen_add_scalar_mul_scalar_f32_scalar";
    let base = [
        "check",
        &cubin,
        "--entry",
        entry,
        "--abi",
        "scalar",
        "--inputs",
        "f32",
        "--outputs",
        "f32",
    ];
    let (code, text) = jitseam(&[&base[..], &["--params", "f32,f32"]].concat());
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("records no types"), "{text}");
    let (code, text) = jitseam(&[&base[..], &["--params", "f64,f32"]].concat());
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("parameter 3"), "{text}");

    let fatbin = fixture("fatbin/add_f32_scalar.fatbin");
    let args = [
        "check",
        &fatbin,
        "--entry",
        "baracuda_gen_add_f32_scalar",
        "--abi",
        "scalar",
    ];
    let (code, text) = jitseam(&[&args[..], &["--inputs", "f32,f32", "--outputs", "f32"]].concat());
    assert_eq!(code, 0, "{text}");
    assert!(text.starts_with("ok\nbody proven safe"), "{text}");
    let (code, text) = jitseam(&[&args[..], &["--inputs", "f32", "--outputs", "f32"]].concat());
    assert_eq!(code, 1, "{text}");
}

#[test]
fn compile_writes_a_cubin_and_its_ptx_or_says_why_not() {
    let dir = std::env::temp_dir().join(format!("jitseam-cli-compile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("axpb.cubin");
    let (code, text) = jitseam(&[
        "compile",
        &fixture("axpb_f64_scalar.cu"),
        "--arch",
        "sm_90",
        "-D",
        "UNUSED=1",
        "-o",
        out.to_str().unwrap(),
    ]);
    if text.contains("nvrtc unavailable") {
        assert_eq!(code, 2, "{text}");
        eprintln!("NOTICE: compile test skipped: {text}");
        return;
    }
    assert_eq!(code, 0, "{text}");
    let cubin = std::fs::read(&out).unwrap();
    assert!(cubin.starts_with(b"\x7fELF"));
    let ptx = std::fs::read_to_string(out.with_extension("ptx")).unwrap();
    assert!(ptx.contains(".entry baracuda_gen_axpb_f64_scalar("));
    // A compile error prints NVRTC's log with the line and fails.
    let bad = dir.join("bad.cu");
    std::fs::write(&bad, "__global__ void k() {\n  nope;\n}\n").unwrap();
    let (code, text) = jitseam(&["compile", bad.to_str().unwrap(), "--arch", "compute_80"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("bad.cu(2)"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A module of many entries, each `k<i>(.u64 in, .u64 out, .u64 n)`: every third stores
/// through its output at offset 0 whatever `n` is (guarded: `n` may be 0), the others only
/// return (proven); a last entry takes no parameters (declined before its body).
fn many_entries(count: usize) -> String {
    let mut ptx = String::from(".version 8.0\n.target sm_80\n.address_size 64\n");
    for i in 0..count {
        ptx.push_str(&format!(
            ".visible .entry k{i}(.param .u64 k{i}_in, .param .u64 k{i}_out, .param .u64 k{i}_n)\n{{\n"
        ));
        if i % 3 == 2 {
            ptx.push_str(&format!(
                "\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [k{i}_out];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tst.global.f32 [%rd2], 0f00000000;\n"
            ));
        }
        ptx.push_str("\tret;\n}\n");
    }
    ptx.push_str(".visible .entry z()\n{\n\tret;\n}\n");
    ptx
}

/// `inspect --abi` reads the module once and proves each entry as `load()` would: every
/// entry's own verdict, in order, for a module of thousands of entries (it once parsed the
/// whole module again for each; `cargo bench --bench inspect` measures that it is linear).
#[test]
fn inspect_with_an_abi_gives_every_entry_of_a_large_module_its_own_verdict() {
    let count = 6_000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.ptx");
    std::fs::write(&path, many_entries(count)).unwrap();
    let path = path.to_str().unwrap();
    let abi = ["--abi", "scalar", "--inputs", "f32", "--outputs", "f32"];
    let (code, text) = jitseam(&[&["inspect", "--json", path][..], &abi].concat());
    assert_eq!(code, 0, "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let entries = doc["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), count + 1);
    for (i, entry) in entries[..count].iter().enumerate() {
        let v = &entry["verification"];
        assert_eq!(entry["name"], format!("k{i}"));
        assert_eq!(v["verified"], true, "{entry}");
        let guards = v["guards"].as_array().expect("guards");
        if i % 3 == 2 {
            // Proven but for the store's bound, which `load()` guards at run time.
            assert_eq!(guards.len(), 1, "{v}");
            assert_eq!(guards[0]["kind"], "store", "{v}");
            assert!(guards[0]["line"].as_u64().is_some_and(|l| l > 0), "{v}");
        } else {
            assert!(guards.is_empty(), "{v}");
        }
    }
    let last = &entries[count]["verification"];
    assert_eq!(last["verified"], false, "{last}");
    assert!(
        last["error"].as_str().unwrap().contains("parameter"),
        "{last}"
    );

    // The text report says the same, one body line per entry.
    let (code, text) = jitseam(&[&["inspect", path][..], &abi].concat());
    assert_eq!(code, 0, "{text}");
    assert_eq!(text.matches("  body: ").count(), count + 1, "{text}");
}

/// An endless file is read up to the CLI's limit and refused, naming it: not read until memory
/// runs out. A pipe of a real module still reads.
#[cfg(unix)]
#[test]
fn an_endless_file_is_refused_at_the_read_limit_and_a_pipe_still_reads() {
    let (code, text) = jitseam(&["inspect", "/dev/zero"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("/dev/zero holds more than 1073741824 bytes"),
        "{text}"
    );

    let fixture = fixture("two_entries.ptx");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "cat '{fixture}' | '{}' inspect /dev/stdin",
            env!("CARGO_BIN_EXE_jitseam")
        ))
        .output()
        .expect("run jitseam through a pipe");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("entry baracuda_gen_neg_f32_scalar"), "{text}");
}
