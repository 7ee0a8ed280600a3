//! What a launch may do and how it ends when it does not: the budget of steps (charged for
//! every piece of work, scaled with the launch), the deadline and cancellation (nothing hangs,
//! nothing runs for long), exactly the lent byte ranges (inputs read-only), registers that
//! were never written, and workers on several cores giving the one-core result.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use jitseam_emu::interp::{
    Access, BLOCK_STEPS, BUDGET_PER_THREAD, ExecError, FaultKind, GROUP_STEPS, LaunchDims,
    MAX_BUDGET, MIN_BUDGET, Region, Regions, RunOptions, default_budget, merge_ranges, run_with,
};
use jitseam_emu::{Program, decode};
use jitseam_ptx::parse_module;

fn program(src: &str, entry: &str) -> Program {
    let module = parse_module(src).unwrap();
    decode(src, &module, entry).unwrap()
}

fn packet(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

const SPIN: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry spin()
{
L:
    bra L;
}
";

/// A grid-stride loop whose stride register is never written: it reads zero, so the loop
/// never advances.
const STUCK_STRIDE: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry stuck(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
LOOP:
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    add.u32 %r2, %r2, %r5;
    bra LOOP;
DONE:
    ret;
}
";

/// Small enough for an unoptimized build to spend in well under five seconds.
fn small_budget() -> RunOptions<'static> {
    RunOptions {
        budget: Some(1 << 18),
        ..RunOptions::default()
    }
}

#[test]
fn a_loop_that_never_ends_exceeds_the_budget() {
    let p = program(SPIN, "spin");
    let memory = Regions::new(Vec::new());
    let start = Instant::now();
    let err = run_with(
        &p,
        &[],
        LaunchDims::linear(4, 128),
        &memory,
        &small_budget(),
    )
    .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5));
    let ExecError::BudgetExceeded { at, budget } = &err else {
        panic!("{err}");
    };
    assert_eq!(*budget, 1 << 18);
    assert_eq!(at.entry, "spin");
    assert_eq!(at.line, 8);
    assert_eq!(at.instruction, "bra L;");
    let text = err.to_string();
    assert!(text.contains("budget") && text.contains("line 8"), "{text}");
}

#[test]
fn a_stride_read_from_an_unwritten_register_exceeds_the_budget() {
    let p = program(STUCK_STRIDE, "stuck");
    let mut out = vec![0u8; 4 * 64];
    let memory = Regions::new(vec![(0x1000, &mut out[..])]);
    let mut params = packet(&[0x1000]);
    params.extend_from_slice(&64u32.to_le_bytes());
    let start = Instant::now();
    let err = run_with(
        &p,
        &params,
        LaunchDims::linear(1, 32),
        &memory,
        &small_budget(),
    )
    .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5));
    let ExecError::BudgetExceeded { at, .. } = &err else {
        panic!("{err}");
    };
    // Somewhere inside the loop (lines 14 to 21).
    assert!((14..=21).contains(&at.line), "{err}");
    drop(memory);
    // The stride read zero: every thread kept writing its own index.
    assert_eq!(u32::from_le_bytes(out[4 * 7..4 * 8].try_into().unwrap()), 7);
}

#[test]
fn a_cancelled_launch_ends() {
    let p = program(SPIN, "spin");
    let memory = Regions::new(Vec::new());
    let cancel = AtomicBool::new(false);
    let options = RunOptions {
        budget: Some(u64::MAX),
        workers: 2,
        cancel: Some(&cancel),
        ..RunOptions::default()
    };
    let err = std::thread::scope(|s| {
        let handle = s.spawn(|| run_with(&p, &[], LaunchDims::linear(8, 64), &memory, &options));
        std::thread::sleep(Duration::from_millis(50));
        cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        handle.join().unwrap()
    })
    .unwrap_err();
    assert!(matches!(err, ExecError::Cancelled { .. }), "{err}");
}

const COPY: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry copy(.param .u64 src, .param .u64 dst, .param .u64 offset)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    ld.param.u64 %rd7, [offset];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r2, [%rd4];
    add.s64 %rd5, %rd2, %rd3;
    add.s64 %rd6, %rd5, %rd7;
    st.global.u32 [%rd6], %r2;
}
";

