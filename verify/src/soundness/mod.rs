//! Every abstract transfer function, checked against the interpreter.
//!
//! For one instruction form (say `mul.hi.s32 %d, %a, %b`), the harness
//!
//! 1. lowers the instruction exactly as `load()` does (the typed model, then [`Lowerer`]) and
//!    runs the analysis's own transfer function on an abstract state whose input registers hold
//!    fresh atoms ranging over an input class (the type's full range, small values, values
//!    around an edge);
//! 2. runs the same instruction on the interpreter for many concrete inputs in that class (one
//!    thread per case, inputs read from memory, outputs written back);
//! 3. checks each concrete run against the abstract result: with the input atoms given the
//!    concrete inputs, every register the instruction writes must equal its abstract value
//!    (modulo its width), every fact the abstract state holds must be true, and every
//!    predicate's meaning must be its concrete truth; for a predicate a branch tests, the facts
//!    learnt on the branch the concrete run takes must be true too.
//!
//! A counterexample is a transfer function that claims something the machine does not do —
//! a hole in the proof. Each one found becomes a regression test in `regressions`.
//!
//! `JITSEAM_SOUNDNESS_CASES` (cases per form; default 96) sets the depth; CI runs the default.

mod eval;
mod forms;
mod tests;

use std::fmt::Write as _;

use jitseam_emu::interp::{LaunchDims, Regions, RunOptions, run_with};
use jitseam_ptx::ScalarType;
use jitseam_ptx::resolve::ResolvedModule;

use crate::analyze::{Analyzer, initial_state};
use crate::atoms::{AtomKind, Atoms, CTAID, I0, NCTAID, NTID, S, TID};
use crate::contract::{EntryContract, Extent, OperandRef, ParamContract};
use crate::facts::Facts;
use crate::ir::Kind;
use crate::lower::Lowerer;
use crate::poly::{Atom, Poly};
use crate::value::{PredVal, State, Val};
use eval::{Check, Env, read, representatives};
pub(crate) use forms::Form;

/// What a run of the harness saw.
#[derive(Debug, Default, Clone)]
pub(crate) struct Tally {
    /// Concrete cases run.
    pub(crate) cases: u64,
    /// Claims checked and found true.
    pub(crate) held: u64,
    /// Claims that could not be checked (an atom without a value).
    pub(crate) unchecked: u64,
    /// Counterexamples, in words.
    pub(crate) violations: Vec<String>,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.cases += other.cases;
        self.held += other.held;
        self.unchecked += other.unchecked;
        self.violations.extend(other.violations);
    }
}

/// Where the inputs and the outputs live in the harness's launches.
const IN: u64 = 0x10_0000;
const OUT: u64 = 0x4000_0000;
/// Threads per block of a concrete launch.
const BLOCK: u32 = 64;
/// Threads per warp, as the interpreter runs them.
const WARP: usize = 32;

