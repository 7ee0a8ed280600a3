//! Reads of registers that may not have been written: the registers a thread may read before
//! any write to them on some path. A never-written register reads as zero (the emulator's
//! definition; PTX leaves it undefined), so the interpreter clears exactly these registers at
//! the start of every group of threads; all the others are always written before they are read.
//!
//! A forward "definitely written" analysis over each resolved body, on the registers the typed
//! model says each instruction reads ([`Instruction::uses`]) and writes
//! ([`Instruction::defs`]) — the very facts the body verifier reads, so the two never disagree
//! on them. The entry starts with nothing written; a `.func` with its `.reg` parameters
//! written (every call writes them all first); a call's effects on its caller's registers are
//! its return values; a guarded instruction writes nothing for sure. What no body names as a
//! register but a thread may still read before a write — a call's `.param` slots, a
//! function's return values as its caller reads them, the carry flag — is cleared always.
//! Bodies too large for the sets clear every register.

use jitseam_ptx::inst::{Instruction, Name, Opcode, Operand};
use jitseam_ptx::resolve::{Body, Owner, RegOrigin, Stmt};

/// Bit-set words the analysis may hold at once for one body before it gives up and clears
/// every register of the body.
const MAX_WORDS: usize = 1 << 24;

/// The register slots to clear at the start of every group: those of every register of
/// `bodies` (whose slots `slots` gives, body by body, by register) that some path may read
/// before writing, and the slots of `always`.
pub(super) fn zero_slots(bodies: &[Body], slots: &[Vec<u32>], always: Vec<u32>) -> Vec<u32> {
    let mut out = always;
    for (body, regs) in bodies.iter().zip(slots) {
        out.extend(
            read_before_written(body)
                .into_iter()
                .filter_map(|r| regs.get(r).copied()),
        );
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The registers of `body` (indices into its registers) that some path may read before any
/// write to them.
fn read_before_written(body: &Body) -> Vec<usize> {
    let mut insts: Vec<&Instruction> = Vec::new();
    let mut label_at = vec![usize::MAX; body.labels.len()];
    for statement in &body.statements {
        match statement {
            Stmt::Instruction(ins) => insts.push(ins),
            Stmt::Label(l) => {
                if let Some(at) = label_at.get_mut(*l as usize) {
                    *at = insts.len();
                }
            }
            Stmt::Vars(..) | Stmt::Param(_) | Stmt::Directive { .. } => {}
        }
    }
    let regs = body.regs.len();
    let words = regs.div_ceil(64).max(1);
    if insts.len().saturating_mul(words) > MAX_WORDS {
        return (0..regs).collect();
    }

    let mut start = vec![0u64; words];
    if matches!(body.owner, Owner::Func(_)) {
        for (r, decl) in body.regs.iter().enumerate() {
            if matches!(decl.origin, RegOrigin::Param(_)) {
                set(&mut start, r);
            }
        }
    }
    // `state[pc]`: registers written on every path to `pc`; `None` while unreached.
    let mut state: Vec<Option<Vec<u64>>> = vec![None; insts.len() + 1];
    let mut work: Vec<usize> = Vec::new();
    let mut flagged = vec![false; regs];
    merge(&mut state, &mut work, 0, &start);
    while let Some(pc) = work.pop() {
        let (Some(ins), Some(Some(input))) = (insts.get(pc), state.get(pc)) else {
            continue;
        };
        let mut s = input.clone();
        for &r in ins.uses() {
            let r = r.0 as usize;
            if r < regs && !get(&s, r) {
                flagged[r] = true;
            }
        }
        let guarded = ins.guard.is_some();
        if !guarded {
            for &r in ins.defs() {
                if (r.0 as usize) < regs {
                    set(&mut s, r.0 as usize);
                }
            }
        }
        match ins.opcode {
            Opcode::Bra => {
                if let Some(Operand::Name(Name::Label(l))) = ins.operands.first()
                    && let Some(&target) = label_at.get(*l as usize)
                {
                    merge(&mut state, &mut work, target, &s);
                } else {
                    merge(&mut state, &mut work, pc + 1, &s);
                }
                if guarded {
                    merge(&mut state, &mut work, pc + 1, &s);
                }
            }
            Opcode::Ret | Opcode::Exit => {
                if guarded {
                    merge(&mut state, &mut work, pc + 1, &s);
                }
            }
            _ => merge(&mut state, &mut work, pc + 1, &s),
        }
    }
    (0..regs)
        .filter(|&r| flagged.get(r).copied().unwrap_or(false))
        .collect()
}

fn get(s: &[u64], r: usize) -> bool {
    s.get(r / 64).is_some_and(|w| (w >> (r % 64)) & 1 != 0)
}

fn set(s: &mut [u64], r: usize) {
    if let Some(w) = s.get_mut(r / 64) {
        *w |= 1 << (r % 64);
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
