//! jitseam: launch JIT-synthesized GPU kernels safely.
pub mod telemetry;
