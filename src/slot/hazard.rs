//! Hazard pointers: readers protect what they read with a store to their own cache line, and a
//! writer that unlinks an object waits until no reader still protects it.
//!
//! A dispatch reads its slot's occupant from many threads at once. A shared reader count (a
//! read lock) would make every dispatch write the slot's line, and two threads on one slot
//! would fight over it. Here a reader writes only its thread's own [`Record`]: it publishes the
//! pointer it is about to use as a hazard, and then checks that the slot still holds it. A
//! writer unlinks the pointer first and then scans every record, waiting while one still holds
//! it. Both sides put a `SeqCst` fence between their store and their load, so at least one of
//! them sees the other: either the reader sees the pointer gone (and does not use it), or the
//! writer sees the hazard (and waits for the reader to clear it).
//!
//! Records live in one process-wide list and are never freed: a thread takes a free one on its
//! first protection, keeps it in a thread-local, and hands it back when it exits. A thread
//! whose local record is unavailable (nested protections beyond [`DEPTH`], or a protection from
//! a thread-local destructor) takes a spare record from the list for the one protection. A
//! protection uses its record's first clear hazard; only the protecting thread sets its own
//! record's hazards, so finding one needs no synchronization beyond loads of its own line.

use std::cell::Cell;
use std::ptr;

use crate::sync::{AtomicBool, AtomicPtr, Ordering, fence, wait_a_moment};

/// Protections one thread can hold at once (nested) through its own record.
const DEPTH: usize = 4;

/// One thread's hazards, on a line pair of its own so that no two threads' stores share one.
#[repr(align(128))]
struct Record {
    hazards: [AtomicPtr<()>; DEPTH],
    in_use: AtomicBool,
    /// The next record of the list; set before the record is published and never changed.
    next: *const Record,
}

// SAFETY: `next` is written only before the record is published (by the `Release` CAS that
// links it) and read only after an `Acquire` load of the list head; the rest are atomics.
unsafe impl Sync for Record {}
// SAFETY: as above; a record owns nothing through `next`.
unsafe impl Send for Record {}

/// Every record ever made, newest first.
struct Pool {
    head: AtomicPtr<Record>,
}

impl Pool {
    #[cfg(not(loom))]
    const fn new() -> Self {
        Self {
            head: AtomicPtr::new(ptr::null_mut()),
        }
    }

    #[cfg(loom)]
    fn new() -> Self {
        Self {
            head: AtomicPtr::new(ptr::null_mut()),
        }
    }

    fn records(&self) -> impl Iterator<Item = &'static Record> {
        // SAFETY: records are leaked (never freed) and linked only once fully initialized; the
        // `Acquire` load pairs with the `Release` CAS that published the head.
        let mut next = unsafe { self.head.load(Ordering::Acquire).as_ref() };
        std::iter::from_fn(move || {
            let record = next?;
            // SAFETY: `next` was set before `record` was published and points to a leaked,
            // published record (or is null).
            next = unsafe { record.next.as_ref() };
            Some(record)
        })
    }

    /// A record no thread uses, marked in use; a new one when every record is taken.
    fn acquire(&self) -> &'static Record {
        for record in self.records() {
            if !record.in_use.load(Ordering::Relaxed)
                && record
                    .in_use
                    .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return record;
            }
        }
        // One raw pointer, from which every later access to the record derives (this thread's
        // and, through the list, every other's): no `&mut` to it outlives its publication.
        let fresh: *mut Record = Box::into_raw(Box::new(Record {
            hazards: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            in_use: AtomicBool::new(true),
            next: ptr::null(),
        }));
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: `fresh` is a live allocation no other thread can reach yet: the CAS below
            // publishes it, and `next` is never written after that.
            unsafe { (*fresh).next = head };
            match self
                .head
                .compare_exchange_weak(head, fresh, Ordering::Release, Ordering::Relaxed)
            {
                // SAFETY: leaked (never freed), fully initialized, and from now on only read,
                // or written through its atomics.
                Ok(_) => return unsafe { &*fresh },
                Err(now) => head = now,
            }
        }
    }
}

#[cfg(not(loom))]
static POOL: Pool = Pool::new();

#[cfg(loom)]
loom::lazy_static! {
    static ref POOL: Pool = Pool::new();
}

/// This thread's record, taken on first use.
struct Local {
    record: Cell<Option<&'static Record>>,
}

impl Local {
    fn record(&self) -> &'static Record {
        match self.record.get() {
            Some(record) => record,
            None => {
                let record = POOL.acquire();
                self.record.set(Some(record));
                record
            }
        }
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        // A failed loom model drops its threads' locals outside the model while unwinding,
        // where loom's primitives cannot be touched; the record goes with the model anyway.
        #[cfg(loom)]
        if std::thread::panicking() {
            return;
        }
        if let Some(record) = self.record.get() {
            // Every hazard is clear: protections end before their thread does.
            record.in_use.store(false, Ordering::Release);
        }
    }
}

