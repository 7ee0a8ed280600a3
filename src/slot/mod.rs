//! Slot tables: bare `fn` pointers for JIT kernels adopted at run time.
//!
//! A runtime whose kernel table holds plain `fn` pointers (no captured environment) cannot store
//! a closure over a kernel loaded at run time. [`slot_table!`](crate::slot_table) therefore
//! generates, at build time, a [`SlotTable`] of `N` slots and `N` distinct dispatcher functions
//! (one monomorphized `fn` per slot, each with its own address). [`claim`] parks a bound erased
//! kernel in a free slot and answers a [`SlotRef`]: that slot's dispatcher, its index and a
//! generation. A runtime stores the dispatcher as its `fn` pointer and the binding next to it;
//! a call is made from the binding ([`SlotRef::call`]: its generation and the erased launch
//! arguments) and passed to the pointer, which launches through the same `check` and `marshal`
//! as every other launch.
//!
//! ```ignore
//! jitseam::slot_table!(pub static JIT_KERNELS: 64);
//!
//! let slot = jitseam::slot::claim(&JIT_KERNELS, bound_kernel)?;   // Kernel<Erased, DeviceBound>
//! let dispatch: jitseam::slot::SlotFn = slot.dispatch();         // store in the runtime's table
//! dispatch(&slot.call(&stream, &inputs, &mut outputs, &[n], &params))?;
//! jitseam::slot::release(&JIT_KERNELS, slot)?;                    // the slot is free again
//! ```
//!
//! # Generations: no stale binding launches a newer kernel
//!
//! Every claim draws a new generation from one process-wide counter, so a generation names one
//! claim in the whole process. A slot stores its occupant's generation (0 while empty); a
//! dispatch or release whose generation is not the slot's current one is refused with
//! [`Error::StaleSlot`], and so is one on an empty slot. A binding kept after its release, or
//! after its slot was reclaimed, can therefore never launch the slot's next occupant — nor a
//! kernel of another slot or another table, even if the runtime mixes up its pointers.
//!
//! A call carries the generation of the binding it was made from, and only a binding can make
//! one: [`SlotCall`] has no other constructor, and a [`SlotRef`] comes only from a claim. The
//! generations that [`SlotTable::generation`] and [`SlotRef::generation`] report are for
//! introspection; no number can be turned into a call, so a released binding stays stale.
//!
//! # Devices: parked kernels do not keep their device live
//!
//! A bound kernel holds a [`Device`](crate::Device) clone, which keeps the device live. A slot
//! keeps only a [`WeakDevice`]: when the runtime drops its last handle to a device, the device
//! dies ([`is_live`] turns false) and its slots become reclaimable. Dispatching a kernel whose
//! device is gone is refused with [`Error::DeviceGone`] (the stream of the call cannot be on a
//! dead device anyway, since a stream holds its device). When the bank is full, [`claim`]
//! reclaims every slot whose device is dead before answering [`Error::SlotTableFull`];
//! [`SlotTable::reclaim_dead`] does it on demand. A live device's slots are never reclaimed.
//!
//! # Locks and their order
//!
//! - **Slot bank** — one `Mutex` per table, kept with its slots (so that no two banks can ever
//!   hand out one slot). Claims, releases and reclamation serialize on it; they are the only
//!   writers of the slots.
//! - **Slots** take no lock. A slot holds a pointer to its occupant; a dispatch protects the
//!   occupant it loads with a hazard pointer (a store to its own thread's record, see
//!   `hazard.rs`), so dispatches on one slot from many threads write no shared line. A writer
//!   unlinks the occupant under the bank and, after unlocking it, waits until no dispatch
//!   still protects it before dropping it.
//! - **Liveness registry** (`device::is_live`) — a leaf: code holding it takes no other lock.
//!   Reclamation asks it while holding the bank.
//!
//! The order is **slot bank → liveness registry**, never the reverse: nothing that holds the
//! registry ever waits for the bank, and a dispatch waits for nothing at all, so dropping a
//! device (which takes the registry) can never wait for a claim, and a claim can never wait for
//! a device drop that waits for it. Occupants and device handles that a claim, release or
//! reclaim lets go of are waited for and dropped after the bank is released, so no destructor
//! (a module unload, a last device handle taking the registry) runs under it, and no wait for a
//! dispatch holds it. The unit tests of this module assert that liveness operations and
//! dispatches complete while the bank is held, and `tests/loom_slot.rs` runs this very code
//! under loom: claims, dispatches, releases, reclamation and device drops racing
//! (`RUSTFLAGS="--cfg loom" cargo test --release --test loom_slot`).
//!
//! A release waits for in-flight dispatches of that occupant to finish queuing their launch, so
//! once `release` returns no launch of the old occupant is still being queued.
//!
//! # Failures leak nothing
//!
//! A claim that finds no slot gives the kernel back inside the error. A runtime whose own later
//! step can decline after the claim uses [`SlotTable::claim_guarded`]: the [`SlotClaim`] guard
//! releases the slot when dropped unless [`SlotClaim::commit`]ted.

