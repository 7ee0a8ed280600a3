//! cudarc interop through jitseam's real CUDA backend on the CUDA driver model (each test in a
//! child process that loads the model as its driver): a cudarc context as a device with one
//! id, cudarc streams in and out, and cudarc slices — written by cudarc on one stream, launched
//! on by jitseam on another, read back by cudarc on a third — with cudarc's own events ordering
//! them. On the emulator every interop path is refused with a typed error.
#![cfg(target_os = "linux")]
// A test fails by panicking; the house rule against panics is for paths user input reaches.
#![allow(clippy::panic, clippy::unwrap_used)]

mod common;

use std::any::Any;
use std::cell::Cell;
use std::sync::Arc;

use common::cuda_model::in_model;
use common::launch_suite::{ADD_F32, RELU_F32, bind};
use cudarc::driver::{CudaContext, CudaSlice};
use jitseam::device::{Arg, ArgMut, BackendStream};
use jitseam::error::Operand;
use jitseam::slot::{SlotCall, SlotRef};
use jitseam::{Device, DeviceBuffer, Error, Stream};

const N: usize = 1000;

macro_rules! model_test {
    (fn $name:ident() $body:block) => {
        #[test]
        fn $name() {
            in_model(stringify!($name), || $body);
        }
    };
}

model_test! {
    fn one_context_is_one_device() {
        let ctx = CudaContext::new(0).unwrap();
        let a = Device::from_cudarc(Arc::clone(&ctx)).unwrap();
        let b = Device::from_cudarc(Arc::clone(&ctx)).unwrap();
        assert_eq!(a.id(), b.id());
        // Another handle on the same ordinal is another context handle, and another device.
        let other = Device::from_cudarc(CudaContext::new(0).unwrap()).unwrap();
        assert_ne!(a.id(), other.id());
        let opened = Device::cuda(0).unwrap();
        assert_ne!(opened.id(), a.id());
    }
}

model_test! {
    fn streams_go_in_and_come_back() {
        let ctx = CudaContext::new(0).unwrap();
        let device = Device::from_cudarc(Arc::clone(&ctx)).unwrap();
        let cu = ctx.new_stream().unwrap();
        let stream = Stream::from_cudarc(&device, Arc::clone(&cu)).unwrap();
        assert!(Arc::ptr_eq(stream.as_cudarc().unwrap(), &cu));
        assert!(device.new_stream().unwrap().as_cudarc().is_some());
        let foreign = CudaContext::new(0).unwrap().new_stream().unwrap();
        assert!(matches!(Stream::from_cudarc(&device, foreign), Err(Error::Interop { .. })));
        assert!(Device::emulator().default_stream().as_cudarc().is_none());
        assert!(matches!(
            Stream::from_cudarc(&Device::emulator(), cu),
            Err(Error::Interop { .. })
        ));
    }
}

model_test! {
    fn cudarc_writes_jitseam_launches_cudarc_reads_on_three_streams() {
        common::interop::cudarc_round_trip(CudaContext::new(0).unwrap(), 1000);
    }
}

model_test! {
    fn a_slice_of_another_device_is_refused() {
        let ctx = CudaContext::new(0).unwrap();
        let _device = Device::from_cudarc(Arc::clone(&ctx)).unwrap();
        let slice = ctx.default_stream().clone_htod(&vec![1.0f32; N]).unwrap();
        let mut out_slice = ctx.default_stream().alloc_zeros::<f32>(N).unwrap();
        for other in [Device::emulator(), Device::cuda(0).unwrap()] {
            let kernel = bind(&other, ADD_F32);
            let x = other.upload(&vec![1.0f32; N]).unwrap();
            let mut y = other.upload(&vec![0.0f32; N]).unwrap();
            let err = kernel
                .launch(
                    &other.default_stream(),
                    &[Arg::from(&slice), Arg::from(&x)],
                    &mut [ArgMut::from(&mut y)],
                    &[N],
                    &[],
                )
                .unwrap_err();
            assert!(
                matches!(err, Error::DeviceMismatch { operand: Operand::Input(0), .. }),
                "{err:?}"
            );
            let err = kernel
                .launch(
                    &other.default_stream(),
                    &[Arg::from(&x), Arg::from(&x)],
                    &mut [ArgMut::from(&mut out_slice)],
                    &[N],
                    &[],
                )
                .unwrap_err();
            assert!(
                matches!(err, Error::DeviceMismatch { operand: Operand::Output(0), .. }),
                "{err:?}"
            );
        }
    }
}

