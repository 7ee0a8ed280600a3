//! Guarded launches written once, generic over the device: NVRTC kernels whose indices come from
//! memory (tests/fixtures/guards/gather.cu) go through `load()`, which guards their
//! data-dependent accesses. With in-bounds indices each matches a host reference exactly; with
//! one index out of range the next synchronizing call returns `Error::GuardFault` naming the
//! operand and the PTX line, the sentinels around every operand are unchanged, and a correct
//! launch right after succeeds. Instantiated with [`guard_suite_tests!`] for the emulator in
//! tests/guarded_launch.rs and for the CUDA driver model in tests/cuda_model.rs.
#![allow(
    dead_code,
    unreachable_pub,
    clippy::panic,
    clippy::unwrap_used,
    clippy::expect_used
)]

use jitseam::{Device, DeviceBound, DeviceBuffer, Error, In, Kernel, Out, Signature};

/// NVRTC's PTX for tests/fixtures/guards/gather.cu.
pub const PTX: &str = include_str!("../fixtures/guards/gather.ptx");

#[jitseam::kernel(abi = custom, covers = tokens * dim)]
pub fn embedding(
    #[len(vocab * dim)] table: In<f32>,
    #[len(tokens)] ids: In<i32>,
    #[len(tokens * dim)] out: Out<f32>,
    dim: i32,
    tokens: i32,
    vocab: i32,
);

#[jitseam::kernel(abi = custom, covers = n)]
pub fn scatter_add(
    #[len(n)] idx: In<i32>,
    #[len(n)] x: In<f32>,
    #[len(m)] out: Out<f32>,
    n: i32,
    m: i32,
);

#[jitseam::kernel(abi = custom, covers = rows)]
pub fn cross_entropy(
    #[len(rows * classes)] logits: In<f32>,
    #[len(rows)] target: In<i32>,
    #[len(rows)] loss: Out<f32>,
    rows: i32,
    classes: i32,
);

#[jitseam::kernel(abi = custom, covers = pages * page * dim)]
pub fn paged_gather(
    #[len(blocks * page * dim)] cache: In<f32>,
    #[len(pages)] block_table: In<i32>,
    #[len(pages * page * dim)] out: Out<f32>,
    page: i32,
    dim: i32,
    pages: i32,
    blocks: i32,
);

/// Binds `K` from [`PTX`] on `device` through `load()`, which guards what it cannot prove.
pub fn bind<K: Signature>(device: &Device) -> Kernel<K, DeviceBound> {
    let loaded = Kernel::<K, _>::describe_typed(K::ptx_artifact(PTX))
        .unwrap()
        .load()
        .unwrap_or_else(|e| panic!("load: {}", e.error));
    assert!(
        loaded.loaded().guarded().is_some(),
        "{} is proven without guards: the suite means to test guards",
        loaded.entry()
    );
    loaded.bind(device).unwrap()
}

/// Sentinel elements after every operand's declared extent: the buffers are longer than the
/// kernel's extents (which the custom ABI allows), so an index just past an extent lands inside
/// the buffer, where only the guard's limit stops it; one before the start lands outside.
pub const PAD: usize = 16;
const SENTINEL: f32 = -7777.0;
const SENTINEL_I: i32 = -7777;

/// A buffer of `data` followed by [`PAD`] sentinels.
fn padded<T: jitseam::Element>(device: &Device, data: &[T], sentinel: T) -> DeviceBuffer<T> {
    let mut all = data.to_vec();
    all.extend(std::iter::repeat_n(sentinel, PAD));
    device.upload(&all).unwrap()
}

/// The first `len` elements of `buffer`, after checking that its sentinels are unchanged.
fn contents<T: jitseam::Element + PartialEq + std::fmt::Debug>(
    device: &Device,
    buffer: &DeviceBuffer<T>,
    len: usize,
    sentinel: T,
) -> Vec<T> {
    let all = device.default_stream().read(buffer).unwrap();
    assert!(
        all[len..].iter().all(|v| *v == sentinel),
        "sentinels after the extent: {:?}",
        &all[len..]
    );
    all[..len].to_vec()
}

fn floats(len: usize, seed: u32) -> Vec<f32> {
    (0..len)
        .map(|i| ((i as u32 * 37 + seed * 11) % 101) as f32 * 0.125 - 3.0)
        .collect()
}

