//! [`AccessLog`]: which streams may still be using one allocation, so that every use on another
//! stream is ordered after the conflicting ones by a device-side wait.
//!
//! # What is logged
//!
//! One entry per stream that touched the allocation since the last write that was ordered after
//! everything before it: the stream, and whether it wrote. A use on stream `S` first makes `S`
//! wait for the entries that conflict with it — for a read, the entries of other streams that
//! wrote (read-after-write); for a write, every entry of another stream (write-after-read,
//! write-after-write) — and is then logged itself; a write replaces the entries it waited for.
//! A use on the stream of the entries needs no wait: a stream runs its work in order.
//!
//! # Events are recorded when they are needed
//!
//! An entry keeps no event. A use that must wait for an entry records an event on that entry's
//! stream *then*, and waits for it. That event also covers work queued there after the logged
//! use, so the wait can be longer than needed but never too short, and a launch on the stream
//! that already owns the allocation records nothing at all. (An event recorded earlier and kept
//! would be wrong: another thread may queue a non-conflicting use — a read, or a disjoint half
//! of the buffer — on that stream after it was recorded.)
//!
//! # The same-stream fast path
//!
//! When every entry is one stream's, `owner` holds that stream's key (the address of its
//! handle, which the entry keeps alive) with the low bit set if it wrote. A use on that stream
//! that adds nothing new (a read, or a write when the entry already wrote) checks `owner`,
//! queues its work, and checks `owner` again: two atomic loads, no lock. A use that takes the
//! lock clears `owner` *before* it records any event, so a fast use that still sees its key
//! after queueing was queued before those events, and is covered by them; one that sees a
//! change logs itself under the lock.
//!
//! # Granularity
//!
//! One log per allocation: disjoint views of one buffer used on two streams are ordered as if
//! they overlapped. That costs concurrency, never correctness.
//!
//! # An external user
//!
//! A buffer handed to another runtime ([`AccessLog::hand_out`]: a cudarc view of it) gains an
//! [`ExternalUses`]: that runtime's own per-allocation events, which its uses wait for and
//! update on whichever of its streams they run. The log keeps the two disciplines in step:
//!
//! - *jitseam → external.* The external write event must cover every write, jitseam's too.
//!   A jitseam write marks the external events `stale`; the next hand-out joins the conflicting
//!   entries on the external user's join stream and records the write event there
//!   ([`ExternalUses::publish`]). Handing out for writing joins every entry, so the write
//!   event then covers all uses before it and the entries are dropped.
//! - *external → jitseam.* A hand-out logs a *mark* (did the external user get to write?)
//!   in place of a stream. A later jitseam use that conflicts with it waits for the external
//!   uses ([`ExternalUses::order_after`]), and a jitseam write ordered after it drops it. The
//!   external user's writes are ordered by one event (each waits for the last), its reads are
//!   not: they may have run on any number of its streams, which the log never learns. So a
//!   read waits for the external write event on the device, and whatever must follow every
//!   external use — a jitseam write, a hand-out for writing, the deferred free — waits for the
//!   external user's whole context on the host ([`ExternalUses::wait_for_every_use`]).
//!
//! A hand-out borrows the buffer (shared to read, exclusively to write) for as long as the
//! external user holds it, so a jitseam write never overlaps a live hand-out: this is what lets
//! `publish` take the external events exclusively while they are stale.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use super::backend::{Backend, BackendStream};
use crate::error::Error;

/// Low bit of [`AccessLog::owner`]: the owning stream wrote.
const WROTE: usize = 1;

/// How an operation uses an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccessKind {
    /// Reads it (a launch input, a copy to the host).
    Read,
    /// Writes it (a launch output, a copy to the device).
    Write,
}

/// Another runtime's uses of a jitseam allocation, which that runtime orders with its own
/// per-allocation read and write events (cudarc's slice events). See the module docs.
pub(crate) trait ExternalUses: Send + Sync + 'static {
    /// For the backend that made it, to get its own type back.
    fn as_any(&self) -> &dyn Any;

    /// As [`ExternalUses::as_any`], exclusively.
    fn as_any_mut(&mut self) -> &mut dyn Any;

    /// The private stream on which the log gathers jitseam's uses for the external user.
    fn join_stream(&self) -> &Arc<dyn BackendStream>;

    /// Orders a use of kind `kind` on `stream` after the external uses that conflict with it:
    /// for a read, `stream` waits on the device for the external writes; for a write, this
    /// waits for every external use ([`ExternalUses::wait_for_every_use`]).
    fn order_after(&self, stream: &dyn BackendStream, kind: AccessKind) -> Result<(), Error>;

    /// Blocks the calling thread until every external use queued so far has finished, on
    /// whichever of the external user's streams it ran (the external user's reads are on
    /// streams no log sees). `stage` names what waits, for the error.
    fn wait_for_every_use(&self, stage: &str) -> Result<(), Error>;

    /// Makes every later external use wait for everything queued on the join stream so far and
    /// for every earlier external use: the join stream waits for the external events, then the
    /// external write event is recorded on it.
    ///
    /// # Safety
    /// Nothing else may touch the external events during the call: no view the external user
    /// was handed earlier is still alive, and no other thread calls into this value meanwhile.
    unsafe fn publish(&self) -> Result<(), Error>;

    /// Waits for every external use, as [`ExternalUses::wait_for_every_use`]: what a deferred
    /// free must follow.
    fn settle(&mut self) -> Result<(), Error>;
}

