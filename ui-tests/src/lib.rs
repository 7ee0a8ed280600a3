//! Compile-fail tests for jitseam: every case under `ui/` is one misuse that must not compile,
//! with the diagnostic a user sees recorded next to it. The crate itself is empty; it exists so
//! the cases build against the workspace's `jitseam` in one trybuild run.