mod hazard;

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::ptr;
use std::sync::{Arc, PoisonError};

use crate::sync::{AtomicPtr, AtomicU64, Mutex, MutexGuard, Ordering};

use crate::abi::ParamValue;
use crate::artifact::Artifact;
use crate::device::{
    Arg, ArgMut, BackendFunction, ConfigLimits, DeviceId, LaunchConfig, Stream, WeakDevice, is_live,
};
use crate::error::{Error, TransitionError};
use crate::kernel::{Kernel, launch_facts};
use crate::launch::{Launch, LaunchPlan};
use crate::signature::Erased;
use crate::state::{DeviceBound, LoadedData};
use crate::telemetry::DispatchHandle;

/// The most slots a table may have; `slot_table!` refuses more at compile time.
pub const MAX_SLOTS: usize = 4096;

/// A slot's dispatcher: a bare `fn` pointer, distinct for every slot of every table.
pub type SlotFn = fn(&SlotCall<'_>) -> Result<(), Error>;

/// A bare kernel table entry: which slot, the dispatcher to call, and the generation a call must
/// carry. `Copy`; it owns nothing, and stops working (with [`Error::StaleSlot`]) once the claim
/// it came from is released or reclaimed.
#[derive(Debug, Clone, Copy)]
pub struct SlotRef {
    dispatch: SlotFn,
    index: usize,
    generation: u64,
}

impl SlotRef {
    /// The slot's dispatcher, to store as a bare `fn` pointer.
    pub fn dispatch(&self) -> SlotFn {
        self.dispatch
    }

    /// The slot's index in its table.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The generation every call through this binding must carry.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A call through this binding, carrying its generation: the only way to make a
    /// [`SlotCall`]. `shape` is `[n]` for the scalar and vectorized ABIs and the `R` extents for
    /// `Strided<R>`.
    pub fn call<'a, 'b: 'a>(
        &self,
        stream: &'a Stream,
        inputs: &'a [Arg<'b>],
        outputs: &'a mut [ArgMut<'b>],
        shape: &'a [usize],
        params: &'a [ParamValue],
    ) -> SlotCall<'a> {
        SlotCall {
            generation: self.generation,
            stream,
            inputs,
            outputs,
            shape,
            params,
            custom: None,
            not_sync: PhantomData,
        }
    }

    /// A call of a custom-ABI occupant: the arguments of
    /// [`Kernel::<Erased, DeviceBound>::launch_custom`](crate::Kernel) (`config` `None`: one
    /// thread per element of the kernel's covered count).
    pub fn call_custom<'a, 'b: 'a>(
        &self,
        stream: &'a Stream,
        config: Option<LaunchConfig>,
        inputs: &'a [Arg<'b>],
        outputs: &'a mut [ArgMut<'b>],
        params: &'a [ParamValue],
    ) -> SlotCall<'a> {
        SlotCall {
            generation: self.generation,
            stream,
            inputs,
            outputs,
            shape: &[],
            params,
            custom: Some(config),
            not_sync: PhantomData,
        }
    }

    /// Calls the dispatcher: `self.dispatch()(call)`.
    pub fn launch(&self, call: &SlotCall<'_>) -> Result<(), Error> {
        (self.dispatch)(call)
    }
}

/// One call through a slot: the generation of the binding and the erased launch arguments,
/// exactly those of [`Kernel::<Erased, DeviceBound>::launch`](crate::Kernel).
///
/// Made only by [`SlotRef::call`], so it carries the generation of a binding that a claim
/// answered: a released binding's calls stay stale. Built from an exclusive borrow of the
/// outputs and not `Sync`, so one call cannot launch from two threads at once into the same
/// outputs.
pub struct SlotCall<'a> {
    generation: u64,
    stream: &'a Stream,
    inputs: &'a [Arg<'a>],
    outputs: &'a [ArgMut<'a>],
    shape: &'a [usize],
    params: &'a [ParamValue],
    /// For a custom-ABI call ([`SlotRef::call_custom`]): its launch configuration, if any.
    custom: Option<Option<LaunchConfig>>,
    not_sync: PhantomData<Cell<()>>,
}

