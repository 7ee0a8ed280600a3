//! What jitseam tells a `tracing` subscriber: one event per transition and launch, with the
//! kernel, the stage and, for a refusal, the error and whether it was a decline. Without a
//! subscriber (the default) each costs one relaxed load.

use crate::error::Error;

/// Reports the outcome of `stage` (`describe`, `load`, `bind`, `launch`, …) for kernel `entry`:
/// a decline or failure at `debug`, with its fields; a success at `trace`.
pub(crate) fn outcome<T>(stage: &'static str, entry: &str, result: &Result<T, Error>) {
    match result {
        Ok(_) => tracing::trace!(target: "jitseam", stage, entry, "ok"),
        Err(error) => refused(stage, entry, error),
    }
}

/// Reports a refusal of `stage` for kernel `entry` at `debug`: the error, its kind and whether it
/// was a decline. For paths that report only refusals (a launch's success is not traced, to
/// keep the hot path to its work).
pub(crate) fn refused(stage: &'static str, entry: &str, error: &Error) {
    tracing::debug!(
        target: "jitseam",
        stage,
        entry,
        decline = error.is_decline(),
        kind = error.kind_name(),
        error = %error,
        "refused"
    );
}
