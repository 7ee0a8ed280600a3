//! State spaces and their windows in the emulator's generic address space.
//!
//! PTX gives every state space its own addresses (`ld.local [a]` reads byte `a` of the thread's
//! local frame) and maps some of them into one generic address space (`cvta.local` converts a
//! local address to the generic address of the same byte). The emulator reserves one span of
//! generic addresses, [`RESERVED`], for the windows it needs; everything outside it is global
//! memory as the launch's owner maps it.
//!
//! | space    | its own address of byte `i` | generic address            |
//! |----------|-----------------------------|----------------------------|
//! | `.global`| the generic address         | itself                     |
//! | `.const` | the generic address         | itself (in [`CONST_VARS`]) |
//! | `.param` | the generic address         | itself (in [`PARAM_WINDOW`]) |
//! | `.local` | `i` (offset in the frame)   | [`LOCAL_WINDOW`] + `i`     |
//! | `.shared`| `i` (offset in the block's) | [`SHARED_WINDOW`] + `i`    |
//!
//! Module `.global` variables live in [`GLOBAL_VARS`], module `.const` variables in
//! [`CONST_VARS`]; a launch's kernel parameters are readable in [`PARAM_WINDOW`] (offset `i`
//! of the argument packet at `PARAM_WINDOW + i`).

use std::ops::Range;

/// Every generic address the emulator keeps for its own windows; the owner of a launch's memory
/// lends nothing here. It lies far above any allocator's addresses (jitseam's emulator device
/// allocates from `0x7f00_0000_0000` up, and stops below it).
pub const RESERVED: Range<u64> = 0xff00_0000_0000_0000..0xff00_0100_0000_0000;

/// Bytes each window spans.
pub(crate) const WINDOW_BYTES: u64 = 1 << 32;

/// Generic addresses of the thread's local frame.
pub(crate) const LOCAL_WINDOW: u64 = RESERVED.start;
/// Generic addresses of the block's shared memory.
pub(crate) const SHARED_WINDOW: u64 = LOCAL_WINDOW + WINDOW_BYTES;
/// Generic (and `.param`) addresses of the kernel's argument packet.
pub(crate) const PARAM_WINDOW: u64 = SHARED_WINDOW + WINDOW_BYTES;
/// Generic (and `.const`) addresses of the module's `.const` variables.
pub(crate) const CONST_VARS: u64 = PARAM_WINDOW + WINDOW_BYTES;
/// Generic (and `.global`) addresses of the module's `.global` variables.
pub(crate) const GLOBAL_VARS: u64 = CONST_VARS + WINDOW_BYTES;

/// The state space a memory instruction names; the code is the instruction's `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Space {
    /// No space (or `.generic`): the address is generic.
    Generic = 0,
    Global = 1,
    Local = 2,
    Shared = 3,
    Const = 4,
    Param = 5,
}

impl Space {
    /// The space an instruction names (`None`, no space: `Generic`); `None` for the spaces the
    /// emulator does not hold (`.tex`, `.shared::cluster`).
    pub(crate) fn of(space: Option<jitseam_ptx::inst::Space>) -> Option<Self> {
        use jitseam_ptx::inst::Space as S;
        Some(match space {
            None | Some(S::Generic) => Self::Generic,
            Some(S::Global) => Self::Global,
            Some(S::Local) => Self::Local,
            Some(S::Shared) => Self::Shared,
            Some(S::Const) => Self::Const,
            Some(S::Param) => Self::Param,
            Some(S::SharedCluster | S::Tex) => return None,
        })
    }

    /// The instruction code.
    pub(crate) fn code(self) -> u8 {
        self as u8
    }

    /// What `cvta.<space>` adds to an address of this space to make it generic (and
    /// `cvta.to.<space>` subtracts).
    pub(crate) fn generic_base(self) -> u64 {
        match self {
            Self::Local => LOCAL_WINDOW,
            Self::Shared => SHARED_WINDOW,
            Self::Generic | Self::Global | Self::Const | Self::Param => 0,
        }
    }
}
