//! The guard rewrite: the entry's PTX with a guard in front of each guarded access, on the
//! access's own line, and the hidden parameters appended to the entry's parameter list on the
//! line that closes it — so every line keeps its number.
//!
//! For an access of `w = 2^K` bytes at `[%a + c]` through pointer parameter `p`, the guard is
//! one braced block in place of the instruction:
//!
//! ```text
//! { .reg .b64 %Gr<8>; .reg .pred %Gp<4>; .reg .b32 %Gw<2>;
//!   ld.param.u64 %Gr0, [p]; cvta.to.global.u64 %Gr0, %Gr0;    // the operand's base
//!   add.s64 %Gr1, %a, c; sub.s64 %Gr1, %Gr1, %Gr0;            // the byte offset o (c = 0:
//!                                                              //  sub.s64 %Gr1, %a, %Gr0)
//!   shr.u64 %Gr2, %Gr1, K; and.b64 %Gr2, %Gr2, MASK;          // the slot q
//!   shl.b64 %Gr3, %Gr2, K;                                     // q·w
//!   ld.param.u64 %Gr4, [limit];                                // slots the launch allows
//!   setp.eq.u64 %Gp0, %Gr3, %Gr1;                              // o = q·w: aligned, no wrap
//!   setp.lt.and.u64 %Gp0, %Gr2, %Gr4, %Gp0;                    // q < limit
//!   @%Gp0 bra GL;                                              // in bounds: past the record
//!   …the fault record…                                         // (failing lanes only)
//!   mov.bN <each destination>, 0;
//! GL:
//!   add.s64 %Gr3, %Gr0, %Gr3;                                  // base + q·w = the address
//!   @%Gp0 <the access, at [%Gr3]>; }
//! ```
//!
//! An access under its own predicate `e` has `%Gp1 = ¬%Gp0 ∧ e` (the lanes that would run it
//! and fail), `%Gp0 ∧= e`, and `@!%Gp1 bra GL` in place of `@%Gp0 bra GL`: a lane that would
//! not run the access skips the record too. Each `GL` is a label of the rewrite's own prefix
//! and the guard's index, so it names nothing of the kernel's.
//!
//! `MASK` keeps every slot below 2^61: a larger one fails `o = q·w` (no operand is 2^61 slots
//! long), and the mask gives the verifier the slot's range without a proof that `o` reads as a
//! nonnegative number. The verifier then sees the access at `base + w·q` with `q < limit` and
//! `w·limit ≤ reach` (the limit's role): in bounds and aligned, whatever `%a` held.

use std::fmt::Write as _;

use jitseam_ptx::inst::{self, Instruction, Opcode, Operand, Space};
use jitseam_ptx::resolve::{Body, ResolvedEntry, ResolvedModule, Stmt};

use super::at;
use crate::proof::{ClaimTarget, Guard, GuardParam, Guarded, Limit};
use crate::reject::{RejectKind, Rejection};

/// Keeps bits 0..61 and 62 of a slot: not of the form `2^k − 1`, so its `and` is a value in
/// `[0, MASK]` to the verifier.
const MASK: u64 = 0x5FFF_FFFF_FFFF_FFFF;

