//! `atom` and `red` on global memory, with 64 and 1024 threads contending for one word on
//! several workers, checked against the PTX ISA's definitions of each operation.

use jitseam_emu::decode;
use jitseam_emu::interp::{
    ExecError, FaultKind, LaunchDims, Region, Regions, RunOptions, run_with,
};
use jitseam_ptx::parse_module;

/// Every thread runs `body` with `%rd1` = the address of word 0 of `buf`, `%r1` = its linear
/// thread index; `%out` (b64) is stored at `out[thread]`.
fn launch(body: &str, buf: &mut [u8], threads: u32, block: u32) -> Vec<u64> {
    let ptx = format!(
        "
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_buf, .param .u64 k_out)
{{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .reg .b64 %out;
    .reg .f32 %f<4>;
    .reg .f64 %d<4>;
    ld.param.u64 %rd1, [k_buf];
    ld.param.u64 %rd2, [k_out];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r1, %r2, %r3, %r4;
    mov.u64 %out, 0;
    {body}
    mul.wide.u32 %rd3, %r1, 8;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u64 [%rd4], %out;
}}
"
    );
    let module = parse_module(&ptx).unwrap();
    let program = decode(&ptx, &module, "k").unwrap_or_else(|e| panic!("{e}"));
    let mut out = vec![0u8; 8 * threads as usize];
    {
        let memory = Regions::new(vec![(0x10_0000, buf), (0x80_0000, &mut out[..])]);
        let mut params = 0x10_0000u64.to_le_bytes().to_vec();
        params.extend_from_slice(&0x80_0000u64.to_le_bytes());
        let options = RunOptions {
            workers: 4,
            ..RunOptions::default()
        };
        run_with(
            &program,
            &params,
            LaunchDims::linear(threads / block, block),
            &memory,
            &options,
        )
        .unwrap();
    }
    out.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn word32(buf: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(buf[4 * i..4 * i + 4].try_into().unwrap())
}

#[test]
fn add_returns_distinct_old_values() {
    for (threads, block) in [(64, 64), (1024, 1024), (4096, 256)] {
        let mut buf = vec![0u8; 16];
        let olds = launch(
            "atom.global.add.u32 %r5, [%rd1], 1;\n cvt.u64.u32 %out, %r5;\n red.global.add.u32 [%rd1+4], 2;",
            &mut buf,
            threads,
            block,
        );
        assert_eq!(word32(&buf, 0), threads);
        assert_eq!(word32(&buf, 1), 2 * threads);
        let mut sorted = olds.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..u64::from(threads)).collect::<Vec<_>>());
    }
}

#[test]
fn min_max_and_bit_operations() {
    let mut buf = vec![0u8; 32];
    buf[0..4].copy_from_slice(&1000u32.to_le_bytes()); // min (signed)
    buf[4..8].copy_from_slice(&0u32.to_le_bytes()); // max (unsigned)
    buf[8..12].copy_from_slice(&u32::MAX.to_le_bytes()); // and
    launch(
        "sub.s32 %r5, 500, %r1;\n atom.global.min.s32 %r6, [%rd1], %r5;\n atom.global.max.u32 %r6, [%rd1+4], %r1;\n shl.b32 %r7, 1, %r4;\n not.b32 %r7, %r7;\n atom.global.and.b32 %r6, [%rd1+8], %r7;\n red.global.or.b32 [%rd1+12], 5;\n atom.global.xor.b32 %r6, [%rd1+16], 1;",
        &mut buf,
        1024,
        32,
    );
    assert_eq!(word32(&buf, 0) as i32, 500 - 1023);
    assert_eq!(word32(&buf, 1), 1023);
    assert_eq!(word32(&buf, 2), 0); // every bit cleared by one of the 32 lanes
    assert_eq!(word32(&buf, 3), 5);
    assert_eq!(word32(&buf, 4), 0); // 1024 flips
}

#[test]
fn inc_and_dec_wrap_as_defined() {
    // inc: old >= b ? 0 : old + 1, with b = 9: 100 increments from 0 end at 100 % 10.
    // dec: old == 0 || old > b ? b : old - 1, with b = 9.
    let mut buf = vec![0u8; 8];
    launch(
        "atom.global.inc.u32 %r5, [%rd1], 9;\n atom.global.dec.u32 %r6, [%rd1+4], 9;",
        &mut buf,
        100,
        100,
    );
    assert_eq!(word32(&buf, 0), 0);
    // From 0: 9 (wrap), then 8 … 0, 9, …: after 100 steps 9 - ((100 - 1) % 10) = 0.
    assert_eq!(word32(&buf, 1), 0);
    let mut buf = vec![0u8; 8];
    buf[0..4].copy_from_slice(&50u32.to_le_bytes());
    buf[4..8].copy_from_slice(&50u32.to_le_bytes());
    launch(
        "atom.global.inc.u32 %r5, [%rd1], 9;\n atom.global.dec.u32 %r6, [%rd1+4], 9;",
        &mut buf,
        1,
        1,
    );
    assert_eq!(word32(&buf, 0), 0); // 50 >= 9
    assert_eq!(word32(&buf, 1), 9); // 50 > 9
}

#[test]
fn cas_and_exch() {
    // Only the thread that sees 0 wins the cas.
    let mut buf = vec![0u8; 16];
    let olds = launch(
        "add.u32 %r5, %r1, 1;\n atom.global.cas.b32 %r6, [%rd1], 0, %r5;\n cvt.u64.u32 %out, %r6;\n atom.global.exch.b64 %rd5, [%rd1+8], 7;",
        &mut buf,
        64,
        64,
    );
    let winner = word32(&buf, 0);
    assert!((1..=64).contains(&winner));
    assert_eq!(olds.iter().filter(|&&v| v == 0).count(), 1);
    assert_eq!(u64::from_le_bytes(buf[8..16].try_into().unwrap()), 7);
}

#[test]
fn float_adds() {
    let mut buf = vec![0u8; 16];
    launch(
        "atom.global.add.f32 %f1, [%rd1], 0f3F000000;\n atom.global.add.f64 %d1, [%rd1+8], 0d3FF0000000000000;",
        &mut buf,
        1024,
        256,
    );
    assert_eq!(f32::from_le_bytes(buf[0..4].try_into().unwrap()), 512.0);
    assert_eq!(f64::from_le_bytes(buf[8..16].try_into().unwrap()), 1024.0);
    // Subnormals are flushed by atom.add.f32: 0 + 2^-140 stays 0.
    let mut buf = vec![0u8; 16];
    launch("red.global.add.f32 [%rd1], 0f00010000;", &mut buf, 1, 1);
    assert_eq!(f32::from_le_bytes(buf[0..4].try_into().unwrap()), 0.0);
}

#[test]
fn an_atomic_on_an_input_faults() {
    let ptx = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_buf)
{
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [k_buf];
    red.global.add.u32 [%rd1], 1;
}
";
    let module = parse_module(ptx).unwrap();
    let program = decode(ptx, &module, "k").unwrap();
    let input = [0u8; 4];
    let memory = Regions::from_regions(vec![Region::read_only(0x1000, &input)]);
    let err = run_with(
        &program,
        &0x1000u64.to_le_bytes(),
        LaunchDims::linear(1, 1),
        &memory,
        &RunOptions::default(),
    )
    .unwrap_err();
    let ExecError::Fault(f) = &err else {
        panic!("{err}")
    };
    assert_eq!(f.kind, FaultKind::WriteToInput);
}
