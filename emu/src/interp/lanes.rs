//! The lanes of a lockstep group: how many, the lane-major register file they share, and the
//! iteration over a mask of lanes.

/// Threads in one lockstep group: they run each decoded instruction together, lane by lane.
pub const LANES: usize = 64;

/// One register slot across the lanes of a group (lane-major: `regs[slot][lane]`).
pub(crate) type Row = [u64; LANES];

/// The register file: one row per slot, and a last row that absent operands (`NONE`) read.
/// Every slot index is clamped to the last row, so no access can fail.
pub(crate) struct Registers {
    pub(super) rows: Vec<Row>,
}

impl Registers {
    pub(crate) fn new(slots: usize) -> Self {
        Self {
            rows: vec![[0; LANES]; slots.saturating_add(1)],
        }
    }

    #[inline(always)]
    pub(super) fn ix(&self, slot: u32) -> usize {
        (slot as usize).min(self.rows.len().saturating_sub(1))
    }
}

impl std::ops::Index<u32> for Registers {
    type Output = Row;

    #[inline(always)]
    fn index(&self, slot: u32) -> &Row {
        &self.rows[self.ix(slot)]
    }
}

impl std::ops::IndexMut<u32> for Registers {
    #[inline(always)]
    fn index_mut(&mut self, slot: u32) -> &mut Row {
        let i = self.ix(slot);
        &mut self.rows[i]
    }
}

/// Lane indices of the set bits of `mask`, lowest first.
#[inline(always)]
pub(crate) fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let lane = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(lane % LANES)
    })
}
