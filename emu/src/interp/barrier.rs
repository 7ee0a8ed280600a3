//! The sixteen barriers of a block, as the PTX ISA defines them.
//!
//! A thread arrives at barrier `n` with `bar.sync`, `bar.arrive` or `bar.red`; a warp has
//! arrived once every one of its threads that has not exited has. A barrier with a thread count
//! `b` completes when `b / 32` warps have arrived; one without completes when every warp with a
//! thread that has not exited has arrived, so threads that exit stop holding it up (the ISA's
//! `exit`: "if the exiting threads are holding up the barrier, the barrier is released"). On
//! completion the threads waiting at it continue, `bar.red` delivers the reduction of every
//! arrived thread's predicate, and the barrier starts over for its next use.
//!
//! The aligned forms (`bar.*`, `barrier.*.aligned`) must be executed by every thread of a warp
//! that has not exited, at the same instruction; the others (`barrier.sync`, …) count threads
//! wherever they arrive.
//!
//! What the GPU leaves undefined is refused (a typed error, never a guess): an aligned barrier
//! reached by part of a warp, a barrier number
//! past 15, a thread count that is zero, not a multiple of 32, larger than the block, or
//! different from the one the barrier's other threads gave; a thread arriving twice before the
//! barrier completes; `bar.red` mixed with another kind or another operation on one use.

use crate::decode::{BAR_ARRIVE, BAR_RED_AND, BAR_RED_OR, BAR_RED_POPC, BAR_SYNC};

/// Barriers per block.
pub(crate) const BARRIERS: usize = 16;

/// One barrier.
#[derive(Debug, Default, Clone)]
struct Bar {
    /// Uses completed so far: a thread waiting at use `g` continues once `generation > g`.
    generation: u64,
    /// Threads arrived at this use, per warp.
    arrived: Vec<u32>,
    /// Whether any thread has.
    any: bool,
    /// The thread count of this use, if it has one.
    expected: Option<u32>,
    /// The kind of this use's arrivals: a `BAR_RED_*` kind, or [`BAR_SYNC`] for `sync` and
    /// `arrive`.
    kind: Option<u8>,
    /// Reduction so far: arrived threads with a true predicate, and with a false one.
    trues: u32,
    falses: u32,
    /// The reduction of the last completed use: its generation, trues and falses.
    last: (u64, u32, u32),
}

/// A block's barriers and which of its threads have not exited.
#[derive(Debug, Default)]
pub(crate) struct BlockSync {
    /// Threads of each warp that have not exited (bit = lane in the warp).
    alive: Vec<u32>,
    /// Threads in the block.
    threads: u32,
    bars: Vec<Bar>,
}

impl BlockSync {
    /// A new block of `threads` threads: every thread alive, no barrier used.
    pub(crate) fn reset(&mut self, threads: u32) {
        let warps = threads.div_ceil(32) as usize;
        self.threads = threads;
        self.alive.clear();
        self.alive.extend((0..warps).map(|w| {
            let left = threads - 32 * w as u32;
            if left >= 32 {
                u32::MAX
            } else {
                (1u32 << left) - 1
            }
        }));
        self.bars.resize_with(BARRIERS, Bar::default);
        for bar in &mut self.bars {
            *bar = Bar {
                arrived: vec![0; warps],
                ..Bar::default()
            };
        }
    }

