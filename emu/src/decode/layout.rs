//! The block's shared memory as the decoder lays it out: the static variables in the order the
//! decoder meets them, each at the next multiple of its alignment, then the dynamic arrays at
//! one offset after them.

/// Alignment of the dynamic shared arrays at the least.
pub(super) const DYNAMIC_ALIGN: u64 = 16;

/// The block's shared memory as the decoder lays it out.
#[derive(Debug, Default)]
pub(super) struct SharedLayout {
    /// End of the static variables placed so far.
    pub(super) end: u64,
    /// The slot that holds the offset of the dynamic arrays, once one is named.
    pub(super) dynamic_slot: Option<u32>,
    /// The largest alignment a dynamic array asks for.
    pub(super) dynamic_align: u64,
    /// Whether the program needs the threads of a block together: it uses shared memory,
    /// barriers or warp-level instructions.
    pub(super) block_scoped: bool,
}

/// What the linked program needs to know about its shared memory.
pub(super) struct SharedInfo {
    /// Bytes of static shared variables.
    pub(super) static_bytes: u64,
    /// Offset of the dynamic arrays.
    pub(super) dynamic_offset: u64,
    /// The slot holding that offset and its value, if a dynamic array is used.
    pub(super) dynamic_const: Option<(u32, u64)>,
}

impl SharedLayout {
    /// The layout once every body is compiled.
    pub(super) fn info(&self) -> SharedInfo {
        let align = self.dynamic_align.max(DYNAMIC_ALIGN);
        let dynamic_offset = self.end.next_multiple_of(align);
        SharedInfo {
            static_bytes: self.end,
            dynamic_offset,
            dynamic_const: self.dynamic_slot.map(|slot| (slot, dynamic_offset)),
        }
    }
}