/// The streams that may still be using one allocation. See the module docs.
#[derive(Default)]
pub(crate) struct AccessLog {
    /// Key of the only stream in `entries` (low bit: it wrote), or 0.
    owner: AtomicUsize,
    entries: Mutex<Entries>,
    /// The external user, once the allocation was handed out; set under the `entries` lock.
    external: OnceLock<Box<dyn ExternalUses>>,
}

#[derive(Default)]
struct Entries {
    list: Vec<Entry>,
    /// Bumped by every change; an entry remembers when it last changed.
    generation: u64,
    /// The external user's uses since the last jitseam write ordered after them.
    mark: Option<Mark>,
    /// Jitseam wrote since the external write event was last published (or never published).
    stale: bool,
}

/// The external user's uses, logged at a hand-out.
#[derive(Debug, Clone, Copy)]
struct Mark {
    /// It was handed the allocation to write.
    wrote: bool,
    generation: u64,
}

struct Entry {
    stream: Arc<dyn BackendStream>,
    wrote: bool,
    generation: u64,
}

/// What [`AccessLog::before`] found, for [`AccessLog::after`].
#[derive(Debug, Clone, Copy)]
#[must_use]
pub(crate) struct Ticket {
    /// The fast path was taken: nothing was waited for.
    fast: bool,
    /// The entries' generation when the waits were queued: entries not changed since are
    /// ordered before the use.
    generation: u64,
}

/// The key of a stream: the address of its shared handle. Handles are at least 8-byte aligned
/// (they follow two counters in the `Arc`), so the low bit is free for [`WROTE`].
#[inline(always)]
fn key_of(stream: &Arc<dyn BackendStream>) -> usize {
    Arc::as_ptr(stream).cast::<()>() as usize
}

/// A stream's key ([`key_of`]), computed once for all the operands of one launch: finding the
/// handle's address in a `dyn` `Arc` reads its alignment from the vtable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamKey(usize);

impl StreamKey {
    #[inline(always)]
    pub(crate) fn of(stream: &Arc<dyn BackendStream>) -> Self {
        Self(key_of(stream))
    }
}

impl Ticket {
    /// The ticket of a use whose [`AccessLog::before`] took the fast path: nothing was waited
    /// for.
    pub(crate) const OWNED: Self = Self {
        fast: true,
        generation: 0,
    };
}

impl AccessLog {
    /// A log with no use: a fresh allocation, which no queued work can touch.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        // No code path panics while holding the lock, so a poisoned one is still consistent.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[inline(always)]
    fn owned_by(&self, key: usize, kind: AccessKind) -> bool {
        let owner = self.owner.load(Ordering::SeqCst);
        owner & !WROTE == key && (kind == AccessKind::Read || owner & WROTE != 0)
    }

    /// Whether [`AccessLog::before`] of a use of kind `kind` on the stream `key` names takes
    /// the fast path, with nothing to wait for: its ticket is then [`Ticket::OWNED`]. One
    /// atomic load and a compare, with no side effect, so a launch may ask it of every operand
    /// before calling `before` on any.
    #[inline(always)]
    pub(crate) fn owned(&self, key: StreamKey, kind: AccessKind) -> bool {
        self.owned_by(key.0, kind)
    }

    /// [`AccessLog::after`] with [`Ticket::OWNED`], for the stream `key` names (`stream`'s).
    #[inline(always)]
    pub(crate) fn after_owned(
        &self,
        stream: &Arc<dyn BackendStream>,
        key: StreamKey,
        kind: AccessKind,
    ) {
        if self.owned_by(key.0, kind) {
            return;
        }
        self.after_locked(stream, kind, Ticket::OWNED, key.0);
    }

    /// Orders a use of kind `kind` on `stream`, about to be queued, after every conflicting use
    /// on other streams: `stream` waits, on the device, for an event recorded on each of their
    /// streams now. Call [`AccessLog::after`] once the use is queued.
    ///
    /// Inlined: on the owning stream this is one atomic load and a compare.
    #[inline]
    pub(crate) fn before(
        &self,
        backend: &dyn Backend,
        stream: &Arc<dyn BackendStream>,
        kind: AccessKind,
    ) -> Result<Ticket, Error> {
        let key = key_of(stream);
        if self.owned_by(key, kind) {
            return Ok(Ticket::OWNED);
        }
        self.before_locked(backend, stream, kind, key)
    }

