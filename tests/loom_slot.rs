//! A loom model of the slot table protocol of `src/slot.rs`: the slot bank `Mutex`, per-slot
//! `RwLock` + generation + device id, the liveness registry `Mutex` (a leaf), and devices whose
//! last handle's drop marks them dead and then removes their id from the registry. Loom runs every
//! interleaving (no preemption bound: the models are small enough to explore exhaustively) and
//! fails on a deadlock or a failed assertion.
//!
//! What it shows:
//! - claim / reclamation / device drop / dispatch never deadlock with the order
//!   slot bank → liveness registry (and bank → slot), never the reverse;
//! - a dispatch never reaches a kernel other than the one its generation was claimed for, and a
//!   slot whose device a dispatch still holds is never reclaimed under it;
//! - the model can see the deadlock the order forbids: a device drop that took the bank while
//!   holding the registry deadlocks against a reclaiming claim (asserted in a child process).
//!
//! Compiled only with `--cfg loom`; a plain `cargo test` builds nothing here. Run with
//! `RUSTFLAGS="--cfg loom" cargo test --release --test loom_slot` (a separate
//! `CARGO_TARGET_DIR` avoids rebuilding the normal target afterwards).
#![cfg(loom)]

use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use loom::sync::{Arc, Mutex, RwLock};
use loom::thread;

/// The liveness registry: live device ids. A leaf lock, unless `reversed` (the broken model).
struct Registry {
    live: Mutex<Vec<u64>>,
}

impl Registry {
    fn is_live(&self, id: u64) -> bool {
        self.live.lock().unwrap().contains(&id)
    }
}

/// One device context; the model's `Arc<Device>` clones are the real `Device` clones.
struct Device {
    id: u64,
    /// The weak handle's view: false once the last strong handle is gone.
    alive: Arc<AtomicBool>,
    registry: Arc<Registry>,
    /// The broken order, for the negative model: take the bank while holding the registry.
    reversed: Option<Arc<Table>>,
}

impl Device {
    fn new(id: u64, registry: &Arc<Registry>) -> Arc<Self> {
        registry.live.lock().unwrap().push(id);
        Arc::new(Self {
            id,
            alive: Arc::new(AtomicBool::new(true)),
            registry: registry.clone(),
            reversed: None,
        })
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // The strong count reaches zero first (the weak handle sees it), then the token's drop
        // takes the registry — and nothing else.
        self.alive.store(false, Ordering::SeqCst);
        let mut live = self.registry.live.lock().unwrap();
        live.retain(|&id| id != self.id);
        if let Some(table) = &self.reversed {
            drop(table.bank.lock().unwrap());
        }
    }
}

struct Occupant {
    kernel: u64,
    device: u64,
    alive: Arc<AtomicBool>,
}

struct Slot {
    generation: AtomicU64,
    device: AtomicU64,
    occupant: RwLock<Option<Occupant>>,
}

struct Bank {
    unused: usize,
    free: Vec<usize>,
}

struct Table {
    bank: Mutex<Bank>,
    slots: Vec<Slot>,
    next_generation: AtomicU64,
    registry: Arc<Registry>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SlotRef {
    index: usize,
    generation: u64,
}

#[derive(Debug, PartialEq, Eq)]
enum Refused {
    Stale,
    DeviceGone,
    DeviceMismatch,
    Full,
}

impl Table {
    fn new(capacity: usize, registry: &Arc<Registry>) -> Arc<Self> {
        Arc::new(Self {
            bank: Mutex::new(Bank {
                unused: 0,
                free: Vec::new(),
            }),
            slots: (0..capacity)
                .map(|_| Slot {
                    generation: AtomicU64::new(0),
                    device: AtomicU64::new(0),
                    occupant: RwLock::new(None),
                })
                .collect(),
            next_generation: AtomicU64::new(1),
            registry: registry.clone(),
        })
    }

    fn take(&self, bank: &mut Bank) -> Option<usize> {
        bank.free.pop().or_else(|| {
            (bank.unused < self.slots.len()).then(|| {
                bank.unused += 1;
                bank.unused - 1
            })
        })
    }

    /// `SlotTable::claim`: bank → (reclaim: registry, then slot write) → slot write.
    fn claim(&self, kernel: u64, device: &Arc<Device>) -> Result<SlotRef, Refused> {
        let mut reclaimed = Vec::new();
        let mut bank = self.bank.lock().unwrap();
        let mut index = self.take(&mut bank);
        if index.is_none() {
            for (i, slot) in self.slots.iter().enumerate().take(bank.unused) {
                let id = slot.device.load(Ordering::Relaxed);
                if id == 0 || self.registry.is_live(id) {
                    continue;
                }
                let mut occupant = slot.occupant.write().unwrap();
                slot.generation.store(0, Ordering::Relaxed);
                slot.device.store(0, Ordering::Relaxed);
                reclaimed.push(occupant.take());
                bank.free.push(i);
            }
            index = self.take(&mut bank);
        }
        let Some(index) = index else {
            return Err(Refused::Full);
        };
        let generation = self.next_generation.fetch_add(1, Ordering::Relaxed);
        let slot = &self.slots[index];
        {
            let mut occupant = slot.occupant.write().unwrap();
            slot.generation.store(generation, Ordering::Relaxed);
            slot.device.store(device.id, Ordering::Relaxed);
            *occupant = Some(Occupant {
                kernel,
                device: device.id,
                alive: device.alive.clone(),
            });
        }
        drop(bank);
        drop(reclaimed);
        Ok(SlotRef { index, generation })
    }