/// Cases per form.
pub(crate) fn cases_per_form() -> usize {
    std::env::var("JITSEAM_SOUNDNESS_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(96)
}

/// The abstract result of one form under one input class.
struct Abstract {
    atoms: Atoms,
    /// The input atoms, in the form's input order.
    inputs: Vec<Atom>,
    /// The state after the instruction.
    state: State,
    /// For the branch predicate: the state refined by its truth (`[false, true]`).
    branches: Option<[State; 2]>,
    /// The flattened register of each of the form's outputs.
    outputs: Vec<u32>,
    /// The lowered kinds (for messages).
    kinds: Vec<String>,
}

/// Runs one form: the abstract step once, the concrete cases in one launch.
pub(crate) fn run_form(form: &Form, cases: &[Vec<i128>]) -> Tally {
    let mut tally = Tally::default();
    let abs = match abstract_step(form) {
        Ok(abs) => abs,
        Err(e) => {
            tally.violations.push(format!("{}: {e}", form.text));
            return tally;
        }
    };
    let outputs = match concrete(form, cases) {
        Ok(out) => out,
        Err(e) => {
            tally
                .violations
                .push(format!("{}: the interpreter: {e}", form.text));
            return tally;
        }
    };
    for (case, out) in cases.iter().zip(&outputs) {
        tally.cases += 1;
        match check_case(form, &abs, case, out) {
            Check::Holds => tally.held += 1,
            Check::Unknown => tally.unchecked += 1,
            Check::Fails(why) => {
                let mut msg = format!("{}\n  inputs:", form.text);
                for (input, v) in form.inputs.iter().zip(case) {
                    let _ = write!(msg, " {}={v}", input.name);
                }
                let _ = write!(
                    msg,
                    "\n  outputs: {out:?}\n  lowered: {:?}\n  {why}",
                    abs.kinds
                );
                tally.violations.push(msg);
            }
        }
    }
    tally
}

/// Runs every form with its own cases; returns what was seen.
pub(crate) fn run_forms(forms: &[Form]) -> Tally {
    let mut tally = Tally::default();
    let per = cases_per_form();
    for (i, form) in forms.iter().enumerate() {
        let cases = forms::cases(form, per, i as u64);
        tally.add(run_form(form, &cases));
    }
    tally
}

fn abstract_step(form: &Form) -> Result<Abstract, String> {
    let text = form.abstract_text();
    let module = ResolvedModule::new(&text).map_err(|e| format!("{e}\n{text}"))?;
    let entry = module
        .entry(&text, "k")
        .map_err(|e| format!("{e}\n{text}"))?;
    let body = entry.entry_body().ok_or("no body")?;
    let reg = |name: &str| {
        body.regs
            .iter()
            .position(|r| r.name == name)
            .map(|i| i as u32)
            .ok_or_else(|| format!("no register {name}"))
    };
    let lowered = Lowerer::new(&text, &module, &entry)
        .lower()
        .map_err(|e| format!("lowering: {}", e.reason))?;
    // One pointer param, for the forms whose inputs are pointers into its operand.
    let contract = EntryContract {
        params: vec![ParamContract::Pointer {
            operand: OperandRef::Output(0),
            access_bytes: 1,
            elem_bytes: 1,
            extent: Extent::Dense,
        }],
        block: None,
        dynamic_shared: None,
    };
    let mut atoms = Atoms::new();
    let mut inputs = Vec::new();
    let mut regs = Vec::new();
    for input in &form.inputs {
        let (lo, hi) = input.class;
        let a = atoms.push(AtomKind::Opaque, lo, hi);
        inputs.push(a);
        regs.push(reg(input.name)?);
    }
    let mut an = Analyzer::new(&lowered, &contract, atoms);
    let mut st = initial_state(lowered.num_regs, Facts::default());
    for ((input, &a), &r) in form.inputs.iter().zip(&inputs).zip(&regs) {
        let v = if input.ty == ScalarType::Pred {
            Val::Pred(PredVal::Unknown)
        } else if input.pointer {
            Val::Ptr {
                param: 0,
                off: Poly::atom(a),
            }
        } else {
            Val::Int {
                p: Poly::atom(a),
                w: bits(input.ty),
            }
        };
        st.set(r, v);
    }
    let mut kinds = Vec::new();
    for (idx, ins) in lowered.insts.iter().enumerate() {
        kinds.push(format!("{:?}", ins.kind));
        match &ins.kind {
            Kind::Ret | Kind::Bra { .. } | Kind::Nop => continue,
            Kind::Refuse { reason, .. } => return Err(format!("refused: {reason}")),
            _ => {}
        }
        if ins.guard.is_some() {
            return Err("a guarded instruction in a form".to_owned());
        }
        an.exec(&mut st, idx, ins, true);
    }
    if let Some((_, r)) = an.rejections.first() {
        return Err(format!("rejected: {r}"));
    }
    let branches = match form.branch {
        Some(name) => {
            let r = reg(name)?;
            let pred = match st.get(r) {
                Val::Pred(p) => p.clone(),
                _ => PredVal::Unknown,
            };
            let mut both = [st.clone(), st.clone()];
            for (truth, refined) in both.iter_mut().enumerate() {
                an.refine(refined, &pred, truth == 1);
            }
            Some(both)
        }
        None => None,
    };
    let outputs = form
        .outputs
        .iter()
        .map(|(name, _)| reg(name))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Abstract {
        atoms: an.atoms,
        inputs,
        state: st,
        branches,
        outputs,
        kinds,
    })
}

