//! The launch suite on a real GPU through the CUDA backend, plus what only CUDA can show:
//! device properties, the driver's own parameter info, and the launch rate against raw cudarc.
//!
//! Compiled only with `--features gpu-tests`; under it a device that does not open is a failure,
//! not a skip. Build here and run on the device machine with ../shared/gpu/stage-gpu-tests.
#![cfg(feature = "gpu-tests")]

mod common;

use std::ffi::{CString, c_void};
use std::time::{Duration, Instant};

use common::{fixtures, launch_suite as suite};
use jitseam::device::BackendKind;
use jitseam::launch::grid_for;
use jitseam::{Device, ParamValue};

fn cuda() -> Device {
    Device::cuda(0).unwrap_or_else(|e| panic!("gpu-tests needs CUDA device 0: {e}"))
}

#[test]
fn device_properties_are_reported() {
    let device = cuda();
    let p = device.properties();
    eprintln!(
        "device: {} (sm_{}{}), driver {}, max grid.x {}, max block.x {}",
        p.name,
        p.compute_capability.map_or(0, |c| c.0),
        p.compute_capability.map_or(0, |c| c.1),
        p.driver_version.as_deref().unwrap_or("?"),
        p.max_grid_x,
        p.max_block_x
    );
    assert_eq!(p.backend, BackendKind::Cuda);
    assert!(!p.name.is_empty());
    // The fixtures are compute_80 PTX.
    assert!(p.compute_capability.is_some_and(|c| c >= (8, 0)));
    assert!(p.max_grid_x >= 65_535 && p.max_block_x >= 256);
    assert!(p.driver_version.is_some());
    assert!(Device::cuda_count().is_ok_and(|n| n >= 1));
}

#[test]
fn driver_param_info_matches_the_verified_layout() {
    let device = cuda();
    for fixture in fixtures::all() {
        let kernel = suite::bind(&device, fixture.entry);
        let reported = kernel.bound().function().param_info().unwrap();
        let driver = device
            .properties()
            .driver_version
            .clone()
            .unwrap_or_default();
        match reported {
            // `bind` already compared them; this shows the driver really answered.
            Some(params) => assert_eq!(
                params.len(),
                kernel.loaded().layout().params().len(),
                "{}",
                fixture.entry
            ),
            None => eprintln!("driver {driver} offers no cuFuncGetParamInfo"),
        }
    }
}

launch_suite_tests!(cuda);

/// Only meaningful where launches queue (the emulator runs each launch to completion).
#[test]
fn drop_while_launches_are_queued() {
    suite::drop_while_launches_are_queued(cuda);
}

#[test]
fn ids_are_never_reused_across_reopen() {
    let first = cuda().id();
    let second = cuda().id();
    assert!(second > first);
}

/// Launches per second of the erased jitseam launch (check + marshal + backend) versus bare
/// `cudarc::driver::result::launch_kernel` with a hand-built parameter array, same kernel, same
/// grid, same (default) stream. Prints the ratio; the goal is ≥ 0.97.
///
/// Test binaries are unoptimized by default, which inflates jitseam's side (the raw side is
/// mostly driver time). For a representative number stage them optimized:
/// `CARGO_PROFILE_TEST_OPT_LEVEL=3 ../shared/gpu/stage-gpu-tests`.
#[test]
fn launch_rate_against_raw_cudarc() {
    use cudarc::driver::{CudaContext, result};

    const LAUNCHES: usize = 20_000;
    const ROUNDS: usize = 3;
    let n = 4096usize;
    let device = cuda();
    let kernel = suite::bind(&device, suite::ADD_F32);
    let stream = device.default_stream();
    let a = device.upload(&vec![1.0f32; n]).unwrap();
    let b = device.upload(&vec![2.0f32; n]).unwrap();
    let mut out = device.upload(&vec![f32::NAN; n]).unwrap();
    let no_params: &[ParamValue] = &[];
    let mut jitseam_round = || -> Duration {
        let start = Instant::now();
        for _ in 0..LAUNCHES {
            kernel
                .launch(
                    &stream,
                    &[(&a).into(), (&b).into()],
                    &mut [(&mut out).into()],
                    &[n],
                    no_params,
                )
                .unwrap();
        }
        stream.synchronize().unwrap();
        start.elapsed()
    };

    let ctx = CudaContext::new(0).unwrap();
    ctx.bind_to_thread().unwrap();
    let ptx = CString::new(fixtures::by_entry(suite::ADD_F32).ptx).unwrap();
    // SAFETY: NUL-terminated PTX that outlives the call; the context is current.
    let module = unsafe { result::module::load_data(ptx.as_ptr().cast()) }.unwrap();
    // SAFETY: `module` was just loaded and is unloaded only at the end of this test.
    let function =
        unsafe { result::module::get_function(module, CString::new(suite::ADD_F32).unwrap()) }
            .unwrap();
    let bytes = n * std::mem::size_of::<f32>();
    // SAFETY: plain allocations in the current context, freed at the end of this test.
    let (mut ra, mut rb, mut rout) = unsafe {
        (
            result::malloc_sync(bytes).unwrap(),
            result::malloc_sync(bytes).unwrap(),
            result::malloc_sync(bytes).unwrap(),
        )
    };
    let mut count = n as i64;
    let grid = grid_for(n as u64, device.properties().max_grid_x);
    let mut raw_round = || -> Duration {
        let start = Instant::now();
        for _ in 0..LAUNCHES {
            let mut params: [*mut c_void; 4] = [
                (&raw mut ra).cast(),
                (&raw mut rb).cast(),
                (&raw mut rout).cast(),
                (&raw mut count).cast(),
            ];
            // SAFETY: the function is live; the parameters are three device pointers to `n`
            // floats each and the element count, exactly the kernel's `.param` list.
            unsafe {
                result::launch_kernel(
                    function,
                    (grid.grid[0], 1, 1),
                    (grid.block[0], 1, 1),
                    0,
                    std::ptr::null_mut(),
                    &mut params,
                )
            }
            .unwrap();
        }
        ctx.synchronize().unwrap();
        start.elapsed()
    };

    // Warm both paths up, then keep each one's best round.
    jitseam_round();
    raw_round();
    let (mut best_jitseam, mut best_raw) = (Duration::MAX, Duration::MAX);
    for _ in 0..ROUNDS {
        best_jitseam = best_jitseam.min(jitseam_round());
        best_raw = best_raw.min(raw_round());
    }
    let rate = |d: Duration| LAUNCHES as f64 / d.as_secs_f64();
    let ratio = rate(best_jitseam) / rate(best_raw);
    eprintln!(
        "launch rate: jitseam {:.0}/s, raw cudarc {:.0}/s, ratio {ratio:.3} (goal >= 0.97){}",
        rate(best_jitseam),
        rate(best_raw),
        if cfg!(debug_assertions) {
            " [debug test profile: representative only if staged with CARGO_PROFILE_TEST_OPT_LEVEL=3]"
        } else {
            ""
        }
    );

    // SAFETY: every launch using them finished (`ctx.synchronize` in the last round).
    unsafe {
        result::free_sync(ra).unwrap();
        result::free_sync(rb).unwrap();
        result::free_sync(rout).unwrap();
        result::module::unload(module).unwrap();
    }
    assert!(ratio > 0.0);
    let got = stream.read(&out).unwrap();
    assert!(
        got.iter().all(|&v| v == 3.0),
        "jitseam launches computed wrong values"
    );
}
