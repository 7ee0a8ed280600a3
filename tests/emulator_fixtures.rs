//! The emulator device: every NVRTC fixture through the whole path (the generic launch suite),
//! and what only the emulator can show — memory faults on raw packets, refusals at bind, and
//! geometry independence of grid-stride kernels.

mod common;

use std::sync::Arc;

use common::launch_suite;
use jitseam::device::{Backend, BackendKind, EmulatorBackend, EmulatorConfig, Geometry, ViewDesc};
use jitseam::launch::{check, marshal};
use jitseam::{AbiKind, AbiSpec, Artifact, Device, ElementKind, Error, Kernel};
use jitseam_emu::interp::{Access, FaultKind};
use proptest::prelude::*;

launch_suite_tests!(Device::emulator);

/// An emulator device together with its backend, for raw launches.
fn emulator() -> (Device, Arc<EmulatorBackend>) {
    let backend = Arc::new(EmulatorBackend::new());
    (Device::with_backend(backend.clone()), backend)
}

const ADD_F32: &str = "baracuda_gen_add_f32_scalar";
const ADD_F32_V4: &str = "baracuda_gen_add_f32_co_v4";

/// A description claiming `claimed` f32 elements at `base`, whatever is really there.
fn claim(device: &Device, base: u64, claimed: usize) -> ViewDesc {
    ViewDesc::contiguous(device.id(), ElementKind::F32, base, claimed, 0, claimed)
}

#[test]
fn raw_packet_with_n_beyond_the_buffers_is_caught_out_of_bounds() {
    let (device, backend) = emulator();
    let k = launch_suite::bind(&device, ADD_F32);
    let a = device.upload(&[1.0f32; 100]).unwrap();
    let b = device.upload(&[2.0f32; 100]).unwrap();
    let out = device.upload(&[0.0f32; 100]).unwrap();
    // The descriptions lie: 1000 elements each. `check` believes them; the packet says n = 1000.
    let ins = [
        claim(&device, a.address(), 1000),
        claim(&device, b.address(), 1000),
    ];
    let outs = [claim(&device, out.address(), 1000)];
    let checked = check(k.facts(), device.id(), &ins, &outs, &[1000], &[]).unwrap();
    let packet = marshal(&checked);
    let stream = backend.default_stream();
    // SAFETY: the packet breaks the trait's contract on purpose (its pointers address 100
    // elements, the count says 1000). On the emulator nothing host-unsafe can happen: every
    // access the kernel makes is checked against the emulator's own allocation table, and an
    // access outside it is refused before any byte is read or written.
    let queued =
        unsafe { backend.launch(k.bound().function(), &*stream, checked.geometry(), &packet) };
    assert!(queued.is_ok(), "{queued:?}");
    // Launches are asynchronous: the fault is reported by the stream's next synchronize.
    match backend.synchronize(&*stream) {
        Err(ref e @ Error::MemoryFault(ref fault)) => {
            assert_eq!(fault.entry, ADD_F32);
            assert_eq!(fault.kind, FaultKind::OutOfBounds);
            // Thread 100 of block 0 is the first to go past: it loads b[100] first.
            assert_eq!((fault.block, fault.thread), (0, 100));
            assert_eq!(fault.access, Access::Load);
            assert_eq!(fault.address, b.address() + 400);
            assert_eq!(fault.nearest, Some((b.address(), 400)));
            assert!(
                fault.instruction.starts_with("ld.global.nc.f32"),
                "{}",
                fault.instruction
            );
            assert!(fault.line > 0);
            assert!(!e.is_decline());
            let message = e.to_string();
            assert!(message.contains("out of bounds 4-byte load"), "{message}");
        }
        other => panic!("expected a memory fault, got {other:?}"),
    }
    // Threads run in lockstep groups of `LANES` (64): the group of threads 0..64 finished and
    // wrote its elements; the group of threads 64..128 stopped at its first load of `b`, before
    // any of its lanes stored, so nothing from element 64 on was written.
    assert_eq!(jitseam_emu::interp::LANES, 64);
    let got = device.default_stream().read(&out).unwrap();
    assert_eq!(&got[..64], &[3.0f32; 64][..]);
    assert_eq!(&got[64..], &[0.0f32; 36][..]);
}

