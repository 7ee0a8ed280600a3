//! The PTX interpreter behind jitseam's emulator device.
//!
//! [`decode`] takes an entry of a parsed module (and every `.func` it calls) and pre-decodes it
//! into a [`Program`]: a flat array of compact instructions over one register file of 64-bit
//! slots. [`interp::run`] executes a program on the CPU, warp-sized lockstep groups of threads at
//! a time, with every access checked against the memory the launch lends it.
//!
//! Anything the interpreter cannot run exactly is refused when the program is decoded, as
//! [`DecodeError::Unsupported`] naming the instruction and its line — never a wrong answer later.

// Library code never panics on caller data; tests may (clippy.toml allows it there).
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod decode;
pub mod interp;
mod space;

pub use decode::{DecodeError, Program, decode};
