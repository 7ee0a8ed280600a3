//! `.shared` memory and block barriers, against the PTX ISA's definitions: a block reduction
//! through shared memory at 64 and 1024 threads per block, dynamic shared memory, `cvta` and
//! generic accesses to the shared window, `bar.arrive`/`bar.red`, barriers reached by part of a
//! block, and the faults of shared accesses; every result the same on one worker and on many.

use jitseam_emu::decode;
use jitseam_emu::interp::{
    Access, ExecError, FaultKind, LaunchDims, MAX_SHARED_BYTES, RESERVED, Regions, RunOptions,
    run_with,
};
use jitseam_ptx::parse_module;

#[path = "support/in_out.rs"]
mod in_out;
use in_out::{IN, OUT};

/// A kernel `k(in, out)`: module-level `globals`, then `body` with `%rd1` = `in` (u32
/// elements), `%rd2` = `out` (u64 elements), `%r1` = `%tid.x`, `%r2` = `%ctaid.x`, `%r3` =
/// `%ntid.x`, `%r4` = the thread's global index, `%r5` = `in[%r4]`; `%out` is stored at
/// `out[%r4]` when the body falls through to its end.
fn kernel(globals: &str, body: &str) -> String {
    format!(
        "
.version 8.0
.target sm_90
.address_size 64
{globals}
.visible .entry k(.param .u64 k_in, .param .u64 k_out)
{{
    .reg .b32 %r<32>;
    .reg .b64 %rd<16>;
    .reg .b64 %out;
    .reg .pred %p<8>;
    ld.param.u64 %rd1, [k_in];
    ld.param.u64 %rd2, [k_out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r5, [%rd4];
    mov.u64 %out, 0;
    {body}
    mul.wide.u32 %rd5, %r4, 8;
    add.s64 %rd6, %rd2, %rd5;
    st.global.u64 [%rd6], %out;
}}
"
    )
}

/// Runs `ptx` over `dims` on `workers` workers with `in[i] = input(i)`.
fn run(
    ptx: &str,
    dims: LaunchDims,
    workers: usize,
    input: impl Fn(u32) -> u32,
) -> Result<Vec<u64>, ExecError> {
    let threads = dims.grid.iter().chain(&dims.block).product::<u32>();
    let inp = (0..threads).flat_map(|i| input(i).to_le_bytes()).collect();
    in_out::run_in_out(&in_out::program(ptx), inp, dims, workers)
}

/// Runs on 1 worker and on 4 and checks both give the same result.
fn run_both(
    ptx: &str,
    dims: LaunchDims,
    input: impl Fn(u32) -> u32 + Copy,
) -> Result<Vec<u64>, ExecError> {
    let one = run(ptx, dims, 1, input);
    let many = run(ptx, dims, 4, input);
    assert_eq!(one, many, "1 worker and 4 workers differ");
    one
}

/// The tree reduction of the CUDA samples: each block sums its `in` elements in shared memory,
/// halving the active threads after every `bar.sync`; thread 0 of each block returns the sum.
const REDUCE: &str = "
    .shared .align 4 .b8 sdata[4096];
    mov.u32 %r6, sdata;
    shl.b32 %r7, %r1, 2;
    add.s32 %r8, %r6, %r7;
    st.shared.u32 [%r8], %r5;
    bar.sync 0;
    shr.u32 %r9, %r3, 1;
LOOP:
    setp.eq.u32 %p1, %r9, 0;
    @%p1 bra DONE;
    setp.ge.u32 %p2, %r1, %r9;
    @%p2 bra SKIP;
    shl.b32 %r10, %r9, 2;
    add.s32 %r11, %r8, %r10;
    ld.shared.u32 %r12, [%r11];
    ld.shared.u32 %r13, [%r8];
    add.s32 %r13, %r13, %r12;
    st.shared.u32 [%r8], %r13;
SKIP:
    bar.sync 0;
    shr.u32 %r9, %r9, 1;
    bra LOOP;
DONE:
    setp.ne.u32 %p3, %r1, 0;
    @%p3 bra END;
    ld.shared.u32 %r14, [%r6];
    cvt.u64.u32 %out, %r14;
END:
";

fn input(i: u32) -> u32 {
    i.wrapping_mul(2_654_435_761) >> 7
}

#[test]
fn block_reduction_through_shared_memory() {
    let ptx = kernel("", REDUCE);
    for (blocks, block) in [(8u32, 64u32), (3, 1024), (5, 256)] {
        let out = run_both(&ptx, LaunchDims::linear(blocks, block), input).unwrap();
        for b in 0..blocks {
            let expect = (b * block..(b + 1) * block).fold(0u32, |s, i| s.wrapping_add(input(i)));
            assert_eq!(
                out[(b * block) as usize],
                u64::from(expect),
                "block {b} of {block}"
            );
            assert!(
                out[(b * block + 1) as usize..((b + 1) * block) as usize]
                    .iter()
                    .all(|&v| v == 0)
            );
        }
    }
}

#[test]
fn a_two_dimensional_block_shares_its_memory() {
    // 32 x 4 threads: each thread stores its linear index, then reads its mirror's.
    let body = "
    .shared .align 4 .b32 s[128];
    mov.u32 %r6, %tid.y;
    mad.lo.s32 %r7, %r6, 32, %r1;
    mov.u32 %r8, s;
    shl.b32 %r9, %r7, 2;
    add.s32 %r10, %r8, %r9;
    st.shared.u32 [%r10], %r7;
    bar.sync 0;
    sub.s32 %r11, 127, %r7;
    shl.b32 %r12, %r11, 2;
    add.s32 %r13, %r8, %r12;
    ld.shared.u32 %r14, [%r13];
    cvt.u64.u32 %out, %r14;
    mad.lo.s32 %r4, %r2, 128, %r7;
";
    let dims = LaunchDims {
        grid: [2, 1, 1],
        block: [32, 4, 1],
        dynamic_shared_bytes: 0,
    };
    let out = run_both(&kernel("", body), dims, input).unwrap();
    for (i, &v) in out.iter().enumerate() {
        assert_eq!(v, 127 - (i as u64 % 128), "thread {i}");
    }
}

#[test]
fn dynamic_shared_memory_is_sized_by_the_launch() {
    // Every thread writes its value at dyn[tid] (after a static variable), then reads the
    // value of the thread at the other end of the block.
    let globals = ".extern .shared .align 16 .b8 dyn[];";
    let body = "
    .shared .align 8 .b8 pad[12];
    mov.u64 %rd7, dyn;
    mov.u64 %rd8, pad;
    cvt.u64.u32 %rd9, %r1;
    shl.b64 %rd9, %rd9, 2;
    add.s64 %rd10, %rd7, %rd9;
    st.shared.u32 [%rd10], %r5;
    bar.sync 0;
    sub.s32 %r6, %r3, 1;
    sub.s32 %r6, %r6, %r1;
    mul.wide.u32 %rd11, %r6, 4;
    add.s64 %rd12, %rd7, %rd11;
    ld.shared.u32 %r7, [%rd12];
    cvt.u64.u32 %out, %r7;
";
    let ptx = kernel(globals, body);
    let module = parse_module(&ptx).unwrap();
    let program = decode(&ptx, &module, "k").unwrap();
    assert_eq!(program.static_shared_bytes(), 12);
    assert_eq!(program.shared_bytes(256), 16 + 256);
    let dims = LaunchDims::linear(4, 64).with_dynamic_shared(256);
    let out = run_both(&ptx, dims, input).unwrap();
    for (i, &v) in out.iter().enumerate() {
        let block = i as u32 / 64;
        let mirror = block * 64 + 63 - i as u32 % 64;
        assert_eq!(v, u64::from(input(mirror)), "thread {i}");
    }
    // One byte short: the last thread's store falls outside the block's shared memory.
    let short = LaunchDims::linear(1, 64).with_dynamic_shared(255);
    match run(&ptx, short, 1, input) {
        Err(ExecError::Fault(f)) => {
            assert_eq!(f.kind, FaultKind::OutsideShared);
            assert_eq!(f.access, Access::Store);
            assert_eq!(f.thread, [63, 0, 0]);
            assert_eq!(f.address, 16 + 63 * 4);
            assert_eq!(f.nearest.map(|a| (a.base, a.size)), Some((0, 16 + 255)));
        }
        other => panic!("{other:?}"),
    }
    // No dynamic bytes at all: the window is only the statics.
    assert!(matches!(
        run(&ptx, LaunchDims::linear(1, 64), 1, input),
        Err(ExecError::Fault(f)) if f.kind == FaultKind::OutsideShared && f.thread == [0, 0, 0]
    ));
}

#[test]
fn shared_accesses_outside_the_window_fault_with_the_shared_address() {
    let body = "
    .shared .align 4 .b8 s[256];
    mov.u32 %r6, s;
    shl.b32 %r7, %r1, 2;
    add.s32 %r8, %r6, %r7;
    st.shared.u32 [%r8+4], %r5;
";
    match run(&kernel("", body), LaunchDims::linear(2, 64), 4, input) {
        Err(ExecError::Fault(f)) => {
            assert_eq!(f.kind, FaultKind::OutsideShared);
            assert_eq!(f.block, [0, 0, 0]);
            assert_eq!(f.thread, [63, 0, 0]);
            assert_eq!(f.address, 256);
            assert_eq!(f.size, 4);
            assert!(
                f.instruction.starts_with("st.shared.u32"),
                "{}",
                f.instruction
            );
        }
        other => panic!("{other:?}"),
    }
    // Misaligned, and a 64-bit address far past the window.
    let body = "
    .shared .align 4 .b8 s[256];
    mov.u64 %rd7, s;
    ld.shared.u32 %r6, [%rd7+2];
";
    assert!(matches!(
        run(&kernel("", body), LaunchDims::linear(1, 32), 1, input),
        Err(ExecError::Fault(f)) if f.kind == FaultKind::Misaligned && f.address == 2
    ));
    let body = "
    .shared .align 4 .b8 s[256];
    mov.u64 %rd7, 0x100000000;
    ld.shared.u32 %r6, [%rd7];
";
    assert!(matches!(
        run(&kernel("", body), LaunchDims::linear(1, 32), 1, input),
        Err(ExecError::Fault(f)) if f.kind == FaultKind::OutsideShared && f.address == 1 << 32
    ));
}

#[test]
fn reading_shared_memory_no_thread_wrote_faults() {
    let body = "
    .shared .align 4 .b8 s[256];
    mov.u32 %r6, s;
    setp.eq.u32 %p1, %r1, 5;
    @%p1 st.shared.u16 [%r6+20], %r5;
    bar.sync 0;
    ld.shared.u16 %r7, [%r6+20];
    ld.shared.u32 %r8, [%r6+20];
";
    match run(&kernel("", body), LaunchDims::linear(1, 64), 1, input) {
        Err(ExecError::Fault(f)) => {
            assert_eq!(f.kind, FaultKind::UninitializedShared);
            assert_eq!(f.thread, [0, 0, 0]);
            assert_eq!(f.access, Access::Load);
            assert!(
                f.instruction.starts_with("ld.shared.u32"),
                "{}",
                f.instruction
            );
        }
        other => panic!("{other:?}"),
    }
    // Each block starts unwritten: block 1 does not see block 0's store.
    let body = "
    .shared .align 4 .b8 s[4];
    mov.u32 %r6, s;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 st.shared.u32 [%r6], %r5;
    bar.sync 0;
    ld.shared.u32 %r7, [%r6];
";
    match run(&kernel("", body), LaunchDims::linear(2, 32), 1, input) {
        Err(ExecError::Fault(f)) => {
            assert_eq!(f.kind, FaultKind::UninitializedShared);
            assert_eq!(f.block, [1, 0, 0]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn generic_addresses_from_cvta_reach_the_shared_window() {
    // Thread i stores through a generic pointer (cvta.shared) and thread 63 - i loads it back
    // through shared space and through generic space after cvta.to.shared round trip.
    let body = "
    .shared .align 8 .b8 s[512];
    cvta.shared.u64 %rd7, s;
    mul.wide.u32 %rd8, %r1, 8;
    add.s64 %rd9, %rd7, %rd8;
    cvt.u64.u32 %rd10, %r5;
    st.u64 [%rd9], %rd10;
    atom.add.u64 %rd11, [%rd9], 1;
    bar.sync 0;
    sub.s32 %r6, 63, %r1;
    mul.wide.u32 %rd12, %r6, 8;
    cvta.to.shared.u64 %rd13, %rd7;
    add.s64 %rd14, %rd13, %rd12;
    ld.shared.u64 %out, [%rd14];
    atom.shared.add.u64 %rd15, [%rd14], 2;
";
    let out = run_both(&kernel("", body), LaunchDims::linear(3, 64), input).unwrap();
    for (i, &v) in out.iter().enumerate() {
        let mirror = (i as u32 / 64) * 64 + 63 - i as u32 % 64;
        assert_eq!(v, u64::from(input(mirror)) + 1, "thread {i}");
    }
}

#[test]
fn module_scope_shared_variables_and_vectors() {
    let globals = ".shared .align 16 .b8 table[1024];\n.shared .align 4 .u32 counter;";
    let body = "
    mov.u32 %r6, table;
    shl.b32 %r7, %r1, 4;
    add.s32 %r8, %r6, %r7;
    add.s32 %r9, %r5, 1;
    add.s32 %r10, %r5, 2;
    add.s32 %r11, %r5, 3;
    st.shared.v4.u32 [%r8], {%r5, %r9, %r10, %r11};
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra WAIT;
    st.shared.u32 [counter], 0;
WAIT:
    bar.sync 0;
    red.shared.add.u32 [counter], 1;
    bar.sync 0;
    xor.b32 %r12, %r1, 1;
    shl.b32 %r13, %r12, 4;
    add.s32 %r14, %r6, %r13;
    ld.shared.v4.u32 {%r15, %r16, %r17, %r18}, [%r14];
    ld.shared.u32 %r19, [counter];
    add.s32 %r20, %r18, %r19;
    cvt.u64.u32 %out, %r20;
";
    let out = run_both(&kernel(globals, body), LaunchDims::linear(2, 64), input).unwrap();
    for (i, &v) in out.iter().enumerate() {
        let partner = i as u32 ^ 1;
        assert_eq!(
            v,
            u64::from(input(partner).wrapping_add(3 + 64)),
            "thread {i}"
        );
    }
}

#[test]
fn bar_red_reduces_the_predicates_of_the_block() {
    let body = "
    rem.u32 %r6, %r1, 3;
    setp.eq.u32 %p1, %r6, 0;
    bar.red.popc.u32 %r7, 0, %p1;
    bar.red.and.pred %p2, 1, %p1;
    setp.lt.u32 %p3, %r1, 1000;
    bar.red.and.pred %p4, 2, %p3;
    bar.red.or.pred %p5, 3, !%p3;
    selp.u32 %r8, 1, 0, %p2;
    selp.u32 %r9, 2, 0, %p4;
    selp.u32 %r10, 4, 0, %p5;
    or.b32 %r8, %r8, %r9;
    or.b32 %r8, %r8, %r10;
    shl.b32 %r8, %r8, 16;
    or.b32 %r7, %r7, %r8;
    cvt.u64.u32 %out, %r7;
";
    for block in [64u32, 1024, 96] {
        let out = run_both(&kernel("", body), LaunchDims::linear(2, block), input).unwrap();
        let popc = u64::from(block.div_ceil(3));
        let all_below = block <= 1000;
        let expect = popc | (u64::from(all_below) << 17) | (u64::from(!all_below) << 18);
        assert!(
            out.iter().all(|&v| v == expect),
            "{block}: {:x?}",
            &out[..4]
        );
    }
}

#[test]
fn bar_arrive_lets_producers_go_on() {
    // Warp 1 produces and arrives at barrier 1 for 64 threads; warp 0 waits there and reads.
    let body = "
    .shared .align 4 .b32 s[32];
    mov.u32 %r6, s;
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra CONSUME;
    sub.s32 %r7, %r1, 32;
    shl.b32 %r8, %r7, 2;
    add.s32 %r9, %r6, %r8;
    st.shared.u32 [%r9], %r5;
    bar.arrive 1, 64;
    bra END;
CONSUME:
    bar.sync 1, 64;
    shl.b32 %r8, %r1, 2;
    add.s32 %r9, %r6, %r8;
    ld.shared.u32 %r10, [%r9];
    cvt.u64.u32 %out, %r10;
END:
";
    let out = run_both(&kernel("", body), LaunchDims::linear(3, 64), input).unwrap();
    for (i, &v) in out.iter().enumerate() {
        let lane = i as u32 % 64;
        let expect = if lane < 32 {
            u64::from(input(i as u32 + 32))
        } else {
            0
        };
        assert_eq!(v, expect, "thread {i}");
    }
}

#[test]
fn threads_that_exit_do_not_hold_up_a_barrier() {
    // The bounds-check-then-sync pattern: the threads past `n` return before the barrier.
    let body = "
    .shared .align 4 .b32 s[128];
    setp.ge.u32 %p1, %r1, 70;
    @%p1 ret;
    mov.u32 %r6, s;
    shl.b32 %r7, %r1, 2;
    add.s32 %r8, %r6, %r7;
    st.shared.u32 [%r8], %r5;
    bar.sync 0;
    sub.s32 %r9, 69, %r1;
    shl.b32 %r10, %r9, 2;
    add.s32 %r11, %r6, %r10;
    ld.shared.u32 %r12, [%r11];
    cvt.u64.u32 %out, %r12;
";
    let out = run_both(&kernel("", body), LaunchDims::linear(2, 128), input).unwrap();
    for (i, &v) in out.iter().enumerate() {
        let (block, t) = (i as u32 / 128, i as u32 % 128);
        let expect = if t < 70 {
            u64::from(input(block * 128 + 69 - t))
        } else {
            0
        };
        assert_eq!(v, expect, "thread {i}");
    }
}

#[test]
fn one_barrier_at_two_places_in_a_warp_completes() {
    // Lanes of one warp reach barrier 0 through two different instructions (sm_70 and later
    // count threads, not instructions).
    let body = "
    .shared .align 4 .b32 s[64];
    mov.u32 %r6, s;
    shl.b32 %r7, %r1, 2;
    add.s32 %r8, %r6, %r7;
    st.shared.u32 [%r8], %r5;
    and.b32 %r9, %r1, 1;
    setp.eq.u32 %p1, %r9, 0;
    @%p1 bra EVEN;
    barrier.sync 0;
    bra JOIN;
EVEN:
    barrier.sync 0;
JOIN:
    xor.b32 %r10, %r1, 17;
    shl.b32 %r11, %r10, 2;
    add.s32 %r12, %r6, %r11;
    ld.shared.u32 %r13, [%r12];
    cvt.u64.u32 %out, %r13;
";
    let out = run_both(&kernel("", body), LaunchDims::linear(2, 64), input).unwrap();
    for (i, &v) in out.iter().enumerate() {
        assert_eq!(v, u64::from(input(i as u32 ^ 17)), "thread {i}");
    }
    // `bar.sync` is aligned: the whole warp must execute the same instruction together.
    let aligned = body.replace("barrier.sync 0;", "bar.sync 0;");
    match run(&kernel("", &aligned), LaunchDims::linear(1, 64), 1, input) {
        Err(ExecError::Collective { at, reason }) => {
            assert!(reason.contains("aligned"), "{reason}");
            assert_eq!(at.thread, [1, 0, 0]);
        }
        other => panic!("{other:?}"),
    }
    let aligned = body.replace("barrier.sync 0;", "barrier.sync.aligned 0;");
    assert!(matches!(
        run(&kernel("", &aligned), LaunchDims::linear(1, 64), 1, input),
        Err(ExecError::Collective { .. })
    ));
}

#[test]
fn a_barrier_some_threads_never_reach_is_a_deadlock_error() {
    // Warp 0 waits at barrier 0, warp 1 at barrier 1: neither completes on a GPU.
    let body = "
    setp.lt.u32 %p1, %r1, 32;
    @%p1 bra FIRST;
    bar.sync 1;
    bra END;
FIRST:
    bar.sync 0;
END:
";
    for workers in [1, 4] {
        match run(&kernel("", body), LaunchDims::linear(4, 64), workers, input) {
            Err(ExecError::BarrierDeadlock { at }) => {
                assert_eq!(at.block, [0, 0, 0]);
                assert_eq!(at.thread, [0, 0, 0]);
                assert_eq!(at.instruction, "bar.sync 0;");
            }
            other => panic!("{other:?}"),
        }
    }
    // A loop around a barrier that one thread leaves early and then waits elsewhere (the
    // unaligned form: with `bar.sync` the warp splitting is already an error).
    let body = "
    mov.u32 %r6, 0;
LOOP:
    barrier.sync 0;
    add.s32 %r6, %r6, 1;
    setp.lt.u32 %p1, %r6, 3;
    setp.eq.u32 %p2, %r1, 7;
    @%p2 bra OUT;
    @%p1 bra LOOP;
OUT:
    barrier.sync 2;
";
    assert!(matches!(
        run(&kernel("", body), LaunchDims::linear(1, 128), 1, input),
        Err(ExecError::BarrierDeadlock { .. })
    ));
}

#[test]
fn barrier_misuse_is_a_typed_error() {
    for (body, reason) in [
        ("bar.sync 16;", "barrier number past 15"),
        ("bar.sync 0, 48;", "multiple of 32"),
        ("bar.sync 0, 512;", "larger than the block"),
        (
            "setp.lt.u32 %p1, %r1, 32;\n selp.u32 %r6, 64, 128, %p1;\n bar.sync 0, %r6;",
            "different thread counts",
        ),
        (
            "setp.lt.u32 %p1, %r1, 32;\n @%p1 bra A;\n bar.red.popc.u32 %r7, 0, %p1;\n bra END;\nA:\n bar.sync 0;\nEND:",
            "mixed",
        ),
    ] {
        match run(&kernel("", body), LaunchDims::linear(1, 128), 1, input) {
            Err(ExecError::Collective { reason: r, .. }) => {
                assert!(r.contains(reason), "{body}: {r}")
            }
            other => panic!("{body}: {other:?}"),
        }
    }
}

#[test]
fn shared_memory_past_the_limit_is_refused() {
    let ptx = kernel(
        ".extern .shared .align 16 .b8 dyn[];",
        "mov.u64 %rd7, dyn;\n st.shared.u32 [%rd7], %r5;",
    );
    let dims = LaunchDims::linear(1, 32).with_dynamic_shared(MAX_SHARED_BYTES as u32 + 1);
    assert!(matches!(
        run(&ptx, dims, 1, input),
        Err(ExecError::SharedTooLarge { .. })
    ));
    let dims = LaunchDims::linear(1, 32).with_dynamic_shared(MAX_SHARED_BYTES as u32);
    run(&ptx, dims, 1, input).unwrap();
    // Static declarations past the limit are refused when decoding.
    let big = kernel("", ".shared .align 4 .b8 s[300000];");
    let module = parse_module(&big).unwrap();
    assert!(decode(&big, &module, "k").is_err());
}

#[test]
fn generic_accesses_through_a_shared_name_are_refused() {
    for body in [
        ".shared .align 4 .b8 s[8];\n ld.u32 %r6, [s];",
        ".shared .align 4 .b8 s[8];\n st.global.u32 [s], %r5;",
        ".shared .align 4 .b8 s[8];\n add.u32 s, %r5, 1;",
    ] {
        let ptx = kernel("", body);
        let module = parse_module(&ptx).unwrap();
        assert!(decode(&ptx, &module, "k").is_err(), "{body}");
    }
}

#[test]
fn the_shared_window_lies_in_the_reserved_span() {
    // A generic shared address is one of the interpreter's own, never the owner's; memory lent
    // anywhere else (here high in the user range) is plain global memory.
    let ptx = kernel(
        "",
        ".shared .align 8 .b8 s[8];\n cvta.shared.u64 %out, s;\n st.u64 [%out], 0;",
    );
    let module = parse_module(&ptx).unwrap();
    let program = decode(&ptx, &module, "k").unwrap();
    let mut inp = [0u8; 4 * 32];
    let mut out = vec![0u8; 8 * 32];
    let mut high = [0u8; 64];
    let memory = Regions::new(vec![
        (IN, &mut inp[..]),
        (OUT, &mut out[..]),
        (0x6000_8000_0000, &mut high[..]),
    ]);
    let mut params = IN.to_le_bytes().to_vec();
    params.extend_from_slice(&OUT.to_le_bytes());
    run_with(
        &program,
        &params,
        LaunchDims::linear(1, 32),
        &memory,
        &RunOptions::default(),
    )
    .unwrap();
    drop(memory);
    let generic = u64::from_le_bytes(out[..8].try_into().unwrap());
    assert!(RESERVED.contains(&generic), "{generic:#x}");
}

#[test]
fn local_frames_survive_barriers_next_to_shared_memory() {
    // 256 threads are four groups: each keeps its lanes' .local frames while the others run
    // to the barrier. A thread writes its value to its frame (through .local and through a
    // generic address), writes shared memory, waits, then sums its frame and its neighbour's
    // shared slot; a module-scope .shared variable and a module .global one sit beside them.
    let globals = ".shared .align 4 .b32 total;\n.global .u32 bias = 7;";
    let body = "
    .local .align 8 .b32 mine[2];
    .shared .align 4 .b32 slots[256];
    st.local.u32 [mine], %r5;
    mov.u64 %rd7, mine;
    cvta.local.u64 %rd8, %rd7;
    add.u32 %r6, %r5, 1;
    st.u32 [%rd8+4], %r6;
    mov.u32 %r7, slots;
    shl.b32 %r8, %r1, 2;
    add.s32 %r9, %r7, %r8;
    st.shared.u32 [%r9], %r5;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra WAIT;
    ld.global.u32 %r10, [bias];
    st.shared.u32 [total], %r10;
WAIT:
    bar.sync 0;
    ld.local.u32 %r11, [mine];
    ld.u32 %r12, [%rd8+4];
    xor.b32 %r13, %r1, 255;
    shl.b32 %r14, %r13, 2;
    add.s32 %r15, %r7, %r14;
    ld.shared.u32 %r16, [%r15];
    ld.shared.u32 %r17, [total];
    add.s32 %r18, %r11, %r12;
    add.s32 %r18, %r18, %r16;
    add.s32 %r18, %r18, %r17;
    cvt.u64.u32 %out, %r18;
";
    let out = run_both(&kernel(globals, body), LaunchDims::linear(2, 256), input).unwrap();
    for (i, &v) in out.iter().enumerate() {
        let i = i as u32;
        let own = input(i);
        let mirror = input((i / 256) * 256 + (255 - i % 256));
        let want = own
            .wrapping_add(own.wrapping_add(1))
            .wrapping_add(mirror)
            .wrapping_add(7);
        assert_eq!(v, u64::from(want), "thread {i}");
    }
}