#[test]
fn float4_access_at_a_4_byte_aligned_address_is_misaligned() {
    let (device, backend) = emulator();
    let scalar = launch_suite::bind(&device, ADD_F32);
    let v4 = launch_suite::bind(&device, ADD_F32_V4);
    let a = device.upload(&[1.0f32; 12]).unwrap();
    let b = device.upload(&[2.0f32; 8]).unwrap();
    let out = device.upload(&[0.0f32; 8]).unwrap();
    // `check` refuses a misaligned view for the vectorized kernel, so the packet is marshaled
    // for the scalar kernel, whose layout is the same four 64-bit words, and given to the v4
    // function: `a` starts 4 bytes into its allocation, n = 2 float4s.
    let ins = [
        claim(&device, a.address() + 4, 2),
        claim(&device, b.address(), 2),
    ];
    let outs = [claim(&device, out.address(), 2)];
    let checked = check(scalar.facts(), device.id(), &ins, &outs, &[2], &[]).unwrap();
    let packet = marshal(&checked);
    let stream = backend.default_stream();
    // SAFETY: as above, the emulator checks every access against its own allocations; a
    // misaligned vector access is refused before it reads anything.
    let queued = unsafe {
        backend.launch(
            v4.bound().function(),
            &*stream,
            Geometry::linear(1, 2),
            &packet,
        )
    };
    assert!(queued.is_ok(), "{queued:?}");
    match backend.synchronize(&*stream) {
        Err(Error::MemoryFault(fault)) => {
            assert_eq!(fault.kind, FaultKind::Misaligned);
            assert_eq!(fault.size, 16);
            assert_eq!(fault.address, a.address() + 4);
            assert_eq!(fault.thread, 0);
        }
        other => panic!("expected a misaligned fault, got {other:?}"),
    }
    assert_eq!(device.default_stream().read(&out).unwrap(), vec![0.0f32; 8]);
}

