//! The lanes of a lockstep group: how many, the lane-major register file they share, the
//! iteration over a mask of lanes, and the writes of a whole row for some lanes.

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

/// Lane indices of the set bits of `mask`, lowest first, by a scan of every lane: cheaper than
/// [`bits`] when most lanes are set, and the indices are visibly below [`LANES`].
#[inline(always)]
pub(crate) fn lanes_in(mask: u64) -> impl Iterator<Item = usize> {
    (0..LANES).filter(move |&lane| (mask >> lane) & 1 != 0)
}

/// Lanes whose predicate in `row` is true.
#[inline(always)]
pub(crate) fn true_lanes(row: &Row) -> u64 {
    row.iter()
        .enumerate()
        .fold(0u64, |m, (lane, &v)| m | (u64::from(v != 0) << lane))
}

/// Writes `out` into `row` for the lanes of `mask`.
#[inline(always)]
pub(crate) fn store_row(row: &mut Row, out: &Row, mask: u64) {
    if mask == u64::MAX {
        *row = *out;
    } else {
        for (lane, (r, &o)) in row.iter_mut().zip(out).enumerate() {
            if (mask >> lane) & 1 != 0 {
                *r = o;
            }
        }
    }
}
