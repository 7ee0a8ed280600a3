//! The fault records of guarded launches: one small device allocation per stream that ran a
//! guarded kernel, which the first failing guard of a launch fills in (see
//! [`jitseam_verify::FaultRecord`]), read back by the stream's next synchronizing call.
//!
//! A record belongs to one stream, so that the launches writing it run in order and a
//! synchronization of that stream covers them all. Each guarded kernel that ever launched on
//! the stream keeps its place in the record's list for as long as the record lives: its index
//! is the tag its launches pass, so a fault names its kernel even when it is read by a later
//! synchronization than the one that first covered the launch.
//!
//! A kernel remembers the stream, record and tag of its last guarded launch ([`RecordCache`]):
//! its next launch on the same stream takes them without the device's lock, as long as no
//! record of the device has been freed since (the records' generation).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use jitseam_verify::{FAULT_RECORD_BYTES, FaultRecord};

use super::{Backend, BackendStream};
use crate::error::{Error, GuardFault};

/// What a guard failure names: one guarded access of a kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardSite {
    /// 1-based PTX line of the access.
    pub line: u32,
    /// The operand's name, as errors print it (the declared one where there is one).
    pub operand: String,
    /// Bytes the access moves.
    pub bytes: u32,
}

/// The guards of one guarded kernel, in the order of the proof's guards (a fault record
/// names its guard by that index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardTable {
    /// Entry point.
    pub entry: String,
    /// Each guard.
    pub sites: Vec<GuardSite>,
}

/// One stream's fault record.
struct StreamRecord {
    /// Kept live while the record is: a free of the record waits for the stream's work.
    stream: Arc<dyn BackendStream>,
    address: u64,
    /// Every guarded kernel that launched on the stream since the record was made: a
    /// launch's tag is its kernel's index here.
    kernels: Vec<Arc<GuardTable>>,
}

/// The fault records of one device.
#[derive(Default)]
pub(crate) struct FaultRecords {
    streams: Mutex<Vec<StreamRecord>>,
    /// Bumped, under the lock, before any record is freed: a [`RecordCache`] entry taken at an
    /// older generation may name a freed record.
    generation: AtomicU64,
}

/// What a kernel remembers of its last guarded launch (see [`FaultRecords::record`]): the
/// stream's address, the records' generation when they were looked up, the stream's record
/// and the kernel's tag in it. A seqlock: `put` (which only one thread runs at a time) makes
/// `seq` odd while it writes the words, and a `get` that sees it odd or changed misses, so a
/// launch never reads half of one entry and half of another.
#[derive(Default)]
pub(crate) struct RecordCache {
    seq: AtomicU64,
    stream: AtomicUsize,
    generation: AtomicU64,
    address: AtomicU64,
    tag: AtomicU64,
    /// The cached stream, only compared, never upgraded: a weak count keeps the stream's
    /// allocation, so no later stream can have its address while it is the one cached.
    /// Replaced only after the words name the new one; held by `put` while it writes them.
    pin: Mutex<Option<Weak<dyn BackendStream>>>,
}

impl std::fmt::Debug for RecordCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordCache").finish_non_exhaustive()
    }
}

/// The address a stream's handle points at (0 is none's).
fn stream_address(stream: &Arc<dyn BackendStream>) -> usize {
    Arc::as_ptr(stream).cast::<()>() as usize
}

impl RecordCache {
    /// The record and tag of the last launch, if it was on `stream` at `generation`.
    #[inline]
    fn get(&self, stream: &Arc<dyn BackendStream>, generation: u64) -> Option<(u64, u64)> {
        let seq = self.seq.load(Ordering::Acquire);
        if seq & 1 != 0 {
            return None;
        }
        let cached = self.stream.load(Ordering::Relaxed);
        let at = self.generation.load(Ordering::Relaxed);
        let address = self.address.load(Ordering::Relaxed);
        let tag = self.tag.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        (self.seq.load(Ordering::Relaxed) == seq
            && cached == stream_address(stream)
            && at == generation)
            .then_some((address, tag))
    }

    /// Remembers a launch on `stream` at `generation`; skipped while another thread does.
    fn put(&self, stream: &Arc<dyn BackendStream>, generation: u64, address: u64, tag: u64) {
        let Ok(mut pin) = self.pin.try_lock() else {
            return;
        };
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        self.stream.store(stream_address(stream), Ordering::Relaxed);
        self.generation.store(generation, Ordering::Relaxed);
        self.address.store(address, Ordering::Relaxed);
        self.tag.store(tag, Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
        // Only now may the old stream's allocation go: no `get` that could still match it
        // passes the check of `seq`.
        *pin = Some(Arc::downgrade(stream));
    }
}

impl std::fmt::Debug for FaultRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultRecords").finish_non_exhaustive()
    }
}

fn same(stream: &Arc<dyn BackendStream>, record: &StreamRecord) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(stream), Arc::as_ptr(&record.stream))
}