#[test]
fn unsupported_instruction_is_refused_at_bind_with_its_line() {
    let ptx = ".version 8.8\n.target sm_80\n.address_size 64\n\
               .visible .entry k(.param .u64 a, .param .u64 o, .param .u64 n)\n{\n\
               .reg .b32 %r<2>;\n\tbarrier.cluster.arrive;\n\tret;\n}\n";
    let spec = AbiSpec::new(
        AbiKind::Scalar,
        &[ElementKind::F32],
        &[ElementKind::F32],
        &[],
    );
    let loaded = Kernel::describe(Artifact::ptx(ptx, "k", spec))
        .unwrap()
        .load()
        .unwrap();
    let err = loaded.bind(&Device::emulator()).unwrap_err().error;
    match &err {
        Error::Unsupported {
            entry,
            instruction,
            line,
            ..
        } => {
            assert_eq!(
                (entry.as_str(), instruction.as_str(), *line),
                ("k", "barrier.cluster.arrive", 7)
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.is_decline());
}

#[test]
fn an_instruction_the_model_does_not_know_is_refused_at_bind_as_unknown() {
    let ptx = ".version 8.8\n.target sm_80\n.address_size 64\n\
               .visible .entry k(.param .u64 a, .param .u64 o, .param .u64 n)\n{\n\
               .reg .b32 %r<2>;\n\tadd.frobnicate.u32 %r1, %r0, 1;\n\tret;\n}\n";
    let spec = AbiSpec::new(
        AbiKind::Scalar,
        &[ElementKind::F32],
        &[ElementKind::F32],
        &[],
    );
    let described = Kernel::describe(Artifact::ptx(ptx, "k", spec)).unwrap();
    // SAFETY: the body is never run: the emulator refuses it when the function is loaded, which
    // is what is under test (without the body verifier, which refuses it the same way).
    let loaded = unsafe { described.load_unverified() }.unwrap();
    let err = loaded.bind(&Device::emulator()).unwrap_err().error;
    match &err {
        Error::UnknownForm { entry, form } => {
            assert_eq!(entry, "k");
            assert_eq!(form.line, 7);
            assert!(form.to_string().contains("`.frobnicate`"), "{form}");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.is_decline());
    assert_eq!(err.kind_name(), "unknown_form");
}

#[test]
fn emulator_reports_its_param_layout_and_properties() {
    let device = Device::emulator();
    assert_eq!(device.properties().backend, BackendKind::Emulator);
    assert_eq!(device.properties().compute_capability, None);
    let k = launch_suite::bind(&device, "baracuda_gen_add_scalar_mul_scalar_f32_scalar");
    assert_eq!(
        k.bound().function().param_info().unwrap(),
        Some(vec![(0, 8), (8, 8), (16, 8), (24, 4), (28, 4)])
    );
}

#[test]
fn best_available_says_what_it_chose() {
    let choice = Device::best_available();
    match choice.device.properties().backend {
        BackendKind::Emulator => {
            assert!(choice.reason.starts_with("emulator"), "{}", choice.reason)
        }
        _ => assert!(choice.reason.starts_with("cuda"), "{}", choice.reason),
    }
}

#[test]
fn copies_outside_an_allocation_are_refused() {
    let (device, backend) = emulator();
    let buf = device.upload(&[0u8; 16]).unwrap();
    let stream = backend.default_stream();
    assert!(backend.write(&*stream, buf.address() + 8, &[0; 9]).is_err());
    let mut dst = [0u8; 4];
    assert!(
        backend
            .read(&*stream, buf.address() + 16, &mut dst)
            .is_err()
    );
    assert!(backend.read(&*stream, 0, &mut dst).is_err());
}

/// Raw launch of the scalar add with an arbitrary geometry; returns the output.
fn add_with_geometry(n: usize, grid: u32, block: u32) -> Vec<f32> {
    let (device, backend) = emulator();
    let k = launch_suite::bind(&device, ADD_F32);
    let a_data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let a = device.upload(&a_data).unwrap();
    let b = device.upload(&vec![0.25f32; n]).unwrap();
    let out = device.upload(&vec![f32::NAN; n]).unwrap();
    let (ins, outs, shape) = ([a.desc(), b.desc()], [out.desc()], [n]);
    let checked = check(k.facts(), device.id(), &ins, &outs, &shape, &[]).unwrap();
    let packet = marshal(&checked);
    let stream = backend.default_stream();
    // SAFETY: the packet comes from `check` + `marshal` over live buffers of this device; only
    // the geometry differs from the checked one, and the kernel is a grid-stride loop (any
    // geometry covers exactly `n` elements). The emulator checks every access regardless.
    unsafe {
        backend
            .launch(
                k.bound().function(),
                &*stream,
                Geometry::linear(grid, block),
                &packet,
            )
            .unwrap();
    }
    device.default_stream().read(&out).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn grid_stride_results_do_not_depend_on_the_geometry(
        n in 0usize..2500,
        grid in 1u32..40,
        block in 1u32..300,
    ) {
        let got = add_with_geometry(n, grid, block);
        let want: Vec<f32> = (0..n).map(|i| i as f32 + 0.25).collect();
        prop_assert_eq!(got, want);
    }
}

/// The grid a launch of `n` elements really runs with on an emulator of `workers` threads, as
/// the kernel sees it (`%nctaid.x`), when the launch says its body is (or is not) a grid-stride
/// loop.
fn grid_seen(n: usize, workers: usize, grid_stride: bool) -> f32 {
    let ptx = ".version 8.8\n.target sm_80\n.address_size 64\n\
               .visible .entry grid(.param .u64 a, .param .u64 o, .param .u64 n)\n{\n\
               .reg .b64 %rd<3>;\n.reg .b32 %r<2>;\n.reg .f32 %f<2>;\n\
               ld.param.u64 %rd1, [o];\ncvta.to.global.u64 %rd2, %rd1;\n\
               mov.u32 %r1, %nctaid.x;\ncvt.rn.f32.u32 %f1, %r1;\n\
               st.global.f32 [%rd2], %f1;\nret;\n}\n";
    let spec = AbiSpec::new(
        AbiKind::Scalar,
        &[ElementKind::F32],
        &[ElementKind::F32],
        &[],
    );
    let backend = Arc::new(EmulatorBackend::with_config(EmulatorConfig {
        workers,
        ..EmulatorConfig::default()
    }));
    let device = Device::with_backend(backend.clone());
    let described = Kernel::describe(Artifact::ptx(ptx, "grid", spec)).unwrap();
    // The body stores to `o[0]` without looking at `n` (the verifier rightly refuses it, since
    // `n` may be 0); it is the grid the launch really runs with that is under test here.
    // SAFETY: every launch below has `n ≥ 1`, so `o[0]` is inside the output, and it runs on
    // the emulator, whose checked memory would fault on anything else.
    let k = unsafe { described.load_unverified() }
        .unwrap()
        .bind(&device)
        .unwrap();
    let a = device.upload(&vec![0.0f32; n]).unwrap();
    let out = device.upload(&vec![0.0f32; n]).unwrap();
    let facts = jitseam::launch::LaunchFacts {
        grid_stride,
        ..k.facts()
    };
    let (ins, outs, shape) = ([a.desc()], [out.desc()], [n]);
    let checked = check(facts, device.id(), &ins, &outs, &shape, &[]).unwrap();
    let packet = marshal(&checked);
    let stream = backend.default_stream();
    // SAFETY: `check` accepted the launch over live buffers of this device; `marshal` built
    // the packet. The kernel touches only its output's first element.
    unsafe {
        backend
            .launch(k.bound().function(), &*stream, checked.geometry(), &packet)
            .unwrap();
    }
    device.default_stream().read(&out).unwrap()[0]
}

#[test]
fn a_grid_stride_body_runs_on_a_grid_capped_near_the_workers_and_any_other_on_the_full_grid() {
    // 4096 elements: 16 blocks of 256.
    assert_eq!(grid_seen(4096, 1, false), 16.0);
    assert_eq!(grid_seen(4096, 1, true), 4.0);
    assert_eq!(grid_seen(4096, 2, true), 8.0);
    // Never more than the full grid.
    assert_eq!(grid_seen(512, 3, true), 2.0);
    // The body verifier proves NVRTC's add a grid-stride loop, so its launches are capped.
    let device = Device::emulator();
    let k = launch_suite::bind(&device, ADD_F32);
    assert!(k.facts().grid_stride);
}
