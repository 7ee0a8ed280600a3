//! Reads of registers that may not have been written: the registers a thread may read before
//! any write to them on some path. A never-written register reads as zero (the emulator's
//! definition; PTX leaves it undefined), so the interpreter clears exactly these registers at
//! the start of every group of threads; all the others are always written before they are read.
//!
//! A forward "definitely written" analysis over the linked program, one bit set per
//! instruction: the entry starts with nothing written, so does every `.func` (conservatively:
//! its parameters are then cleared too, which changes nothing, as the caller writes them); a
//! call's effects on its caller's registers are ignored (conservative again); a guarded
//! instruction writes nothing for sure. Programs too large for the sets clear every register.

use super::{F_BRANCH, Inst, NONE, Op, SPECIAL_SLOTS};

/// Bit-set words the analysis may hold at once before it gives up and clears everything.
const MAX_WORDS: usize = 1 << 24;

/// The register slots to clear at the start of every group.
pub(super) fn zero_slots(
    insts: &[Inst],
    lanes: &[u32],
    num_regs: usize,
    consts: &[u32],
) -> Vec<u32> {
    let mut tracked = vec![true; num_regs];
    for t in tracked.iter_mut().take(SPECIAL_SLOTS as usize) {
        *t = false;
    }
    for &c in consts {
        if let Some(t) = tracked.get_mut(c as usize) {
            *t = false;
        }
    }
    let words = num_regs.div_ceil(64).max(1);
    if insts.len().saturating_mul(words) > MAX_WORDS {
        return (0..num_regs as u32)
            .filter(|&s| tracked.get(s as usize).copied().unwrap_or(false))
            .collect();
    }

    // `state[pc]`: registers written on every path to `pc`; `None` while unreached.
    let mut state: Vec<Option<Vec<u64>>> = vec![None; insts.len() + 1];
    let mut work: Vec<usize> = Vec::new();
    let mut flagged = vec![false; num_regs];
    let empty = vec![0u64; words];
    merge(&mut state, &mut work, 0, &empty);
    // Every function start: nothing written.
    for inst in insts.iter().filter(|i| i.op == Op::Call) {
        merge(&mut state, &mut work, inst.imm as usize, &empty);
    }

    let mut reads: Vec<u32> = Vec::new();
    let mut writes: Vec<u32> = Vec::new();
    while let Some(pc) = work.pop() {
        let (Some(inst), Some(Some(input))) = (insts.get(pc), state.get(pc)) else {
            continue;
        };
        let mut s = input.clone();
        reads.clear();
        writes.clear();
        operands(inst, lanes, &mut reads, &mut writes);
        for &r in &reads {
            let r = r as usize;
            if r < num_regs && tracked[r] && (s[r / 64] >> (r % 64)) & 1 == 0 {
                flagged[r] = true;
            }
        }
        if inst.guard == NONE {
            for &w in &writes {
                let w = w as usize;
                if w < num_regs {
                    s[w / 64] |= 1 << (w % 64);
                }
            }
        }
        let guarded = inst.guard != NONE;
        match inst.op {
            Op::Bra => {
                merge(&mut state, &mut work, inst.imm as usize, &s);
                if guarded {
                    merge(&mut state, &mut work, pc + 1, &s);
                }
            }
            Op::Ret => {
                if guarded {
                    merge(&mut state, &mut work, pc + 1, &s);
                }
            }
            _ => {
                if inst.f & F_BRANCH != 0
                    && matches!(inst.op, Op::SetpI | Op::SetpF32 | Op::SetpF64)
                {
                    merge(&mut state, &mut work, inst.imm as usize, &s);
                    merge(&mut state, &mut work, pc + 2, &s);
                }
                merge(&mut state, &mut work, pc + 1, &s);
            }
        }
    }
    (0..num_regs as u32)
        .filter(|&slot| flagged.get(slot as usize).copied().unwrap_or(false))
        .collect()
}

/// The slots `inst` reads and the slots it writes (for sure, when it runs).
fn operands(inst: &Inst, lanes: &[u32], reads: &mut Vec<u32>, writes: &mut Vec<u32>) {
    let list = |start: u32, count: u32| -> &[u32] {
        lanes
            .get(start as usize..(start as usize).saturating_add(count as usize))
            .unwrap_or_default()
    };
    let some = |slots: &[u32], out: &mut Vec<u32>| {
        out.extend(slots.iter().copied().filter(|&s| s != NONE));
    };
    some(&[inst.guard], reads);
    match inst.op {
        Op::Bra | Op::Ret | Op::Call => {}
        Op::LdGlobalV => {
            some(&[inst.a], reads);
            some(list(inst.d, inst.c), writes);
        }
        Op::StGlobalV => {
            some(&[inst.a], reads);
            some(list(inst.b, inst.c), reads);
        }
        Op::Pack => {
            some(list(inst.b, inst.c), reads);
            some(&[inst.d], writes);
        }
        Op::Unpack => {
            some(&[inst.a], reads);
            some(list(inst.b, inst.c), writes);
        }
        Op::StGlobal => some(&[inst.a, inst.b], reads),
        Op::Atom => {
            some(&[inst.a, inst.b, inst.c], reads);
            some(&[inst.d], writes);
        }
        Op::LdKParam => some(&[inst.d], writes),
        Op::SetpI | Op::SetpF32 | Op::SetpF64 => {
            some(&[inst.a, inst.b, inst.c], reads);
            some(&[inst.d, inst.e], writes);
        }
        _ => {
            some(&[inst.a, inst.b, inst.c, inst.e], reads);
            some(&[inst.d], writes);
        }
    }
}

/// Meets `s` into the state of `pc` (intersection), queueing `pc` when that changes it.
fn merge(state: &mut [Option<Vec<u64>>], work: &mut Vec<usize>, pc: usize, s: &[u64]) {
    let Some(slot) = state.get_mut(pc) else {
        return;
    };
    match slot {
        None => {
            *slot = Some(s.to_vec());
            work.push(pc);
        }
        Some(old) => {
            let mut changed = false;
            for (o, &n) in old.iter_mut().zip(s) {
                let m = *o & n;
                changed |= m != *o;
                *o = m;
            }
            if changed {
                work.push(pc);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::decode;
    use jitseam_ptx::parse_module;

    fn zeroed(src: &str, entry: &str) -> usize {
        let module = parse_module(src).unwrap();
        decode(src, &module, entry).unwrap().zero_slots.len()
    }

    #[test]
    fn compiler_output_clears_nothing() {
        for (src, entry) in [
            (
                include_str!("testdata/add_f32_scalar.ptx"),
                "baracuda_gen_add_f32_scalar",
            ),
            (
                include_str!("testdata/add_f32_co_v4.ptx"),
                "baracuda_gen_add_f32_co_v4",
            ),
            (
                include_str!("testdata/silu_f32_scalar.ptx"),
                "baracuda_gen_silu_f32_scalar",
            ),
        ] {
            assert_eq!(zeroed(src, entry), 0, "{entry}");
        }
    }

    #[test]
    fn a_register_read_before_any_write_is_cleared() {
        let src = "
.version 8.0
.target sm_80
.visible .entry k()
{
    .reg .b32 %r<4>;
    .reg .pred %p<2>;
    mov.u32 %r1, 1;
L:
    add.u32 %r2, %r2, %r1;
    setp.lt.u32 %p1, %r2, 10;
    @%p1 bra L;
    ret;
}
";
        assert_eq!(zeroed(src, "k"), 1);
    }
}
