//! Where a launch operand's memory comes from, and so how its uses are ordered across streams:
//! a jitseam buffer (its [`AccessLog`]), or memory that orders its own uses (a cudarc slice,
//! through cudarc's per-slice events).

use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

use super::access::AccessLog;
use super::backend::BackendStream;
use super::desc::ViewDesc;
use crate::error::Error;

/// Kept until the use it was acquired for is queued, then dropped: dropping it logs the use
/// with the memory's owner (cudarc records its event then).
pub(crate) trait Pending {}

impl<T> Pending for T {}

/// What [`Foreign::acquire`] hands back: the operand's description, and the guard that logs the
/// use once it is queued.
pub(crate) type Acquired<'s> = (ViewDesc, Box<dyn Pending + 's>);

/// Memory that orders its own uses across streams, read by a launch.
pub(crate) trait Foreign: Sync {
    /// Makes `stream` wait for the memory's earlier writes and describes it.
    fn acquire<'s>(&'s self, stream: &'s dyn BackendStream) -> Result<Acquired<'s>, Error>;
}

/// Memory that orders its own uses across streams, written by a launch.
pub(crate) trait ForeignMut: Send {
    /// Makes `stream` wait for the memory's earlier reads and writes and describes it.
    fn acquire_mut<'s>(&'s mut self, stream: &'s dyn BackendStream) -> Result<Acquired<'s>, Error>;
}

/// Where a shared operand's memory comes from.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    /// A jitseam buffer, borrowed for `'a`.
    Log(&'a AccessLog),
    /// Memory jitseam did not allocate, borrowed for `'a`.
    Foreign(&'a dyn Foreign),
}

/// Where an exclusive operand's memory comes from.
pub(crate) enum SourceMut<'a> {
    /// A jitseam buffer, exclusively borrowed (this range of it) for `'a`.
    Log(&'a AccessLog),
    /// Memory jitseam did not allocate, exclusively borrowed for `'a`.
    Foreign(ForeignRef<'a>),
}

/// An exclusive borrow of foreign memory that a launch taking its operands by shared slice can
/// still use exclusively (see [`ForeignRef::get`]).
pub(crate) struct ForeignRef<'a> {
    ptr: NonNull<dyn ForeignMut + 'a>,
    _borrow: PhantomData<&'a mut ()>,
}

// SAFETY: it stands for a `&'a mut dyn ForeignMut`, which is `Send` because `ForeignMut: Send`.
// It is deliberately not `Sync` (the raw pointer keeps it so): a shared `&ForeignRef` then never
// leaves its thread, which is what makes `get` sound.
unsafe impl Send for ForeignRef<'_> {}

impl<'a> ForeignRef<'a> {
    pub(crate) fn new(memory: &'a mut (dyn ForeignMut + 'a)) -> Self {
        Self {
            ptr: NonNull::from(memory),
            _borrow: PhantomData,
        }
    }

    /// The memory, exclusively, for one launch.
    ///
    /// # Safety
    /// No other reference obtained from this `ForeignRef` may be live while the returned one
    /// is: the one launch path calls it once per output per launch and drops the reference
    /// before returning, `ForeignRef` is not `Sync`, so no other thread can call it, and no
    /// code that could start another launch with the same operands (a custom backend's, a
    /// user's callback) may run on this thread while the reference lives.
    // The exclusivity a `&mut self` would prove is this fn's safety contract instead: the launch
    // takes its outputs by shared slice (the slot table's calls are shared).
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn get(&self) -> &mut (dyn ForeignMut + 'a) {
        // SAFETY: `ptr` came from a `&'a mut` that this value holds for `'a` (no one else can
        // use the memory meanwhile); the caller guarantees the returned borrow is the only one.
        unsafe { &mut *self.ptr.as_ptr() }
    }
}

impl fmt::Debug for Source<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Log(log) => f.debug_tuple("Log").field(log).finish(),
            Self::Foreign(_) => f.write_str("Foreign"),
        }
    }
}

impl fmt::Debug for SourceMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Log(log) => f.debug_tuple("Log").field(log).finish(),
            Self::Foreign(_) => f.write_str("Foreign"),
        }
    }
}

impl fmt::Debug for ForeignRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ForeignRef")
    }
}