model_test! {
    fn jitseam_buffers_handed_to_cudarc_are_ordered_both_ways() {
        common::interop::as_cudarc_round_trip(CudaContext::new(0).unwrap(), N, (1 << 16, 4));
    }
}

#[test]
fn an_emulator_buffer_is_not_handed_to_cudarc() {
    let device = Device::emulator();
    let mut buffer = device.alloc::<f32>(4).unwrap();
    assert!(matches!(buffer.as_cudarc(), Err(Error::Interop { .. })));
    assert!(matches!(buffer.as_cudarc_mut(), Err(Error::Interop { .. })));
}

model_test! {
    fn a_write_from_page_locked_memory_has_read_it_when_it_returns() {
        common::interop::write_from_page_locked_memory(CudaContext::new(0).unwrap(), N, (1 << 16, 4));
    }
}

model_test! {
    fn half_precision_cudarc_views_are_operands() {
        common::interop::half_views(CudaContext::new(0).unwrap(), N);
    }
}

// Readers of a jitseam buffer through cudarc views on two or three streams, then a write or a
// drop: each waits for every reader.
readers_through_views_tests!(N, (1 << 10, 256), via in_model);

jitseam::slot_table!(static REENTRANT: 1);

thread_local! {
    /// The slot and the call being made through it, for [`ReentrantStream::as_any`] to make
    /// again.
    static REENTRY: Cell<Option<(SlotRef, &'static SlotCall<'static>)>> = const { Cell::new(None) };
    /// How often [`ReentrantStream::as_any`] made the call again.
    static REENTERED: Cell<usize> = const { Cell::new(0) };
}

/// A custom backend's stream whose `as_any` (its own code, which a launch may call) makes the
/// call being made once more, through its slot: the same outputs, acquired again.
#[derive(Debug)]
struct ReentrantStream;

impl BackendStream for ReentrantStream {
    fn as_any(&self) -> &dyn Any {
        if let Some((slot, call)) = REENTRY.take() {
            REENTERED.set(REENTERED.get() + 1);
            let _ = slot.launch(call);
        }
        self
    }
}

model_test! {
    fn a_custom_stream_cannot_re_enter_a_launch_that_holds_a_cudarc_output() {
        let ctx = CudaContext::new(0).unwrap();
        let _cuda = Device::from_cudarc(Arc::clone(&ctx)).unwrap();
        let device = jitseam::testing::FakeBackend::builder()
            .streams(|| Arc::new(ReentrantStream))
            .build()
            .device();
        let slot = REENTRANT.claim(bind(&device, RELU_F32)).unwrap();
        // Everything the call borrows lives for the rest of the process, so the stream's code
        // can reach the call (safe code throughout).
        let stream: &'static Stream = Box::leak(Box::new(device.default_stream()));
        let x: &'static DeviceBuffer<f32> = Box::leak(Box::new(device.alloc::<f32>(N).unwrap()));
        let out: &'static mut CudaSlice<f32> =
            Box::leak(Box::new(ctx.default_stream().alloc_zeros::<f32>(N).unwrap()));
        let inputs: &'static [Arg<'static>] = Box::leak(Box::new([Arg::from(x)]));
        let outputs: &'static mut [ArgMut<'static>] = Box::leak(Box::new([ArgMut::from(out)]));
        let call: &'static SlotCall<'static> =
            Box::leak(Box::new(slot.call(stream, inputs, outputs, &[N], &[])));
        REENTRY.set(Some((slot, call)));
        // The cudarc slice is not on the custom device: refused, and before the launch takes
        // the output exclusively and asks the stream anything.
        let err = slot.launch(call).unwrap_err();
        assert!(
            matches!(err, Error::DeviceMismatch { operand: Operand::Output(0), .. }),
            "{err:?}"
        );
        assert_eq!(
            REENTERED.get(),
            0,
            "the stream's own code ran, and re-entered the launch, while it held the output"
        );
    }
}
