//! Warp-level instructions against the PTX ISA's definitions: `shfl.sync` in every mode with
//! clamps, segments and out-of-range lanes, `vote.sync` and `activemask` with divergent
//! threads, `redux.sync`, `match.sync`, `bar.warp.sync`, `%laneid`; and the typed errors for
//! member threads that are not converged.

use jitseam_emu::decode;
use jitseam_emu::interp::{ExecError, LaunchDims, Regions, RunOptions, run_with};
use jitseam_ptx::parse_module;

#[path = "support/in_out.rs"]
mod in_out;
use in_out::{IN, OUT};

/// A kernel `k(in, out)` running `body` with `%r1` = `%tid.x`, `%r4` = the global linear
/// thread index, `%r5` = `in[%r4]`, `%r20` = `%laneid`; `%out` is stored at `out[%r4]`.
fn kernel(body: &str) -> String {
    format!(
        "
.version 8.0
.target sm_90
.address_size 64
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
    mov.u32 %r20, %laneid;
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

fn input(i: u32) -> u32 {
    i.wrapping_mul(2_654_435_761) >> 3
}

fn run(ptx: &str, dims: LaunchDims, workers: usize) -> Result<Vec<u64>, ExecError> {
    let threads = dims.grid.iter().chain(&dims.block).product::<u32>();
    let inp = (0..threads).flat_map(|i| input(i).to_le_bytes()).collect();
    in_out::run_in_out(&in_out::program(ptx), inp, dims, workers)
}

/// Runs on 1 and on 4 workers, which must agree.
fn run_both(body: &str, dims: LaunchDims) -> Result<Vec<u64>, ExecError> {
    let ptx = kernel(body);
    let one = run(&ptx, dims, 1);
    assert_eq!(one, run(&ptx, dims, 4), "1 worker and 4 workers differ");
    one
}

/// The ISA's `shfl.sync` pseudo-code for one lane: the source lane and the predicate.
fn shfl_model(mode: &str, lane: i64, b: u32, c: u32) -> (i64, bool) {
    let bval = i64::from(b & 0x1f);
    let cval = i64::from(c & 0x1f);
    let segmask = i64::from((c >> 8) & 0x1f);
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    let (j, p) = match mode {
        "up" => (lane - bval, lane - bval >= max_lane),
        "down" => (lane + bval, lane + bval <= max_lane),
        "bfly" => (lane ^ bval, (lane ^ bval) <= max_lane),
        _ => {
            let j = min_lane | (bval & !segmask);
            (j, j <= max_lane)
        }
    };
    (if p { j } else { lane }, p)
}

#[test]
fn shfl_follows_the_isa_in_every_mode() {
    let cases: &[(&str, u32, u32)] = &[
        ("down", 1, 0x1f),
        ("down", 5, 0x1f),
        ("down", 1, 0x0f),
        ("down", 2, 0x101f),
        ("up", 1, 0),
        ("up", 7, 0),
        ("up", 1, 0x1000),
        ("up", 3, 0x1800),
        ("bfly", 16, 0x1f),
        ("bfly", 3, 0x1f),
        ("bfly", 4, 0x101f),
        ("bfly", 8, 0x07),
        ("idx", 0, 0x1f),
        ("idx", 7, 0x1f),
        ("idx", 31, 0x1f),
        ("idx", 40, 0x1f),
        ("idx", 3, 0x101f),
        ("idx", 20, 0x0f),
        ("idx", 5, 0x1c1f),
    ];
    for &(mode, b, c) in cases {
        let body = format!(
            "shfl.sync.{mode}.b32 %r6|%p1, %r5, {b}, {c}, -1;
    selp.u32 %r7, 1, 0, %p1;
    mov.b64 %out, {{%r6, %r7}};"
        );
        let out = run_both(&body, LaunchDims::linear(2, 64)).unwrap();
        for (i, &v) in out.iter().enumerate() {
            let lane = (i % 32) as i64;
            let (j, p) = shfl_model(mode, lane, b, c);
            let source = i as i64 - lane + j;
            let expect = u64::from(input(source as u32)) | (u64::from(p) << 32);
            assert_eq!(v, expect, "shfl.{mode} b={b} c={c:#x}: thread {i}");
        }
    }
}

#[test]
fn shfl_tables_by_hand() {
    // down by 1, full warp: every lane reads the next, the last keeps its own.
    let out = run_both(
        "shfl.sync.down.b32 %r6|%p1, %r20, 1, 31, -1;\n selp.u32 %r7, 1, 0, %p1;\n mov.b64 %out, {%r6, %r7};",
        LaunchDims::linear(1, 32),
    )
    .unwrap();
    for (lane, &v) in out.iter().enumerate() {
        let (value, p) = if lane < 31 { (lane + 1, 1) } else { (31, 0) };
        assert_eq!(v, value as u64 | (p << 32), "lane {lane}");
    }
    // idx in segments of 8 (c = ((32 - 8) << 8) | 31): lane 2 of each segment to all.
    let out = run_both(
        "shfl.sync.idx.b32 %r6, %r20, 2, 0x181f, -1;\n cvt.u64.u32 %out, %r6;",
        LaunchDims::linear(1, 32),
    )
    .unwrap();
    for (lane, &v) in out.iter().enumerate() {
        assert_eq!(v, (lane as u64 / 8) * 8 + 2, "lane {lane}");
    }
    // up by 2 in segments of 16 (c = (32 - 16) << 8).
    let out = run_both(
        "shfl.sync.up.b32 %r6, %r20, 2, 0x1000, -1;\n cvt.u64.u32 %out, %r6;",
        LaunchDims::linear(1, 32),
    )
    .unwrap();
    for (lane, &v) in out.iter().enumerate() {
        let expect = if lane % 16 < 2 { lane } else { lane - 2 };
        assert_eq!(v, expect as u64, "lane {lane}");
    }
}

#[test]
fn shfl_within_a_partial_member_mask() {
    // Lanes 0..15 shuffle down by 4 with mask 0xffff; the clamp keeps the sources inside.
    let body = "
    setp.ge.u32 %p1, %r20, 16;
    @%p1 bra END;
    shfl.sync.down.b32 %r6, %r20, 4, 15, 0xffff;
    cvt.u64.u32 %out, %r6;
END:
";
    let out = run_both(body, LaunchDims::linear(1, 64)).unwrap();
    for (i, &v) in out.iter().enumerate() {
        let lane = i % 32;
        let expect = match lane {
            0..=11 => lane + 4,
            12..=15 => lane,
            _ => 0,
        };
        assert_eq!(v, expect as u64, "thread {i}");
    }
    // Without the clamp lane 12 reads lane 16, which does not take part: undefined on the GPU.
    let body = body.replace("4, 15, 0xffff", "4, 31, 0xffff");
    match run(&kernel(&body), LaunchDims::linear(1, 64), 1) {
        Err(ExecError::Collective { at, reason }) => {
            assert_eq!(at.thread, [12, 0, 0]);
            assert!(reason.contains("does not take part"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn vote_and_ballot_with_divergent_predicates() {
    let body = "
    rem.u32 %r6, %r20, 3;
    setp.eq.u32 %p1, %r6, 0;
    vote.sync.ballot.b32 %r7, %p1, -1;
    vote.sync.ballot.b32 %r8, !%p1, -1;
    vote.sync.all.pred %p2, %p1, -1;
    vote.sync.any.pred %p3, %p1, -1;
    vote.sync.uni.pred %p4, %p1, -1;
    setp.lt.u32 %p5, %r20, 100;
    vote.sync.all.pred %p6, %p5, -1;
    vote.sync.uni.pred %p7, !%p5, -1;
    selp.u32 %r9, 1, 0, %p2;
    selp.u32 %r10, 2, 0, %p3;
    selp.u32 %r11, 4, 0, %p4;
    selp.u32 %r12, 8, 0, %p6;
    selp.u32 %r13, 16, 0, %p7;
    or.b32 %r9, %r9, %r10;
    or.b32 %r9, %r9, %r11;
    or.b32 %r9, %r9, %r12;
    or.b32 %r9, %r9, %r13;
    xor.b32 %r7, %r7, %r8;
    mov.b64 %out, {%r7, %r9};
";
    let out = run_both(body, LaunchDims::linear(2, 64)).unwrap();
    let ballot = (0..32)
        .filter(|l| l % 3 == 0)
        .fold(0u64, |m, l| m | (1 << l));
    assert_eq!(ballot, 0x4924_9249);
    let expect = (ballot ^ (!ballot & 0xffff_ffff)) | ((2 | 8 | 16) << 32);
    assert!(out.iter().all(|&v| v == expect), "{:x?}", &out[..2]);
    // In a branch taken by lanes 0..9 only, with the mask of those lanes.
    let body = "
    setp.ge.u32 %p1, %r20, 10;
    @%p1 bra END;
    and.b32 %r6, %r20, 1;
    setp.eq.u32 %p2, %r6, 1;
    activemask.b32 %r7;
    vote.sync.ballot.b32 %r8, %p2, %r7;
    mov.b64 %out, {%r7, %r8};
END:
";
    let out = run_both(body, LaunchDims::linear(1, 64)).unwrap();
    for (i, &v) in out.iter().enumerate() {
        let expect = if i % 32 < 10 {
            0x3ff | (0x2aa << 32)
        } else {
            0
        };
        assert_eq!(v, expect, "thread {i}");
    }
    // The same with a full mask: lanes 10..31 are not there, which hangs a GPU.
    let body = body.replace("%p2, %r7;", "%p2, -1;");
    assert!(matches!(
        run(&kernel(&body), LaunchDims::linear(1, 64), 1),
        Err(ExecError::Collective { at, .. }) if at.thread == [0, 0, 0]
    ));
}

#[test]
fn redux_over_the_warp() {
    let body = "
    sub.s32 %r6, %r20, 10;
    redux.sync.add.u32 %r7, %r20, -1;
    redux.sync.min.s32 %r8, %r6, -1;
    redux.sync.max.s32 %r9, %r6, -1;
    redux.sync.min.u32 %r10, %r6, -1;
    redux.sync.max.u32 %r11, %r6, -1;
    or.b32 %r12, %r20, 0x100;
    redux.sync.and.b32 %r13, %r12, -1;
    shl.b32 %r14, 1, %r20;
    redux.sync.or.b32 %r15, %r14, -1;
    redux.sync.xor.b32 %r16, %r20, -1;
    mov.b64 %out, {%r8, %r9};
    setp.ne.u32 %p1, %r20, 0;
    @%p1 bra END;
    mov.b64 %out, {%r10, %r11};
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra END;
    mov.b64 %out, {%r13, %r15};
    setp.ne.u32 %p2, %r2, 0;
    @%p2 bra END;
    cvt.u64.u32 %out, %r16;
END:
";
    let out = run_both(body, LaunchDims::linear(2, 64)).unwrap();
    let pair = |lo: u32, hi: u32| u64::from(lo) | (u64::from(hi) << 32);
    for (i, &v) in out.iter().enumerate() {
        let expect = match i {
            0 => 0, // xor of 0..31
            64 => pair(0x100, u32::MAX),
            32 | 96 => pair(0, (-1i32) as u32),
            _ => pair((-10i32) as u32, 21),
        };
        assert_eq!(v, expect, "thread {i}");
    }
}

#[test]
fn match_any_and_all() {
    let body = "
    and.b32 %r6, %r20, 3;
    match.any.sync.b32 %r7, %r6, -1;
    match.all.sync.b32 %r8|%p1, %r6, -1;
    and.b32 %r9, %r20, 0;
    match.all.sync.b32 %r10|%p2, %r9, -1;
    cvt.u64.u32 %rd7, %r20;
    and.b64 %rd7, %rd7, 1;
    shl.b64 %rd7, %rd7, 40;
    match.any.sync.b64 %r11, %rd7, -1;
    selp.u32 %r12, 1, 0, %p1;
    selp.u32 %r13, 2, 0, %p2;
    or.b32 %r12, %r12, %r13;
    xor.b32 %r7, %r7, %r11;
    xor.b32 %r7, %r7, %r10;
    mov.b64 %out, {%r7, %r12};
";
    let out = run_both(body, LaunchDims::linear(1, 64)).unwrap();
    for (i, &v) in out.iter().enumerate() {
        let lane = i % 32;
        let any = 0x1111_1111u32 << (lane % 4);
        let parity = if lane % 2 == 0 {
            0x5555_5555
        } else {
            0xaaaa_aaaa
        };
        let expect = u64::from(any ^ parity ^ u32::MAX) | (2 << 32);
        assert_eq!(v, expect, "thread {i}");
    }
}

#[test]
fn warps_are_32_threads_of_a_block_in_linear_order() {
    // A 16 x 3 block: warp 0 is threads 0..31 (rows 0 and 1), warp 1 threads 32..47.
    let body = "
    mov.u32 %r6, %tid.y;
    mad.lo.s32 %r7, %r6, 16, %r1;
    mov.u32 %r8, %warpid;
    activemask.b32 %r9;
    vote.sync.ballot.b32 %r10, 1, %r9;
    bar.warp.sync %r9;
    shl.b32 %r11, %r8, 8;
    or.b32 %r11, %r11, %r20;
    mov.b64 %out, {%r11, %r10};
    mad.lo.s32 %r4, %r2, 48, %r7;
";
    let dims = LaunchDims {
        grid: [2, 1, 1],
        block: [16, 3, 1],
        dynamic_shared_bytes: 0,
    };
    let out = run_both(body, dims).unwrap();
    for (i, &v) in out.iter().enumerate() {
        let t = i % 48;
        let (warp, lane) = (t / 32, t % 32);
        let mask: u64 = if warp == 0 { 0xffff_ffff } else { 0xffff };
        assert_eq!(v, ((warp << 8) | lane) as u64 | (mask << 32), "thread {i}");
    }
}

#[test]
fn unconverged_member_threads_are_a_typed_error() {
    for body in [
        // Half the warp at a warp barrier that names all of it.
        "setp.lt.u32 %p1, %r20, 16;\n @%p1 bra END;\n bar.warp.sync -1;\nEND:",
        // A thread outside its own mask.
        "shfl.sync.idx.b32 %r6, %r5, 0, 31, 1;",
        // Threads waiting at a block barrier are not at the shuffle.
        "setp.lt.u32 %p1, %r20, 8;\n @%p1 bra S;\n bar.sync 0;\nS:\n shfl.sync.idx.b32 %r6, %r5, 0, 31, -1;\n bar.sync 0;",
    ] {
        match run(&kernel(body), LaunchDims::linear(1, 32), 1) {
            Err(ExecError::Collective { .. }) => {}
            other => panic!("{body}: {other:?}"),
        }
    }
}

/// The reduction of CUDA's samples in the form nvcc emits: every warp sums its values with
/// `shfl.sync.down`, lane 0 stores the warp's sum in shared memory, and after `bar.sync` the
/// first warp sums the warps' sums.
const WARP_REDUCE: &str = "
    .shared .align 4 .b8 _ZZ6reduceE6warps[128];
    mov.u32 %r6, %r5;
    shfl.sync.down.b32 %r7|%p1, %r6, 16, 31, -1;
    add.s32 %r6, %r6, %r7;
    shfl.sync.down.b32 %r7|%p1, %r6, 8, 31, -1;
    add.s32 %r6, %r6, %r7;
    shfl.sync.down.b32 %r7|%p1, %r6, 4, 31, -1;
    add.s32 %r6, %r6, %r7;
    shfl.sync.down.b32 %r7|%p1, %r6, 2, 31, -1;
    add.s32 %r6, %r6, %r7;
    shfl.sync.down.b32 %r7|%p1, %r6, 1, 31, -1;
    add.s32 %r6, %r6, %r7;
    shr.u32 %r8, %r1, 5;
    mov.u32 %r9, _ZZ6reduceE6warps;
    setp.ne.s32 %p2, %r20, 0;
    @%p2 bra $L__BB0_2;
    shl.b32 %r10, %r8, 2;
    add.s32 %r11, %r9, %r10;
    st.shared.u32 [%r11], %r6;
$L__BB0_2:
    bar.sync 0;
    setp.gt.u32 %p3, %r1, 31;
    @%p3 bra $L__BB0_5;
    shr.u32 %r12, %r3, 5;
    setp.ge.u32 %p4, %r20, %r12;
    mov.u32 %r13, 0;
    @%p4 bra $L__BB0_4;
    shl.b32 %r14, %r20, 2;
    add.s32 %r15, %r9, %r14;
    ld.shared.u32 %r13, [%r15];
$L__BB0_4:
    redux.sync.add.u32 %r16, %r13, -1;
    setp.ne.s32 %p5, %r1, 0;
    @%p5 bra $L__BB0_5;
    cvt.u64.u32 %out, %r16;
$L__BB0_5:
";

#[test]
fn warp_shuffles_and_shared_memory_reduce_a_block() {
    for (blocks, block) in [(4u32, 64u32), (2, 1024), (3, 256)] {
        let out = run_both(WARP_REDUCE, LaunchDims::linear(blocks, block)).unwrap();
        for b in 0..blocks {
            let expect = (b * block..(b + 1) * block).fold(0u32, |s, i| s.wrapping_add(input(i)));
            let first = (b * block) as usize;
            assert_eq!(out[first], u64::from(expect), "block {b} of {block}");
            assert!(
                out[first + 1..first + block as usize]
                    .iter()
                    .all(|&v| v == 0)
            );
        }
    }
}

#[test]
fn a_thread_spinning_on_another_group_ends_with_the_budget() {
    // Thread 0 waits for thread 64 (another group) by spinning on shared memory: the GPU would
    // run both; the emulator runs a group until it waits at a barrier, so the budget ends it.
    let body = "
    .shared .align 4 .b32 flag;
    setp.eq.u32 %p1, %r1, 0;
    @!%p1 bra SET;
    st.shared.u32 [flag], 0;
SPIN:
    ld.volatile.shared.u32 %r6, [flag];
    setp.eq.u32 %p2, %r6, 0;
    @%p2 bra SPIN;
SET:
    setp.ne.u32 %p3, %r1, 64;
    @%p3 bra END;
    st.shared.u32 [flag], 1;
END:
";
    let ptx = kernel(body);
    let module = parse_module(&ptx).unwrap();
    let program = decode(&ptx, &module, "k").unwrap();
    let mut inp = vec![0u8; 4 * 128];
    let mut out = vec![0u8; 8 * 128];
    let memory = Regions::new(vec![(IN, &mut inp[..]), (OUT, &mut out[..])]);
    let mut params = IN.to_le_bytes().to_vec();
    params.extend_from_slice(&OUT.to_le_bytes());
    let options = RunOptions {
        budget: Some(1 << 16),
        workers: 1,
        ..RunOptions::default()
    };
    assert!(matches!(
        run_with(
            &program,
            &params,
            LaunchDims::linear(1, 128),
            &memory,
            &options
        ),
        Err(ExecError::BudgetExceeded { .. })
    ));
}
