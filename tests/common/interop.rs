//! cudarc interop end to end, written once for the driver model (tests/cudarc_interop.rs) and a
//! GPU (tests/gpu_streams.rs): cudarc writes slices on one stream, jitseam launches on them on
//! a second (erased and typed, cudarc slices, views and jitseam buffers mixed), cudarc reads the
//! results back on a third; cudarc's own per-slice events order all of it. And the way out:
//! jitseam buffers handed to cudarc, with every hazard between the two raced.

use std::sync::Arc;

use cudarc::driver::CudaContext;
use jitseam::device::{Arg, ArgMut};
use jitseam::{Device, In, Out, Stream};

use super::hazards::{Busy, Hold};
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

/// The way out, on `ctx` with `n` elements: jitseam buffers handed to cudarc with
/// `as_cudarc`/`as_cudarc_mut`, each hazard raced against a stream held by `busy` (slow
/// launches queued first), so a missing wait shows as a wrong result.
pub fn as_cudarc_round_trip(ctx: Arc<CudaContext>, n: usize, busy: (usize, usize)) {
    let device = Device::from_cudarc(Arc::clone(&ctx)).unwrap();
    let busy = Busy::new(&device, busy.0, busy.1);
    let add = bind(&device, ADD_F32);
    let a = device.new_stream().unwrap();
    let (x_cu, b_cu) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let (x, b) = (
        Stream::from_cudarc(&device, Arc::clone(&x_cu)).unwrap(),
        Stream::from_cudarc(&device, Arc::clone(&b_cu)).unwrap(),
    );
    let ones = device.upload(&vec![1.0f32; n]).unwrap();
    let mut buf = device.upload(&vec![0.0f32; n]).unwrap();
    device.synchronize().unwrap();

    // Read after write, jitseam → cudarc: a launch on held `a`, read by cudarc on `x`.
    busy.hold(&a);
    add.launch(
        &a,
        &[(&ones).into(), (&ones).into()],
        &mut [(&mut buf).into()],
        &[n],
        &[],
    )
    .unwrap();
    let got = x_cu.clone_dtoh(&buf.as_cudarc().unwrap()).unwrap();
    assert_eq!(got, vec![2.0; n], "cudarc reads a jitseam launch's output");

    // Write after read, cudarc → jitseam: cudarc copies the buffer on held `x`, then jitseam
    // overwrites it on `a`; the copy still sees the old contents.
    let mut snapshot = x_cu.alloc_zeros::<f32>(n).unwrap();
    busy.hold(&x);
    x_cu.memcpy_dtod(&buf.as_cudarc().unwrap(), &mut snapshot)
        .unwrap();
    a.write_from(&mut buf, &vec![5.0f32; n]).unwrap();
    assert_eq!(
        x_cu.clone_dtoh(&snapshot).unwrap(),
        vec![2.0; n],
        "cudarc's read before jitseam's write"
    );
    assert_eq!(
        a.read(&buf).unwrap(),
        vec![5.0; n],
        "jitseam's write after cudarc's read"
    );

    // A second hand-out after another jitseam write on held `a` sees that write.
    busy.hold(&a);
    add.launch(
        &a,
        &[(&ones).into(), (&ones).into()],
        &mut [(&mut buf).into()],
        &[n],
        &[],
    )
    .unwrap();
    {
        let view = buf.as_cudarc().unwrap();
        let again = buf.as_cudarc().unwrap();
        assert_eq!(
            x_cu.clone_dtoh(&view).unwrap(),
            vec![2.0; n],
            "a second hand-out"
        );
        assert_eq!(
            b_cu.clone_dtoh(&again).unwrap(),
            vec![2.0; n],
            "a third, on another stream"
        );
    }

    // Read after write, cudarc → jitseam: cudarc writes on held `b` (a device-to-device copy,
    // which the host does not wait for), jitseam launches on `a`.
    let [threes, sevens, nines] = [3.0f32, 7.0, 9.0].map(|v| b_cu.clone_htod(&vec![v; n]).unwrap());
    b_cu.synchronize().unwrap();
    busy.hold(&b);
    b_cu.memcpy_dtod(&threes, &mut buf.as_cudarc_mut().unwrap())
        .unwrap();
    let mut out = device.upload(&vec![0.0f32; n]).unwrap();
    add.launch(
        &a,
        &[(&buf).into(), (&ones).into()],
        &mut [(&mut out).into()],
        &[n],
        &[],
    )
    .unwrap();
    assert_eq!(
        a.read(&out).unwrap(),
        vec![4.0; n],
        "jitseam reads cudarc's write"
    );

    // Write after write, jitseam → cudarc: jitseam writes on held `a`, cudarc overwrites on
    // `b`; cudarc's write lands last.
    busy.hold(&a);
    add.launch(
        &a,
        &[(&ones).into(), (&ones).into()],
        &mut [(&mut buf).into()],
        &[n],
        &[],
    )
    .unwrap();
    b_cu.memcpy_dtod(&sevens, &mut buf.as_cudarc_mut().unwrap())
        .unwrap();
    assert_eq!(
        b.read(&buf).unwrap(),
        vec![7.0; n],
        "cudarc's write after jitseam's"
    );

    // The view is a launch operand too, ordered by the same events.
    busy.hold(&b);
    b_cu.memcpy_dtod(&nines, &mut buf.as_cudarc_mut().unwrap())
        .unwrap();
    add.launch(
        &a,
        &[Arg::from(&buf.as_cudarc().unwrap()), (&ones).into()],
        &mut [(&mut out).into()],
        &[n],
        &[],
    )
    .unwrap();
    assert_eq!(
        a.read(&out).unwrap(),
        vec![10.0; n],
        "a cudarc view of a jitseam buffer as an operand"
    );

    // Freed while cudarc's last use may still run: the free waits for it.
    busy.hold(&b);
    b_cu.memcpy_dtod(&threes, &mut buf.as_cudarc_mut().unwrap())
        .unwrap();
    drop(buf);
    device.synchronize().unwrap();
    b.synchronize().unwrap();
}