fn bits(ty: ScalarType) -> u8 {
    if ty == ScalarType::Pred {
        1
    } else {
        (ty.bytes() * 8) as u8
    }
}

/// Each case's output registers, as the bits the interpreter left in them.
fn concrete(form: &Form, cases: &[Vec<i128>]) -> Result<Vec<Vec<u64>>, String> {
    // Whole warps only: a form with a warp-wide instruction (`shfl.sync` with a full member
    // mask) needs every lane of its warp to run it, so the last case is repeated up to a
    // multiple of the warp (its outputs are dropped below).
    let mut padded = cases.to_vec();
    if let Some(last) = cases.last() {
        padded.resize(cases.len().next_multiple_of(WARP), last.clone());
    }
    let (cases, real) = (&padded[..], cases.len());
    let text = form.concrete_text();
    let module = jitseam_ptx::parse_module(&text).map_err(|e| format!("{e}\n{text}"))?;
    let program = jitseam_emu::decode(&text, &module, "k").map_err(|e| format!("{e}\n{text}"))?;
    let n_in = form.inputs.len().max(1);
    let n_out = form.outputs.len().max(1);
    let blocks = cases.len().div_ceil(BLOCK as usize).max(1);
    let threads = blocks * BLOCK as usize;
    let mut input = vec![0u8; threads * n_in * 8];
    for (t, case) in cases.iter().enumerate() {
        for (i, (&v, spec)) in case.iter().zip(&form.inputs).enumerate() {
            let v = if spec.pointer {
                v.wrapping_add(i128::from(forms::BASE))
            } else {
                v
            };
            let at = (t * n_in + i) * 8;
            input[at..at + 8].copy_from_slice(&(v as u64).to_le_bytes());
        }
    }
    let mut output = vec![0u8; threads * n_out * 8];
    {
        let memory = Regions::new(vec![(IN, &mut input[..]), (OUT, &mut output[..])]);
        let mut params = IN.to_le_bytes().to_vec();
        params.extend_from_slice(&OUT.to_le_bytes());
        params.extend_from_slice(&(cases.len() as u64).to_le_bytes());
        let dims = LaunchDims {
            grid: [blocks as u32, 1, 1],
            block: [BLOCK, 1, 1],
            dynamic_shared_bytes: 0,
        };
        let options = RunOptions {
            workers: 1,
            ..RunOptions::default()
        };
        run_with(&program, &params, dims, &memory, &options).map_err(|e| e.to_string())?;
    }
    Ok(output
        .chunks_exact(n_out * 8)
        .take(real)
        .map(|row| {
            row.chunks_exact(8)
                .take(form.outputs.len())
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect()
        })
        .collect())
}