impl SlotCall<'_> {
    /// The generation the call carries: its binding's.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

impl fmt::Debug for SlotCall<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlotCall")
            .field("generation", &self.generation)
            .field("stream", &self.stream)
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .field("shape", &self.shape)
            .field("params", &self.params)
            .field("custom", &self.custom)
            .finish()
    }
}

/// A table of slots, generated by [`slot_table!`](crate::slot_table) as a `static`.
pub struct SlotTable {
    name: &'static str,
    /// The slots and their bank. Tables made over one [`Slots`] (only the hidden constructor
    /// can make two) share its bank, and so are one table under two names.
    array: &'static Slots<[Slot]>,
    dispatchers: &'static [SlotFn],
}

/// A table's slots and the bank that hands them out, one unit: whatever table is made over it,
/// every writer of these slots takes this one lock. `slot_table!` makes one per table (its
/// fields are private, so no other array and no part of one can stand for it).
#[doc(hidden)]
pub struct Slots<S: ?Sized> {
    bank: Mutex<Bank>,
    slots: S,
}

/// The free-slot bookkeeping, behind the bank lock.
#[derive(Debug)]
struct Bank {
    /// Slots `unused..` have never been claimed.
    unused: usize,
    /// Released or reclaimed slots below `unused`.
    free: Vec<usize>,
}

impl Bank {
    const fn new() -> Self {
        Self {
            unused: 0,
            free: Vec::new(),
        }
    }

    fn take(&mut self, capacity: usize) -> Option<usize> {
        if let Some(index) = self.free.pop() {
            return Some(index);
        }
        (self.unused < capacity).then(|| {
            self.unused += 1;
            self.unused - 1
        })
    }
}

/// One slot. Padded to a cache line pair so that dispatches on different slots from different
/// threads never share a line.
#[doc(hidden)]
#[repr(align(128))]
pub struct Slot {
    /// The occupant's generation, 0 while empty: for introspection. Dispatch checks the
    /// occupant's own copy, which cannot disagree with the occupant it loaded.
    generation: AtomicU64,
    /// The occupant's raw device id, 0 while empty: read by reclamation under the bank, so that
    /// it asks the registry without touching the occupant.
    device: AtomicU64,
    /// The occupant (a leaked `Box`), null while empty. Written only under the bank; read by
    /// dispatches under a hazard (see the module docs).
    occupant: AtomicPtr<Occupant>,
}

/// A parked kernel: everything a bound kernel holds, with a weak device handle.
struct Occupant {
    generation: u64,
    /// Under loom, tells the model about every use of the occupant (by a dispatch) and about
    /// its end (by its retirement), so that a use the protocol fails to order before the end
    /// is reported as a race instead of being read from freed memory.
    #[cfg(loom)]
    uses: Uses,
    artifact: Artifact,
    loaded: LoadedData,
    device: WeakDevice,
    max_grid_x: u32,
    limits: ConfigLimits,
    /// The bound kernel's launch plan, worked out at its bind from the parts above.
    plan: LaunchPlan,
    function: Arc<dyn BackendFunction>,
    telemetry: Option<DispatchHandle>,
}

/// The model's record of an occupant's uses: it holds nothing, and loom checks every access.
#[cfg(loom)]
struct Uses(loom::cell::UnsafeCell<()>);

// SAFETY: the cell holds `()`; it is only ever accessed through loom's checked `with` and
// `with_mut`, which is the point of sharing it.
#[cfg(loom)]
unsafe impl Sync for Uses {}

