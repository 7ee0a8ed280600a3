//! A PTX entry's own `.param` list checked against the list its ABI implies, by class, size and
//! alignment (PTX keeps no signedness and does not tell pointers from 64-bit integers).

use jitseam_ptx::{Param, StateSpace};

use crate::abi::{ExpectedParam, ParamClass, ParamLayout, ParamRole, ptx_param_class};
use crate::error::{Error, Mismatch, ParamLists};

/// Compares `entry`'s parameters with `expected` by count, then by class, size and alignment of
/// each slot, then their attributes, naming the first disagreement; answers the packet layout,
/// with every pointee alignment a `.ptr .align N` declares (launches check it).
pub(crate) fn verify_entry_params(
    entry: &jitseam_ptx::Entry,
    expected: &[ExpectedParam],
) -> Result<ParamLayout, Error> {
    let lists = || {
        Box::new(ParamLists::new(
            expected.to_vec(),
            entry.params.iter().map(ptx_spelling).collect(),
        ))
    };
    if entry.params.len() != expected.len() {
        return Err(Error::ParamCount {
            entry: entry.name.clone(),
            expected: expected.len(),
            found: entry.params.len(),
            lists: lists(),
        });
    }
    for (index, (want, param)) in expected.iter().zip(&entry.params).enumerate() {
        let mismatch = |found: String, what| Error::ParamMismatch {
            entry: entry.name.clone(),
            index,
            role: want.role,
            expected: want.class,
            found,
            what,
            lists: lists(),
        };
        let Some(found) = ptx_param_class(param) else {
            return Err(mismatch(format!(".{}", param.ty.name()), Mismatch::Class));
        };
        let what = match (want.class, found) {
            (a, b) if a == b => continue,
            (ParamClass::Bytes { size: a, .. }, ParamClass::Bytes { size: b, .. }) if a != b => {
                Mismatch::Size
            }
            (ParamClass::Bytes { .. }, ParamClass::Bytes { .. }) => Mismatch::Alignment,
            (a, b) if a.size() != b.size() && is_integer(a) && is_integer(b) => Mismatch::Size,
            _ => Mismatch::Class,
        };
        return Err(mismatch(found.to_string(), what));
    }
    let mut layout = ParamLayout::new(expected);
    for (index, (want, param)) in expected.iter().zip(&entry.params).enumerate() {
        if let Some(align) = pointee_align(entry, index, want.role, param)? {
            layout.require_pointee_align(index, align);
        }
    }
    Ok(layout)
}

/// Checks `param`'s `.align` and `.ptr` attributes; answers the pointee alignment a `.ptr .align N`
/// declares. An attribute the launch could not honour is a decline: a `.ptr` into shared, local
/// or constant memory (an operand lives in global memory), a `.ptr` on a parameter that is no
/// operand pointer, or an alignment that is not a power of two.
fn pointee_align(
    entry: &jitseam_ptx::Entry,
    index: usize,
    role: ParamRole,
    param: &Param,
) -> Result<Option<u32>, Error> {
    let decline = |attribute: String, reason| Error::ParamAttribute {
        entry: entry.name.clone(),
        index,
        role,
        attribute,
        reason,
    };
    let power_of_two = "an alignment must be a power of two";
    if let Some(align) = param.align
        && !align.is_power_of_two()
    {
        return Err(decline(format!(".align {align}"), power_of_two));
    }
    let Some(ptr) = param.ptr else {
        return Ok(None);
    };
    if !matches!(role, ParamRole::Input(_) | ParamRole::Output(_)) {
        return Err(decline(
            ".ptr".to_owned(),
            "only an operand pointer may carry `.ptr`; this parameter is passed by value",
        ));
    }
    if let Some(space) = ptr.space
        && space != StateSpace::Global
    {
        return Err(decline(
            format!(".ptr .{}", space_name(space)),
            "an operand lives in global memory, so its pointer must be `.ptr .global` or generic",
        ));
    }
    match ptr.align {
        Some(align) if !align.is_power_of_two() => {
            Err(decline(format!(".ptr .align {align}"), power_of_two))
        }
        align => Ok(align),
    }
}

/// A declared parameter as PTX spells it: `.u64`, `.align 2 .b8 [2]`, `.pred`.
fn ptx_spelling(param: &Param) -> String {
    match (param.array_len, param.align) {
        (Some(len), Some(align)) => format!(".align {align} .{} [{len}]", param.ty.name()),
        (Some(len), None) => format!(".{} [{len}]", param.ty.name()),
        (None, Some(align)) => format!(".align {align} .{}", param.ty.name()),
        (None, None) => format!(".{}", param.ty.name()),
    }
}

fn space_name(space: StateSpace) -> &'static str {
    match space {
        StateSpace::Global => "global",
        StateSpace::Const => "const",
        StateSpace::Local => "local",
        StateSpace::Shared => "shared",
    }
}

fn is_integer(class: ParamClass) -> bool {
    matches!(
        class,
        ParamClass::Int8 | ParamClass::Int16 | ParamClass::Int32 | ParamClass::Int64
    )
}
