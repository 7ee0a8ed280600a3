//! [`CudaShadow`]: the cudarc slice that stands for a jitseam buffer once it is handed to cudarc
//! ([`DeviceBuffer::as_cudarc`]), and through whose read and write events cudarc and jitseam
//! order their uses of it.
//!
//! The slice is made over the buffer's memory with `upgrade_device_ptr` on a private *join*
//! stream made for it, and never dropped as a slice: dropping it would free memory the buffer
//! owns, so the shadow `leak`s it instead (which only releases the events and the stream).
//!
//! cudarc keeps the events private; they are reached through its own guards. `device_ptr`
//! makes the stream passed in wait for the write event and hands the read event back (in the
//! guard that would record it), `device_ptr_mut` makes it wait for both and hands the write
//! event back. The guards are disarmed ([`disarm`]) so that they record nothing: the shadow
//! records itself, where the access log says. A wait that fails inside those guards is
//! recorded in the context's error state, cudarc's convention (`CudaContext::check_err`).
//!
//! # One read event, any number of readers
//!
//! cudarc keeps one read event per slice, and each read re-records it on the reader's stream:
//! after reads on two streams it covers only the later. Writes chain (each waits for the write
//! event before recording it), so the write event always covers every write; the read event
//! does not cover every read. So:
//!
//! - a jitseam launch that reads the buffer through a view records its read through the join
//!   stream ([`JoinedRead`]): the join stream waits for the read event as it stands and for the
//!   launch, and the read event is recorded there. It then covers every reader it covered
//!   before, and this one;
//! - cudarc's own reads happen on streams jitseam never sees, and the one event they leave
//!   does not name them all. Whatever must follow *every* use of the buffer — a jitseam write
//!   (through the buffer or through a view), a hand-out for writing, the free — therefore waits
//!   on the host for the whole context ([`wait_for_every_use`]): every use queued so
//!   far has finished then, on whichever stream of the context it ran. A read needs only the
//!   write event, on the device.
//!
//! [`DeviceBuffer::as_cudarc`]: crate::device::DeviceBuffer::as_cudarc

use std::any::Any;
use std::cell::UnsafeCell;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut,
    SyncOnDrop,
};

use super::error::{driver_error, lock};
use super::probe::guarded;
use super::stream::{CudaStreamHandle, cudarc_of};
use crate::device::{AccessKind, BackendStream, ExternalUses};
use crate::error::Error;

/// A jitseam buffer as a cudarc slice. See the module docs.
pub(super) struct CudaShadow<T> {
    /// Shared (`&`) while cudarc views of it may be alive; exclusive only under
    /// [`ExternalUses::publish`]'s contract or `&mut self`.
    slice: UnsafeCell<ManuallyDrop<CudaSlice<T>>>,
    /// The slice's own stream, private to it: the access log gathers jitseam's uses here.
    join: Arc<CudaStream>,
    /// `join` as a jitseam stream, for the log's events and the deferred free.
    join_handle: Arc<dyn BackendStream>,
}

// SAFETY: shared access to the slice is only ever through `&CudaSlice<T>`, which is `Sync`
// (cudarc implements it for every `T`: its events are recorded and waited for through the
// driver, which is thread-safe). Exclusive access happens only under `&mut self` or
// `publish`'s contract, which excludes every other access, from every thread.
unsafe impl<T> Sync for CudaShadow<T> {}

impl<T: 'static> CudaShadow<T> {
    /// The shadow of the `len` elements at `address` in `ctx`, which a live jitseam buffer
    /// owns. The caller checked that `ctx` tracks slice uses with events.
    pub(super) fn new(ctx: &Arc<CudaContext>, address: u64, len: usize) -> Result<Self, Error> {
        const STAGE: &str = "hand a buffer to cudarc";
        // A stream made by `new_stream` also keeps the context in multi-stream mode for as
        // long as the shadow lives, the other condition for cudarc to honour slice events.
        let join = ctx.new_stream().map_err(|e| driver_error(STAGE, e))?;
        // `upgrade_device_ptr` unwraps its event creation: a driver failure there panics inside
        // cudarc, which `guarded` turns into an error.
        let slice = guarded(STAGE, || {
            // SAFETY: `address` is a live allocation of `ctx` holding `len` elements of `T`,
            // owned by the buffer that owns this shadow and outlives it (the shadow lives in
            // the buffer's access log). The slice never frees it: it is `ManuallyDrop`, and
            // `Drop` below `leak`s it. Its contents are valid `T`s or not exactly as the
            // buffer's are: jitseam's own uses of the buffer read them as `T` anyway.
            Ok(unsafe { join.upgrade_device_ptr::<T>(address, len) })
        })?;
        joins().push(Arc::downgrade(&join));
        Ok(Self {
            slice: UnsafeCell::new(ManuallyDrop::new(slice)),
            join_handle: Arc::new(CudaStreamHandle {
                stream: Arc::clone(&join),
            }),
            join,
        })
    }

    fn slice(&self) -> &CudaSlice<T> {
        // SAFETY: no `&mut` to the slice is live: one exists only inside `publish` (whose
        // contract excludes every other access) and `view_mut` (under `&mut self`, for as long
        // as the view it returns lives).
        unsafe { &*self.slice.get() }
    }

    /// The whole buffer as a cudarc view.
    pub(super) fn view(&self) -> CudaView<'_, T> {
        self.slice().as_view()
    }

    /// The whole buffer as an exclusive cudarc view.
    pub(super) fn view_mut(&mut self) -> CudaViewMut<'_, T> {
        self.slice.get_mut().as_view_mut()
    }
}

