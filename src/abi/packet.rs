//! [`ArgPacket`]: the argument packet of one launch, the one thing a backend receives besides the
//! function, the stream and the geometry. Built only by the launch path's `marshal`.
//!
//! Besides the bytes, a packet answers two questions about the checked launch it was built
//! from, for a backend that runs the kernel itself: which device bytes its operands can reach
//! ([`ArgPacket::operands`], computed only when asked), and whether the body covers every
//! element whatever the grid ([`ArgPacket::grid_stride`]).

use super::{OperandReach, ParamLayout};

/// The argument packet of one launch: every `.param` at its layout offset, little-endian.
#[derive(Debug)]
pub struct ArgPacket<'a> {
    storage: Storage,
    len: usize,
    layout: &'a ParamLayout,
    operands: &'a dyn OperandReach,
    grid_stride: bool,
}

/// Where the bytes live. Only the variant in use is written when a packet is made, so a small
/// packet zeroes a few words rather than the whole inline buffer.
// The variants differ in size on purpose: a packet is built in the frame that uses it and never
// moved, so its size costs nothing, while boxing the large variant would allocate per launch.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Storage {
    /// Packets up to `SMALL_PACKET` bytes: every dense kernel with up to seven operands and a
    /// param.
    Small(Aligned<SMALL_PACKET>),
    /// Packets up to `INLINE_PACKET` bytes (every 3-operand kernel up to rank 8 with a few
    /// params).
    Inline(Aligned<INLINE_PACKET>),
    /// Larger packets, up to the 4096-byte limit.
    Heap(Vec<u8>),
}

const SMALL_PACKET: usize = 64;

/// Packets up to 512 bytes live inline, so a launch allocates nothing; larger ones go to the
/// heap.
const INLINE_PACKET: usize = 512;

#[derive(Debug, Clone, Copy)]
#[repr(C, align(16))]
struct Aligned<const N: usize>([u8; N]);

impl<'a> ArgPacket<'a> {
    /// `layout.size()` zero bytes: padding between params stays zero, so equal launches give
    /// equal packets. `operands` answers [`ArgPacket::operands`]; `grid_stride`,
    /// [`ArgPacket::grid_stride`].
    #[inline]
    pub(crate) fn zeroed(
        layout: &'a ParamLayout,
        operands: &'a dyn OperandReach,
        grid_stride: bool,
    ) -> Self {
        let len = layout.size();
        // Each variant is built where it is returned: choosing the storage first and moving it
        // into the packet makes rustc copy the whole inline variant (half a kilobyte) on every
        // launch.
        if len <= SMALL_PACKET {
            Self {
                storage: Storage::Small(Aligned([0; SMALL_PACKET])),
                len,
                layout,
                operands,
                grid_stride,
            }
        } else {
            Self::large(len, layout, operands, grid_stride)
        }
    }

    /// [`ArgPacket::zeroed`] of a packet too large for the small variant.
    #[cold]
    #[inline(never)]
    fn large(
        len: usize,
        layout: &'a ParamLayout,
        operands: &'a dyn OperandReach,
        grid_stride: bool,
    ) -> Self {
        let storage = if len <= INLINE_PACKET {
            Storage::Inline(Aligned([0; INLINE_PACKET]))
        } else {
            Storage::Heap(vec![0; len])
        };
        Self {
            storage,
            len,
            layout,
            operands,
            grid_stride,
        }
    }

    /// The whole packet.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        let all: &[u8] = match &self.storage {
            Storage::Small(inline) => &inline.0,
            Storage::Inline(inline) => &inline.0,
            Storage::Heap(heap) => heap,
        };
        all.get(..self.len).unwrap_or(&[])
    }

    #[inline]
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        let all: &mut [u8] = match &mut self.storage {
            Storage::Small(inline) => &mut inline.0,
            Storage::Inline(inline) => &mut inline.0,
            Storage::Heap(heap) => heap,
        };
        all.get_mut(..self.len).unwrap_or(&mut [])
    }

    /// The layout the packet follows.
    pub fn layout(&self) -> &ParamLayout {
        self.layout
    }

    /// The device bytes the launch's operands can reach: a backend that checks memory (the
    /// emulator) lends the kernel exactly these, inputs read-only.
    pub fn operands(&self) -> &'a dyn OperandReach {
        self.operands
    }

    /// Whether the body covers every element whatever the grid (a grid-stride loop), so that a
    /// backend may run it with fewer blocks than the geometry asks for; false: every block of
    /// the geometry must run.
    pub fn grid_stride(&self) -> bool {
        self.grid_stride
    }

    /// The bytes of parameter `index`.
    pub fn param(&self, index: usize) -> Option<&[u8]> {
        let p = self.layout.params().get(index)?;
        self.bytes().get(p.offset..p.offset + p.class.size())
    }
}