#[cfg(not(loom))]
std::thread_local! {
    static LOCAL: Local = const {
        Local {
            record: Cell::new(None),
        }
    };
}

#[cfg(loom)]
loom::thread_local! {
    static LOCAL: Local = Local {
        record: Cell::new(None),
    };
}

/// Clears a hazard when the protection ends, unwinding included: a hazard left set would make
/// the next writer of that pointer wait forever.
struct Held {
    hazard: &'static AtomicPtr<()>,
    /// The spare record to hand back, when the protection is not through the thread's own.
    spare: Option<&'static Record>,
}

impl Drop for Held {
    fn drop(&mut self) {
        // `Release`: the reader's every use of the object happens before a writer that sees
        // the hazard clear (with `Acquire`) frees it.
        self.hazard.store(ptr::null_mut(), Ordering::Release);
        if let Some(record) = self.spare {
            record.in_use.store(false, Ordering::Release);
        }
    }
}

impl Held {
    /// The first clear hazard of this thread's record, or of a spare record.
    #[inline]
    fn take() -> Self {
        let local = LOCAL.try_with(|local| {
            // `Relaxed`: only this thread sets its record's hazards.
            let record = local.record();
            record
                .hazards
                .iter()
                .find(|hazard| hazard.load(Ordering::Relaxed).is_null())
        });
        match local {
            Ok(Some(hazard)) => Self {
                hazard,
                spare: None,
            },
            _ => Self::spare(),
        }
    }

    #[cold]
    #[inline(never)]
    fn spare() -> Self {
        let record = POOL.acquire();
        Self {
            hazard: &record.hazards[0],
            spare: Some(record),
        }
    }
}

/// Runs `f` on the object `source` points to (or on `None` when it is null), keeping that object
/// from being freed by a writer until `f` returns: see [`wait_until_unprotected`].
#[inline]
pub(crate) fn protect<T, R>(source: &AtomicPtr<T>, f: impl FnOnce(Option<&T>) -> R) -> R {
    let held = Held::take();
    let mut current = source.load(Ordering::Acquire);
    loop {
        if current.is_null() {
            drop(held);
            return f(None);
        }
        held.hazard.store(current.cast(), Ordering::Relaxed);
        // Orders the hazard store before the re-load; pairs with the fence in
        // `wait_until_unprotected`, between the writer's unlink and its scan.
        fence(Ordering::SeqCst);
        let again = source.load(Ordering::Acquire);
        if again == current {
            break;
        }
        current = again;
    }
    // SAFETY: `current` was loaded from `source` after the hazard naming it was published
    // (fence in between), so a writer that unlinks it afterwards sees the hazard and waits
    // before freeing it; one that unlinked it before would have made the re-load differ. The
    // object stays valid until `held` clears the hazard, after `f` returns; `f` cannot keep the
    // reference past its return.
    let object = unsafe { &*current };
    let answer = f(Some(object));
    drop(held);
    answer
}

/// Waits until no reader protects `object`, which the caller has already unlinked from every
/// source readers load it from; afterwards no reader can reach it, and the caller may free it.
pub(crate) fn wait_until_unprotected<T>(object: *const T) {
    if object.is_null() {
        return;
    }
    let object: *mut () = object.cast_mut().cast();
    // Pairs with the reader's fence: see `protect`.
    fence(Ordering::SeqCst);
    for record in POOL.records() {
        for hazard in &record.hazards {
            let mut turn = 0;
            // `Acquire`: the reader's uses of the object happen before what follows.
            while hazard.load(Ordering::Acquire) == object {
                wait_a_moment(turn);
                turn = turn.saturating_add(1);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Protections nested past a record's hazards take spare records, and every hazard is clear
    /// again afterwards: a writer waiting for the object returns at once.
    #[test]
    fn nested_protections_past_the_local_record_use_spares_and_clear() {
        fn nest(source: &AtomicPtr<u32>, levels: usize) -> u32 {
            protect(source, |value| {
                let value = value.copied().unwrap_or(0);
                if levels == 0 {
                    value
                } else {
                    value + nest(source, levels - 1)
                }
            })
        }
        let object = Box::into_raw(Box::new(7u32));
        let source = AtomicPtr::new(object);
        assert_eq!(nest(&source, DEPTH + 2), 7 * (DEPTH as u32 + 3));
        source.store(ptr::null_mut(), Ordering::SeqCst);
        wait_until_unprotected(object);
        // SAFETY: unlinked and unprotected; made by `Box::into_raw` above.
        drop(unsafe { Box::from_raw(object) });
        assert_eq!(nest(&source, 1), 0);
    }
}