/// Checks one concrete case against the abstract result.
fn check_case(form: &Form, abs: &Abstract, case: &[i128], out: &[u64]) -> Check {
    let mut env = Env::default();
    // The launch geometry of thread 0 of block 0 is irrelevant to a form (no form reads it),
    // but its atoms are in every fact set: give them a legal value.
    for (a, v) in [
        (TID, 0),
        (NTID, 1),
        (CTAID, 0),
        (NCTAID, 1),
        (I0, 0),
        (S, 1),
    ] {
        env.vals.insert(a, v);
    }
    for (&a, &v) in abs.inputs.iter().zip(case) {
        env.vals.insert(a, v);
    }
    let mut unknown = false;
    // Addresses of a variable (`SHARED_BASE + v`, its own space's or its generic one): the
    // harness knows no base for them, but two of the same provenance differ by exactly the
    // difference of their offsets.
    let mut var_addrs: Vec<(&str, u32, i128, i128)> = Vec::new();
    // The outputs: bind each result atom to the concrete value it stands for, then compare.
    for (((name, ty), &r), &bits_out) in form.outputs.iter().zip(&abs.outputs).zip(out) {
        let concrete = i128::from(bits_out);
        match abs.state.get(r) {
            Val::Int { p, w } => {
                let w = (*w).min(bits(*ty));
                match solve(&mut env, &abs.atoms, &abs.state.facts, p, concrete, w) {
                    Check::Holds => {}
                    Check::Unknown => unknown = true,
                    Check::Fails(why) => return Check::Fails(format!("{name}: {why}")),
                }
            }
            Val::Ptr { param: 0, off } => match env.poly_mod(&abs.atoms, off) {
                Ok(Some(v)) => {
                    let claimed = read(v.wrapping_add(i128::from(forms::BASE)), 64, false);
                    if claimed != read(concrete, 64, false) {
                        return Check::Fails(format!(
                            "{name}: claimed base + {v} = {claimed:#x}, the machine says {concrete:#x}"
                        ));
                    }
                }
                Ok(None) => unknown = true,
                Err(e) => return Check::Fails(format!("{name}: {e}")),
            },
            Val::Ptr { param, off } if *param >= crate::ir::SHARED_BASE => {
                match env.poly_mod(&abs.atoms, off) {
                    Ok(Some(v)) => {
                        for &(other, p, v2, c2) in &var_addrs {
                            let claimed = read(v.wrapping_sub(v2), 64, false);
                            let seen = read(concrete.wrapping_sub(c2), 64, false);
                            if p == *param && claimed != seen {
                                return Check::Fails(format!(
                                    "{name}: claimed {claimed:#x} past {other}, the machine says {seen:#x}"
                                ));
                            }
                        }
                        var_addrs.push((name, *param, v, concrete));
                    }
                    Ok(None) => unknown = true,
                    Err(e) => return Check::Fails(format!("{name}: {e}")),
                }
            }
            Val::Pred(pred) => match env.pred(&abs.atoms, pred) {
                Ok(Some(t)) if t == (concrete & 1 == 1) => {}
                Ok(Some(t)) => {
                    return Check::Fails(format!(
                        "{name}: the predicate {pred:?} is claimed {t}, the machine says {}",
                        concrete & 1 == 1
                    ));
                }
                Ok(None) => {}
                Err(e) => return Check::Fails(format!("{name}: {e}")),
            },
            // The bitwise `or` of its parts; the high-word test is that `& !0xffff_ffff`.
            Val::OrOf(parts, _) | Val::HiTest(parts, ..) => {
                let mut or: u64 = 0;
                let mut known = true;
                for part in parts {
                    match env.poly_mod(&abs.atoms, part) {
                        Ok(Some(v)) => or |= read(v, 64, false) as u64,
                        Ok(None) => known = false,
                        Err(e) => return Check::Fails(format!("{name}: {e}")),
                    }
                }
                if let Val::HiTest(_, _, k) = abs.state.get(r) {
                    or &= !((1u64 << k) - 1);
                }
                let w = bits(*ty);
                if !known {
                    unknown = true;
                } else if read(i128::from(or), w, false) != read(concrete, w, false) {
                    return Check::Fails(format!(
                        "{name}: claimed the or of its parts, {or:#x}, the machine says {concrete:#x}"
                    ));
                }
            }
            // No claim about the value: data, an address of no one operand.
            Val::Data | Val::Wild | Val::PtrData { .. } | Val::Undef => {}
            other => {
                return Check::Fails(format!(
                    "{name}: an abstract value the harness does not know: {other:?}"
                ));
            }
        }
    }
    let facts = match (&abs.branches, form.branch) {
        (Some(both), Some(name)) => {
            let taken = form
                .outputs
                .iter()
                .position(|(n, _)| *n == name)
                .and_then(|i| out.get(i))
                .map_or(0, |&v| (v & 1) as usize);
            &both[taken].facts
        }
        _ => &abs.state.facts,
    };
    match env.facts(&abs.atoms, facts) {
        Check::Holds if !unknown => Check::Holds,
        Check::Holds | Check::Unknown => Check::Unknown,
        fails => fails,
    }
}

