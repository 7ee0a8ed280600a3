//! Where a guarded launch writes each hidden parameter of its packet: the layout the guarded
//! rewrite's hidden parameters take after the declared ones, worked out once at load (by the
//! kernel's load) and read by every launch (`launch::guarded`).

use jitseam_verify::{ClaimTarget, GuardParam};

use super::{ParamLayout, ParamRole};

/// Where a guarded launch writes each hidden parameter, and what, worked out once at load:
/// the record's and the tag's offsets, and for each limit its offset, its operand and its
/// slot width. (Tag word 1 is 0 in every launch: the zeroed packet already holds it.)
#[derive(Debug)]
pub(crate) struct HiddenWords {
    /// The packet offset of the fault record's device address.
    pub(crate) record: Option<usize>,
    /// The packet offset of tag word 0, the kernel's tag.
    pub(crate) tag: Option<usize>,
    /// Each limit.
    pub(crate) limits: Vec<LimitWord>,
}

/// One limit's word: where it goes, whose reach it is, in slots of what width.
#[derive(Debug)]
pub(crate) struct LimitWord {
    /// Its offset in the packet.
    pub(crate) at: usize,
    /// The operand whose reach it is.
    pub(crate) of: LimitOf,
    /// The slot's bytes: a power of two for every guard the rewrite makes, so a shift.
    pub(crate) slot: Slot,
}

/// Whose reach a limit is.
#[derive(Debug)]
pub(crate) enum LimitOf {
    /// The launch's dynamic shared bytes.
    Shared,
    /// Pointer parameter `q`, the `k`-th input of a dense ABI.
    Input { q: usize, k: usize },
    /// Pointer parameter `q`, the `m`-th output of a dense ABI.
    Output { q: usize, m: usize },
    /// Pointer parameter `q` of another role or ABI: its bytes as the launch's ABI reaches
    /// them (a custom pointer's declared extent).
    Other(usize),
    /// What a launch does not know: every guarded access fails.
    Nothing,
}

/// A limit's slot width: a shift for a power of two.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slot {
    Shift(u32),
    Div(u64),
}

impl Slot {
    fn of(bytes: u32) -> Self {
        let bytes = bytes.max(1);
        if bytes.is_power_of_two() {
            Slot::Shift(bytes.trailing_zeros())
        } else {
            Slot::Div(u64::from(bytes))
        }
    }

    /// How many slots `bytes` hold.
    #[inline(always)]
    pub(crate) fn slots(self, bytes: u64) -> u64 {
        match self {
            Slot::Shift(k) => bytes >> k,
            Slot::Div(w) => bytes / w,
        }
    }
}

impl HiddenWords {
    /// The words of `hidden` (the rewrite's hidden parameters, in order) in `layout` (the
    /// packet with them, after the `declared` parameters of `declared_layout`); `custom` when
    /// the kernel's ABI is the custom one, whose pointers reach their declared extents.
    pub(crate) fn of(
        hidden: &[GuardParam],
        layout: &ParamLayout,
        declared_layout: &ParamLayout,
        custom: bool,
    ) -> Self {
        let declared = declared_layout.params().len();
        let mut words = HiddenWords {
            record: None,
            tag: None,
            limits: Vec::new(),
        };
        for (role, placed) in hidden.iter().zip(layout.params().iter().skip(declared)) {
            let at = placed.offset;
            match role {
                GuardParam::FaultRecord => words.record = Some(at),
                GuardParam::Tag(0) => words.tag = Some(at),
                GuardParam::Tag(_) => {}
                GuardParam::Limit { target, bytes } => {
                    let of = match target {
                        ClaimTarget::Shared(_) => LimitOf::Shared,
                        ClaimTarget::Param(q) => {
                            let q = *q as usize;
                            match declared_layout.params().get(q).map(|p| p.role) {
                                Some(_) if custom => LimitOf::Other(q),
                                Some(ParamRole::Input(k)) => LimitOf::Input { q, k: k as usize },
                                Some(ParamRole::Output(m)) => LimitOf::Output { q, m: m as usize },
                                Some(_) => LimitOf::Other(q),
                                None => LimitOf::Nothing,
                            }
                        }
                        // No hidden limit: a thread's frame has a fixed size (its guard's
                        // limit is in the text), and the module's tables are never guarded.
                        ClaimTarget::Local(_) | ClaimTarget::Table(_) => LimitOf::Nothing,
                    };
                    words.limits.push(LimitWord {
                        at,
                        of,
                        slot: Slot::of(*bytes),
                    });
                }
            }
        }
        words
    }
}
