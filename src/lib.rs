//! jitseam: launch JIT-synthesized GPU kernels safely.
