//! A PTX entry's own `.param` list checked against the list its ABI implies, by class, size and
//! alignment (PTX keeps no signedness and does not tell pointers from 64-bit integers).

use crate::abi::{ExpectedParam, ParamClass};
use crate::error::{Error, Mismatch};

/// Compares `entry`'s parameters with `expected` by count, then by class, size and alignment of
/// each slot, naming the first disagreement.
pub(crate) fn verify_entry_params(
    entry: &jitseam_ptx::Entry,
    expected: &[ExpectedParam],
) -> Result<(), Error> {
    if entry.params.len() != expected.len() {
        return Err(Error::ParamCount {
            entry: entry.name.clone(),
            expected: expected.len(),
            found: entry.params.len(),
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
        };
        let Some(found) = ParamClass::of_ptx(param) else {
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
    Ok(())
}

fn is_integer(class: ParamClass) -> bool {
    matches!(
        class,
        ParamClass::Int8 | ParamClass::Int16 | ParamClass::Int32 | ParamClass::Int64
    )
}