/// The rewritten module of one entry whose accesses `guards` need guards (every span an
/// instruction of the entry's own body).
pub(crate) fn rewrite(
    text: &str,
    module: &ResolvedModule,
    entry: &ResolvedEntry,
    guards: &[Guard],
) -> Result<Guarded, Rejection> {
    let fail = |line: u32, reason: String| Rejection {
        line,
        instruction: String::new(),
        kind: RejectKind::Unsupported,
        reason,
    };
    let Some(declared) = module.module.entries.get(entry.entry as usize) else {
        return Err(fail(0, "no such entry".to_owned()));
    };
    let Some(body) = entry.entry_body() else {
        return Err(fail(0, "the entry has no body".to_owned()));
    };
    let prefix = prefix(text);
    // The hidden parameters: the record, the two tags, then one limit per target and width.
    let mut params = vec![
        GuardParam::FaultRecord,
        GuardParam::Tag(0),
        GuardParam::Tag(1),
    ];
    for guard in guards {
        if let Limit::Param(limit) = &guard.limit
            && !params.contains(limit)
        {
            params.push(limit.clone());
        }
    }
    let param_name = |role: &GuardParam| -> String {
        let i = params.iter().position(|p| p == role).unwrap_or(0);
        format!("{prefix}_{i}")
    };
    let mut edits: Vec<(usize, usize, String)> = Vec::with_capacity(guards.len() + 1);
    let list: String = params
        .iter()
        .map(|p| format!(".param .u64 {}", param_name(p)))
        .collect::<Vec<_>>()
        .join(", ");
    let (at_close, empty) = param_list_end(text, declared).ok_or_else(|| {
        fail(
            0,
            "the entry's parameter list is not where it was".to_owned(),
        )
    })?;
    let inserted = if empty { list } else { format!(", {list}") };
    edits.push((at_close, at_close, inserted));
    for (id, guard) in guards.iter().enumerate() {
        let ins = instruction_at(body, guard.span).ok_or_else(|| {
            fail(
                guard.line,
                "the guarded access is not in the entry".to_owned(),
            )
        })?;
        let source = text.get(guard.span.0..guard.span.1).ok_or_else(|| {
            fail(
                guard.line,
                "the guarded access is not in the text".to_owned(),
            )
        })?;
        let limit = match &guard.limit {
            Limit::Const(slots) => format!("mov.u64 %{prefix}r4, {slots};"),
            Limit::Param(role) => format!("ld.param.u64 %{prefix}r4, [{}];", param_name(role)),
        };
        let names = Names {
            prefix: &prefix,
            record: param_name(&GuardParam::FaultRecord),
            tags: [
                param_name(&GuardParam::Tag(0)),
                param_name(&GuardParam::Tag(1)),
            ],
        };
        let block = guarded(
            &names, body, declared, ins, source, guard, id as u32, &limit,
        )
        .map_err(|reason| fail(guard.line, reason))?;
        edits.push((guard.span.0, guard.span.1, block));
    }
    // Back to front, so that each range is still where it was.
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_owned();
    for (start, end, with) in edits {
        if end > out.len()
            || start > end
            || !out.is_char_boundary(start)
            || !out.is_char_boundary(end)
        {
            return Err(fail(0, "a guard's place is not in the text".to_owned()));
        }
        out.replace_range(start..end, &with);
    }
    Ok(Guarded { ptx: out, params })
}

/// A name prefix no identifier of `text` starts with.
fn prefix(text: &str) -> String {
    let mut prefix = "__jsg".to_owned();
    let mut n = 0u32;
    while text.contains(&prefix) {
        n += 1;
        prefix = format!("__jsg{n}x");
    }
    prefix
}

/// The byte offset of the `)` that closes the entry's parameter list, and whether the list is
/// empty; for an entry written without a list, where `()` would go (inserted as part of the
/// edit by the caller only when a list exists — an entry without one is not rewritten).
fn param_list_end(text: &str, entry: &jitseam_ptx::Entry) -> Option<(usize, bool)> {
    let bytes = text.as_bytes();
    // From the `.entry` directive to its name, then the `(` after it.
    let from = entry.offset;
    let name_at = text.get(from..)?.find(entry.name.as_str())? + from;
    let mut i = name_at + entry.name.len();
    i = skip_blank(bytes, i);
    if bytes.get(i) != Some(&b'(') {
        return None;
    }
    let open = i;
    i += 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while bytes.get(i).is_some_and(|&c| c != b'\n') {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => i = block_comment_end(bytes, i),
            b')' => {
                let empty = text.get(open + 1..i)?.trim().is_empty();
                return Some((i, empty && entry.params.is_empty()));
            }
            _ => i += 1,
        }
    }
    None
}

fn skip_blank(bytes: &[u8], mut i: usize) -> usize {
    loop {
        match bytes.get(i) {
            Some(b' ' | b'\t' | b'\r' | b'\n') => i += 1,
            Some(b'/') if bytes.get(i + 1) == Some(&b'/') => {
                while bytes.get(i).is_some_and(|&c| c != b'\n') {
                    i += 1;
                }
            }
            Some(b'/') if bytes.get(i + 1) == Some(&b'*') => i = block_comment_end(bytes, i),
            _ => return i,
        }
    }
}

/// Just past the `*/` of the block comment that starts at `i` (the end of the text if none).
fn block_comment_end(bytes: &[u8], i: usize) -> usize {
    let from = i + 2;
    bytes
        .get(from..)
        .and_then(|rest| rest.windows(2).position(|w| w == b"*/"))
        .map_or(bytes.len(), |at| from + at + 2)
}

fn instruction_at(body: &Body, span: (usize, usize)) -> Option<&Instruction> {
    body.statements.iter().find_map(|s| match s {
        Stmt::Instruction(ins) if (ins.range.start, ins.range.end) == span => Some(ins),
        _ => None,
    })
}

