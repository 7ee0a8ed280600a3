//! cudarc 0.19's per-launch argument packing, reproduced without a GPU: the peer the launch
//! benchmark measures jitseam against.
//!
//! The types mirror `cudarc::driver::safe` field for field (`CudaContext`'s stream count and
//! event-tracking flag, `CudaStream`, `CudaEvent`, `CudaSlice`), and [`LaunchArgs`] does exactly
//! what `stream.launch_builder(&f)` and `.arg(..)` do in `src/driver/safe/launch.rs`: three empty
//! `Vec`s, then one `push` of a pointer to each argument into `args`, and — when the context
//! manages stream synchronization (more than one stream, event tracking on) — a push of each
//! slice's events into `waits`/`records`. [`LaunchArgs::launch`] keeps cudarc's control flow but
//! replaces the driver calls (`cuCtxSetCurrent`, `cuStreamWaitEvent`, `cuLaunchKernel`,
//! `cuEventRecord`) by one opaque call that receives what `cuLaunchKernel` would: the no-op
//! backend on jitseam's side stands in for the same driver call. Dropping the builder frees its
//! `Vec`s, as in cudarc.

use std::ffi::c_void;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// `cudarc::driver::CudaContext`: the two fields a launch reads.
#[derive(Debug)]
pub(crate) struct Context {
    num_streams: AtomicUsize,
    event_tracking: AtomicBool,
}

impl Context {
    /// A context with `streams` extra streams (cudarc counts those made by `new_stream`).
    pub(crate) fn new(streams: usize) -> Arc<Self> {
        Arc::new(Self {
            num_streams: AtomicUsize::new(streams),
            event_tracking: AtomicBool::new(true),
        })
    }

    fn is_managing_stream_synchronization(&self) -> bool {
        self.num_streams.load(Ordering::Relaxed) > 0 && self.event_tracking.load(Ordering::Relaxed)
    }
}

#[derive(Debug)]
pub(crate) struct Stream {
    cu_stream: *mut c_void,
    ctx: Arc<Context>,
}

impl Stream {
    pub(crate) fn new(ctx: Arc<Context>) -> Self {
        Self {
            cu_stream: std::ptr::null_mut(),
            ctx,
        }
    }

    fn context(&self) -> &Arc<Context> {
        &self.ctx
    }
}

#[derive(Debug)]
pub(crate) struct Event {
    cu_event: *mut c_void,
    _ctx: Arc<Context>,
}

#[derive(Debug)]
pub(crate) struct Function {
    cu_function: *mut c_void,
}

impl Function {
    pub(crate) fn new() -> Self {
        Self {
            cu_function: std::ptr::null_mut(),
        }
    }
}

/// `cudarc::driver::CudaSlice<T>`; slices made while the context manages synchronization carry
/// a read and a write event.
#[derive(Debug)]
pub(crate) struct Slice {
    cu_device_ptr: u64,
    _len: usize,
    read: Option<Event>,
    write: Option<Event>,
    _stream: Arc<Stream>,
}

impl Slice {
    pub(crate) fn new(stream: &Arc<Stream>, address: u64, len: usize) -> Self {
        let event = || {
            stream
                .ctx
                .is_managing_stream_synchronization()
                .then(|| Event {
                    cu_event: std::ptr::null_mut(),
                    _ctx: Arc::clone(&stream.ctx),
                })
        };
        Self {
            cu_device_ptr: address,
            _len: len,
            read: event(),
            write: event(),
            _stream: Arc::clone(stream),
        }
    }
}

/// `cudarc::driver::LaunchArgs`.
#[derive(Debug)]
pub(crate) struct LaunchArgs<'a> {
    stream: &'a Stream,
    func: &'a Function,
    waits: Vec<&'a Event>,
    records: Vec<&'a Event>,
    args: Vec<*mut c_void>,
    flags: Option<u32>,
}

/// `CudaStream::launch_builder`.
#[inline(always)]
pub(crate) fn launch_builder<'a>(stream: &'a Stream, func: &'a Function) -> LaunchArgs<'a> {
    LaunchArgs {
        stream,
        func,
        waits: Vec::new(),
        records: Vec::new(),
        args: Vec::new(),
        flags: None,
    }
}

impl<'a> LaunchArgs<'a> {
    /// `PushKernelArg<&T: DeviceRepr>`: a pointer to the value.
    #[inline(always)]
    pub(crate) fn arg_value<T>(&mut self, arg: &'a T) -> &mut Self {
        self.args.push(arg as *const T as *mut _);
        self
    }

    /// `PushKernelArg<&CudaSlice<T>>`.
    #[inline(always)]
    pub(crate) fn arg_slice(&mut self, arg: &'a Slice) -> &mut Self {
        if self.stream.context().is_managing_stream_synchronization() {
            if let Some(write) = arg.write.as_ref() {
                self.waits.push(write);
            }
            if let Some(read) = arg.read.as_ref() {
                self.records.push(read);
            }
        }
        self.args
            .push((&arg.cu_device_ptr) as *const u64 as *mut c_void);
        self
    }

    /// `PushKernelArg<&mut CudaSlice<T>>`.
    #[inline(always)]
    pub(crate) fn arg_slice_mut(&mut self, arg: &'a mut Slice) -> &mut Self {
        if self.stream.context().is_managing_stream_synchronization() {
            if let Some(read) = arg.read.as_ref() {
                self.waits.push(read);
            }
            if let Some(write) = arg.write.as_ref() {
                self.waits.push(write);
                self.records.push(write);
            }
        }
        self.args
            .push((&arg.cu_device_ptr) as *const u64 as *mut c_void);
        self
    }

    /// `LaunchArgs::launch`, with each driver call replaced by [`driver`].
    #[inline(always)]
    pub(crate) fn launch(&mut self, grid: u32, block: u32) -> Result<(), i32> {
        for &event in self.waits.iter() {
            driver(event.cu_event, self.stream.cu_stream, &mut [])?;
        }
        if let Some(flags) = self.flags {
            black_box(flags);
        }
        black_box((grid, block));
        driver(self.func.cu_function, self.stream.cu_stream, &mut self.args)?;
        for &event in self.records.iter() {
            driver(event.cu_event, self.stream.cu_stream, &mut [])?;
        }
        Ok(())
    }
}

/// Where cudarc calls the driver: an opaque call that reads its arguments.
#[inline(never)]
fn driver(handle: *mut c_void, stream: *mut c_void, args: &mut [*mut c_void]) -> Result<(), i32> {
    black_box((handle, stream, args));
    Ok(())
}