impl FaultRecords {
    fn lock(&self) -> MutexGuard<'_, Vec<StreamRecord>> {
        // A panic while the list was held left it whole: every change is one push or swap.
        self.streams.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The fault record a guarded launch of `table`'s kernel on `stream` of `backend` writes,
    /// and the tag that names the kernel in it; the record is allocated (zeroed, on `stream`)
    /// at the stream's first guarded launch. `cache` is the kernel's: a launch on the stream
    /// of its last one takes them from there.
    ///
    /// A cached record is still the stream's: a record is freed only with the device, or once
    /// its stream is held by nothing but the record — and nothing upgrades a weak stream
    /// handle, so that stream launches nothing more, and the cache's weak count keeps any
    /// later stream from taking its address. Each free bumps the generation first, so an entry
    /// cached before a free that happened before this launch misses whatever freed it.
    #[inline]
    pub(super) fn record(
        &self,
        backend: &dyn Backend,
        stream: &Arc<dyn BackendStream>,
        table: &Arc<GuardTable>,
        cache: &RecordCache,
    ) -> Result<(u64, u64), Error> {
        if let Some(hit) = cache.get(stream, self.generation.load(Ordering::Acquire)) {
            return Ok(hit);
        }
        self.look_up(backend, stream, table, cache)
    }

    /// [`FaultRecords::record`] under the lock, remembered in `cache`.
    #[inline(never)]
    fn look_up(
        &self,
        backend: &dyn Backend,
        stream: &Arc<dyn BackendStream>,
        table: &Arc<GuardTable>,
        cache: &RecordCache,
    ) -> Result<(u64, u64), Error> {
        let mut streams = self.lock();
        let at = match streams.iter().position(|r| same(stream, r)) {
            Some(at) => at,
            None => {
                // A record of a stream no one else holds is of no use: its launches have been
                // reported or never will be. It is freed (once the stream's work has finished)
                // when a stream makes its first record: so a launch on a stream that has one
                // pays no walk, and the records of dropped streams never outnumber those made.
                streams.retain(|r| {
                    let held = Arc::strong_count(&r.stream) > 1;
                    if !held {
                        self.generation.fetch_add(1, Ordering::AcqRel);
                        backend.free(r.address, FAULT_RECORD_BYTES, &[&*r.stream]);
                    }
                    held
                });
                let address = backend.alloc(FAULT_RECORD_BYTES)?;
                if let Err(error) = backend.fill_bytes(&**stream, address, FAULT_RECORD_BYTES, 0) {
                    backend.free(address, FAULT_RECORD_BYTES, &[&**stream]);
                    return Err(error);
                }
                streams.push(StreamRecord {
                    stream: Arc::clone(stream),
                    address,
                    kernels: Vec::new(),
                });
                streams.len() - 1
            }
        };
        let Some(record) = streams.get_mut(at) else {
            return Err(Error::Device {
                stage: "guarded launch".to_owned(),
                message: "the stream's fault record is gone".to_owned(),
            });
        };
        let tag = match record.kernels.iter().position(|k| Arc::ptr_eq(k, table)) {
            Some(tag) => tag,
            None => {
                record.kernels.push(Arc::clone(table));
                record.kernels.len() - 1
            }
        };
        let (address, tag) = (record.address, tag as u64);
        // Read under the lock, which every bump holds: no record was freed between this and
        // the look-up.
        cache.put(
            stream,
            self.generation.load(Ordering::Acquire),
            address,
            tag,
        );
        Ok((address, tag))
    }

    /// After `stream` was synchronized: the first guard failure its fault record holds, as
    /// [`Error::GuardFault`] (the record is cleared, on the stream, for the launches after
    /// it); `Ok` when the stream never ran a guarded kernel or no guard failed.
    pub(super) fn report(
        &self,
        backend: &dyn Backend,
        stream: &Arc<dyn BackendStream>,
    ) -> Result<(), Error> {
        let streams = self.lock();
        let Some(record) = streams.iter().find(|r| same(stream, r)) else {
            return Ok(());
        };
        let mut bytes = [0u8; FAULT_RECORD_BYTES];
        backend.read(&**stream, record.address, &mut bytes)?;
        let Some(fault) = FaultRecord::read(&bytes) else {
            return Ok(());
        };
        backend.fill_bytes(&**stream, record.address, FAULT_RECORD_BYTES, 0)?;
        let table = usize::try_from(fault.tags[0])
            .ok()
            .and_then(|tag| record.kernels.get(tag));
        let site = table.and_then(|t| t.sites.get(fault.guard as usize));
        let entry = table.map_or("", |t| t.entry.as_str());
        let error = Error::GuardFault(Box::new(GuardFault {
            entry: entry.to_owned(),
            line: site.map_or(0, |s| s.line),
            operand: site.map_or_else(String::new, |s| s.operand.clone()),
            block: fault.block,
            thread: fault.thread,
            offset: fault.offset,
            bytes: site.map_or(0, |s| s.bytes),
            limit: fault.limit,
        }));
        crate::trace::refused("guard", entry, &error);
        Err(error)
    }

    /// Frees every fault record (the device is going away).
    pub(super) fn free_all(&self, backend: &dyn Backend) {
        let mut streams = self.lock();
        self.generation.fetch_add(1, Ordering::AcqRel);
        for record in streams.drain(..) {
            backend.free(record.address, FAULT_RECORD_BYTES, &[&*record.stream]);
        }
    }
}