impl Slot {
    #[doc(hidden)]
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        Self {
            generation: AtomicU64::new(0),
            device: AtomicU64::new(0),
            occupant: AtomicPtr::new(ptr::null_mut()),
        }
    }

    #[doc(hidden)]
    #[cfg(loom)]
    pub fn new() -> Self {
        Self {
            generation: AtomicU64::new(0),
            device: AtomicU64::new(0),
            occupant: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// The occupant, read by a writer (the caller holds the bank, so no other writer can free
    /// it meanwhile).
    fn occupant_under_bank(&self) -> Option<&Occupant> {
        // SAFETY: occupants are freed only after being unlinked under the bank, which the
        // caller holds — the bank of this slot's array, which every writer of the slot takes,
        // through whichever table (tables made over one array share it); the pointer is either
        // null or a live leaked `Box`. `Relaxed`: the bank orders this load after the store that
        // linked it.
        unsafe { self.occupant.load(Ordering::Relaxed).as_ref() }
    }

    /// Puts `occupant` in the slot (the caller holds the bank), handing back the one it held to
    /// [`retire`] after the bank is released.
    fn occupy(&self, occupant: Box<Occupant>) -> Retired {
        self.generation
            .store(occupant.generation, Ordering::Relaxed);
        self.device
            .store(occupant.device.id().get(), Ordering::Relaxed);
        // `Release`: a dispatch that loads the pointer (`Acquire`) sees the occupant whole.
        Retired(
            self.occupant
                .swap(Box::into_raw(occupant), Ordering::AcqRel),
        )
    }

    /// Empties the slot (the caller holds the bank), handing back the occupant to [`retire`]
    /// after the bank is released.
    fn vacate(&self) -> Retired {
        self.generation.store(0, Ordering::Relaxed);
        self.device.store(0, Ordering::Relaxed);
        Retired(self.occupant.swap(ptr::null_mut(), Ordering::AcqRel))
    }
}

/// An occupant unlinked from its slot (or null): no new dispatch can reach it, but dispatches
/// in flight may still use it. Dropping it waits for them, then frees it; drop it with no
/// slot-table lock held.
struct Retired(*mut Occupant);

impl Retired {
    fn is_empty(&self) -> bool {
        self.0.is_null()
    }
}

impl Drop for Retired {
    fn drop(&mut self) {
        if self.0.is_null() {
            return;
        }
        hazard::wait_until_unprotected(self.0);
        #[cfg(loom)]
        {
            // SAFETY: as below; under loom the allocation is leaked rather than freed, so that
            // a dispatch the protocol failed to wait for reaches `uses` (and is reported) rather
            // than freed memory.
            let occupant = unsafe { &*self.0 };
            occupant.uses.0.with_mut(|_| ());
            // SAFETY: read once, from the only owner; the allocation is never used again.
            drop(unsafe { ptr::read(self.0) });
        }
        // SAFETY: the pointer came from `Box::into_raw` in `occupy`, was unlinked from its
        // slot (so no dispatch can load it again), and no dispatch protects it any longer; this
        // `Retired` is its only owner, so it is freed exactly once.
        #[cfg(not(loom))]
        drop(unsafe { Box::from_raw(self.0) });
    }
}

// SAFETY: a `Retired` owns its occupant like a `Box` would, and `Occupant` is `Send`.
unsafe impl Send for Retired {}

impl Default for Slot {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot")
            .field("generation", &self.generation.load(Ordering::Relaxed))
            .field("device", &self.device.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Generations come from one process-wide counter: a generation names one claim in the process.
fn next_generation() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl SlotTable {
    /// The table `slot_table!` expands to: named `name`, over `slots`, with `dispatchers[i]`
    /// the dispatcher of slot `i`. Not an API. A second table over the same `slots` shares
    /// their bank, so it is the same table under another name (its claims take other slots,
    /// never evict an occupant); dispatchers of another table's slots are refused as stale.
    #[doc(hidden)]
    #[cfg(not(loom))]
    pub const fn __new<const N: usize>(
        name: &'static str,
        slots: &'static Slots<[Slot; N]>,
        dispatchers: &'static [SlotFn; N],
    ) -> Self {
        Self {
            name,
            array: slots,
            dispatchers,
        }
    }

    /// A table for the loom model, which makes its tables (and their loom primitives) afresh
    /// for every execution it explores rather than in a `static`. `slots` and `dispatchers`
    /// must be equally long.
    #[doc(hidden)]
    #[cfg(loom)]
    pub fn __new(
        name: &'static str,
        slots: &'static Slots<[Slot]>,
        dispatchers: &'static [SlotFn],
    ) -> Self {
        Self {
            name,
            array: slots,
            dispatchers,
        }
    }

    /// The slots, in index order.
    fn slots(&self) -> &'static [Slot] {
        &self.array.slots
    }

    /// The dispatch of slot `index`, for the loom model, whose tables are not `static`s that
    /// generated dispatchers could name.
    #[doc(hidden)]
    #[cfg(loom)]
    pub fn __dispatch(&self, index: usize, call: &SlotCall<'_>) -> Result<(), Error> {
        self.dispatch(index, call)
    }

    /// The table's name (the `static`'s identifier).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The number of slots, fixed at build time.
    pub fn capacity(&self) -> usize {
        self.slots().len()
    }

    /// The dispatchers of every slot, in slot order: `N` distinct `fn` pointers.
    pub fn dispatchers(&self) -> &'static [SlotFn] {
        self.dispatchers
    }

    /// The generation slot `index` holds now (0 when empty or out of range). A snapshot: it may
    /// change as soon as it is read. For introspection only: a call is made from a [`SlotRef`],
    /// never from a number, so this cannot arm a binding.
    pub fn generation(&self, index: usize) -> u64 {
        self.slots()
            .get(index)
            .map_or(0, |s| s.generation.load(Ordering::Relaxed))
    }

    /// The device of slot `index`'s occupant, live or dead; `None` when empty. A snapshot.
    pub fn device_of(&self, index: usize) -> Option<DeviceId> {
        let raw = self.slots().get(index)?.device.load(Ordering::Relaxed);
        (raw != 0).then(|| DeviceId::from_raw(raw))
    }

    /// Parks `kernel` in a free slot and answers its binding. When no slot is free, first
    /// reclaims every slot whose device is dead; when still none is free, answers
    /// [`Error::SlotTableFull`] with the kernel given back, unchanged.
    ///
    /// The slot keeps only a weak handle to the kernel's device: the caller's own handles (its
    /// streams and buffers) are what keep the device, and so the slot, live.
    pub fn claim(
        &self,
        kernel: Kernel<Erased, DeviceBound>,
    ) -> Result<SlotRef, TransitionError<Kernel<Erased, DeviceBound>>> {
        let mut bank = self.lock_bank();
        let mut reclaimed = Vec::new();
        let mut index = bank.take(self.capacity());
        if index.is_none() {
            reclaimed = self.reclaim_locked(&mut bank);
            index = bank.take(self.capacity());
        }
        // `get` fails only if the bank handed out no index: `__new` makes both arrays exactly
        // as long as the capacity the bank counts up to.
        let found = index.and_then(|i| Some((i, self.slots().get(i)?, *self.dispatchers.get(i)?)));
        let Some((index, slot, dispatch)) = found else {
            drop(bank);
            drop(reclaimed);
            let error = Error::SlotTableFull {
                entry: kernel.entry().to_owned(),
                table: self.name,
                capacity: self.capacity(),
            };
            return Err(TransitionError::new(error, kernel));
        };
        let parts = kernel.into_bound_parts();
        let device = parts.device;
        let generation = next_generation();
        let occupant = Box::new(Occupant {
            generation,
            #[cfg(loom)]
            uses: Uses(loom::cell::UnsafeCell::new(())),
            artifact: parts.artifact,
            loaded: parts.loaded,
            device: device.downgrade(),
            max_grid_x: device.properties().max_grid_x,
            limits: parts.limits,
            plan: parts.plan,
            function: parts.function,
            telemetry: parts.telemetry,
        });
        // Empty: the bank hands out only vacated or never used slots.
        let previous = slot.occupy(occupant);
        drop(bank);
        // Destructors run with no lock held: the reclaimed occupants, the (empty) previous one,
        // and this strong device handle, which may be the device's last.
        drop(reclaimed);
        drop(previous);
        drop(device);
        Ok(SlotRef {
            dispatch,
            index,
            generation,
        })
    }

    /// Like [`claim`](Self::claim), but the slot is released again when the returned guard is
    /// dropped without [`SlotClaim::commit`]: for a runtime whose own next step (registering the
    /// pointer, say) can still decline.
    pub fn claim_guarded(
        &self,
        kernel: Kernel<Erased, DeviceBound>,
    ) -> Result<SlotClaim<'_>, TransitionError<Kernel<Erased, DeviceBound>>> {
        let slot = self.claim(kernel)?;
        Ok(SlotClaim {
            table: self,
            slot: Some(slot),
        })
    }

    /// Empties the slot of `slot`, if it still holds that claim; a stale binding is refused with
    /// [`Error::StaleSlot`] and changes nothing. Waits for dispatches in flight on that slot to
    /// finish queuing their launch.
    pub fn release(&self, slot: SlotRef) -> Result<(), Error> {
        let mut bank = self.lock_bank();
        let Some(cell) = self.slots().get(slot.index) else {
            return Err(self.stale(slot.index, 0, slot.generation));
        };
        let current = cell.occupant_under_bank().map_or(0, |o| o.generation);
        if current != slot.generation || current == 0 {
            return Err(self.stale(slot.index, current, slot.generation));
        }
        let taken = cell.vacate();
        bank.free.push(slot.index);
        drop(bank);
        // Waits for the dispatches still using the occupant, then drops it.
        drop(taken);
        Ok(())
    }

    /// Empties every slot whose device is dead, answering their indices (ascending). [`claim`]
    /// does this by itself when the table is full; a runtime may call it to free the kernels of
    /// dropped devices sooner.
    ///
    /// [`claim`]: Self::claim
    pub fn reclaim_dead(&self) -> Vec<usize> {
        let reclaimed = {
            let mut bank = self.lock_bank();
            self.reclaim_locked(&mut bank)
        };
        reclaimed.into_iter().map(|(index, _)| index).collect()
    }

    /// Checks that `slot` is current and its device live — exactly what a dispatch does before it
    /// launches (the occupant's protection, the generation check, the device check), without
    /// launching.
    pub fn validate(&self, slot: &SlotRef) -> Result<(), Error> {
        self.resolve(slot.index, slot.generation, |_| Ok(()))
    }

    /// The dispatch of slot `index`: resolve and check the generation, then launch through the
    /// one checked launch path. Called by the generated dispatchers; kept out of line so that
    /// each of them stays a few instructions.
    #[inline(never)]
    fn dispatch(&self, index: usize, call: &SlotCall<'_>) -> Result<(), Error> {
        self.resolve(index, call.generation, |occupant| {
            let facts = launch_facts(
                &occupant.artifact,
                &occupant.loaded,
                occupant.device.id(),
                occupant.max_grid_x,
                &occupant.limits,
                &occupant.plan,
            );
            let launch = Launch::new(
                facts,
                &*occupant.function,
                call.stream,
                occupant.telemetry.as_ref(),
            );
            match call.custom {
                None => launch.run(call.inputs, call.outputs, call.shape, call.params),
                Some(config) => {
                    let launch = match config {
                        Some(config) => launch.with_config(config),
                        None => launch,
                    };
                    launch.run_custom(call.inputs, call.outputs, call.params)
                }
            }
        })
    }

    /// Slot lookup, the occupant's protection (held while `then` runs), the generation check
    /// and the device check: the part of a dispatch before the launch.
    #[inline]
    fn resolve(
        &self,
        index: usize,
        generation: u64,
        then: impl FnOnce(&Occupant) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let Some(slot) = self.slots().get(index) else {
            return Err(self.stale(index, 0, generation));
        };
        hazard::protect(&slot.occupant, |occupant| {
            // The occupant's own generation: the one it was claimed with, whatever the slot
            // holds by now.
            let Some(occupant) = occupant.filter(|o| o.generation == generation) else {
                let current = occupant.map_or(0, |o| o.generation);
                return Err(self.stale(index, current, generation));
            };
            #[cfg(loom)]
            occupant.uses.0.with(|_| ());
            if occupant.device.is_dead() {
                return Err(Error::DeviceGone {
                    entry: occupant.artifact.link.entry_point.clone(),
                    table: self.name,
                    slot: index,
                    device: occupant.device.id(),
                });
            }
            let launched = then(occupant);
            #[cfg(loom)]
            occupant.uses.0.with(|_| ());
            launched
        })
    }

    /// Empties the slots of dead devices; the caller holds the bank (bank → registry).
    fn reclaim_locked(&self, bank: &mut Bank) -> Vec<(usize, Retired)> {
        let mut reclaimed = Vec::new();
        for (index, slot) in self.slots().iter().enumerate().take(bank.unused) {
            let raw = slot.device.load(Ordering::Relaxed);
            if raw == 0 || is_live(DeviceId::from_raw(raw)) {
                continue;
            }
            let occupant = slot.vacate();
            if !occupant.is_empty() {
                reclaimed.push((index, occupant));
            }
            bank.free.push(index);
        }
        reclaimed
    }

    fn lock_bank(&self) -> MutexGuard<'_, Bank> {
        // Every critical section leaves the bank consistent before anything that can panic.
        self.array
            .bank
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn stale(&self, slot: usize, expected: u64, found: u64) -> Error {
        Error::StaleSlot {
            table: self.name,
            slot,
            expected,
            found,
        }
    }
}

