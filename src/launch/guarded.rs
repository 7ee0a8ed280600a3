//! The packet of a guarded launch: the declared parameters as every launch marshals them, then
//! the hidden ones the guarded rewrite takes (see [`jitseam_verify::GuardParam`]) — the stream's fault record,
//! the tag that names the kernel in it, and for each guarded operand the `bytes`-wide slots the
//! launch lets it reach. The fault record joins the operands a checking backend lends the
//! launch. Where each hidden word goes, and what it is, is worked out once at load
//! ([`crate::abi::HiddenWords`]): a launch writes the record, the tag and its limits, nothing
//! else.

use super::CheckedLaunch;
use super::marshal::fill_packet;
use super::reach::{byte_range_of_reach, reach};
use crate::abi::{
    ArgPacket, CustomKind, ExtentEnv, LimitOf, LimitWord, OperandRange, OperandReach, ParamRole,
    copy_le, eval_next,
};
use crate::device::{AsViewDesc, ViewDesc};
use crate::state::GuardedEntry;

/// A checked launch's operands and the fault record its guards write.
#[derive(Debug)]
struct WithRecord<'c, L: OperandReach> {
    launch: &'c L,
    record: u64,
}

impl<L: OperandReach> OperandReach for WithRecord<'_, L> {
    fn for_each_range(&self, each: &mut dyn FnMut(OperandRange)) {
        self.launch.for_each_range(each);
        each(OperandRange {
            base: self.record,
            len: jitseam_verify::FAULT_RECORD_BYTES as u64,
            writable: true,
        });
    }
}

/// [`marshal_with`](super::marshal_with) for a kernel proven with guards: the packet of
/// `guarded`'s layout, the hidden parameters written after the declared ones, lent to
/// `use_packet` with the fault record at `record` among the operands; `tag` names the
/// kernel in the record.
#[inline(always)]
pub(super) fn marshal_guarded<'c, I: AsViewDesc, O: AsViewDesc, R>(
    checked: &'c CheckedLaunch<'_, I, O>,
    guarded: &'c GuardedEntry,
    record: u64,
    tag: u64,
    use_packet: impl FnOnce(&ArgPacket<'_>) -> R,
) -> R {
    let reach = WithRecord {
        launch: checked,
        record,
    };
    let mut packet = ArgPacket::zeroed(&guarded.layout, &reach, checked.grid_stride);
    let bytes = packet.bytes_mut();
    fill_packet(checked, bytes);
    let words = &guarded.words;
    let mut put = |at: Option<usize>, word: u64| {
        if let Some(slot) = at.and_then(|at| bytes.get_mut(at..at + 8)) {
            copy_le(slot, word.to_le_bytes());
        }
    };
    put(words.record, record);
    put(words.tag, tag);
    for word in &words.limits {
        put(Some(word.at), limit(checked, word));
    }
    use_packet(&packet)
}

/// How many slots `checked` lets `word`'s operand reach: a pointer's elements as its ABI
/// gives them (a dense view's `n`, a custom pointer's declared extent), a dynamic shared
/// array's launch bytes. 0 (every guarded access fails) for what the launch does not know.
#[inline(always)]
fn limit<I: AsViewDesc, O: AsViewDesc>(checked: &CheckedLaunch<'_, I, O>, word: &LimitWord) -> u64 {
    let bytes = match word.of {
        LimitOf::Shared => Some(u64::from(checked.geometry.dynamic_shared_bytes)),
        LimitOf::Input { q, k } => checked
            .inputs
            .get(k)
            .and_then(|v| view_bytes(v.view_desc()))
            .or_else(|| pointer_bytes(checked, q)),
        LimitOf::Output { q, m } => checked
            .outputs
            .get(m)
            .and_then(|v| view_bytes(v.view_desc()))
            .or_else(|| pointer_bytes(checked, q)),
        LimitOf::Other(q) => pointer_bytes(checked, q),
        LimitOf::Nothing => None,
    };
    bytes.map_or(0, |b| word.slot.slots(b))
}

/// The bytes a rank-1 unit-stride view (every operand of a dense launch) lends from its
/// first element on: its elements; `None` for another view (see [`pointer_bytes`]).
#[inline(always)]
fn view_bytes(view: &ViewDesc) -> Option<u64> {
    if view.rank == 1 && view.strides[0] == 1 {
        (view.shape[0] as u64).checked_mul(view.dtype.size() as u64)
    } else {
        None
    }
}

/// The bytes pointer parameter `q` of `checked` may reach from its base.
fn pointer_bytes<I: AsViewDesc, O: AsViewDesc>(
    checked: &CheckedLaunch<'_, I, O>,
    q: usize,
) -> Option<u64> {
    let placed = checked.layout.params().get(q)?;
    let view = match placed.role {
        ParamRole::Input(k) => checked.inputs.get(k as usize)?.view_desc(),
        ParamRole::Output(m) => checked.outputs.get(m as usize)?.view_desc(),
        _ => return None,
    };
    let elem = view.dtype.size() as u64;
    // What the view lends, from its first element on: for a rank-1 unit-stride window (every
    // operand of a dense launch) its elements, which is its reach's bytes without the walk over
    // axes (0 for an empty one, whose reach is none: every guarded access fails either way).
    let lent = if view.rank == 1 && view.strides[0] == 1 {
        (view.shape[0] as u64).checked_mul(elem)?
    } else {
        let (start, end) = byte_range_of_reach(view, reach(view)?)?;
        u64::try_from(end.checked_sub(start)?).ok()?
    };
    let Some(custom) = checked.spec.abi.custom() else {
        return Some(lent);
    };
    // A custom pointer reaches its declared extent (which the launch checked its buffer holds).
    let pointer = custom
        .params
        .iter()
        .take(q)
        .filter(|p| !matches!(p.kind, CustomKind::Value(_)))
        .count();
    let env = ExtentEnv {
        params: checked.params,
        grid: checked.geometry.grid,
        block: checked.geometry.block,
    };
    let mut cursor = 0;
    let mut extent = None;
    for _ in 0..=pointer {
        extent = eval_next(&custom.code, &mut cursor, &env).ok();
    }
    Some(lent.min(extent?.checked_mul(elem)?))
}