/// The names the guard code uses.
struct Names<'a> {
    prefix: &'a str,
    record: String,
    tags: [String; 2],
}

/// The braced block that replaces the guarded instruction `ins` (whose text is `source`).
#[allow(clippy::too_many_arguments)]
fn guarded(
    names: &Names<'_>,
    body: &Body,
    entry: &jitseam_ptx::Entry,
    ins: &Instruction,
    source: &str,
    guard: &Guard,
    id: u32,
    limit: &str,
) -> Result<String, String> {
    let p = names.prefix;
    let reg_name = |id: inst::RegId| {
        body.reg(id)
            .map(|r| r.name.clone())
            .ok_or_else(|| "a register of the guarded access has no name".to_owned())
    };
    let address = match ins.opcode {
        Opcode::Ld | Opcode::Ldu | Opcode::Atom => ins.operands.get(1),
        Opcode::St | Opcode::Red => ins.operands.first(),
        _ => None,
    };
    let Some(Operand::Address {
        base: inst::AddrBase::Reg(a),
        offset,
    }) = address
    else {
        return Err("the guarded access has no register address".to_owned());
    };
    let a = reg_name(*a)?;
    let k = guard.bytes.trailing_zeros();
    let mut s = format!("{{ .reg .b64 %{p}r<8>; .reg .pred %{p}p<4>; .reg .b32 %{p}w<2>; ");
    // The operand's base, as the access's own space reads it.
    match (&guard.target, ins.mods.space) {
        (ClaimTarget::Param(i), space) => {
            let Some(param) = entry.params.get(*i as usize) else {
                return Err("the guarded operand is not a parameter".to_owned());
            };
            let _ = write!(s, "ld.param.u64 %{p}r0, [{}]; ", param.name);
            match space {
                Some(Space::Global) => {
                    let _ = write!(s, "cvta.to.global.u64 %{p}r0, %{p}r0; ");
                }
                None | Some(Space::Generic) => {}
                Some(_) => return Err("the guarded access is in another space".to_owned()),
            }
        }
        // A variable's address in its own space: what the access's own space reads.
        (ClaimTarget::Shared(var), Some(Space::Shared))
        | (ClaimTarget::Local(var), Some(Space::Local)) => {
            let _ = write!(s, "mov.u64 %{p}r0, {var}; ");
        }
        (ClaimTarget::Shared(_) | ClaimTarget::Local(_), _) => {
            return Err("the guarded access is outside its variable's space".to_owned());
        }
        // The module's tables are proven or refused, never guarded.
        (ClaimTarget::Table(_), _) => {
            return Err("a module table has no guard".to_owned());
        }
    }
    // The byte offset `o = %a + c − base` (an access at `[%a]` has no `c` to add).
    if *offset == 0 {
        let _ = write!(s, "sub.s64 %{p}r1, {a}, %{p}r0; ");
    } else {
        let _ = write!(
            s,
            "add.s64 %{p}r1, {a}, {offset}; sub.s64 %{p}r1, %{p}r1, %{p}r0; "
        );
    }
    let _ = write!(
        s,
        "shr.u64 %{p}r2, %{p}r1, {k}; and.b64 %{p}r2, %{p}r2, {MASK}; \
         shl.b64 %{p}r3, %{p}r2, {k}; {limit} \
         setp.eq.u64 %{p}p0, %{p}r3, %{p}r1; setp.lt.and.u64 %{p}p0, %{p}r2, %{p}r4, %{p}p0; "
    );
    // Past the fault record unless this lane's access would run and fails its check: an
    // in-bounds access runs the check, the branch and itself, nothing of the record. The
    // branch is a plain `bra`, not `bra.uni`: lanes of one warp may go either way.
    let skip = format!("{p}L{id}");
    match ins.guard {
        None => {
            let _ = write!(s, "@%{p}p0 bra {skip}; ");
        }
        // The access's own predicate: the guard matters only where the access would run.
        Some(g) => {
            let pred = reg_name(g.reg)?;
            let enable = if g.negated {
                let _ = write!(s, "not.pred %{p}p2, {pred}; ");
                format!("%{p}p2")
            } else {
                pred
            };
            let _ = write!(
                s,
                "not.pred %{p}p1, %{p}p0; and.pred %{p}p1, %{p}p1, {enable}; \
                 and.pred %{p}p0, %{p}p0, {enable}; @!%{p}p1 bra {skip}; "
            );
        }
    }
    // The fault record, reached only by lanes whose access fails: the first of the launch
    // claims it, then fills it in.
    let _ = write!(
        s,
        "ld.param.u64 %{p}r5, [{record}]; cvta.to.global.u64 %{p}r5, %{p}r5; \
         atom.global.cas.b32 %{p}w0, [%{p}r5+{claimed}], 0, 1; \
         setp.eq.u32 %{p}p3, %{p}w0, 0; \
         mov.u32 %{p}w1, {id}; @%{p}p3 st.global.u32 [%{p}r5+{guard_at}], %{p}w1; \
         ld.param.u64 %{p}r6, [{tag0}]; @%{p}p3 st.global.u64 [%{p}r5+{tag0_at}], %{p}r6; \
         ld.param.u64 %{p}r6, [{tag1}]; @%{p}p3 st.global.u64 [%{p}r5+{tag1_at}], %{p}r6; ",
        record = names.record,
        claimed = at::CLAIMED,
        guard_at = at::GUARD,
        tag0 = names.tags[0],
        tag0_at = at::TAG0,
        tag1 = names.tags[1],
        tag1_at = at::TAG1,
    );
    for (base, special) in [(at::BLOCK, "%ctaid"), (at::THREAD, "%tid")] {
        for (i, axis) in ["x", "y", "z"].iter().enumerate() {
            let _ = write!(
                s,
                "mov.u32 %{p}w1, {special}.{axis}; @%{p}p3 st.global.u32 [%{p}r5+{}], %{p}w1; ",
                base + 4 * i as u32
            );
        }
    }
    let _ = write!(
        s,
        "@%{p}p3 st.global.u64 [%{p}r5+{}], %{p}r1; @%{p}p3 st.global.u64 [%{p}r5+{}], %{p}r4; ",
        at::OFFSET,
        at::LIMIT
    );
    // What a load or atomic would have written, where it does not run.
    for &d in ins.defs() {
        let reg = body
            .reg(d)
            .ok_or_else(|| "a destination of the guarded access has no name".to_owned())?;
        let bits = match reg.ty.bytes() {
            2 => 16,
            4 => 32,
            8 => 64,
            _ => return Err(format!("the destination `{}` cannot be zeroed", reg.name)),
        };
        let _ = write!(s, "mov.b{bits} {}, 0; ", reg.name);
    }
    // The access itself, at the address the guard checked.
    let _ = write!(s, "{skip}: add.s64 %{p}r3, %{p}r0, %{p}r3; @%{p}p0 ");
    s.push_str(&readdressed(source, &format!("%{p}r3"))?);
    s.push(' ');
    s.push('}');
    Ok(s)
}