#[test]
fn a_store_into_an_input_faults_with_write_to_input() {
    let p = program(COPY, "copy");
    let input = vec![1u8; 256];
    let mut output = vec![0u8; 256];
    let memory = Regions::from_regions(vec![
        Region::read_only(0x10_0000, &input),
        Region::read_write(0x20_0000, &mut output),
    ]);
    // Copy the input onto itself.
    let params = packet(&[0x10_0000, 0x10_0000, 0]);
    let err = run_with(
        &p,
        &params,
        LaunchDims::linear(1, 64),
        &memory,
        &RunOptions::default(),
    )
    .unwrap_err();
    let ExecError::Fault(fault) = &err else {
        panic!("{err}");
    };
    assert_eq!(fault.kind, FaultKind::WriteToInput);
    assert_eq!(fault.access, Access::Store);
    assert_eq!(fault.address, 0x10_0000);
    assert!(err.to_string().contains("write to input"), "{err}");
    // The right way round works.
    let params = packet(&[0x10_0000, 0x20_0000, 0]);
    run_with(
        &p,
        &params,
        LaunchDims::linear(1, 64),
        &memory,
        &RunOptions::default(),
    )
    .unwrap();
    drop(memory);
    assert!(output.iter().all(|&b| b == 1));
}

#[test]
fn an_overrun_of_a_mebibyte_past_an_output_faults() {
    let p = program(COPY, "copy");
    let input = vec![1u8; 256];
    let mut output = vec![0u8; 256];
    // A neighbour 1 MiB after the output: it must not be reachable through the output.
    let mut neighbour = vec![0u8; 4096];
    let memory = Regions::from_regions(vec![
        Region::read_only(0x10_0000, &input),
        Region::read_write(0x20_0000, &mut output),
        Region::read_write(0x20_0000 + (1 << 20), &mut neighbour),
    ]);
    for offset in [256u64, 4096, 1 << 20, (1 << 20) + 4096] {
        let params = packet(&[0x10_0000, 0x20_0000, offset]);
        let err = run_with(
            &p,
            &params,
            LaunchDims::linear(1, 64),
            &memory,
            &RunOptions::default(),
        );
        if offset == 1 << 20 {
            // That one lands exactly in the mapped neighbour (which the launch was lent).
            err.unwrap();
            continue;
        }
        let err = err.unwrap_err();
        let ExecError::Fault(fault) = &err else {
            panic!("{err}");
        };
        assert_eq!(fault.kind, FaultKind::OutOfBounds, "{err}");
    }
}

#[test]
fn merged_ranges_are_writable_where_any_operand_writes() {
    assert_eq!(
        merge_ranges(vec![
            (100, 50, false),
            (0, 10, false),
            (120, 100, true),
            (10, 0, true)
        ]),
        vec![(0, 10, false), (100, 120, true)]
    );
}

/// `out[i] = i * 3 + 1` over a grid of many blocks, with a fault at element `bad` when set.
const FILL: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry fill(.param .u64 out, .param .u32 n, .param .u32 bad)
{
    .reg .pred %p<3>;
    .reg .b32 %r<9>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    ld.param.u32 %r8, [bad];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    mul.wide.u32 %rd2, %r5, 4;
    setp.eq.u32 %p2, %r5, %r8;
    add.s64 %rd3, %rd1, %rd2;
    @%p2 mov.u64 %rd3, 0;
    mad.lo.s32 %r6, %r5, 3, 1;
    st.global.u32 [%rd3], %r6;
DONE:
    ret;
}
";

fn fill(workers: usize, n: u32, bad: u32) -> (Result<(), ExecError>, Vec<u8>) {
    let p = program(FILL, "fill");
    let mut out = vec![0u8; 4 * n as usize];
    let result = {
        let memory = Regions::new(vec![(0x1000_0000, &mut out[..])]);
        let mut params = packet(&[0x1000_0000]);
        params.extend_from_slice(&n.to_le_bytes());
        params.extend_from_slice(&bad.to_le_bytes());
        let options = RunOptions {
            workers,
            ..RunOptions::default()
        };
        run_with(
            &p,
            &params,
            LaunchDims::linear(n.div_ceil(96), 96),
            &memory,
            &options,
        )
    };
    (result, out)
}

#[test]
fn every_worker_count_gives_the_same_result() {
    let n = 100_003;
    let (r1, one) = fill(1, n, u32::MAX);
    r1.unwrap();
    for (i, chunk) in one.chunks_exact(4).enumerate() {
        assert_eq!(
            u32::from_le_bytes(chunk.try_into().unwrap()),
            i as u32 * 3 + 1
        );
    }
    for workers in [2, 3, 8] {
        let (r, out) = fill(workers, n, u32::MAX);
        r.unwrap();
        assert!(out == one, "{workers} workers");
    }
}

