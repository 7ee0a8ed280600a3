//! The interpreter's element throughput by worker count and grid: the scalar f32 add and the
//! float4 add fixtures on 2^20 elements, run straight on `jitseam_ptx::interp` (decoded once,
//! inputs mapped read-only, the output read-write), with one worker and with every core, over
//! the full grid (one element per thread, blocks of 256) and over a grid capped at
//! 4 blocks per worker (grid-stride loops). Each figure is the MEDIAN of 21 timed runs after
//! two warm-up runs.
//!
//! Run with `cargo bench --bench emulator_cores`.

use std::time::Instant;

use jitseam_ptx::interp::{LaunchDims, Region, Regions, RunOptions, available_workers, run_with};
use jitseam_ptx::{Program, decode, parse_module};

const N: usize = 1 << 20;
const RUNS: usize = 21;

fn program(src: &str, entry: &str) -> Program {
    let module = parse_module(src).expect("parse");
    decode(src, &module, entry).expect("decode")
}

fn bytes(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

struct Case {
    name: &'static str,
    program: Program,
    /// Elements per thread-iteration (4 for float4).
    width: usize,
}

fn main() {
    let cases = [
        Case {
            name: "add_f32_scalar",
            program: program(
                include_str!("../tests/fixtures/add_f32_scalar.ptx"),
                "baracuda_gen_add_f32_scalar",
            ),
            width: 1,
        },
        Case {
            name: "add_f32_co_v4 (float4)",
            program: program(
                include_str!("../tests/fixtures/add_f32_co_v4.ptx"),
                "baracuda_gen_add_f32_co_v4",
            ),
            width: 4,
        },
    ];
    let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..N).map(|i| 0.5 * i as f32).collect();
    let (a, b) = (bytes(&a), bytes(&b));
    let mut out = vec![0u8; 4 * N];
    let all = available_workers();
    let (base_out, base_a, base_b) = (0x1000_0000u64, 0x2000_0000u64, 0x3000_0000u64);
    println!("{N} elements, medians of {RUNS} runs, {all} cores available");
    let mut one_core = Vec::new();
    for case in &cases {
        let items = N / case.width;
        let mut params = Vec::new();
        // The fixtures take (a, b, out, n).
        for word in [base_a, base_b, base_out, items as u64] {
            params.extend_from_slice(&word.to_le_bytes());
        }
        for workers in [1, all] {
            let full = (items.div_ceil(256)) as u32;
            let capped = (4 * workers as u32).min(full);
            for (grid_name, grid) in [("full grid", full), ("capped grid", capped)] {
                let options = RunOptions {
                    workers,
                    ..RunOptions::default()
                };
                let mut times = Vec::with_capacity(RUNS);
                for run in 0..RUNS + 2 {
                    out.fill(0);
                    let memory = Regions::from_regions(vec![
                        Region::read_only(base_a, &a),
                        Region::read_only(base_b, &b),
                        Region::read_write(base_out, &mut out),
                    ]);
                    let start = Instant::now();
                    run_with(
                        &case.program,
                        &params,
                        LaunchDims::linear(grid, 256),
                        &memory,
                        &options,
                    )
                    .expect("launch");
                    let t = start.elapsed().as_secs_f64();
                    if run >= 2 {
                        times.push(t);
                    }
                }
                let ok = out
                    .chunks_exact(4)
                    .enumerate()
                    .all(|(i, c)| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) == 1.5 * i as f32);
                assert!(ok, "{} computed a wrong sum", case.name);
                let t = median(times);
                let rate = N as f64 / t / 1e6;
                println!(
                    "{:<24} {workers} worker(s), {grid_name:<11} ({grid:>5} x 256): {rate:8.1} M elem/s ({:.2} ms)",
                    case.name,
                    t * 1e3
                );
                if workers == 1 {
                    one_core.push((case.name, grid_name, rate));
                } else if let Some((_, _, base)) = one_core
                    .iter()
                    .find(|(n, g, _)| *n == case.name && *g == grid_name)
                {
                    println!(
                        "{:<24} speed-up 1 -> {workers} workers: {:.2}x",
                        "",
                        rate / base
                    );
                }
            }
        }
    }
}