    /// [`AccessLog::before`] off the fast path: under the lock.
    #[inline(never)]
    fn before_locked(
        &self,
        backend: &dyn Backend,
        stream: &Arc<dyn BackendStream>,
        kind: AccessKind,
        key: usize,
    ) -> Result<Ticket, Error> {
        let entries = self.lock();
        // Before any event is recorded: a fast use that still sees its key after queueing was
        // queued before these events (see the module docs). Only a holder of the lock stores a
        // key, so a 0 read here stays 0 until we unlock: it orders the fast uses exactly as our
        // own store would, without a second atomic write per use on a shared log.
        if self.owner.load(Ordering::SeqCst) != 0 {
            self.owner.store(0, Ordering::SeqCst);
        }
        for entry in &entries.list {
            let conflicts =
                key_of(&entry.stream) != key && (kind == AccessKind::Write || entry.wrote);
            if conflicts {
                let event = backend.record_event(&*entry.stream)?;
                backend.wait_event(&**stream, &*event)?;
            }
        }
        if let (Some(mark), Some(external)) = (entries.mark, self.external.get())
            && (kind == AccessKind::Write || mark.wrote)
        {
            external.order_after(&**stream, kind)?;
        }
        Ok(Ticket {
            fast: false,
            generation: entries.generation,
        })
    }

    /// Logs a use that [`AccessLog::before`] ordered and that is now queued on `stream`.
    ///
    /// Inlined: after a fast `before`, on the stream that still owns the log, this is one
    /// atomic load and a compare.
    #[inline]
    pub(crate) fn after(&self, stream: &Arc<dyn BackendStream>, kind: AccessKind, ticket: Ticket) {
        let key = key_of(stream);
        if ticket.fast && self.owned_by(key, kind) {
            return;
        }
        self.after_locked(stream, kind, ticket, key);
    }

    /// [`AccessLog::after`] off the fast path: under the lock.
    #[inline(never)]
    fn after_locked(
        &self,
        stream: &Arc<dyn BackendStream>,
        kind: AccessKind,
        ticket: Ticket,
        key: usize,
    ) {
        let mut entries = self.lock();
        entries.generation += 1;
        let generation = entries.generation;
        let wrote = kind == AccessKind::Write;
        if wrote && !ticket.fast {
            // Everything logged when the waits were queued is ordered before this write: keep
            // only what was logged since (concurrent, non-conflicting uses).
            entries
                .list
                .retain(|e| e.generation > ticket.generation && key_of(&e.stream) != key);
            if entries
                .mark
                .is_some_and(|m| m.generation <= ticket.generation)
            {
                entries.mark = None;
            }
        }
        if wrote && self.external.get().is_some() {
            entries.stale = true;
        }
        match entries.list.iter_mut().find(|e| key_of(&e.stream) == key) {
            Some(entry) => {
                entry.wrote |= wrote;
                entry.generation = generation;
            }
            None => entries.list.push(Entry {
                stream: Arc::clone(stream),
                wrote,
                generation,
            }),
        }
        let owner = owner_of(&entries, self.external.get().is_some());
        // Unchanged (a log shared by several streams stays at 0): nothing to publish.
        if self.owner.load(Ordering::SeqCst) != owner {
            self.owner.store(owner, Ordering::SeqCst);
        }
    }

    /// Hands the allocation to its external user for reading, which `make` creates on the
    /// first hand-out: the external user's reads will wait for every jitseam write logged so
    /// far, and jitseam's later writes wait for the external reads. Call it right before the
    /// external user gets its (shared) view.
    pub(crate) fn hand_out(
        &self,
        backend: &dyn Backend,
        make: impl FnOnce() -> Result<Box<dyn ExternalUses>, Error>,
    ) -> Result<&dyn ExternalUses, Error> {
        let mut entries = self.lock();
        if self.external.get().is_none() {
            // Fresh external events cover no jitseam write yet. Only set under the lock, so
            // no other hand-out can race this one.
            let _ = self.external.set(make()?);
            entries.stale = true;
        }
        let external = self.external.get().ok_or_else(|| Error::Interop {
            reason: "the buffer's external user was not recorded".to_owned(),
        })?;
        // SAFETY: `publish` runs only while `stale`: a jitseam write happened since the last
        // publish (or none ever did), and a jitseam write borrows the buffer exclusively, so
        // every view handed out before it is gone, and every hand-out since would have found
        // `stale` and cleared it, under this lock, before its view existed. Every other use of
        // the external events (`order_after`, other hand-outs) holds this lock.
        unsafe {
            hand_out_locked(
                &self.owner,
                &mut entries,
                &**external,
                backend,
                AccessKind::Read,
            )?
        };
        Ok(&**external)
    }