#[test]
fn every_worker_count_reports_the_same_fault() {
    let n = 100_003;
    let (r1, _) = fill(1, n, 77_777);
    let e1 = r1.unwrap_err();
    for workers in [2, 5] {
        let (r, _) = fill(workers, n, 77_777);
        assert_eq!(r.unwrap_err(), e1, "{workers} workers");
    }
    let ExecError::Fault(f) = e1 else {
        panic!("{e1}")
    };
    assert_eq!(f.block[0] * 96 + f.thread[0], 77_777);
    assert_eq!(f.address, 0);
}

/// A body of `count` moves then `ret`: every group costs its start and `count + 1` steps.
fn straight(count: usize, shared: bool) -> String {
    let decl = if shared {
        // Declaring shared memory makes every block its own (block-scoped).
        ".shared .align 4 .b8 s[4];"
    } else {
        ""
    };
    let moves = "mov.u32 %r1, 1;\n".repeat(count);
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<2>;\n{decl}\n{moves}ret;\n}}\n"
    )
}

fn one_worker(budget: u64) -> RunOptions<'static> {
    RunOptions {
        budget: Some(budget),
        workers: 1,
        ..RunOptions::default()
    }
}

#[test]
fn a_never_ending_kernel_of_four_threads_stops_at_its_default_budget() {
    let p = program(SPIN, "spin");
    let memory = Regions::new(Vec::new());
    let err = run_with(
        &p,
        &[],
        LaunchDims::linear(1, 4),
        &memory,
        &RunOptions::default(),
    )
    .unwrap_err();
    let ExecError::BudgetExceeded { at, budget } = &err else {
        panic!("{err}");
    };
    assert_eq!(
        *budget, MIN_BUDGET,
        "four threads get the least default budget"
    );
    assert_eq!(*budget, default_budget(4));
    assert_eq!(at.line, 8);
}

#[test]
fn the_default_budget_scales_with_the_launchs_threads() {
    assert_eq!(default_budget(0), MIN_BUDGET);
    assert_eq!(default_budget(1 << 19), MIN_BUDGET);
    assert_eq!(default_budget(1 << 20), (1 << 20) * BUDGET_PER_THREAD);
    assert_eq!(default_budget(1 << 40), MAX_BUDGET);
    assert_eq!(default_budget(u128::MAX), MAX_BUDGET);
    // A launch of 2^20 threads that never ends is given (and reaches) its scaled budget.
    let p = program(SPIN, "spin");
    let memory = Regions::new(Vec::new());
    let err = run_with(
        &p,
        &[],
        LaunchDims::linear(1 << 12, 256),
        &memory,
        &RunOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, ExecError::BudgetExceeded { budget, .. } if budget == default_budget(1 << 20)),
        "{err}"
    );
}

/// Runs 7 moves and `ret` (8 instructions a thread) over `dims`, whose `units` (groups or
/// blocks) cost at least `least` steps each and `real` in fact: charged for the instructions
/// alone it would finish within 12 steps a unit, so that budget refuses or stops it; between
/// `least` and `real` it starts and is stopped while it runs; with `real` it runs.
fn charged_per_unit(shared: bool, dims: LaunchDims, units: u64, least: u64, real: u64) {
    let p = program(&straight(7, shared), "k");
    let memory = Regions::new(Vec::new());
    let err = run_with(&p, &[], dims, &memory, &one_worker(units * 12)).unwrap_err();
    assert!(
        matches!(
            err,
            ExecError::BudgetExceeded { .. } | ExecError::TooCostly { .. }
        ),
        "{err}"
    );
    let budget = units * (least + real) / 2;
    let err = run_with(&p, &[], dims, &memory, &one_worker(budget)).unwrap_err();
    assert!(
        matches!(err, ExecError::BudgetExceeded { budget: b, .. } if b == budget),
        "{err}"
    );
    run_with(&p, &[], dims, &memory, &one_worker(units * real + 8192)).unwrap();
}

#[test]
fn starting_a_group_is_charged_so_a_grid_of_short_groups_stops_at_the_budget() {
    // 2^14 groups of 64 threads: each costs its start and its 8 steps.
    let groups = 1u64 << 14;
    let dims = LaunchDims::linear(groups as u32, 64);
    charged_per_unit(false, dims, groups, GROUP_STEPS + 1, GROUP_STEPS + 8);
}

#[test]
fn starting_a_block_is_charged_so_a_grid_of_one_thread_blocks_stops_at_the_budget() {
    // 2^14 block-scoped blocks of one thread: each costs its start, its one group's start and
    // the 8 steps.
    let blocks = 1u64 << 14;
    let dims = LaunchDims::linear(blocks as u32, 1);
    let group = BLOCK_STEPS + GROUP_STEPS;
    charged_per_unit(true, dims, blocks, group + 1, group + 8);
}

