//! Guarded launches written once, generic over the device: NVRTC kernels whose indices come from
//! memory (tests/fixtures/guards/gather.cu) go through `load()`, which guards their
//! data-dependent accesses (global, of any width, and local). With in-bounds indices each matches a host reference exactly; with
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

#[jitseam::kernel(abi = custom, covers = n)]
pub fn local_pick(#[len(n)] idx: In<i32>, #[len(n)] x: In<f32>, #[len(n)] out: Out<f32>, n: i32);

#[jitseam::kernel(abi = custom, covers = n)]
pub fn wide_gather(
    #[len(m)] x: In<f32>,
    #[len(n)] idx: In<i32>,
    #[len(n)] out: Out<[f32; 4]>,
    n: i32,
    m: i32,
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

/// The PTX lines of the guarded accesses through `operand` of `K`.
fn guarded_lines<K: Signature>(operand: &str) -> Vec<u32> {
    let loaded = Kernel::<K, _>::describe_typed(K::ptx_artifact(PTX))
        .unwrap()
        .load()
        .unwrap();
    let guarded = loaded.loaded().guarded().unwrap();
    let lines: Vec<u32> = guarded
        .table()
        .sites
        .iter()
        .filter(|s| s.operand == operand)
        .map(|s| s.line)
        .collect();
    assert!(
        !lines.is_empty(),
        "no guard through `{operand}`: {:?}",
        guarded.table()
    );
    lines
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
        assert!(
            guarded_lines::<Embedding>("table").contains(&fault.line),
            "{fault}"
        );
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

pub fn scatter_add_atomics(device: &Device) {
    let kernel = bind::<ScatterAdd>(device);
    let (n, m) = (300usize, 40usize);
    let x_data = floats(n, 2);
    let x = padded(device, &x_data, SENTINEL);
    let stream = device.default_stream();
    let run = |idx_data: &[i32]| {
        let idx = padded(device, idx_data, SENTINEL_I);
        let mut out = padded(device, &vec![0.0f32; m], SENTINEL);
        kernel
            .launch(
                &stream,
                ScatterAdd::args(&idx, &x, &mut out, n as i32, m as i32),
            )
            .unwrap();
        let synced = stream.synchronize();
        (synced, contents(device, &out, m, SENTINEL))
    };
    // Sums of multiples of 1/8 well inside f32's exact range: the order of the atomics does
    // not change them.
    let idx_data: Vec<i32> = (0..n).map(|i| ((i * 7 + 1) % m) as i32).collect();
    let reference = |idx: &[i32]| {
        let mut want = vec![0.0f32; m];
        for (i, &j) in idx.iter().enumerate() {
            if let Some(w) = usize::try_from(j).ok().and_then(|j| want.get_mut(j)) {
                *w += x_data[i];
            }
        }
        want
    };
    let (synced, got) = run(&idx_data);
    synced.unwrap();
    assert_eq!(got, reference(&idx_data));
    let mut bad = idx_data.clone();
    bad[123] = m as i32;
    let (synced, got) = run(&bad);
    let fault = guard_fault(synced, "out");
    assert!(
        guarded_lines::<ScatterAdd>("out").contains(&fault.line),
        "{fault}"
    );
    assert_eq!(
        (
            fault.block[0] * 256 + fault.thread[0],
            fault.offset,
            fault.limit
        ),
        (123, (m * 4) as u64, m as u64)
    );
    assert_eq!(got, reference(&bad), "every other element is added");
    let (synced, got) = run(&idx_data);
    synced.unwrap();
    assert_eq!(got, reference(&idx_data));
}

pub fn cross_entropy_targets(device: &Device) {
    let kernel = bind::<CrossEntropy>(device);
    let (rows, classes) = (33usize, 10usize);
    let logits_data = floats(rows * classes, 3);
    let logits = padded(device, &logits_data, SENTINEL);
    let stream = device.default_stream();
    let run = |target_data: &[i32]| {
        let target = padded(device, target_data, SENTINEL_I);
        let mut loss = padded(device, &vec![f32::NAN; rows], SENTINEL);
        kernel
            .launch(
                &stream,
                CrossEntropy::args(&logits, &target, &mut loss, rows as i32, classes as i32),
            )
            .unwrap();
        let synced = stream.synchronize();
        (synced, contents(device, &loss, rows, SENTINEL))
    };
    let target_data: Vec<i32> = (0..rows).map(|r| ((r * 3 + 2) % classes) as i32).collect();
    let (synced, good) = run(&target_data);
    synced.unwrap();
    // The picked logit is exact; the log-sum-exp beside it is the device's `__expf`/`__logf`.
    for r in 0..rows {
        let row = &logits_data[r * classes..(r + 1) * classes];
        let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let lse = m + row.iter().map(|v| (v - m).exp()).sum::<f32>().ln();
        let want = lse - row[target_data[r] as usize];
        assert!(
            (good[r] - want).abs() < 1e-4,
            "loss[{r}] = {} vs {want}",
            good[r]
        );
    }
    let mut bad = target_data.clone();
    bad[32] = (classes * 2) as i32;
    let (synced, got) = run(&bad);
    let fault = guard_fault(synced, "logits");
    assert!(
        guarded_lines::<CrossEntropy>("logits").contains(&fault.line),
        "{fault}"
    );
    assert_eq!(
        fault.offset,
        ((32 * classes + 2 * classes) * 4) as u64,
        "{fault}"
    );
    for r in 0..rows {
        if r == 32 {
            // The guarded load read 0: the loss is the bare log-sum-exp.
            assert_eq!(
                got[r].to_bits(),
                (good[r] + logits_data[r * classes + target_data[r] as usize]).to_bits(),
                "loss[{r}]"
            );
        } else {
            assert_eq!(got[r].to_bits(), good[r].to_bits(), "loss[{r}]");
        }
    }
    let (synced, again) = run(&target_data);
    synced.unwrap();
    assert_eq!(again, good);
}

pub fn paged_gather_block_table(device: &Device) {
    let kernel = bind::<PagedGather>(device);
    let (page, dim, pages, blocks) = (4usize, 8usize, 6usize, 9usize);
    let cache_data = floats(blocks * page * dim, 4);
    let cache = padded(device, &cache_data, SENTINEL);
    let stream = device.default_stream();
    let total = pages * page * dim;
    let run = |table_data: &[i32]| {
        let table = padded(device, table_data, SENTINEL_I);
        let mut out = padded(device, &vec![f32::NAN; total], SENTINEL);
        kernel
            .launch(
                &stream,
                PagedGather::args(
                    &cache,
                    &table,
                    &mut out,
                    page as i32,
                    dim as i32,
                    pages as i32,
                    blocks as i32,
                ),
            )
            .unwrap();
        let synced = stream.synchronize();
        (synced, contents(device, &out, total, SENTINEL))
    };
    let reference = |table: &[i32], skip: Option<usize>| -> Vec<f32> {
        (0..total)
            .map(|i| {
                let (t, d) = (i / dim, i % dim);
                let (p, s) = (t / page, t % page);
                if Some(p) == skip {
                    0.0
                } else {
                    cache_data[(table[p] as usize * page + s) * dim + d]
                }
            })
            .collect()
    };
    let table_data = vec![3, 0, 8, 5, 1, 7];
    let (synced, got) = run(&table_data);
    synced.unwrap();
    assert_eq!(got, reference(&table_data, None));
    let mut bad = table_data.clone();
    bad[4] = blocks as i32;
    let (synced, got) = run(&bad);
    let fault = guard_fault(synced, "cache");
    assert!(
        guarded_lines::<PagedGather>("cache").contains(&fault.line),
        "{fault}"
    );
    assert_eq!(fault.limit, (blocks * page * dim) as u64, "{fault}");
    assert_eq!(got, reference(&bad, Some(4)));
    assert_eq!(
        contents(device, &cache, blocks * page * dim, SENTINEL),
        cache_data
    );
    let (synced, got) = run(&table_data);
    synced.unwrap();
    assert_eq!(got, reference(&table_data, None));
}

/// A lookup in the thread's own `.local` frame at a loaded index: the frame's stores are
/// proven, the load is guarded against the frame's 8 words.
pub fn local_frame_lookup(device: &Device) {
    let kernel = bind::<LocalPick>(device);
    let guarded = Kernel::<LocalPick, _>::describe_typed(LocalPick::ptx_artifact(PTX))
        .unwrap()
        .load()
        .unwrap();
    let sites = &guarded.loaded().guarded().unwrap().table().sites;
    assert_eq!(
        sites.len(),
        1,
        "only the frame's load is guarded: {sites:?}"
    );
    let (frame, line) = (sites[0].operand.clone(), sites[0].line);
    assert!(frame.starts_with("__local_depot"), "{frame}");
    let n = 300usize;
    let x_data = floats(n, 5);
    let x = padded(device, &x_data, SENTINEL);
    let stream = device.default_stream();
    let run = |idx_data: &[i32]| {
        let idx = padded(device, idx_data, SENTINEL_I);
        let mut out = padded(device, &vec![f32::NAN; n], SENTINEL);
        kernel
            .launch(&stream, LocalPick::args(&idx, &x, &mut out, n as i32))
            .unwrap();
        let synced = stream.synchronize();
        (synced, contents(device, &out, n, SENTINEL))
    };
    let reference = |idx: &[i32], skip: Option<usize>| -> Vec<f32> {
        (0..n)
            .map(|i| match skip {
                Some(s) if s == i => 0.0,
                _ => x_data[i] * (idx[i] + 1) as f32,
            })
            .collect()
    };
    let idx_data: Vec<i32> = (0..n).map(|i| ((i * 5 + 3) % 8) as i32).collect();
    let (synced, got) = run(&idx_data);
    synced.unwrap();
    assert_eq!(got, reference(&idx_data, None));
    for (i, index) in [(77usize, 8i32), (299, -1), (5, 1 << 20)] {
        let mut bad = idx_data.clone();
        bad[i] = index;
        let (synced, got) = run(&bad);
        let fault = guard_fault(synced, &frame);
        assert_eq!(fault.line, line, "{fault}");
        assert_eq!((fault.limit, fault.bytes), (8, 4), "{fault}");
        assert_eq!(fault.block[0] * 256 + fault.thread[0], i as u32, "{fault}");
        assert_eq!(fault.offset, (i64::from(index) * 4) as u64, "{fault}");
        assert_eq!(got, reference(&bad, Some(i)), "the guarded load read 0");
        let (synced, got) = run(&idx_data);
        synced.unwrap();
        assert_eq!(got, reference(&idx_data, None));
    }
}

/// A `float4` load of the `f32` pointer `x` at a loaded index, guarded in 16-byte slots of
/// `x`'s `m` elements: past the extent by half a slot or a whole one, before it, or off a slot
/// (misaligned), the load does not happen.
pub fn wide_gather_slots(device: &Device) {
    let kernel = bind::<WideGather>(device);
    let (n, m) = (70usize, 40usize);
    let x_data = floats(m, 6);
    let x = padded(device, &x_data, SENTINEL);
    let stream = device.default_stream();
    let run = |idx_data: &[i32]| {
        let idx = padded(device, idx_data, SENTINEL_I);
        let mut out = padded(device, &vec![f32::NAN; 4 * n], SENTINEL);
        kernel
            .launch(
                &stream,
                WideGather::args(&x, &idx, &mut out, n as i32, m as i32),
            )
            .unwrap();
        let synced = stream.synchronize();
        (synced, contents(device, &out, 4 * n, SENTINEL))
    };
    let reference = |idx: &[i32], skip: Option<usize>| -> Vec<f32> {
        (0..4 * n)
            .map(|e| match skip {
                Some(s) if s == e / 4 => 0.0,
                _ => x_data[idx[e / 4] as usize + e % 4],
            })
            .collect()
    };
    let idx_data: Vec<i32> = (0..n).map(|i| ((i * 3 % 10) * 4) as i32).collect();
    let (synced, got) = run(&idx_data);
    synced.unwrap();
    assert_eq!(got, reference(&idx_data, None));
    for (i, index) in [(11usize, m as i32 - 2), (69, m as i32), (0, -4), (33, 1)] {
        let mut bad = idx_data.clone();
        bad[i] = index;
        let (synced, got) = run(&bad);
        let fault = guard_fault(synced, "x");
        assert!(
            guarded_lines::<WideGather>("x").contains(&fault.line),
            "{fault}"
        );
        assert_eq!((fault.bytes, fault.limit), (16, (m / 4) as u64), "{fault}");
        assert_eq!(fault.block[0] * 256 + fault.thread[0], i as u32, "{fault}");
        assert_eq!(fault.offset, (i64::from(index) * 4) as u64, "{fault}");
        assert_eq!(got, reference(&bad, Some(i)), "the guarded load read 0");
        assert_eq!(contents(device, &x, m, SENTINEL), x_data);
    }
    let (synced, got) = run(&idx_data);
    synced.unwrap();
    assert_eq!(got, reference(&idx_data, None));
}

/// `load_proven()` declines a kernel that `load()` guards, naming the guarded line.
pub fn load_proven_declines_guards(_device: &Device) {
    let mut lines = guarded_lines::<Embedding>("table");
    lines.extend(guarded_lines::<Embedding>("ids"));
    let refused = Kernel::<Embedding, _>::describe_typed(Embedding::ptx_artifact(PTX))
        .unwrap()
        .load_proven()
        .unwrap_err();
    match refused.error {
        Error::BodyRejected { rejection, .. } => {
            assert!(
                lines.contains(&rejection.line),
                "{rejection}: guarded {lines:?}"
            )
        }
        other => panic!("expected a body rejection, got {other}"),
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
        $crate::guard_suite_tests!(@each $open, $run;
            embedding_lookup, scatter_add_atomics, cross_entropy_targets,
            paged_gather_block_table, local_frame_lookup, wide_gather_slots,
            load_proven_declines_guards,
        );
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
