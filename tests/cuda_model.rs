//! jitseam's real CUDA backend (`Device::cuda`, through cudarc) against jitseam-cuda-model, the
//! CUDA driver model: a `libcuda.so` stand-in that runs kernels with the PTX interpreter.
//!
//! The model is a test instrument, not a GPU: it checks that the backend keeps the driver's
//! contracts (handles, stream order, events, deferred unload, parameter layout) and computes
//! through the whole path, on machines without a GPU. tests/gpu.rs on a real GPU stays the
//! ground truth. Each test runs in a child process that loads the model as its driver (see
//! tests/common/cuda_model.rs).
#![cfg(target_os = "linux")]

mod common;

use std::ffi::{CString, c_void};

use common::cuda_model::{Options, in_model, in_model_with};
use common::{fixtures, launch_suite as suite};
use cudarc::driver::sys::{CUresult, CUstream_flags};
use cudarc::driver::{CudaContext, result, sys};
use jitseam::device::BackendKind;
use jitseam::{Device, Error};

/// Device 0 of the model, through the real CUDA backend.
fn cuda() -> Device {
    Device::cuda(0).unwrap_or_else(|e| panic!("the cuda driver model did not open: {e}"))
}

/// A `#[test]` whose body runs on the model.
macro_rules! model_test {
    ($(#[$meta:meta])* fn $name:ident() $body:block) => {
        $(#[$meta])*
        #[test]
        fn $name() {
            in_model(stringify!($name), || $body);
        }
    };
}

launch_suite_tests!(cuda, via in_model);

/// Device 0 of the model, and a hold on its streams by slow launches.
fn cuda_held() -> (Device, common::hazards::Busy) {
    let device = cuda();
    let busy = common::hazards::Busy::new(&device, 1 << 16, 4);
    (device, busy)
}

// Zeroed allocations, fills, device copies and event timing through the real CUDA backend:
// `cuMemsetD8Async`, `cuMemcpyDtoDAsync`, timed events and `cuEventElapsedTime` on the model.
memory_suite_tests!(cuda_held, via in_model);

#[path = "common/custom_suite.rs"]
mod custom_suite;

// The custom ABI through the real CUDA backend: 3-D launch configs reach `cuLaunchKernel`.
custom_suite_tests!(cuda, via in_model);

#[path = "common/custom_shared_suite.rs"]
mod custom_shared_suite;

// Shared memory, barriers and shuffles through the real CUDA backend: the dynamic shared bytes
// reach `cuLaunchKernel`.
custom_shared_suite_tests!(cuda, via in_model);

#[path = "common/launch_shape_suite.rs"]
mod launch_shape_suite;

// Declared launch shapes through the real CUDA backend: a wrong block on an unverified tiled
// kernel is declined before `cuLaunchKernel` (the model would fault and poison the context).
launch_shape_suite_tests!(cuda, via in_model);

#[path = "common/guard_suite.rs"]
mod guard_suite;

// Guarded kernels through the real CUDA backend: the rewritten PTX, its hidden params and the
// fault record's copies on the driver model.
guard_suite_tests!(cuda, via in_model);

#[path = "common/real_corpus.rs"]
mod real_corpus;
#[path = "common/real_reference.rs"]
mod real_reference;

// The real-kernel corpus through the real CUDA backend: 3-D grids, dynamic shared memory and
// every operand type of the corpus reach `cuLaunchKernel`, and every output comes back through
// the driver's copies.
model_test! {
    fn the_real_kernel_corpus_matches_its_references() {
        real_corpus::run_all(&cuda(), true);
    }
}

model_test! {
    fn opens_with_the_model_properties() {
        let device = cuda();
        let p = device.properties();
        assert_eq!(p.backend, BackendKind::Cuda);
        assert!(p.name.starts_with("jitseam-cuda-model"), "{}", p.name);
        assert_eq!(p.compute_capability, Some((9, 0)));
        assert_eq!(p.driver_version.as_deref(), Some("12.9"));
        assert_eq!((p.max_grid_x, p.max_block_x), (i32::MAX as u32, 1024));
        assert_eq!(Device::cuda_count().ok(), Some(1));
        assert!(matches!(
            Device::cuda(1),
            Err(Error::NoDevice { ordinal: 1, available: 1 })
        ));
    }
}

#[test]
fn a_driver_without_devices_is_no_device() {
    let options = Options {
        env: &[("JITSEAM_CUDA_MODEL_DEVICES", "0")],
        ..Options::default()
    };
    in_model_with("a_driver_without_devices_is_no_device", &options, || {
        assert_eq!(Device::cuda_count().ok(), Some(0));
        assert!(
            matches!(
                Device::cuda(0),
                Err(Error::NoDevice {
                    ordinal: 0,
                    available: 0
                })
            ),
            "{:?}",
            Device::cuda(0)
        );
    });
}

model_test! {
    fn upload_write_and_read_round_trip() {
        let device = cuda();
        let data: Vec<f64> = (0..1000).map(|i| f64::from(i) * 0.5 - 3.0).collect();
        let mut buffer = device.upload(&data).unwrap();
        let stream = device.new_stream().unwrap();
        assert_eq!(stream.read(&buffer).unwrap(), data);
        let other: Vec<f64> = data.iter().map(|x| -x).collect();
        stream.write(&mut buffer, &other).unwrap();
        assert_eq!(device.default_stream().read(&buffer).unwrap(), other);
        let bytes = device.upload(&[7u8; 3]).unwrap();
        assert_eq!(device.default_stream().read(&bytes).unwrap(), [7u8; 3]);
        device.synchronize().unwrap();
    }
}

model_test! {
    fn a_fixture_kernel_on_a_new_stream_matches_rust() {
        let device = cuda();
        let kernel = suite::bind(&device, suite::ADD_F32);
        let n = 10_000usize;
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
        let b: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
        let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
        let mut out = device.upload(&vec![f32::NAN; n]).unwrap();
        let stream = device.new_stream().unwrap();
        kernel
            .launch(
                &stream,
                &[(&da).into(), (&db).into()],
                &mut [(&mut out).into()],
                &[n],
                &[],
            )
            .unwrap();
        let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        assert_eq!(stream.read(&out).unwrap(), want);
    }
}

model_test! {
    /// `bind` cross-checks the verified layout with `cuFuncGetParamInfo`; this shows the
    /// driver (the model) really answered, for every fixture.
    fn param_info_comes_from_the_driver() {
        let device = cuda();
        for fixture in fixtures::all() {
            let kernel = suite::bind(&device, fixture.entry);
            let reported = kernel.bound().function().param_info().unwrap();
            let layout: Vec<(usize, usize)> = kernel
                .loaded()
                .layout()
                .params()
                .iter()
                .map(|p| (p.offset, p.class.size()))
                .collect();
            assert_eq!(reported, Some(layout), "{}", fixture.entry);
        }
    }
}

model_test! {
    /// The model fails the context if a module is unloaded under queued launches, so this
    /// passing shows the backend's deferred unload (and deferred free) waited.
    fn drop_while_launches_are_queued() {
        // Small launches: the model interprets every thread, and the host still queues all
        // fifty long before the first finishes.
        suite::drop_while_launches_of_n_are_queued(cuda, 1 << 14);
    }
}

model_test! {
    /// A kernel dropped after its device and stream handles, with launches still queued, hands
    /// its module over only after that work: the harness fails the test if the model saw the
    /// module unloaded under a queued launch.
    fn a_kernel_outliving_its_device_and_stream_unloads_after_its_work() {
        let device = cuda();
        let stream = device.new_stream().unwrap();
        let n = 1usize << 14;
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let da = device.upload(&a).unwrap();
        let db = device.upload(&vec![0.5f32; n]).unwrap();
        let mut out = device.upload(&vec![f32::NAN; n]).unwrap();
        let kernel = suite::bind(&device, suite::ADD_F32);
        for _ in 0..20 {
            kernel
                .launch(
                    &stream,
                    &[(&da).into(), (&db).into()],
                    &mut [(&mut out).into()],
                    &[n],
                    &[],
                )
                .unwrap();
        }
        drop(stream);
        drop(device);
        drop(kernel);
        // Freeing synchronizes the whole device, so the launches have finished after this.
        drop(da);
        let got = out.device().default_stream().read(&out).unwrap();
        let want: Vec<f32> = a.iter().map(|x| x + 0.5).collect();
        assert_eq!(got, want);
        out.device().default_stream().synchronize().unwrap();
    }
}

model_test! {
    fn device_ids_are_never_reused_across_reopen() {
        let first = cuda().id();
        let second = cuda().id();
        assert!(second > first);
    }
}

/// Loads the add fixture through cudarc's result layer: (module, function).
fn raw_add_kernel() -> (sys::CUmodule, sys::CUfunction) {
    let ptx = CString::new(fixtures::by_entry(suite::ADD_F32).ptx).unwrap();
    // SAFETY: NUL-terminated PTX that outlives the call; the caller made a context current.
    let module = unsafe { result::module::load_data(ptx.as_ptr().cast()) }.unwrap();
    let name = CString::new(suite::ADD_F32).unwrap();
    // SAFETY: `module` was just loaded and stays loaded for the caller's test.
    let function = unsafe { result::module::get_function(module, name) }.unwrap();
    (module, function)
}

/// Launches `add(a, b, out, n)` on `stream`.
fn raw_add(function: sys::CUfunction, stream: sys::CUstream, [a, b, out]: [u64; 3], n: i64) {
    let (mut a, mut b, mut out, mut n) = (a, b, out, n);
    let mut params: [*mut c_void; 4] = [
        (&raw mut a).cast(),
        (&raw mut b).cast(),
        (&raw mut out).cast(),
        (&raw mut n).cast(),
    ];
    // SAFETY: the function is live; the parameters are three device pointers to `n` floats and
    // the element count, the kernel's `.param` list.
    unsafe { result::launch_kernel(function, (64, 1, 1), (128, 1, 1), 0, stream, &mut params) }
        .unwrap();
}

fn raw_upload(data: &[f32]) -> u64 {
    // SAFETY: a plain allocation in the current context, filled at once and freed with it.
    let ptr = unsafe { result::malloc_sync(std::mem::size_of_val(data)) }.unwrap();
    // SAFETY: `ptr` holds `data.len()` floats.
    unsafe { result::memcpy_htod_sync(ptr, data) }.unwrap();
    // The synchronous copy returns before it lands; non-blocking streams must not race it.
    result::ctx::synchronize().unwrap();
    ptr
}

model_test! {
    /// Driver-level ordering through cudarc: a consumer stream that waits on an event recorded
    /// after a producer's launches sees their result. (Without the wait the model's streams
    /// race, as a GPU's do; the model's own tests show that.)
    fn an_event_orders_two_streams() {
        let ctx = CudaContext::new(0).unwrap();
        ctx.bind_to_thread().unwrap();
        let (module, function) = raw_add_kernel();
        let n = 1usize << 16;
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let buffers = [raw_upload(&a), raw_upload(&vec![1.0; n]), raw_upload(&vec![0.0; n])];
        let copy = raw_upload(&vec![f32::NAN; n]);
        let non_blocking = || {
            result::stream::create(result::stream::StreamKind::NonBlocking).unwrap()
        };
        let (producer, consumer) = (non_blocking(), non_blocking());
        let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING).unwrap();
        for _ in 0..4 {
            raw_add(function, producer, buffers, n as i64);
        }
        // SAFETY: every handle was created above in the current context and is live; the
        // copy's ranges are `n` floats inside their allocations.
        unsafe {
            result::event::record(event, producer).unwrap();
            result::stream::wait_event(consumer, event, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
                .unwrap();
            result::memcpy_dtod_async(copy, buffers[2], n * 4, consumer).unwrap();
            result::stream::synchronize(consumer).unwrap();
        }
        // SAFETY: the event is live.
        assert!(unsafe { result::event::query(event) }.is_ok());
        let mut got = vec![0f32; n];
        // SAFETY: `copy` holds `n` floats; the legacy stream waits for nothing here (both
        // streams are non-blocking), and the consumer already finished.
        unsafe { result::memcpy_dtoh_sync(&mut got, copy) }.unwrap();
        let want: Vec<f32> = a.iter().map(|x| x + 1.0).collect();
        assert_eq!(got, want);
        // SAFETY: all work finished (the consumer waited for the producer); each handle is
        // released once.
        unsafe {
            result::stream::synchronize(producer).unwrap();
            result::event::destroy(event).unwrap();
            result::stream::destroy(producer).unwrap();
            result::stream::destroy(consumer).unwrap();
            for ptr in buffers.into_iter().chain([copy]) {
                result::free_sync(ptr).unwrap();
            }
            result::module::unload(module).unwrap();
        }
        assert_eq!(CUstream_flags::CU_STREAM_NON_BLOCKING as u32, 1);
    }
}

/// A kernel fault through cudarc: the sticky error of a real driver.
#[test]
fn a_fault_is_sticky() {
    let options = Options {
        diagnoses_expected: true,
        ..Options::default()
    };
    in_model_with("a_fault_is_sticky", &options, || {
        let ctx = CudaContext::new(0).unwrap();
        ctx.bind_to_thread().unwrap();
        let (_module, function) = raw_add_kernel();
        let buffers = [
            raw_upload(&[1.0; 16]),
            raw_upload(&[1.0; 16]),
            raw_upload(&[0.0; 16]),
        ];
        raw_add(function, std::ptr::null_mut(), buffers, 4096);
        assert_eq!(
            result::ctx::synchronize().unwrap_err().0,
            CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
        );
        // SAFETY: a plain allocation request; it fails.
        let again = unsafe { result::malloc_sync(64) };
        assert_eq!(again.unwrap_err().0, CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
    });
}

/// A device fault through jitseam's CUDA backend: the driver's code as a value, a context that
/// every later call reports as poisoned, as a real driver's is, and a fault in telemetry.
#[test]
fn a_device_fault_is_a_driver_code_that_poisons_the_context() {
    let options = Options {
        diagnoses_expected: true,
        ..Options::default()
    };
    in_model_with(
        "a_device_fault_is_a_driver_code_that_poisons_the_context",
        &options,
        || {
            let device = cuda();
            let sink = std::sync::Arc::new(jitseam::telemetry::TelemetrySink::new());
            device.attach_telemetry(sink.clone()).unwrap();
            let kernel = common::faulty::bind(&device, None);
            common::faulty::launch(&kernel, 4);
            let fault = device.synchronize().unwrap_err();
            assert!(
                matches!(
                    fault,
                    Error::Driver {
                        code: jitseam::DriverCode::ILLEGAL_ADDRESS,
                        ..
                    }
                ),
                "{fault}"
            );
            assert!(
                fault.is_context_poisoned() && !fault.is_decline(),
                "{fault}"
            );
            let again = device.alloc::<f32>(4).unwrap_err();
            assert!(again.is_context_poisoned(), "{again}");
            // In telemetry, a fault of the kernel launched there, not a dispatch; the errors
            // every later call reports add nothing.
            assert!(device.synchronize().is_err());
            let faults = sink.fault_records();
            assert_eq!(faults.len(), 1, "{faults:?}");
            assert_eq!((faults[0].reason.as_str(), faults[0].count), ("driver", 1));
            assert_eq!(faults[0].chosen.kernel_source, common::faulty::ENTRY);
            assert!(sink.dispatch_records().is_empty());
        },
    );
}

model_test! {
    /// NVRTC opens `libcuda.so.1` while it compiles — in this process, the model — and asks it
    /// for a private export table (`cuGetExportTable`): a process that runs against the model
    /// compiles CUDA C with NVRTC and launches the result on the model. Without the model's
    /// `cuGetExportTable`, NVRTC crashes inside the compile.
    fn nvrtc_compiles_in_a_process_running_against_the_model() {
        use jitseam::nvrtc::{self, CompileOptions, CompileTarget};
        if !common::nvrtc_env::ready("nvrtc_compiles_in_a_process_running_against_the_model") {
            return;
        }
        let source = r#"extern "C" __global__ void twice(const float* __restrict__ x,
                                                   float* __restrict__ y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) y[i] = 2.0f * x[i];
}"#;
        let abi = jitseam::AbiSpec::owned(
            jitseam::AbiKind::Scalar,
            vec![jitseam::ElementKind::F32],
            vec![jitseam::ElementKind::F32],
            vec![],
        );
        // PTX only: the model loads PTX text, not cubins.
        let options = CompileOptions::new(CompileTarget::compute(80));
        let device = cuda();
        let kernel = nvrtc::compile_and_load(source, &options, "twice", abi)
            .unwrap()
            .bind(&device)
            .unwrap();
        let x: Vec<f32> = (0..500).map(|i| i as f32).collect();
        let dx = device.upload(&x).unwrap();
        let mut dy = device.upload(&vec![f32::NAN; 500]).unwrap();
        let stream = device.default_stream();
        kernel
            .launch(&stream, &[(&dx).into()], &mut [(&mut dy).into()], &[500], &[])
            .unwrap();
        let y = stream.read(&dy).unwrap();
        assert!(y.iter().zip(&x).all(|(y, x)| *y == 2.0 * x), "{:?}", &y[..4]);
    }
}

model_test! {
    /// The library cudarc loaded exports every name it may ask for; an unmodelled one answers
    /// `CUDA_ERROR_NOT_SUPPORTED` instead of crashing.
    fn every_symbol_cudarc_may_resolve_is_exported() {
        assert!(Device::cuda(0).is_ok());
        // SAFETY: the driver library was found (the device opened), so `culib` does not panic.
        let library = unsafe { sys::culib() };
        let missing: Vec<&str> = jitseam_cuda_model::cudarc_symbols::CUDARC_SYMBOLS
            .iter()
            .copied()
            // SAFETY: only looked up, never called through this pointer type.
            .filter(|name| unsafe { library.get::<*const c_void>(name.as_bytes()) }.is_err())
            .collect();
        assert!(missing.is_empty(), "not exported: {missing:?}");
        let mut limit = 0usize;
        // SAFETY: `limit` is a live out-parameter; the stub touches no argument.
        let status = unsafe { sys::cuCtxGetLimit(&mut limit, sys::CUlimit::CU_LIMIT_STACK_SIZE) };
        assert_eq!(status, CUresult::CUDA_ERROR_NOT_SUPPORTED);
    }
}
