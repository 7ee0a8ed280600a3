//! Running a test against jitseam-cuda-model, the CUDA driver model (testing/cuda-model/): a
//! `libcuda.so` stand-in that executes kernels with the PTX interpreter. It is a test
//! instrument, not a GPU; GPU runs stay the ground truth.
//!
//! cudarc opens the driver by name (`libcuda.so`, …, `libcuda.so.1`) and the dynamic loader
//! reads `LD_LIBRARY_PATH` when a process starts, so the model cannot be slipped into a running
//! test. [`in_model`] therefore re-executes the current test binary, running only the named
//! test, with `LD_LIBRARY_PATH` led by a temporary directory whose `libcuda.so` and
//! `libcuda.so.1` link to the built model; the child runs the body, the parent checks that it
//! passed. Tests that want no driver at all (tests/device_cuda_absent.rs) are unaffected.
//!
//! The model is the workspace member `jitseam-cuda-model`; `cargo test --workspace` builds it
//! next to the test binaries. Where it was not built (`cargo test -p jitseam` alone) the test
//! prints why and passes, except under `CI=true`, where that is a failure.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in the child: run the body here.
const CHILD: &str = "JITSEAM_CUDA_MODEL_CHILD";
/// File name of the built model.
const MODEL: &str = "libjitseam_cuda_model.so";

/// Runs `body` in a child process whose CUDA driver is the model. `test` is the test's name as
/// the harness knows it (`module::name` for a test inside a module).
pub fn in_model(test: &str, body: impl FnOnce()) {
    in_model_with_env(test, &[], body);
}

/// As [`in_model`], with extra environment variables for the child.
pub fn in_model_with_env(test: &str, env: &[(&str, &str)], body: impl FnOnce()) {
    if std::env::var_os(CHILD).is_some() {
        body();
        return;
    }
    let Some(model) = find_model() else {
        let message = format!(
            "{MODEL} is not built next to this test binary; build it with \
             `cargo build -p jitseam-cuda-model` or run `cargo test --workspace`"
        );
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{message}");
        }
        // Straight to the process's stderr: the harness captures `eprintln!` of passing tests,
        // and a skip should be seen.
        let _ = writeln!(
            std::io::stderr(),
            "skipping `{test}` on the CUDA driver model: {message}"
        );
        return;
    };
    let dir = tempfile::tempdir().expect("temporary directory for the libcuda links");
    for name in ["libcuda.so", "libcuda.so.1"] {
        std::os::unix::fs::symlink(&model, dir.path().join(name))
            .unwrap_or_else(|e| panic!("link {name} to {}: {e}", model.display()));
    }
    let mut search = OsString::from(dir.path());
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH").filter(|p| !p.is_empty()) {
        search.push(":");
        search.push(old);
    }
    let exe = std::env::current_exe().expect("path of the running test binary");
    let mut command = Command::new(&exe);
    command
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("LD_LIBRARY_PATH", search);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", exe.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // "1 passed" also catches a name that matched no test.
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "`{test}` on the CUDA driver model ({}) failed: {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        model.display(),
        output.status
    );
}

/// The built model: next to the test binary (`target/<profile>/deps/`) or one level up.
fn find_model() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let deps = exe.parent()?;
    [deps, deps.parent().unwrap_or(deps)]
        .iter()
        .map(|dir: &&Path| dir.join(MODEL))
        .find(|path| path.is_file())
}