/// f16 and bf16 through cudarc views: jitseam buffers handed out as views, the views launch
/// operands (inputs and output) on another stream than the uploads.
pub fn half_views(ctx: Arc<CudaContext>, n: usize) {
    use half::{bf16, f16};

    use super::launch_suite::{ADD_BF16, ADD_F16};

    let device = Device::from_cudarc(Arc::clone(&ctx)).unwrap();
    half_views_of(&device, n, ADD_F16, f16::from_f32, "f16");
    half_views_of(&device, n, ADD_BF16, bf16::from_f32, "bf16");
}

/// `out = a + 1` of element type `T` (made from f32 by `of`) through cudarc views of jitseam
/// buffers, with the add kernel `ptx`.
fn half_views_of<T>(device: &Device, n: usize, ptx: &str, of: fn(f32) -> T, name: &str)
where
    T: jitseam::Element + PartialEq + std::fmt::Debug,
{
    let stream = device.new_stream().unwrap();
    let xs: Vec<f32> = (0..n).map(|i| (i % 64) as f32 * 0.25).collect();
    let a = device
        .upload(&xs.iter().map(|&x| of(x)).collect::<Vec<_>>())
        .unwrap();
    let b = device.upload(&vec![of(1.0); n]).unwrap();
    let mut out = device.upload(&vec![of(0.0); n]).unwrap();
    let (va, vb) = (a.as_cudarc().unwrap(), b.as_cudarc().unwrap());
    bind(device, ptx)
        .launch(
            &stream,
            &[Arg::from(&va), Arg::from(&vb)],
            &mut [ArgMut::from(&mut out.as_cudarc_mut().unwrap())],
            &[n],
            &[],
        )
        .unwrap();
    let want: Vec<T> = xs.iter().map(|&x| of(x + 1.0)).collect();
    assert_eq!(
        stream.read(&out).unwrap(),
        want,
        "{name} cudarc views as operands"
    );
}

/// How the readers of [`readers_through_views`] read a jitseam buffer through cudarc views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewRead {
    /// A jitseam launch with the view as an input.
    Launch,
    /// cudarc's own device-to-device copy out of the view.
    Copy,
}

/// What follows the readers of [`readers_through_views`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterReads {
    /// The views are gone; jitseam writes the buffer on another stream.
    Write,
    /// The views are gone; the buffer is dropped.
    Drop,
    /// The readers read an exclusive view, through which a jitseam launch then writes the
    /// buffer on another stream.
    LaunchThroughView,
    /// The readers read an exclusive view, into which cudarc then copies on another stream.
    CopyThroughView,
}

