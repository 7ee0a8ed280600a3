//! The launch the ISA tests share: one input buffer at [`IN`], one `u64` result per thread at
//! [`OUT`], the packet `(IN, OUT)`. Not every test file uses every item.
#![allow(dead_code)]

use jitseam_emu::interp::{ExecError, LaunchDims, Regions, RunOptions, run_with};
use jitseam_emu::{Program, decode};
use jitseam_ptx::parse_module;

/// Where the input lives.
pub(crate) const IN: u64 = 0x10_0000;
/// Where the results go: 8 bytes per thread of the launch.
pub(crate) const OUT: u64 = 0x80_0000;

/// Decodes entry `k` of `ptx`, panicking with the decoder's message (and `ptx`) if it refuses.
pub(crate) fn program(ptx: &str) -> Program {
    let module = parse_module(ptx).unwrap();
    decode(ptx, &module, "k").unwrap_or_else(|e| panic!("{e}\n{ptx}"))
}

/// Runs `program` over `dims` on `workers` workers (0: every core) with `input` at [`IN`] and
/// returns each thread's `u64` result from [`OUT`].
pub(crate) fn run_in_out(
    program: &Program,
    mut input: Vec<u8>,
    dims: LaunchDims,
    workers: usize,
) -> Result<Vec<u64>, ExecError> {
    let threads = dims.grid.iter().chain(&dims.block).product::<u32>() as usize;
    let mut out = vec![0u8; 8 * threads];
    {
        let memory = Regions::new(vec![(IN, &mut input[..]), (OUT, &mut out[..])]);
        let mut params = IN.to_le_bytes().to_vec();
        params.extend_from_slice(&OUT.to_le_bytes());
        let options = RunOptions {
            workers,
            ..RunOptions::default()
        };
        run_with(program, &params, dims, &memory, &options)?;
    }
    Ok(out
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

/// The bytes of `rows`, row after row: thread `i` reads row `i` at `IN + 32·i`.
pub(crate) fn row_bytes(rows: &[[u64; 4]]) -> Vec<u8> {
    rows.iter()
        .flat_map(|row| row.iter().flat_map(|v| v.to_le_bytes()))
        .collect()
}