impl fmt::Debug for SlotTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let occupied = self
            .slots()
            .iter()
            .filter(|s| s.generation.load(Ordering::Relaxed) != 0)
            .count();
        f.debug_struct("SlotTable")
            .field("name", &self.name)
            .field("capacity", &self.capacity())
            .field("occupied", &occupied)
            .finish()
    }
}

/// A claim that is released when dropped, unless committed: see [`SlotTable::claim_guarded`].
#[derive(Debug)]
pub struct SlotClaim<'t> {
    table: &'t SlotTable,
    slot: Option<SlotRef>,
}

impl SlotClaim<'_> {
    /// The binding, to register with the runtime before committing.
    pub fn slot(&self) -> Option<SlotRef> {
        self.slot
    }

    /// Keeps the slot claimed and answers its binding.
    pub fn commit(mut self) -> Option<SlotRef> {
        self.slot.take()
    }
}

impl Drop for SlotClaim<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            // Only fails when the slot no longer holds this claim, which then needs no release.
            let _ = self.table.release(slot);
        }
    }
}

/// Parks `kernel` in a free slot of `table`: [`SlotTable::claim`].
pub fn claim(
    table: &SlotTable,
    kernel: Kernel<Erased, DeviceBound>,
) -> Result<SlotRef, TransitionError<Kernel<Erased, DeviceBound>>> {
    table.claim(kernel)
}