/// The instruction text `source` without its guard predicate, its address operand replaced by
/// `[reg]`.
fn readdressed(source: &str, reg: &str) -> Result<String, String> {
    let body = match source.trim_start().strip_prefix('@') {
        // `@%p ld…` / `@!%p ld…`: the predicate is one token.
        Some(rest) => rest
            .trim_start()
            .split_once(char::is_whitespace)
            .map(|(_, after)| after.trim_start())
            .ok_or_else(|| "the guarded access has a predicate and nothing else".to_owned())?,
        None => source.trim_start(),
    };
    let (before, rest) = body
        .split_once('[')
        .ok_or_else(|| "the guarded access has no address".to_owned())?;
    let (_, after) = rest
        .split_once(']')
        .ok_or_else(|| "the guarded access's address is not closed".to_owned())?;
    if after.contains('[') {
        return Err("the guarded access has two addresses".to_owned());
    }
    Ok(format!("{before}[{reg}]{after}"))
}

#[cfg(test)]
mod tests {
    use super::readdressed;

    #[test]
    fn the_address_is_replaced_and_the_predicate_dropped() {
        assert_eq!(
            readdressed("@!%p1 ld.global.f32 \t%f1, [%rd5+8];", "%g").as_deref(),
            Ok("ld.global.f32 \t%f1, [%g];")
        );
        assert_eq!(
            readdressed("st.global.v2.f32 [%rd1], {%f1, %f2};", "%g").as_deref(),
            Ok("st.global.v2.f32 [%g], {%f1, %f2};")
        );
    }

    #[test]
    fn a_name_is_unused_by_the_text() {
        assert_eq!(super::prefix("ld.param.u64 %rd1, [k_param_0];"), "__jsg");
        let taken = super::prefix(".reg .b64 %__jsgr<2>;");
        assert!(taken.starts_with("__jsg") && taken != "__jsg", "{taken}");
    }
}
