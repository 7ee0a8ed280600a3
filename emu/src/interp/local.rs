//! The `.local` state space: one private frame per thread of the running group.
//!
//! The decoder gives every `.local` variable of the entry and of each called `.func` its own
//! fixed offset (recursion is refused, so no two activations of a function are ever live at
//! once and a static layout is exact, as `ptxas` lays out a frame without a stack). A thread's
//! frame is those bytes; a local address is an offset in it, and an access not wholly inside
//! `[0, frame)` faults. Frames start zeroed for every group of threads: PTX leaves their initial
//! contents undefined, the emulator defines them, as it does for registers.

use std::ops::Range;

use super::fault::{Allocation, FaultKind};

/// The frames of the lanes of one worker's group, lane after lane.
pub(crate) struct LocalFrames {
    frame: usize,
    lanes: usize,
    bytes: Vec<u8>,
}

impl LocalFrames {
    /// Frames of `frame` bytes each for `lanes` lanes.
    pub(crate) fn new(frame: usize, lanes: usize) -> Self {
        Self {
            frame,
            lanes: lanes.max(1),
            bytes: vec![0; frame.saturating_mul(lanes)],
        }
    }

    /// Clears every frame before a new group of threads starts.
    #[inline]
    pub(crate) fn reset(&mut self) {
        if self.frame != 0 {
            self.bytes.fill(0);
        }
    }

    /// The bytes `[offset, offset + size)` of `lane`'s frame, if wholly inside it.
    #[inline(always)]
    fn span(&self, lane: usize, offset: u64, size: usize) -> Result<Range<usize>, FaultKind> {
        let offset = usize::try_from(offset).map_err(|_| FaultKind::OutOfBounds)?;
        match offset.checked_add(size) {
            Some(end) if end <= self.frame => {
                let base = (lane % self.lanes) * self.frame;
                Ok(base + offset..base + end)
            }
            _ => Err(FaultKind::OutOfBounds),
        }
    }

    /// Whether `[offset, offset + len)` lies wholly inside a frame.
    #[inline]
    pub(crate) fn check(&self, offset: u64, len: usize) -> Result<(), FaultKind> {
        self.span(0, offset, len).map(|_| ())
    }

    /// The `size`-byte little-endian value at local address `offset` of `lane`'s frame.
    #[inline]
    pub(crate) fn load(&self, lane: usize, offset: u64, size: usize) -> Result<u64, FaultKind> {
        let span = self.span(lane, offset, size)?;
        let bytes = self.bytes.get(span).ok_or(FaultKind::OutOfBounds)?;
        Ok(bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    /// Writes the low `size` bytes of `value` at local address `offset` of `lane`'s frame.
    #[inline]
    pub(crate) fn store(
        &mut self,
        lane: usize,
        offset: u64,
        size: usize,
        value: u64,
    ) -> Result<(), FaultKind> {
        let span = self.span(lane, offset, size)?;
        let bytes = self.bytes.get_mut(span).ok_or(FaultKind::OutOfBounds)?;
        for (b, v) in bytes.iter_mut().zip(value.to_le_bytes()) {
            *b = v;
        }
        Ok(())
    }

    /// The frame as an allocation whose first byte is at `base`, for fault reports.
    pub(crate) fn allocation(&self, base: u64) -> Allocation {
        Allocation {
            base,
            size: self.frame as u64,
        }
    }
}