/// Empties the slot of a binding of `table`: [`SlotTable::release`].
pub fn release(table: &SlotTable, slot: SlotRef) -> Result<(), Error> {
    table.release(slot)
}

/// Implemented by `slot_table!` for a hidden type per table, so each dispatcher finds its table.
#[doc(hidden)]
pub trait SlotTableMarker: 'static {
    fn table() -> &'static SlotTable;
}

/// The dispatcher of slot `I` of table `T`: one distinct function per `(T, I)`.
#[doc(hidden)]
pub fn dispatch_slot<T: SlotTableMarker, const I: usize>(call: &SlotCall<'_>) -> Result<(), Error> {
    T::table().dispatch(I, call)
}

impl<S: ?Sized> fmt::Debug for Slots<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Lock-free: a table prints itself through its own `Debug`.
        f.debug_struct("Slots").finish_non_exhaustive()
    }
}

/// `N` empty slots and their bank, for the generated `static`.
#[doc(hidden)]
#[cfg(not(loom))]
pub const fn empty_slots<const N: usize>() -> Slots<[Slot; N]> {
    Slots {
        bank: Mutex::new(Bank::new()),
        slots: [const { Slot::new() }; N],
    }
}

/// `N` empty slots and their bank (loom's primitives have no `const` constructors).
#[doc(hidden)]
#[cfg(loom)]
pub fn empty_slots<const N: usize>() -> Slots<[Slot; N]> {
    Slots {
        bank: Mutex::new(Bank::new()),
        slots: std::array::from_fn(|_| Slot::new()),
    }
}