    /// Thread `lane` of warp `warp` arrives at barrier `id` with count `count` (if any) and
    /// kind `kind` (a `BAR_*`), contributing `pred` to a `bar.red`. Returns the use it arrived
    /// at (its generation), for a waiting thread to wait on.
    pub(crate) fn arrive(
        &mut self,
        warp: usize,
        lane: u32,
        id: u64,
        count: Option<u64>,
        kind: u8,
        pred: bool,
    ) -> Result<u64, &'static str> {
        let threads = self.threads;
        let bar = usize::try_from(id)
            .ok()
            .and_then(|id| self.bars.get_mut(id))
            .ok_or("barrier number past 15")?;
        let count = match count {
            None => None,
            Some(c) if c == 0 || c % 32 != 0 => {
                return Err("a barrier thread count that is not a positive multiple of 32");
            }
            Some(c) if c > u64::from(threads.next_multiple_of(32)) => {
                return Err("a barrier thread count larger than the block");
            }
            Some(c) => Some(c as u32),
        };
        let class = if kind == BAR_ARRIVE { BAR_SYNC } else { kind };
        if bar.any {
            if bar.expected != count {
                return Err("threads of one barrier give different thread counts");
            }
            if bar.kind != Some(class) {
                return Err("bar.red mixed with another barrier operation on one barrier");
            }
        }
        let word = bar
            .arrived
            .get_mut(warp)
            .ok_or("a thread outside its block")?;
        let bit = 1u32 << (lane % 32);
        if *word & bit != 0 {
            return Err("a thread arrived twice at a barrier before it completed");
        }
        *word |= bit;
        bar.any = true;
        bar.expected = count;
        bar.kind = Some(class);
        if pred {
            bar.trues += 1;
        } else {
            bar.falses += 1;
        }
        let generation = bar.generation;
        let warp_done = self
            .alive
            .get(warp)
            .is_some_and(|&alive| *word & alive == alive);
        if warp_done && let Ok(id) = usize::try_from(id) {
            self.settle(id);
        }
        Ok(generation)
    }

    /// The threads of `lanes` of warp `warp` exited.
    pub(crate) fn exit(&mut self, warp: usize, lanes: u32) {
        if let Some(alive) = self.alive.get_mut(warp) {
            *alive &= !lanes;
        }
        for id in 0..self.bars.len() {
            self.settle(id);
        }
    }

    /// Completes barrier `id` if enough warps have arrived.
    fn settle(&mut self, id: usize) {
        let Some(bar) = self.bars.get_mut(id) else {
            return;
        };
        if !bar.any {
            return;
        }
        let mut living = 0u32;
        let mut done = 0u32;
        for (&alive, &arrived) in self.alive.iter().zip(&bar.arrived) {
            if alive != 0 {
                living += 1;
                if arrived & alive == alive {
                    done += 1;
                }
            }
        }
        let complete = match bar.expected {
            None => done == living,
            Some(count) => done * 32 >= count,
        };
        if complete {
            bar.last = (bar.generation, bar.trues, bar.falses);
            bar.generation += 1;
            bar.arrived.fill(0);
            bar.any = false;
            bar.expected = None;
            bar.kind = None;
            bar.trues = 0;
            bar.falses = 0;
        }
    }

    /// Whether the use `generation` of barrier `id` has completed.
    pub(crate) fn passed(&self, id: u8, generation: u64) -> bool {
        self.bars
            .get(usize::from(id))
            .is_some_and(|bar| bar.generation > generation)
    }

    /// The result of `bar.red` of kind `kind` for a thread that waited at use `generation`.
    pub(crate) fn reduction(&self, id: u8, generation: u64, kind: u8) -> Result<u64, &'static str> {
        let bar = self
            .bars
            .get(usize::from(id))
            .ok_or("barrier number past 15")?;
        let (g, trues, falses) = bar.last;
        if g != generation {
            return Err("a bar.red result overtaken by a later use of its barrier");
        }
        Ok(match kind {
            BAR_RED_POPC => u64::from(trues),
            BAR_RED_AND => u64::from(falses == 0),
            BAR_RED_OR => u64::from(trues != 0),
            _ => 0,
        })
    }
}

/// Checks that the lanes of `eff` are, in each warp of the group they touch, every lane of
/// `live` (the lanes that have not exited): an aligned barrier must be executed by the whole
/// warp at once. On failure: a lane of a warp that is only partly there.
pub(crate) fn whole_warps(eff: u64, live: u64) -> Result<(), usize> {
    for half in 0..2 {
        let shift = 32 * half;
        let (running, alive) = ((eff >> shift) as u32, (live >> shift) as u32);
        if running != 0 && running != alive {
            return Err(shift + running.trailing_zeros() as usize);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_barrier_without_count_waits_for_every_living_warp() {
        let mut sync = BlockSync::default();
        sync.reset(40);
        for lane in 0..32 {
            assert_eq!(sync.arrive(0, lane, 0, None, BAR_SYNC, true), Ok(0));
        }
        assert!(!sync.passed(0, 0));
        for lane in 0..7 {
            sync.arrive(1, lane, 0, None, BAR_SYNC, true).unwrap();
        }
        assert!(!sync.passed(0, 0));
        // The last thread exits instead: the barrier no longer waits for it.
        sync.exit(1, 1 << 7);
        assert!(sync.passed(0, 0));
    }

    #[test]
    fn a_count_completes_with_that_many_warps() {
        let mut sync = BlockSync::default();
        sync.reset(128);
        for lane in 0..32 {
            sync.arrive(2, lane, 3, Some(64), BAR_ARRIVE, true).unwrap();
        }
        assert!(!sync.passed(3, 0));
        for lane in 0..32 {
            sync.arrive(0, lane, 3, Some(64), BAR_SYNC, true).unwrap();
        }
        assert!(sync.passed(3, 0));
        assert_eq!(
            sync.arrive(0, 0, 3, Some(96), BAR_SYNC, true),
            Ok(1),
            "the next use starts over"
        );
        assert!(sync.arrive(1, 0, 3, Some(64), BAR_SYNC, true).is_err());
        assert!(sync.arrive(0, 0, 3, Some(96), BAR_SYNC, true).is_err());
        assert!(sync.arrive(0, 1, 16, None, BAR_SYNC, true).is_err());
        assert!(sync.arrive(0, 1, 4, Some(48), BAR_SYNC, true).is_err());
    }
}