#[test]
fn a_launch_that_cannot_finish_within_its_budget_is_refused_before_it_runs() {
    let p = program(&straight(0, false), "k");
    let memory = Regions::new(Vec::new());
    // The largest legal launch: (2^31 − 1) × 65535 × 65535 blocks of 1024 threads.
    let largest = LaunchDims {
        grid: [i32::MAX as u32, 65_535, 65_535],
        block: [1024, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let start = Instant::now();
    let err = run_with(&p, &[], largest, &memory, &RunOptions::default()).unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "refused up front"
    );
    let ExecError::TooCostly {
        groups,
        cost,
        budget,
        ..
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(*budget, MAX_BUDGET);
    assert!(cost > budget && *groups > 0, "{err}");
    // A small explicit budget refuses a modest launch the same way, and says so.
    let err = run_with(
        &p,
        &[],
        LaunchDims::linear(1024, 64),
        &memory,
        &one_worker(1000),
    )
    .unwrap_err();
    assert!(matches!(err, ExecError::TooCostly { .. }), "{err}");
    assert!(err.to_string().contains("1024 thread groups"), "{err}");
}

#[test]
fn a_wide_launch_of_a_ret_only_kernel_runs() {
    // 134 M blocks of one thread (2^21 groups): charged its group starts, well inside its
    // scaled budget.
    let p = program(&straight(0, false), "k");
    let memory = Regions::new(Vec::new());
    run_with(
        &p,
        &[],
        LaunchDims::linear(134_217_728, 1),
        &memory,
        &RunOptions::default(),
    )
    .unwrap();
}

#[test]
fn a_deadline_ends_a_launch_its_budget_would_not() {
    let p = program(SPIN, "spin");
    let memory = Regions::new(Vec::new());
    let options = RunOptions {
        budget: Some(u64::MAX),
        timeout: Some(Duration::from_millis(100)),
        workers: 2,
        ..RunOptions::default()
    };
    let err = run_with(&p, &[], LaunchDims::linear(8, 64), &memory, &options).unwrap_err();
    let ExecError::DeadlineExceeded { at, timeout } = &err else {
        panic!("{err}");
    };
    assert_eq!(*timeout, Duration::from_millis(100));
    assert_eq!(at.line, 8);
    assert!(err.to_string().contains("deadline"), "{err}");
}

#[test]
fn a_legitimate_kernel_runs_far_inside_its_default_budget() {
    // The grid-stride fill and the NVRTC scalar add, each with a 256th of its default budget.
    let n = 100_003u32;
    let p = program(FILL, "fill");
    let mut out = vec![0u8; 4 * n as usize];
    {
        let memory = Regions::new(vec![(0x1000_0000, &mut out[..])]);
        let mut params = packet(&[0x1000_0000]);
        params.extend_from_slice(&n.to_le_bytes());
        params.extend_from_slice(&u32::MAX.to_le_bytes());
        let dims = LaunchDims::linear(n.div_ceil(96), 96);
        let budget = default_budget(dims.threads()) / 256;
        run_with(&p, &params, dims, &memory, &one_worker(budget)).unwrap();
    }
    assert_eq!(
        u32::from_le_bytes(out[4 * 77..4 * 78].try_into().unwrap()),
        77 * 3 + 1
    );

    let src = include_str!("../../tests/fixtures/add_f32_scalar.ptx");
    let p = program(src, "baracuda_gen_add_f32_scalar");
    let n = 1usize << 16;
    let (a, b): (Vec<u8>, Vec<u8>) = (
        (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect(),
        (0..n)
            .flat_map(|i| (2.0 * i as f32).to_le_bytes())
            .collect(),
    );
    let mut sum = vec![0u8; 4 * n];
    {
        let memory = Regions::from_regions(vec![
            Region::read_only(0x1000_0000, &a),
            Region::read_only(0x2000_0000, &b),
            Region::read_write(0x3000_0000, &mut sum),
        ]);
        let params = packet(&[0x1000_0000, 0x2000_0000, 0x3000_0000, n as u64]);
        let dims = LaunchDims::linear((n / 256) as u32, 256);
        let budget = default_budget(dims.threads()) / 256;
        run_with(&p, &params, dims, &memory, &one_worker(budget)).unwrap();
    }
    assert_eq!(
        f32::from_le_bytes(sum[4 * 999..4 * 1000].try_into().unwrap()),
        2997.0
    );
}