/// The event a cudarc guard would record, with the guard disarmed so it records nothing.
pub(super) fn disarm(mut guard: SyncOnDrop<'_>) -> Option<&CudaEvent> {
    match &mut guard {
        SyncOnDrop::Record(target) => target.take().map(|(event, _)| event),
        SyncOnDrop::Sync(target) => {
            target.take();
            None
        }
    }
}

/// The join streams of the live shadows: a cudarc view whose stream is one of them is a view of
/// a jitseam buffer.
fn joins() -> MutexGuard<'static, Vec<Weak<CudaStream>>> {
    static JOINS: OnceLock<Mutex<Vec<Weak<CudaStream>>>> = OnceLock::new();
    lock(JOINS.get_or_init(Default::default))
}

/// Whether `stream` is the join stream of a live shadow: a slice on it is a view of a jitseam
/// buffer (or memory someone allocated on a stream taken from such a view, which is then
/// ordered as carefully, at no risk).
pub(super) fn is_shadow_stream(stream: &Arc<CudaStream>) -> bool {
    joins()
        .iter()
        .any(|join| std::ptr::eq(join.as_ptr(), Arc::as_ptr(stream)) && join.strong_count() > 0)
}

/// Waits on the host for every use of the buffer queued so far on any stream of `ctx`: what
/// must follow every use of a buffer cudarc may have read on streams jitseam never sees (see
/// the module docs).
pub(super) fn wait_for_every_use(ctx: &CudaContext, stage: &str) -> Result<(), Error> {
    ctx.synchronize().map_err(|e| driver_error(stage, e))
}

/// A read of a shadow by a jitseam launch through a cudarc view, on `stream`: dropped once the
/// launch is queued, it makes the join stream wait for the read event as it stands and for the
/// launch, and records the read event there, so the event covers every reader it covered and
/// this one (see the module docs). A failure is recorded in the context's error state, as
/// cudarc's own guards record theirs; the later uses that must follow every reader wait for
/// the whole context anyway.
pub(super) struct JoinedRead<'s> {
    pub(super) read: &'s CudaEvent,
    pub(super) join: &'s Arc<CudaStream>,
    pub(super) stream: &'s Arc<CudaStream>,
}

impl Drop for JoinedRead<'_> {
    fn drop(&mut self) {
        let ctx = self.join.context();
        ctx.record_err(self.join.wait(self.read));
        match self.stream.record_event(None) {
            Ok(launched) => {
                ctx.record_err(self.join.wait(&launched));
                ctx.record_err(self.read.record(self.join));
            }
            Err(e) => ctx.record_err::<()>(Err(e)),
        }
    }
}

fn no_events() -> Error {
    Error::Interop {
        reason: "the buffer's cudarc slice has no events (event tracking was disabled)".to_owned(),
    }
}

impl<T: 'static> ExternalUses for CudaShadow<T> {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn join_stream(&self) -> &Arc<dyn BackendStream> {
        &self.join_handle
    }

    fn order_after(&self, stream: &dyn BackendStream, kind: AccessKind) -> Result<(), Error> {
        const STAGE: &str = "wait for cudarc's uses of a buffer";
        if kind == AccessKind::Write {
            // cudarc's reads may have run on any number of streams, which its one read event
            // does not all name: the whole context is waited for.
            return self.wait_for_every_use(STAGE);
        }
        let stream = cudarc_of(stream).ok_or_else(|| Error::Device {
            stage: STAGE.to_owned(),
            message: format!("{stream:?} is not a cuda stream"),
        })?;
        // `stream` waits for cudarc's last write, which every earlier write precedes; the
        // guard hands back the read event, which a read need not wait for.
        let (_, guard) = self.slice().device_ptr(stream);
        disarm(guard);
        Ok(())
    }

    fn wait_for_every_use(&self, stage: &str) -> Result<(), Error> {
        wait_for_every_use(self.join.context(), stage)
    }

    unsafe fn publish(&self) -> Result<(), Error> {
        const STAGE: &str = "order cudarc's uses of a buffer after jitseam's";
        // SAFETY: the caller guarantees nothing else touches the slice during this call.
        let slice = unsafe { &mut **self.slice.get() };
        // The join stream waits for cudarc's last read and write; the guard hands back the
        // write event, recorded on the join stream after everything it waits for.
        let (_, guard) = slice.device_ptr_mut(&self.join);
        let write = disarm(guard).ok_or_else(no_events)?;
        write.record(&self.join).map_err(|e| driver_error(STAGE, e))
    }

    fn settle(&mut self) -> Result<(), Error> {
        self.wait_for_every_use("wait for cudarc's uses of a freed buffer")
    }
}

impl<T> Drop for CudaShadow<T> {
    fn drop(&mut self) {
        joins().retain(|join| {
            join.strong_count() > 0 && !std::ptr::eq(join.as_ptr(), Arc::as_ptr(&self.join))
        });
        // SAFETY: taken once, here, and the field is never used again.
        let slice = unsafe { ManuallyDrop::take(self.slice.get_mut()) };
        // Releases the events and the stream, never the memory: the buffer frees that. The
        // join stream waits for the events first, which is harmless.
        let _ = slice.leak();
    }
}