    /// Hands the allocation to its external user for writing, which `make` creates on the
    /// first hand-out: the external user's uses will wait for every jitseam use logged so far,
    /// and jitseam's later uses wait for the external ones.
    pub(crate) fn hand_out_mut(
        &mut self,
        backend: &dyn Backend,
        make: impl FnOnce() -> Result<Box<dyn ExternalUses>, Error>,
    ) -> Result<&mut dyn ExternalUses, Error> {
        let entries = self
            .entries
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if self.external.get().is_none() {
            let _ = self.external.set(make()?);
        }
        let external = self.external.get_mut().ok_or_else(|| Error::Interop {
            reason: "the buffer's external user was not recorded".to_owned(),
        })?;
        // SAFETY: `&mut self`: the buffer is borrowed exclusively, so no view handed out
        // earlier is alive and no other thread can reach the log.
        unsafe {
            hand_out_locked(
                &self.owner,
                entries,
                &**external,
                backend,
                AccessKind::Write,
            )?
        };
        Ok(&mut **external)
    }

    /// The streams whose queued work may still use the allocation, emptying the log: what a
    /// deferred free must wait for. If the external user had it since the last jitseam write,
    /// its uses are waited for here, on the host (they may be on streams the log never saw);
    /// `None` if that failed: the allocation must then be leaked, never freed.
    pub(crate) fn take_pending(&mut self) -> Option<Vec<Arc<dyn BackendStream>>> {
        *self.owner.get_mut() = 0;
        let entries = self
            .entries
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        let pending: Vec<_> = entries.list.drain(..).map(|e| e.stream).collect();
        if entries.mark.take().is_some()
            && let Some(external) = self.external.get_mut()
        {
            external.settle().ok()?;
        }
        Some(pending)
    }
}

/// The `owner` word for `entries`: the key of their only stream, with [`WROTE`] if a write on
/// that stream needs no lock. It does not if the external user may have read since (its reads
/// must be waited for), or if the external write event is up to date (the write must mark it
/// stale). Nothing owns a log whose external user may have written.
fn owner_of(entries: &Entries, shadowed: bool) -> usize {
    match (entries.list.as_slice(), entries.mark) {
        ([only], None) => {
            key_of(&only.stream) | usize::from(only.wrote && (!shadowed || entries.stale))
        }
        ([only], Some(mark)) if !mark.wrote => key_of(&only.stream),
        _ => 0,
    }
}

/// A hand-out of kind `kind` under the lock (or `&mut`) that gave `entries`: see
/// [`AccessLog::hand_out`] and the module docs.
///
/// # Safety
/// When `kind` is a write or `entries.stale` is set, the caller upholds
/// [`ExternalUses::publish`]'s contract.
unsafe fn hand_out_locked(
    owner: &AtomicUsize,
    entries: &mut Entries,
    external: &dyn ExternalUses,
    backend: &dyn Backend,
    kind: AccessKind,
) -> Result<(), Error> {
    // As in `before_locked`: before any event is recorded.
    if owner.load(Ordering::SeqCst) != 0 {
        owner.store(0, Ordering::SeqCst);
    }
    if kind == AccessKind::Write && entries.mark.is_some() {
        // The external user's earlier reads may be on streams no log saw, and its next write
        // waits for its one read event only: wait for all of them here.
        external.wait_for_every_use("hand a buffer to cudarc for writing")?;
    }
    if kind == AccessKind::Write || entries.stale {
        let join = external.join_stream();
        for entry in &entries.list {
            if kind == AccessKind::Write || entry.wrote {
                let event = backend.record_event(&*entry.stream)?;
                backend.wait_event(&**join, &*event)?;
            }
        }
        // SAFETY: the caller's contract.
        unsafe { external.publish()? };
        entries.stale = false;
    }
    entries.generation += 1;
    let wrote = kind == AccessKind::Write || entries.mark.is_some_and(|m| m.wrote);
    if kind == AccessKind::Write {
        // The external write event now covers every use logged so far.
        entries.list.clear();
    }
    entries.mark = Some(Mark {
        wrote,
        generation: entries.generation,
    });
    Ok(())
}

impl std::fmt::Debug for AccessLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Lock-free on purpose: views print their log, and may be printed while it is held.
        f.debug_struct("AccessLog")
            .field(
                "owner",
                &format_args!("{:#x}", self.owner.load(Ordering::Relaxed)),
            )
            .finish_non_exhaustive()
    }
}
