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

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

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

/// The streams that may still be using one allocation. See the module docs.
#[derive(Default)]
pub(crate) struct AccessLog {
    /// Key of the only stream in `entries` (low bit: it wrote), or 0.
    owner: AtomicUsize,
    entries: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    list: Vec<Entry>,
    /// Bumped by every change; an entry remembers when it last changed.
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
            return Ok(Ticket {
                fast: true,
                generation: 0,
            });
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
        let owner = match entries.list.as_slice() {
            [only] => key_of(&only.stream) | usize::from(only.wrote),
            _ => 0,
        };
        // Unchanged (a log shared by several streams stays at 0): nothing to publish.
        if self.owner.load(Ordering::SeqCst) != owner {
            self.owner.store(owner, Ordering::SeqCst);
        }
    }

    /// The streams whose queued work may still use the allocation, emptying the log: what a
    /// deferred free must wait for.
    pub(crate) fn take_pending(&mut self) -> Vec<Arc<dyn BackendStream>> {
        *self.owner.get_mut() = 0;
        let entries = self
            .entries
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        entries.list.drain(..).map(|e| e.stream).collect()
    }
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