/// `readers` reads of a jitseam buffer (all 1.0) through cudarc views of it, each on a stream
/// of its own, then `after` on one more stream: a write of 2.0, or the drop. Every reader but
/// the last is held back by slow work (`busy`, as in [`as_cudarc_round_trip`]), so a write or
/// a free that waits only for the last reader (cudarc keeps one read event per slice) lands
/// before the held ones read: they see 2.0, or memory the model has freed.
pub fn readers_through_views(
    ctx: Arc<CudaContext>,
    n: usize,
    busy: (usize, usize),
    readers: usize,
    read: ViewRead,
    after: AfterReads,
) {
    use super::launch_suite::NEG_F32;

    let device = Device::from_cudarc(Arc::clone(&ctx)).unwrap();
    let busy = Busy::new(&device, busy.0, busy.1);
    let neg = bind(&device, NEG_F32);
    let add = bind(&device, ADD_F32);
    let cu: Vec<_> = (0..=readers).map(|_| ctx.new_stream().unwrap()).collect();
    let streams: Vec<_> = cu
        .iter()
        .map(|s| Stream::from_cudarc(&device, Arc::clone(s)).unwrap())
        .collect();
    let (writer_cu, writer) = (&cu[readers], &streams[readers]);
    let ones = device.upload(&vec![1.0f32; n]).unwrap();
    let mut buf = device.upload(&vec![1.0f32; n]).unwrap();
    let twos = writer_cu.clone_htod(&vec![2.0f32; n]).unwrap();
    let mut launched: Vec<_> = (0..readers)
        .map(|_| device.upload(&vec![f32::NAN; n]).unwrap())
        .collect();
    let mut copied: Vec<_> = (0..readers)
        .map(|_| writer_cu.clone_htod(&vec![f32::NAN; n]).unwrap())
        .collect();
    device.synchronize().unwrap();
    writer_cu.synchronize().unwrap();

    let read_all = |view: &cudarc::driver::CudaView<'_, f32>,
                    launched: &mut [jitseam::DeviceBuffer<f32>],
                    copied: &mut [cudarc::driver::CudaSlice<f32>]| {
        for (i, (out, copy)) in launched.iter_mut().zip(copied.iter_mut()).enumerate() {
            if i + 1 < readers {
                busy.hold(&streams[i]);
            }
            match read {
                ViewRead::Launch => neg
                    .launch(
                        &streams[i],
                        &[Arg::from(view)],
                        &mut [out.into()],
                        &[n],
                        &[],
                    )
                    .unwrap(),
                ViewRead::Copy => cu[i].memcpy_dtod(view, copy).unwrap(),
            }
        }
    };
    match after {
        AfterReads::Write | AfterReads::Drop => {
            read_all(&buf.as_cudarc().unwrap(), &mut launched, &mut copied);
            if after == AfterReads::Write {
                writer.write_from(&mut buf, &vec![2.0f32; n]).unwrap();
                assert_eq!(
                    writer.read(&buf).unwrap(),
                    vec![2.0; n],
                    "the write after the readers"
                );
            } else {
                // The free is deferred until the streams it waits for are done, and runs at the
                // next allocation after that: once the last (unheld) reader is done (and the
                // free's own events with it), allocate while the first reader still waits to
                // read. The model reports a free under queued work that may use the memory.
                let first_read = streams[0].record_event().unwrap();
                drop(buf);
                cu[readers - 1].synchronize().unwrap();
                std::thread::sleep(std::time::Duration::from_millis(10));
                while !first_read.is_complete().unwrap() {
                    drop(device.alloc::<f32>(1).unwrap());
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        }
        AfterReads::LaunchThroughView | AfterReads::CopyThroughView => {
            {
                let mut view = buf.as_cudarc_mut().unwrap();
                read_all(&view.as_view(), &mut launched, &mut copied);
                if after == AfterReads::LaunchThroughView {
                    add.launch(
                        writer,
                        &[(&ones).into(), (&ones).into()],
                        &mut [ArgMut::from(&mut view)],
                        &[n],
                        &[],
                    )
                    .unwrap();
                } else {
                    writer_cu.memcpy_dtod(&twos, &mut view).unwrap();
                }
            }
            assert_eq!(
                writer.read(&buf).unwrap(),
                vec![2.0; n],
                "the write after the readers"
            );
        }
    }
    for (i, (out, copy)) in launched.iter().zip(&copied).enumerate() {
        let what = format!("reader {i} of {readers} ({read:?}, then {after:?})");
        match read {
            ViewRead::Launch => assert_eq!(streams[i].read(out).unwrap(), vec![-1.0; n], "{what}"),
            ViewRead::Copy => assert_eq!(cu[i].clone_dtoh(copy).unwrap(), vec![1.0; n], "{what}"),
        }
    }
    device.synchronize().unwrap();
    for s in &cu {
        s.synchronize().unwrap();
    }
}

/// One `#[test]` per case of [`readers_through_views`], on device 0 through a fresh cudarc
/// context, with `$n` elements and the hold `$busy`. With `via $run`, each body runs as
/// `$run(name, body)` (the driver model runs it in a child process).
#[macro_export]
macro_rules! readers_through_views_tests {
    ($n:expr, $busy:expr) => {
        $crate::readers_through_views_tests!($n, $busy, via $crate::common::launch_suite::run_here);
    };
    ($n:expr, $busy:expr, via $run:path) => {
        $crate::readers_through_views_tests!(@each $n, $busy, $run;
            a_write_waits_for_two_launches_through_views: 2 Launch, Write;
            a_write_waits_for_three_launches_through_views: 3 Launch, Write;
            a_write_waits_for_two_cudarc_copies_through_views: 2 Copy, Write;
            a_write_waits_for_three_cudarc_copies_through_views: 3 Copy, Write;
            a_drop_waits_for_two_launches_through_views: 2 Launch, Drop;
            a_drop_waits_for_three_launches_through_views: 3 Launch, Drop;
            a_drop_waits_for_two_cudarc_copies_through_views: 2 Copy, Drop;
            a_drop_waits_for_three_cudarc_copies_through_views: 3 Copy, Drop;
            a_launch_through_a_view_waits_for_two_launches_through_it: 2 Launch, LaunchThroughView;
            a_launch_through_a_view_waits_for_two_cudarc_copies_through_it: 2 Copy, LaunchThroughView;
            a_cudarc_copy_through_a_view_waits_for_two_launches_through_it: 2 Launch, CopyThroughView;
            a_cudarc_copy_through_a_view_waits_for_three_launches_through_it: 3 Launch, CopyThroughView;
        );
    };
    (@each $n:expr, $busy:expr, $run:path; $($name:ident: $readers:literal $read:ident, $after:ident;)*) => {$(
        #[test]
        fn $name() {
            $run(stringify!($name), || {
                use common::interop::{AfterReads, ViewRead, readers_through_views};
                readers_through_views(
                    cudarc::driver::CudaContext::new(0).unwrap(),
                    $n,
                    $busy,
                    $readers,
                    ViewRead::$read,
                    AfterReads::$after,
                );
            });
        }
    )*};
}

/// A copy to the device from page-locked host memory (a cudarc `PinnedHostSlice`), whose
/// source the caller changes as soon as `write_from` returns, as it may: the buffer holds what
/// the source held at the call, though the copy was queued behind slow work (`busy`). Then a
/// copy back into that page-locked memory.
pub fn write_from_page_locked_memory(ctx: Arc<CudaContext>, n: usize, busy: (usize, usize)) {
    let device = Device::from_cudarc(Arc::clone(&ctx)).unwrap();
    let busy = Busy::new(&device, busy.0, busy.1);
    let cu = ctx.new_stream().unwrap();
    let stream = Stream::from_cudarc(&device, Arc::clone(&cu)).unwrap();
    let mut buf = device.upload(&vec![0.0f32; n]).unwrap();
    let ones = cu.clone_htod(&vec![1.0f32; n]).unwrap();
    // SAFETY: the copy right below writes every element before anything reads one.
    let mut pinned = unsafe { ctx.alloc_pinned::<f32>(n) }.unwrap();
    cu.memcpy_dtoh(&ones, &mut pinned).unwrap();
    cu.synchronize().unwrap();
    device.synchronize().unwrap();
    busy.hold(&stream);
    stream
        .write_from(&mut buf, pinned.as_slice().unwrap())
        .unwrap();
    pinned.as_mut_slice().unwrap().fill(2.0);
    let late = stream
        .read(&buf)
        .unwrap()
        .iter()
        .filter(|&&v| v != 1.0)
        .count();
    assert_eq!(
        late, 0,
        "{late} of {n} elements copied from the page-locked source after write_from returned"
    );
    // And back into page-locked memory (staged through pageable memory).
    stream
        .read_into(&buf, pinned.as_mut_slice().unwrap())
        .unwrap();
    assert!(pinned.as_slice().unwrap().iter().all(|&v| v == 1.0));
}