#[track_caller]
fn guard_fault(result: Result<(), Error>, operand: &str) -> jitseam::error::GuardFault {
    match result {
        Err(Error::GuardFault(fault)) => {
            assert_eq!(fault.operand, operand, "{fault}");
            assert!(fault.line > 0, "{fault}");
            *fault
        }
        other => panic!("expected a guard fault through `{operand}`, got {other:?}"),
    }
}

/// The PTX line of the first guarded access through `operand` of `K`.
fn guarded_line<K: Signature>(operand: &str) -> u32 {
    let loaded = Kernel::<K, _>::describe_typed(K::ptx_artifact(PTX))
        .unwrap()
        .load()
        .unwrap();
    let guarded = loaded.loaded().guarded().unwrap();
    guarded
        .table()
        .sites
        .iter()
        .find(|s| s.operand == operand)
        .unwrap_or_else(|| panic!("no guard through `{operand}`: {:?}", guarded.table()))
        .line
}

pub fn embedding_lookup(device: &Device) {
    let kernel = bind::<Embedding>(device);
    let (vocab, dim, tokens) = (50usize, 24usize, 37usize);
    let table_data = floats(vocab * dim, 1);
    let ids_data: Vec<i32> = (0..tokens).map(|t| ((t * 13 + 5) % vocab) as i32).collect();
    let table = padded(device, &table_data, SENTINEL);
    let stream = device.default_stream();
    let run = |ids_data: &[i32]| {
        let ids = padded(device, ids_data, SENTINEL_I);
        let mut out = padded(device, &vec![f32::NAN; tokens * dim], SENTINEL);
        kernel
            .launch(
                &stream,
                Embedding::args(
                    &table,
                    &ids,
                    &mut out,
                    dim as i32,
                    tokens as i32,
                    vocab as i32,
                ),
            )
            .unwrap();
        let synced = stream.synchronize();
        (synced, contents(device, &out, tokens * dim, SENTINEL))
    };
    let (synced, got) = run(&ids_data);
    synced.unwrap();
    for i in 0..tokens * dim {
        let want = table_data[ids_data[i / dim] as usize * dim + i % dim];
        assert_eq!(got[i].to_bits(), want.to_bits(), "out[{i}]");
    }
    for (token, index) in [(20usize, vocab as i32), (3, -1)] {
        let mut bad = ids_data.clone();
        bad[token] = index;
        let (synced, got) = run(&bad);
        let fault = guard_fault(synced, "table");
        assert_eq!(fault.line, guarded_line::<Embedding>("table"));
        assert_eq!(fault.limit, (vocab * dim) as u64, "{fault}");
        let i = u64::from(fault.block[0]) * 256 + u64::from(fault.thread[0]);
        assert_eq!(i / dim as u64, token as u64, "{fault}");
        let element = i64::from(index) * dim as i64 + (i % dim as u64) as i64;
        assert_eq!(fault.offset, (element * 4) as u64, "{fault}");
        for i in 0..tokens * dim {
            let want = if i / dim == token {
                0.0
            } else {
                table_data[bad[i / dim] as usize * dim + i % dim]
            };
            assert_eq!(got[i].to_bits(), want.to_bits(), "out[{i}] after the fault");
        }
        assert_eq!(contents(device, &table, vocab * dim, SENTINEL), table_data);
        // The device is usable, and the next launch reports nothing.
        let (synced, _) = run(&ids_data);
        synced.unwrap();
    }
}

/// One `#[test]` per suite test, each opening its device with `$open` (and running its body
/// through `$run`: the CUDA driver model runs it in a child process).
#[macro_export]
macro_rules! guard_suite_tests {
    ($open:path) => {
        $crate::guard_suite_tests!($open, via $crate::guard_suite::run_here);
    };
    ($open:path, via $run:path) => {
        $crate::guard_suite_tests!(@each $open, $run; embedding_lookup);
    };
    (@each $open:path, $run:path; $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            $run(stringify!($name), || guard_suite::$name(&$open()));
        }
    )*};
}

/// Runs a suite test in this process (the default for [`guard_suite_tests!`]).
pub fn run_here(_test: &str, body: impl FnOnce()) {
    body();
}
