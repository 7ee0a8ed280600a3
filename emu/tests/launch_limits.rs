//! What a launch may do and how it ends when it does not: the instruction budget and
//! cancellation (nothing hangs), exactly the lent byte ranges (inputs read-only), registers
//! that were never written, and workers on several cores giving the one-core result.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use jitseam_emu::interp::{
    Access, ExecError, FaultKind, LaunchDims, Region, Regions, RunOptions, merge_ranges, run_with,
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