/// Whether `p` can be the concrete `value` modulo `2^w`: evaluated if its atoms have values;
/// else, when exactly one atom is unknown and appears linearly with a coefficient `±2^t`, that
/// atom is solved for (every representative in its range and this path's bounds is tried,
/// keeping the first under which this path's facts hold).
fn solve(env: &mut Env, atoms: &Atoms, facts: &Facts, p: &Poly, value: i128, w: u8) -> Check {
    match env.poly_mod(atoms, p) {
        Ok(Some(v)) => {
            return if read(v, w, false) == read(value, w, false) {
                Check::Holds
            } else {
                Check::Fails(format!(
                    "claimed {v} (mod 2^{w}: {}), the machine says {}",
                    read(v, w, false),
                    read(value, w, false)
                ))
            };
        }
        Ok(None) => {}
        Err(e) => return Check::Fails(e),
    }
    let mut missing = Vec::new();
    for a in p.atoms() {
        if !missing.contains(&a) && matches!(env.clone().atom(atoms, a), Ok(None)) {
            missing.push(a);
        }
    }
    let [a] = missing.as_slice() else {
        return Check::Unknown;
    };
    let a = *a;
    let (Some((rest, coeff)), true) = (
        linear_in(p, a),
        p.atoms().all(|x| x == a || !missing.contains(&x)),
    ) else {
        return Check::Unknown;
    };
    let Ok(Some(rest)) = env.poly_mod(atoms, &rest) else {
        return Check::Unknown;
    };
    // `|coeff| = 2^t`: the atom is `target / 2^t` modulo `2^(w − t)`, where `target` is a
    // multiple of `2^t` modulo `2^w` (else no value of the atom is the machine's).
    let target = if coeff > 0 {
        value - rest
    } else {
        rest - value
    };
    let t = coeff.unsigned_abs().trailing_zeros();
    let Some(reduced) = w.checked_sub(t as u8).filter(|&r| r > 0) else {
        return Check::Unknown;
    };
    let low = target.rem_euclid(1i128 << w.clamp(1, 64));
    if low % (1i128 << t) != 0 {
        return Check::Fails(format!(
            "the result {} (mod 2^{w}) is not the multiple of {} the analysis claims",
            read(value, w, false),
            coeff.abs()
        ));
    }
    let (mut lo, mut hi) = atoms.range(a);
    if let Some(&(_, l, h)) = facts.bounds.iter().find(|b| b.0 == a) {
        lo = lo.max(l);
        hi = hi.min(h);
    }
    let reps = representatives(low >> t, reduced, lo, hi);
    if reps.is_empty() {
        return Check::Fails(format!(
            "the result {} (mod 2^{w}) has no value in the range {lo}..={hi} the analysis gave it",
            read(value, w, false)
        ));
    }
    let mut last = String::new();
    for v in reps {
        let mut trial = env.clone();
        trial.vals.insert(a, v);
        match trial.facts(atoms, facts) {
            Check::Fails(why) => last = why,
            _ => {
                *env = trial;
                return Check::Holds;
            }
        }
    }
    Check::Fails(format!(
        "no value of the result's atom makes this path's facts true: {last}"
    ))
}

/// `p = coeff·a + rest` with `|coeff|` a power of two and `a` nowhere in `rest`.
fn linear_in(p: &Poly, a: Atom) -> Option<(Poly, i128)> {
    let mut coeff = 0;
    let mut rest = Vec::new();
    for (mono, c) in p.terms() {
        if mono.contains(a) {
            if mono.degree() != 1 {
                return None;
            }
            coeff = *c;
        } else {
            rest.push((*mono, *c));
        }
    }
    if coeff == 0 || !coeff.unsigned_abs().is_power_of_two() {
        return None;
    }
    Some((Poly::from_terms(rest)?, coeff))
}
