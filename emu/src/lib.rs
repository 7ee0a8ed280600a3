//! The PTX interpreter behind jitseam's emulator device.
//!
//! [`decode_entry`] takes an entry resolved by `jitseam-ptx` (its body and the body of every
//! `.func` it calls, in the typed instruction model) and pre-decodes it into a [`Program`]: a
//! flat array of compact instructions over one register file of 64-bit slots ([`decode`] does
//! the same from the text). [`interp::run`] executes a program on the CPU, warp-sized lockstep
//! groups of threads at a time, with every access checked against the memory the launch lends
//! it.
//!
//! Anything the interpreter cannot run exactly is refused when the program is decoded, as
//! [`DecodeError::Unsupported`] naming the instruction and its line — never a wrong answer
//! later; what the instruction model does not know is [`DecodeError::Unknown`], as the body
//! verifier refuses it.

// Library code never panics on caller data; tests may (clippy.toml allows it there).
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod decode;
pub mod interp;
mod space;

pub use decode::{DecodeError, Program, decode, decode_entry};
