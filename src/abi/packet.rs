//! [`ArgPacket`]: the argument packet of one launch, the one thing a backend receives besides the
//! function, the stream and the geometry. Built only by the launch path's `marshal`.

use super::ParamLayout;

/// The argument packet of one launch: every `.param` at its layout offset, little-endian.
#[derive(Debug)]
pub struct ArgPacket<'a> {
    /// The packet when it fits (`len <= INLINE_PACKET`); zeros otherwise.
    inline: Aligned<INLINE_PACKET>,
    /// The packet when it does not fit; empty (and unallocated) otherwise.
    heap: Vec<u8>,
    len: usize,
    layout: &'a ParamLayout,
}

/// Packets up to 512 bytes (every 3-operand kernel up to rank 8 with a few params) live inline,
/// so a launch allocates nothing; larger ones, up to the 4096-byte limit, go to the heap.
const INLINE_PACKET: usize = 512;

#[derive(Debug, Clone, Copy)]
#[repr(C, align(16))]
struct Aligned<const N: usize>([u8; N]);

impl<'a> ArgPacket<'a> {
    /// `layout.size()` zero bytes: padding between params stays zero, so equal launches give
    /// equal packets.
    #[inline]
    pub(crate) fn zeroed(layout: &'a ParamLayout) -> Self {
        let len = layout.size();
        Self {
            inline: Aligned([0; INLINE_PACKET]),
            heap: if len > INLINE_PACKET {
                vec![0; len]
            } else {
                Vec::new()
            },
            len,
            layout,
        }
    }

    /// The whole packet.
    pub fn bytes(&self) -> &[u8] {
        if self.len <= INLINE_PACKET {
            self.inline.0.get(..self.len).unwrap_or(&[])
        } else {
            &self.heap
        }
    }

    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        if self.len <= INLINE_PACKET {
            self.inline.0.get_mut(..self.len).unwrap_or(&mut [])
        } else {
            &mut self.heap
        }
    }

    /// The layout the packet follows.
    pub fn layout(&self) -> &ParamLayout {
        self.layout
    }

    /// The bytes of parameter `index`.
    pub fn param(&self, index: usize) -> Option<&[u8]> {
        let p = self.layout.params().get(index)?;
        self.bytes().get(p.offset..p.offset + p.class.size())
    }
}