    /// `SlotTable::release`: bank → slot write.
    fn release(&self, slot_ref: SlotRef) -> Result<(), Refused> {
        let mut bank = self.bank.lock().unwrap();
        let slot = &self.slots[slot_ref.index];
        let taken = {
            let mut occupant = slot.occupant.write().unwrap();
            if slot.generation.load(Ordering::Relaxed) != slot_ref.generation || occupant.is_none()
            {
                return Err(Refused::Stale);
            }
            slot.generation.store(0, Ordering::Relaxed);
            slot.device.store(0, Ordering::Relaxed);
            occupant.take()
        };
        bank.free.push(slot_ref.index);
        drop(bank);
        drop(taken);
        Ok(())
    }

    /// A dispatch: the slot's read lock only; answers the kernel that would launch.
    fn dispatch(&self, slot_ref: SlotRef, stream: &Arc<Device>) -> Result<u64, Refused> {
        let slot = &self.slots[slot_ref.index];
        let occupant = slot.occupant.read().unwrap();
        let current = slot.generation.load(Ordering::Relaxed);
        let Some(occupant) = occupant.as_ref().filter(|_| current == slot_ref.generation) else {
            return Err(Refused::Stale);
        };
        if !occupant.alive.load(Ordering::SeqCst) {
            return Err(Refused::DeviceGone);
        }
        if occupant.device != stream.id {
            return Err(Refused::DeviceMismatch);
        }
        Ok(occupant.kernel)
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    // Exhaustive: every interleaving, not only those with few preemptions.
    builder.preemption_bound = None;
    builder.check(f);
}

/// A full one-slot table holds kernel 1 of device A. Thread X drops its handle of A; thread Z
/// dispatches kernel 1 through a stream of A (another handle) and then drops it; thread Y
/// claims kernel 2 on device B, reclaiming the slot if A is dead by then. No interleaving
/// deadlocks; Z always launches kernel 1 (A is live while Z holds its stream, so the slot cannot
/// be reclaimed under it); Y either reclaimed A's slot or was told the table is full.
#[test]
fn claim_reclaim_and_device_drop_never_deadlock_or_launch_a_newer_kernel() {
    model(|| {
        let registry = Arc::new(Registry {
            live: Mutex::new(Vec::new()),
        });
        let table = Table::new(1, &registry);
        let a = Device::new(1, &registry);
        let b = Device::new(2, &registry);
        let old = table.claim(1, &a).unwrap();
        let stream_a = a.clone();

        let x = thread::spawn(move || drop(a));
        let z = {
            let table = table.clone();
            thread::spawn(move || {
                let launched = table.dispatch(old, &stream_a);
                drop(stream_a);
                launched
            })
        };
        let y = {
            let (table, b) = (table.clone(), b.clone());
            thread::spawn(move || table.claim(2, &b))
        };
        x.join().unwrap();
        assert_eq!(z.join().unwrap(), Ok(1));
        match y.join().unwrap() {
            Ok(new) => {
                assert_eq!(table.dispatch(old, &b), Err(Refused::Stale));
                assert_eq!(table.dispatch(new, &b), Ok(2));
            }
            Err(refused) => {
                assert_eq!(refused, Refused::Full);
                // A is dead now; the next claim reclaims its slot.
                let new = table.claim(2, &b).unwrap();
                assert_eq!(table.dispatch(new, &b), Ok(2));
                assert_eq!(table.dispatch(old, &b), Err(Refused::Stale));
            }
        }
    });
}

/// One thread releases kernel 1's slot and claims kernel 2 on the same device (so the new
/// occupant reuses the slot); another dispatches the old binding meanwhile. It launches kernel 1
/// or is refused as stale — never kernel 2.
#[test]
fn a_stale_binding_never_reaches_the_slots_next_occupant() {
    model(|| {
        let registry = Arc::new(Registry {
            live: Mutex::new(Vec::new()),
        });
        let table = Table::new(1, &registry);
        let device = Device::new(1, &registry);
        let old = table.claim(1, &device).unwrap();

        let reuser = {
            let (table, device) = (table.clone(), device.clone());
            thread::spawn(move || {
                table.release(old).unwrap();
                table.claim(2, &device).unwrap()
            })
        };
        let launched = table.dispatch(old, &device);
        assert!(
            matches!(launched, Ok(1) | Err(Refused::Stale)),
            "{launched:?}"
        );
        let new = reuser.join().unwrap();
        assert_eq!(new.index, old.index);
        assert_eq!(table.dispatch(old, &device), Err(Refused::Stale));
        assert_eq!(table.dispatch(new, &device), Ok(2));
    });
}

/// The order the model exists to check, broken on purpose: a device drop that takes the bank
/// while holding the registry, against a claim that holds the bank and asks the registry while
/// reclaiming. Loom must find the deadlock. Loom aborts the process while unwinding out of a
/// deadlocked model, so the broken model runs in a child process whose failure is asserted.
#[test]
fn the_reverse_order_deadlocks() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "reverse_order_model",
            "--ignored",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stderr) + String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "the broken model passed");
    assert!(printed.contains("deadlock; threads"), "{printed}");
}

#[test]
#[ignore = "the broken model: run by `the_reverse_order_deadlocks` in a child process"]
fn reverse_order_model() {
    model(|| {
        let registry = Arc::new(Registry {
            live: Mutex::new(Vec::new()),
        });
        let table = Table::new(1, &registry);
        let occupant = Device::new(1, &registry);
        table.claim(1, &occupant).unwrap();
        drop(occupant); // dead: the full table has a slot to reclaim
        registry.live.lock().unwrap().push(2);
        let broken = Arc::new(Device {
            id: 2,
            alive: Arc::new(AtomicBool::new(true)),
            registry: registry.clone(),
            reversed: Some(table.clone()),
        });
        let claimer = Device::new(3, &registry);
        let dropper = thread::spawn(move || drop(broken));
        let _ = table.claim(2, &claimer);
        dropper.join().unwrap();
    });
}