// A slot shares its occupant between the threads that dispatch it and frees it on whichever
// thread retires it: the occupant must be both `Send` and `Sync`, which `AtomicPtr` does not
// demand of it.
const _: () = {
    const fn shared_between_threads<T: Send + Sync>() {}
    shared_between_threads::<Occupant>();
};

#[cfg(test)]
mod tests {
    //! The lock order, asserted: while a thread holds the slot bank (as a claim, release or
    //! reclamation does), every liveness operation — minting a device, asking `is_live`,
    //! dropping a device's last handle — and every dispatch still completes. So nothing that
    //! takes the liveness registry (or dispatches) ever waits for the bank: the reverse
    //! edge that could close a cycle with "bank → registry" does not exist.

    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::abi::{AbiKind, AbiSpec};
    use crate::device::Device;
    use crate::dtype::ElementKind;
    use crate::testing::{FakeBackend, Seen};

    static DROPPED_WITH_BANK_FREE: AtomicU64 = AtomicU64::new(0);
    static DROPPED_UNDER_BANK: AtomicU64 = AtomicU64::new(0);

    fn device() -> Device {
        FakeBackend::builder().build().device()
    }

    /// A device whose functions, when dropped, record whether `probe`'s bank was free.
    fn probed_device(probe: &'static SlotTable) -> Device {
        FakeBackend::builder()
            .observe(move |seen| {
                if let Seen::Dropped { .. } = seen {
                    let counter = match probe.array.bank.try_lock() {
                        Ok(_) => &DROPPED_WITH_BANK_FREE,
                        Err(_) => &DROPPED_UNDER_BANK,
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            })
            .build()
            .device()
    }

    fn relu(device: &Device) -> Kernel<Erased, DeviceBound> {
        let spec = AbiSpec::owned(
            AbiKind::Scalar,
            vec![ElementKind::F32],
            vec![ElementKind::F32],
            vec![],
        );
        let artifact = Artifact::ptx(
            include_str!("../../tests/fixtures/relu_f32_scalar.ptx"),
            "baracuda_gen_relu_f32_scalar",
            spec,
        );
        Kernel::describe(artifact)
            .unwrap()
            .load()
            .unwrap()
            .bind(device)
            .unwrap()
    }

    struct Marker;
    impl SlotTableMarker for Marker {
        fn table() -> &'static SlotTable {
            &TABLE
        }
    }
    static SLOTS: Slots<[Slot; 2]> = empty_slots::<2>();
    static DISPATCHERS: [SlotFn; 2] = [dispatch_slot::<Marker, 0>, dispatch_slot::<Marker, 1>];
    static TABLE: SlotTable = SlotTable::__new("TABLE", &SLOTS, &DISPATCHERS);

    /// Runs `work` on another thread and answers whether it finished within ten seconds.
    fn completes(work: impl FnOnce() + Send + 'static) -> bool {
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            work();
            let _ = done.send(());
        });
        finished.recv_timeout(Duration::from_secs(10)).is_ok()
    }

    #[test]
    fn liveness_and_dispatch_never_wait_for_the_bank() {
        let owner = device();
        let slot = TABLE.claim(relu(&owner)).unwrap();

        let bank = TABLE.lock_bank();
        assert!(
            completes(|| {
                let other = device();
                let id = other.id();
                assert!(is_live(id));
                drop(other);
                assert!(!is_live(id));
            }),
            "a liveness operation waited for the slot bank"
        );
        let dispatcher = owner.clone();
        assert!(
            completes(move || {
                TABLE.validate(&slot).unwrap();
                let x = dispatcher.alloc::<f32>(8).unwrap();
                let mut y = dispatcher.alloc::<f32>(8).unwrap();
                let stream = dispatcher.default_stream();
                let inputs = [Arg::from(&x)];
                let mut outputs = [ArgMut::from(&mut y)];
                slot.launch(&slot.call(&stream, &inputs, &mut outputs, &[8], &[]))
                    .unwrap();
            }),
            "a dispatch waited for the slot bank"
        );
        drop(bank);
        TABLE.release(slot).unwrap();
    }

    struct ProbedMarker;
    impl SlotTableMarker for ProbedMarker {
        fn table() -> &'static SlotTable {
            &PROBED
        }
    }
    static PROBED_SLOTS: Slots<[Slot; 1]> = empty_slots::<1>();
    static PROBED_DISPATCHERS: [SlotFn; 1] = [dispatch_slot::<ProbedMarker, 0>];
    static PROBED: SlotTable = SlotTable::__new("PROBED", &PROBED_SLOTS, &PROBED_DISPATCHERS);

    #[test]
    fn occupants_are_dropped_with_the_bank_free() {
        // Occupants let go of by a claim that reclaims (twice), by a release and by an eager
        // reclamation: each is dropped after the bank was unlocked, so no destructor (a module
        // unload, a device's last handle) runs under it. A one-slot table: every claim after the
        // first has to reclaim the slot of the device dropped just before.
        for _ in 0..2 {
            let gone = probed_device(&PROBED);
            PROBED.claim(relu(&gone)).unwrap();
        }
        let live = probed_device(&PROBED);
        let slot = PROBED.claim(relu(&live)).unwrap();
        PROBED.release(slot).unwrap();
        let gone = probed_device(&PROBED);
        PROBED.claim(relu(&gone)).unwrap();
        drop(gone);
        assert_eq!(PROBED.reclaim_dead(), [0]);
        assert_eq!(DROPPED_UNDER_BANK.load(Ordering::Relaxed), 0);
        assert_eq!(DROPPED_WITH_BANK_FREE.load(Ordering::Relaxed), 4);
    }
}
