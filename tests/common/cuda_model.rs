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
/// How every diagnosis the model prints starts.
const DIAGNOSIS: &str = "jitseam-cuda-model: ";
/// File name of the built model.
const MODEL: &str = "libjitseam_cuda_model.so";

/// Runs `body` in a child process whose CUDA driver is the model. `test` is the test's name as
/// the harness knows it (`module::name` for a test inside a module). The test fails if the model
/// printed a diagnosis (a kernel fault, a module unloaded under queued launches, …), even where
/// no driver call returned the error.
pub fn in_model(test: &str, body: impl FnOnce()) {
    in_model_with(test, &Options::default(), body);
}

/// How [`in_model_with`] runs the child.
#[derive(Debug, Default)]
pub struct Options<'a> {
    /// Extra environment variables for the child.
    pub env: &'a [(&'a str, &'a str)],
    /// The test provokes the model's diagnoses on purpose.
    pub diagnoses_expected: bool,
}

/// As [`in_model`], with [`Options`].
pub fn in_model_with(test: &str, options: &Options<'_>, body: impl FnOnce()) {
    if std::env::var_os(CHILD).is_some() {
        body();
        return;
    }
    let Some(model) = find_model() else {
        let message = format!(
            "{MODEL} is not built next to this test binary; build it with \
             `cargo build -p jitseam-cuda-model` or run `cargo test --workspace`"
        );
        if std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false")) {
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
    for (key, value) in options.env {
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
    assert!(
        options.diagnoses_expected || !stderr.contains(DIAGNOSIS),
        "`{test}` on the CUDA driver model passed, but the model diagnosed misuse:\n{stderr}"
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
