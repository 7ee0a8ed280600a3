//! cudarc interop end to end, written once for the driver model (tests/cudarc_interop.rs) and a
//! GPU (tests/gpu_streams.rs): cudarc writes slices on one stream, jitseam launches on them on
//! a second (erased and typed, cudarc slices, views and jitseam buffers mixed), cudarc reads the
//! results back on a third; cudarc's own per-slice events order all of it.

use std::sync::Arc;

use cudarc::driver::CudaContext;
use jitseam::device::{Arg, ArgMut};
use jitseam::{Device, In, Out};

use super::launch_suite::{ADD_F32, bind};

#[jitseam::kernel(abi = scalar, symbol = "baracuda_gen_add_f32_scalar")]
fn add(a: In<f32>, b: In<f32>, out: Out<f32>);

/// The round trip on `ctx` with `n` elements.
pub fn cudarc_round_trip(ctx: Arc<CudaContext>, n: usize) {
    let device = Device::from_cudarc(Arc::clone(&ctx)).unwrap();
    let (writer, reader) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let a_host: Vec<f32> = (0..n).map(|i| (i % 1024) as f32).collect();
    let a = writer.clone_htod(&a_host).unwrap();
    let b = writer.clone_htod(&vec![0.5f32; n]).unwrap();
    let mut out = writer.alloc_zeros::<f32>(n).unwrap();
    let stream = device.new_stream().unwrap();
    // Erased launch with cudarc slices.
    let kernel = bind(&device, ADD_F32);
    kernel
        .launch(
            &stream,
            &[Arg::from(&a), Arg::from(&b)],
            &mut [ArgMut::from(&mut out)],
            &[n],
            &[],
        )
        .unwrap();
    let got = reader.clone_dtoh(&out).unwrap();
    let want: Vec<f32> = a_host.iter().map(|x| x + 0.5).collect();
    assert_eq!(got, want, "erased launch on cudarc slices");
    // Typed launch: cudarc slices and views convert like jitseam buffers.
    let typed = bind(&device, ADD_F32).typed::<Add>().unwrap();
    let mut out2 = writer.alloc_zeros::<f32>(n).unwrap();
    typed
        .launch(
            &stream,
            Add::args(&out.as_view(), &b, &mut out2.as_view_mut()),
        )
        .unwrap();
    let got = reader.clone_dtoh(&out2).unwrap();
    let want: Vec<f32> = a_host.iter().map(|x| x + 1.0).collect();
    assert_eq!(got, want, "typed launch on cudarc views");
    // Jitseam buffers and cudarc slices in one launch.
    let mine = device.upload(&vec![2.0f32; n]).unwrap();
    typed
        .launch(&stream, Add::args(&mine, &a, &mut out))
        .unwrap();
    let got = reader.clone_dtoh(&out).unwrap();
    let want: Vec<f32> = a_host.iter().map(|x| x + 2.0).collect();
    assert_eq!(
        got, want,
        "a jitseam buffer and cudarc slices in one launch"
    );
}
