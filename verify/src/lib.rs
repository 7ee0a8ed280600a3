//! The body verifier: proves, without a driver, that an entry touches only its operands.
//!
//! [`verify_entry`] decodes the entry (inlining every `.func` it calls) and runs an abstract
//! interpreter over its control-flow graph. Each integer register holds a polynomial over
//! symbols — thread coordinates, the count, shapes and strides, loop iteration counts,
//! quotients — exact modulo 2^width; each pointer is `base(param) + offset`. Facts from branch
//! guards, divisions and loop invariants are kept per path, and a small prover discharges, for
//! every global load, store and atomic:
//!
//! - provenance: the address is one pointer parameter's base plus an offset;
//! - role: stores and atomics only through outputs;
//! - width: exactly one element (one vector for the vectorized ABI), at a multiple of it;
//! - bounds: dense, `0 ≤ offset/width < n`; strided, `offset/size = Σ c_k · stride(p, k)` with
//!   `0 ≤ c_k < shape_k`, each axis paired with its own operand's stride.
//!
//! For a custom contract, every `.shared` access too: at an offset from one shared variable's
//! symbol, within that variable's bytes (static) or the launch's dynamic shared bytes (an
//! `extern` array), with a width no wider than the variable's alignment, at a multiple of it.
//!
//! What cannot be proven is a [`Rejection`] naming the first offending line.
//!
//! # What the proof assumes (the launch check guarantees it)
//!
//! - launches are one-dimensional: `%tid.y = %tid.z = %ctaid.y = %ctaid.z = 0`,
//!   `%ntid.y = … = 1`; `1 ≤ %ntid.x ≤ 1024`, `1 ≤ %nctaid.x ≤ 2^31 − 1` — except for a
//!   contract with declared extents or integer params ([`EntryContract::three_dimensional`]),
//!   whose launches have each coordinate a symbol, with `%ntid` and `%nctaid` along each axis
//!   within [`MAX_BLOCK`] and [`MAX_GRID`];
//! - a declared extent has a value at every launch (see [`Extent::Declared`]), and integer
//!   params it names are `≥ 0`;
//! - `0 ≤ n < 2^63` and every shape `0 ≤ shape_k < 2^63`; for strided, `n = Π shape_k`;
//! - each pointer is the base of an operand whose byte range covers the view the ABI
//!   describes: `n` accesses (dense) or every `Σ c_k · stride_k` (strided);
//! - for a contract with an exact block ([`EntryContract::block`]), every launch uses exactly
//!   that block;
//! - the conditions in [`Proof::conditions`] hold (e.g. `n + threads ≤ 2^63 − 1`, so that an
//!   index stepping one stride past `n` does not wrap).

mod access;
mod analyze;
mod atoms;
pub mod codec;
mod contract;
mod declared;
mod doubling;
mod facts;
mod grid;
mod guard;
mod halving;
mod hash;
mod ir;
mod lower;
mod poly;
mod proof;
mod reject;
#[cfg(test)]
mod soundness;
mod transfer;
mod value;
mod witness;
mod xor;

pub use contract::{EntryContract, Extent, ExtentTerm, OperandRef, ParamContract};
pub use guard::{FAULT_RECORD_BYTES, FaultRecord};
/// The verifier's fast hasher, for keys that are compared whole after (jitseam's proof cache).
pub use hash::WordHasher;
pub use proof::{
    AccessClaim, AccessKind, AccessSummary, ClaimTarget, Coverage, Guard, GuardParam, Guarded,
    LaunchCondition, Proof,
};
pub use reject::{RejectKind, Rejection};

/// This build of the verifier: its version and a hash of its sources (and of the PTX parser's
/// in the workspace), so that a proof kept by one build — on disk, across processes — is
/// reused by that build alone.
pub const VERIFIER_ID: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "+",
    env!("JITSEAM_VERIFY_SOURCE_HASH")
);

/// The largest block every proof assumes, along x, y and z: every CUDA device's own limits
/// (compute capability 3.0 on). A launch check refuses a larger block, whatever a device
/// reports.
pub const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];

/// The largest grid every proof assumes, along x, y and z: every CUDA device's own limits
/// (compute capability 3.0 on), so that a row index `blockIdx.y · blockDim.y + threadIdx.y`
/// is below `65535 · 1024` and a small multiple of it reads exactly as an `int`. A launch check
/// refuses a larger grid, whatever a device reports.
pub const MAX_GRID: [u32; 3] = [(1 << 31) - 1, 65_535, 65_535];

use analyze::{Analyzer, initial_state};
use atoms::{AtomKind, Atoms, NTID, TID};
use facts::{Facts, Tags};
use jitseam_ptx::resolve::{ResolvedEntry, ResolvedModule};
use poly::Poly;

/// Launch conditions the verifier may assume, by tag bit: `n + threads ≤ limit`.
///
/// `2^62 − 1` is for 64-bit signed indices of loops unrolled by hand: `i + 3·stride < n`
/// recomputed after `i += 4·stride` reaches `n + 4·threads`, which `n + threads ≤ 2^63 − 1`
/// alone lets wrap negative; below `2^62` any unroll factor up to `2^21` stays exact.
const CONDITIONS: [(Tags, u64); 4] = [
    (1, (1 << 63) - 1),
    (8, (1 << 62) - 1),
    (2, (1 << 32) - 1),
    (4, (1 << 31) - 1),
];

/// Every condition of [`CONDITIONS`]: the tags a proof of a contract without declared extents
/// may use.
const TAGS: Tags = 1 | 8 | 2 | 4;

/// The condition tried first for a contract without declared extents: `n + threads ≤ 2^63 − 1`.
const WEAKEST: Tags = 1;

/// Launch conditions for contracts with declared extents, by tag bit: along every axis
/// `grid·block ≤ limit` (`true`), or every declared extent `≤ limit` (`false`), the weaker
/// first (the scaled ones, [`SCALED_AXIS_TAGS`], after every other condition). A coordinate `ctaid·ntid + tid` reads exactly as an `int` only below `2^31`, as an
/// `unsigned` below `2^32`; an index below an extent likewise. Scaled by a vector's width
/// (`4 · i`, the first of four elements one `float4` access takes; `8 · i` of eight `half`s;
/// `16 · i` bytes) it reads exactly as an `int` only for fewer threads: `2^29` and `2^27`.
const DECLARED_CONDITIONS: [(Tags, u64, bool); 6] = [
    (16, (1 << 32) - 1, true),
    (32, (1 << 32) - 1, false),
    (64, (1 << 31) - 1, true),
    (128, (1 << 31) - 1, false),
    (2048, (1 << 29) - 1, true),
    (4096, (1 << 27) - 1, true),
];

/// The conditions of [`DECLARED_CONDITIONS`] on the threads along an axis scaled by a vector's
/// width: their facts are assumed after every other condition's.
const SCALED_AXIS_TAGS: Tags = 2048 | 4096;

/// Launch condition for contracts with declared extents: every extent plus the threads along
/// any axis `≤ limit`, so an index below an extent stepped once more by a grid stride (or a
/// block stride) still reads exactly as an `int`.
const EXTENTS_PLUS_THREADS: (Tags, u64) = (256, (1 << 31) - 1);

/// Launch condition for contracts with declared extents: the grid's blocks `≤ limit`, so the
/// linear index of a block, `(blockIdx.z · gridDim.y + blockIdx.y) · gridDim.x + blockIdx.x`
/// (the row of a kernel launched one block per row), reads exactly as an `int`.
const BLOCKS: (Tags, u64) = (512, (1 << 31) - 1);

/// Launch condition for contracts with declared extents: the launch's threads (grid times
/// block, over all three axes) `≤ limit`, so a thread's linear index over a two- or
/// three-dimensional grid, `(gridDim.x · blockIdx.y + blockIdx.x) · blockDim.x + threadIdx.x`,
/// reads exactly as an `int`.
const THREADS: (Tags, u64) = (1024, (1 << 31) - 1);

/// Every condition of [`DECLARED_CONDITIONS`], [`EXTENTS_PLUS_THREADS`], [`BLOCKS`] and
/// [`THREADS`]: the tags a proof of a contract with declared extents may use.
const DECLARED_TAGS: Tags = 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048 | 4096;

/// Proves the body of `entry` in `text` safe under `contract`: parses and resolves the module,
/// then [`verify_resolved`].
pub fn verify_entry(text: &str, entry: &str, contract: &EntryContract) -> Result<Proof, Rejection> {
    let (module, resolved) = resolved(text, entry)?;
    verify_resolved(text, &module, &resolved, contract)
}

/// [`verify_entry`] of a guarded rewrite, under the conditions `tags` the proof that placed its
/// guards used: the guards stand in for what the other conditions would prove, and each fact
/// less is a branch less for every search that fails (a guarded access is one whose bounds the
/// prover could not show).
fn verify_rewrite(
    text: &str,
    entry: &str,
    contract: &EntryContract,
    tags: Tags,
) -> Result<Proof, Rejection> {
    let (module, resolved) = resolved(text, entry)?;
    let (body, names, _) = lowered(text, &module, &resolved, contract)?;
    attempt(&body, contract, &names, tags, None, None).map(|(proof, _)| proof)
}

/// The module of `text`, parsed and resolved, and its entry `entry`.
fn resolved(text: &str, entry: &str) -> Result<(ResolvedModule, ResolvedEntry), Rejection> {
    let unparsed = |e: jitseam_ptx::ParseError| Rejection::unparsed(&e);
    let module = ResolvedModule::new(text).map_err(unparsed)?;
    if module.module.entry(entry).is_none() {
        return Err(Rejection {
            line: 0,
            instruction: String::new(),
            kind: RejectKind::Unsupported,
            reason: format!("no entry `{entry}`"),
        });
    }
    let resolved = module.entry(text, entry).map_err(unparsed)?;
    Ok((module, resolved))
}

/// Proves the body of a resolved entry safe under `contract`. `text` is the module's PTX (for
/// the lines a rejection quotes); `module` and `entry` were resolved from it.
///
/// Every access must be proven: the proof has no [`Proof::guards`] (see [`verify_guarded`]).
pub fn verify_resolved(
    text: &str,
    module: &ResolvedModule,
    entry: &ResolvedEntry,
    contract: &EntryContract,
) -> Result<Proof, Rejection> {
    let (body, names, _) = lowered(text, module, entry, contract)?;
    prove(&body, contract, &names)
}

/// [`verify_entry`], proving what it can and guarding the rest: parses and resolves the
/// module, then [`verify_guarded`].
pub fn verify_guarded_entry(
    text: &str,
    entry: &str,
    contract: &EntryContract,
) -> Result<Proof, Rejection> {
    let (module, resolved) = resolved(text, entry)?;
    verify_guarded(text, &module, &resolved, contract)
}

/// Proves what it can of the body of a resolved entry, and guards the rest: where every access
/// is proven, the proof of [`verify_resolved`]; otherwise, when each access left over has one
/// pointer parameter's (or one shared variable's) provenance and its role, a proof of the
/// entry rewritten with a run-time guard before each of them ([`Proof::guarded`], the
/// accesses in [`Proof::guards`]), itself verified with the guards as facts. What no guard
/// can mend is the [`Rejection`] it would be without guards.
pub fn verify_guarded(
    text: &str,
    module: &ResolvedModule,
    entry: &ResolvedEntry,
    contract: &EntryContract,
) -> Result<Proof, Rejection> {
    let (body, names, name) = lowered(text, module, entry, contract)?;
    let strict = match prove(&body, contract, &names) {
        Ok(proof) => return Ok(proof),
        Err(rejection) => rejection,
    };
    if !guard::guardable(strict.kind) || strict.line == 0 {
        return Err(strict);
    }
    // Lines guarded though the first analysis proved them: its rewrite's re-proof did not.
    let mut forced: Vec<u32> = Vec::new();
    loop {
        // What the guard machinery cannot handle (a form it does not rewrite) is no reason
        // of the body's: the decline is the one it would be without guards.
        let (found, used) = match prove_tagged(&body, contract, &names, Some(&forced)) {
            Ok(found) => found,
            Err(r) if r.kind == RejectKind::Unsupported => return Err(strict),
            Err(r) => return Err(r),
        };
        if found.guards.is_empty() {
            return Ok(found);
        }
        let guarded: Vec<u32> = found.guards.iter().map(|g| g.line).collect();
        match guard::seal(
            text,
            &name,
            module,
            entry,
            contract,
            found,
            |text, entry, contract| verify_rewrite(text, entry, contract, used),
        ) {
            // An access the re-proof does not prove, under facts that differ from the first
            // analysis's (the guards' own, a search's budget spent elsewhere): guarded too,
            // and everything proven again. Each round guards one more line of the body.
            Err(r)
                if forced.len() < MAX_RESEALS
                    && guard::guardable(r.kind)
                    && r.line != 0
                    && !guarded.contains(&r.line)
                    && !forced.contains(&r.line) =>
            {
                forced.push(r.line);
            }
            sealed => return sealed,
        }
    }
}

/// How many accesses the rewrite's re-proof may add to a guarded proof (see
/// [`verify_guarded`]) before its rejection stands.
const MAX_RESEALS: usize = 4;

/// The lowered body of `entry`, its parameters' names and the entry's name.
fn lowered(
    text: &str,
    module: &ResolvedModule,
    entry: &ResolvedEntry,
    contract: &EntryContract,
) -> Result<(ir::Body, Vec<String>, String), Rejection> {
    let Some(found) = module.module.entries.get(entry.entry as usize) else {
        return Err(Rejection {
            line: 0,
            instruction: String::new(),
            kind: RejectKind::Unsupported,
            reason: "no such entry".to_owned(),
        });
    };
    if found.params.len() != contract.params.len() {
        return Err(Rejection {
            line: 0,
            instruction: String::new(),
            kind: RejectKind::Unsupported,
            reason: format!(
                "the entry has {} parameters; the contract describes {}",
                found.params.len(),
                contract.params.len()
            ),
        });
    }
    let names: Vec<String> = found.params.iter().map(|p| p.name.clone()).collect();
    let body = lower::Lowerer::new(text, module, entry)
        .lower()
        .map_err(|e| Rejection {
            line: e.line,
            instruction: e.text,
            kind: RejectKind::Unsupported,
            reason: e.reason,
        })?;
    Ok((body, names, found.name.clone()))
}

/// Proves `body` under the weakest launch condition the verifier asks for, then, if that
/// fails for want of a condition, under every condition it could impose at once, each fact a
/// condition introduces tagged with it: the proof asks for the conditions its steps used, and
/// of the facts a step could use, the weaker conditions' come first. Guarding, under every
/// condition at once, with the accesses left unproven guarded.
///
/// Most bodies are proven under the weakest condition, and fewer facts are fewer branches for
/// every search; a body that needs more needs the second attempt only.
fn prove(body: &ir::Body, contract: &EntryContract, names: &[String]) -> Result<Proof, Rejection> {
    prove_tagged(body, contract, names, None).map(|(proof, _)| proof)
}

/// [`prove`], with the condition tags the proof used.
fn prove_tagged(
    body: &ir::Body,
    contract: &EntryContract,
    names: &[String],
    guarding: Option<&[u32]>,
) -> Result<(Proof, Tags), Rejection> {
    let (weakest, tags) = if contract.three_dimensional() {
        (0, DECLARED_TAGS)
    } else {
        (WEAKEST, TAGS)
    };
    let first = if guarding.is_some() { tags } else { weakest };
    // What is left wrong under every condition is reported: an index that wraps only without
    // a condition (and under one is merely out of bounds) is reported as out of bounds, and an
    // earlier access that a condition makes safe is not named in place of the first real
    // violation.
    let mut last = match attempt(body, contract, names, first, None, guarding) {
        Ok(found) => return Ok(found),
        Err(r) => r,
    };
    // Other kinds do not depend on the conditions: more facts cannot change them.
    let settled = last.kind != RejectKind::MayWrap && last.kind != RejectKind::OutOfBounds;
    if !settled && first != tags {
        match attempt(body, contract, names, tags, None, None) {
            Ok(found) => return Ok(found),
            // An attempt that ran out of work says nothing about the violation.
            Err(r) if r.line == 0 => {}
            Err(r) => last = r,
        }
    }
    // A static shared array or a `__constant__` table indexed by `%tid` is in bounds only for
    // blocks no larger than it: look for the largest block shape (by threads, then by x) under
    // which the body is proven, and make that shape a launch condition. Any shape the search
    // settles on is sound, as every launch checks it; the search only decides which condition
    // to ask for.
    if guarding.is_none()
        && contract.three_dimensional()
        && contract.block.is_none()
        && last.kind == RejectKind::OutOfBounds
        && last.reason.contains(access::PAST_ITS_SIZE)
        && body.shared.iter().any(|v| v.bytes.is_some())
    {
        let mut smallest = None;
        for shape in block_shapes() {
            match attempt(body, contract, names, tags, Some(shape), None) {
                Ok(found) => return Ok(found),
                Err(r) => smallest = Some(r),
            }
        }
        // What is wrong even in a block of one thread is what no block shape mends: the
        // violation to name (an access the shape alone makes unsafe is not it).
        if let Some(r) = smallest
            && r.line != 0
        {
            last = r;
        }
    }
    Err(last)
}

/// Block shapes `(x, y)` with power-of-two sides and at most 1024 threads, the most threads
/// first, then the widest.
fn block_shapes() -> Vec<(u32, u32)> {
    let sides: Vec<u32> = (0..=10).map(|k| 1u32 << k).collect();
    let mut shapes: Vec<(u32, u32)> = sides
        .iter()
        .flat_map(|&x| sides.iter().map(move |&y| (x, y)))
        .filter(|&(x, y)| x * y <= 1024)
        .collect();
    shapes.sort_unstable_by_key(|&(x, y)| (std::cmp::Reverse(x * y), std::cmp::Reverse(x)));
    shapes
}

/// The widest `.shared` access in the body, in bytes (0 when there is none).
fn widest_shared_access(body: &ir::Body) -> u32 {
    body.insts
        .iter()
        .filter_map(|i| match &i.kind {
            ir::Kind::Mem {
                bytes,
                shared: true,
                ..
            } => Some(*bytes),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

fn attempt(
    body: &ir::Body,
    contract: &EntryContract,
    names: &[String],
    tags: Tags,
    block: Option<(u32, u32)>,
    guarding: Option<&[u32]>,
) -> Result<(Proof, Tags), Rejection> {
    let mut atoms = Atoms::new();
    if contract.three_dimensional() {
        atoms.add_axes();
    }
    // Under an exact block the caller guarantees (a declared shape, `.reqntid`: every launch
    // checks it), `%ntid = (x, y, z)` and `%tid < (x, y, z)` along every axis there is.
    if let Some(dims) = contract.block {
        let mut axes = vec![(TID, NTID)];
        for dim in 1..=2u8 {
            if let (Some(tid), Some(ntid)) = (atoms.axis_atom(0, dim), atoms.axis_atom(1, dim)) {
                axes.push((tid, ntid));
            }
        }
        for ((tid, ntid), &extent) in axes.into_iter().zip(&dims) {
            let extent = i128::from(extent.max(1));
            atoms.set_range(tid, (0, extent - 1));
            atoms.set_range(ntid, (extent, extent));
            let ntid = Poly::atom(ntid);
            for equal in [
                ntid.add_const(-extent),
                ntid.neg().and_then(|p| p.add_const(extent)),
            ]
            .into_iter()
            .flatten()
            {
                atoms.add_global(equal);
            }
        }
    }
    // Under `block ≤ (x, y, …)` (a launch condition then), `%ntid` and `%tid` are that much
    // narrower along x and y.
    if let Some((x, y)) = block {
        atoms.set_range(TID, (0, i128::from(x) - 1));
        atoms.set_range(NTID, (1, i128::from(x)));
        if let (Some(tid), Some(ntid)) = (atoms.axis_atom(0, 1), atoms.axis_atom(1, 1)) {
            atoms.set_range(tid, (0, i128::from(y) - 1));
            atoms.set_range(ntid, (1, i128::from(y)));
        }
    }
    // The launch's dynamic shared bytes, a 32-bit launch setting. When the body names a
    // dynamic shared array, the proof assumes one slot of its widest shared access per thread
    // along x (`D ≥ w · %ntid.x`), a launch condition then.
    let dynamic = contract
        .three_dimensional()
        .then(|| atoms.push(AtomKind::DynamicShared, 0, i128::from(u32::MAX)));
    let slot = widest_shared_access(body);
    // Only a dynamic shared array the body names needs the launch to size it: a module-scope
    // one of another entry (the body can name every module variable) is no address it has.
    let dynamic_var = |var: u32| {
        body.shared
            .get(var as usize)
            .is_some_and(|v| v.bytes.is_none())
    };
    let names_dynamic = body.insts.iter().any(|ins| match &ins.kind {
        ir::Kind::SharedAddr { var, .. }
        | ir::Kind::Mem {
            addr: ir::AddrBase::Shared(var),
            ..
        } => dynamic_var(*var),
        _ => false,
    });
    // A declared least size is a fact of every launch, which the per-thread condition would
    // only ask more of.
    let dynamic_condition =
        (dynamic.is_some() && slot > 0 && names_dynamic && contract.dynamic_shared.is_none())
            .then_some(slot);
    // Params some declared extent (or the declared shared size) names: the launch refuses a
    // negative value for them.
    let named: Vec<u32> = contract
        .params
        .iter()
        .filter_map(|p| match p {
            ParamContract::Pointer {
                extent: Extent::Declared(code),
                ..
            } => Some(code),
            _ => None,
        })
        .chain(&contract.dynamic_shared)
        .flatten()
        .filter_map(|t| match t {
            ExtentTerm::Param(i) => Some(*i),
            _ => None,
        })
        .collect();
    let big = (1i128 << 63) - 1;
    let mut param_atoms = Vec::with_capacity(contract.params.len());
    let mut shapes: Vec<(u8, u32)> = Vec::new();
    let mut strides = Vec::new();
    let mut count_atom = None;
    for (i, p) in contract.params.iter().enumerate() {
        let a = match p {
            ParamContract::Count => {
                let a = atoms.push(AtomKind::Param(i as u32), 0, big);
                count_atom = Some(a);
                Some(a)
            }
            ParamContract::Shape { axis } => {
                let a = atoms.push(AtomKind::Param(i as u32), 0, big);
                shapes.push((*axis, a));
                Some(a)
            }
            ParamContract::Stride { operand, axis } => {
                let a = atoms.push(AtomKind::Param(i as u32), -(1i128 << 63), big);
                strides.push((a, *operand, *axis));
                Some(a)
            }
            ParamContract::Int { signed, bits } => {
                let bits = (*bits).clamp(1, 64);
                let (lo, hi) = if *signed {
                    let half = 1i128 << (bits - 1);
                    (-half, half - 1)
                } else {
                    (0, (1i128 << bits) - 1)
                };
                let lo = if named.contains(&(i as u32)) {
                    lo.max(0)
                } else {
                    lo
                };
                Some(atoms.push(AtomKind::Param(i as u32), lo, hi))
            }
            ParamContract::Guard(proof::GuardParam::Limit { .. }) => {
                Some(atoms.push(AtomKind::Param(i as u32), 0, (1i128 << 64) - 1))
            }
            _ => None,
        };
        param_atoms.push(a);
    }
    shapes.sort_unstable();
    let strided = contract.params.iter().any(|p| {
        matches!(
            p,
            ParamContract::Pointer {
                extent: Extent::Strided { .. },
                ..
            }
        )
    });
    let shape_atoms: Vec<u32> = shapes.iter().map(|s| s.1).collect();
    atoms.count = if strided && !shape_atoms.is_empty() {
        shape_atoms
            .iter()
            .try_fold(Poly::constant(1), |acc, &s| acc.mul(&Poly::atom(s)))
    } else {
        count_atom.map(Poly::atom)
    };
    atoms.shapes = if strided {
        shape_atoms.clone()
    } else {
        Vec::new()
    };
    let _ = atoms.q();
    let mut facts = Facts::default();
    if let Some(count) = atoms.count.clone() {
        let s = Poly::atom(atoms::S);
        for (bit, limit) in CONDITIONS {
            if tags & bit == 0 {
                continue;
            }
            let l = i128::from(limit);
            for p in [
                count
                    .add(&s)
                    .and_then(|x| x.neg())
                    .and_then(|x| x.add_const(l)),
                s.neg().and_then(|x| x.add_const(l)),
                count.neg().and_then(|x| x.add_const(l)),
            ]
            .into_iter()
            .flatten()
            {
                facts.assume(&atoms, &p, bit);
            }
        }
    }
    // Declared extents as polynomials, with the facts every launch guarantees about them, and
    // the conditions (by tag) this attempt may assume.
    let mut declared = vec![None; contract.params.len()];
    let mut launch_facts = Vec::new();
    for (i, p) in contract.params.iter().enumerate() {
        if let ParamContract::Pointer {
            extent: Extent::Declared(code),
            ..
        } = p
            && let Some(slot) = declared.get_mut(i)
        {
            *slot = declared::declared_extent(&mut atoms, code, &param_atoms, &mut launch_facts);
        }
    }
    // The declared least dynamic shared bytes: `D ≥ its value` at every launch, and so `D ≥`
    // the least value it takes (what a search that cancels negative terms would not find: a
    // fixed slot `(4 · tid) & 124` below `4 · (32 + ncols)`, as below 128).
    let mut least_shared = None;
    if let (Some(d), Some(code)) = (dynamic, &contract.dynamic_shared)
        && let Some(least) =
            declared::declared_extent(&mut atoms, code, &param_atoms, &mut launch_facts)
        && let Some(f) = Poly::atom(d).sub(&least)
    {
        launch_facts.push(f);
        least_shared = Some((d, least));
    }
    for f in &launch_facts {
        facts.assume(&atoms, f, 0);
    }
    if let Some((d, least)) = least_shared
        && let Some(f) = Poly::atom(d).add_const(-facts.range(&atoms, &least).0)
    {
        facts.assume(&atoms, &f, 0);
    }
    let dynamic_poly = dynamic.map(Poly::atom);
    for f in guard::limit_facts(
        &atoms,
        contract,
        &param_atoms,
        &declared,
        dynamic_poly.as_ref(),
    ) {
        facts.assume(&atoms, &f, 0);
    }
    if contract.three_dimensional() {
        let declared_condition = |facts: &mut Facts, (bit, limit, axes): (Tags, u64, bool)| {
            if tags & bit == 0 {
                return;
            }
            let l = i128::from(limit);
            let bounded: Vec<Poly> = if axes {
                declared::axis_threads(&atoms)
                    .into_iter()
                    .map(|(_, s)| Poly::atom(s))
                    .collect()
            } else {
                declared.iter().flatten().cloned().collect()
            };
            for b in bounded {
                if let Some(p) = b.neg().and_then(|x| x.add_const(l)) {
                    facts.assume(&atoms, &p, bit);
                }
            }
        };
        let (scaled, plain): (Vec<_>, Vec<_>) = DECLARED_CONDITIONS
            .into_iter()
            .partition(|&(bit, ..)| bit & SCALED_AXIS_TAGS != 0);
        for c in plain {
            declared_condition(&mut facts, c);
        }
        let (bit, limit) = BLOCKS;
        if tags & bit != 0
            && let Some(p) = declared::blocks(&atoms)
                .and_then(|b| b.neg())
                .and_then(|x| x.add_const(i128::from(limit)))
        {
            facts.assume(&atoms, &p, bit);
        }
        let (bit, limit) = THREADS;
        if tags & bit != 0 {
            for p in declared::thread_products(&atoms) {
                if let Some(p) = p.neg().and_then(|x| x.add_const(i128::from(limit))) {
                    facts.assume(&atoms, &p, bit);
                }
            }
        }
        let (bit, limit) = EXTENTS_PLUS_THREADS;
        if tags & bit != 0 {
            for (_, s) in declared::axis_threads(&atoms) {
                for e in declared.iter().flatten() {
                    if let Some(p) = e
                        .add(&Poly::atom(s))
                        .and_then(|x| x.neg())
                        .and_then(|x| x.add_const(i128::from(limit)))
                    {
                        facts.assume(&atoms, &p, bit);
                    }
                }
            }
        }
        // Last: on most launches the strictest, so a step that any other condition serves
        // asks for that one.
        for c in scaled {
            declared_condition(&mut facts, c);
        }
    }
    if let (Some(d), Some(w)) = (dynamic, dynamic_condition)
        && let Some(p) = Poly::atom(NTID)
            .scale(-i128::from(w))
            .and_then(|p| p.add(&Poly::atom(d)))
    {
        facts.assume(&atoms, &p, 0);
    }
    let mut an = Analyzer::new(body, contract, atoms);
    an.declared = declared;
    an.dynamic_shared = dynamic_poly;
    an.guards = guarding.map(|_| std::collections::BTreeMap::new());
    an.forced = guarding.unwrap_or_default().to_vec();
    an.param_atoms = param_atoms;
    an.param_names = names.to_vec();
    an.shape_atoms = shape_atoms;
    an.stride_atoms = strides;
    an.summaries = contract
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p, ParamContract::Pointer { .. }))
        .map(|(i, _)| AccessSummary {
            param: i as u32,
            ..AccessSummary::default()
        })
        .collect();
    if let Err(block) = an.prepare() {
        let idx = body.blocks.get(block).map_or(0, |b| b.start);
        an.reject_unsupported(idx, "an irreducible loop is not verified");
    } else {
        an.run(initial_state(body.num_regs, facts));
    }
    if an.too_complex {
        return Err(Rejection {
            line: 0,
            instruction: String::new(),
            kind: RejectKind::Unsupported,
            reason: "the body is too complex to verify".to_owned(),
        });
    }
    if let Some((_, r)) = an.rejections.iter().min_by_key(|(idx, _)| *idx) {
        return Err(r.clone());
    }
    // All on `n + threads`: the strictest used implies the others.
    let mut conditions: Vec<LaunchCondition> = CONDITIONS
        .iter()
        .filter(|(bit, _)| an.used_tags & bit != 0)
        .map(|&(_, limit)| limit)
        .min()
        .map(|limit| LaunchCondition::CountPlusThreadsAtMost { limit })
        .into_iter()
        .collect();
    if contract.three_dimensional() {
        // Of two conditions on the same quantity, the stricter one implies the other.
        let used = an.used_tags;
        let strict = |bit: Tags| used & bit != 0;
        for (bit, limit, axes) in DECLARED_CONDITIONS {
            let implied = DECLARED_CONDITIONS
                .iter()
                .any(|&(b, l, a)| a == axes && l < limit && strict(b));
            if strict(bit) && !implied {
                conditions.push(if axes {
                    LaunchCondition::AxisThreadsAtMost { limit }
                } else {
                    LaunchCondition::ExtentsAtMost { limit }
                });
            }
        }
        let (bit, limit) = EXTENTS_PLUS_THREADS;
        if strict(bit) {
            conditions.push(LaunchCondition::ExtentsPlusAxisThreadsAtMost { limit });
        }
        let (bit, limit) = BLOCKS;
        if strict(bit) {
            conditions.push(LaunchCondition::BlocksAtMost { limit });
        }
        let (bit, limit) = THREADS;
        if strict(bit) {
            conditions.push(LaunchCondition::ThreadsAtMost { limit });
        }
    }
    if let Some(w) = dynamic_condition {
        conditions.push(LaunchCondition::DynamicSharedAtLeast {
            bytes_per_thread_x: w,
        });
    }
    if let Some((x, y)) = block {
        conditions.push(LaunchCondition::BlockAtMost { x, y, z: 1024 });
    }
    let proof = Proof {
        // Any grid covers every element only if every operand the body writes is written
        // inside a loop stepped by the grid: one written only outside such a loop is written
        // by the thread of each index alone, which a smaller grid would not run. (A write
        // before the loop as well is NVRTC's peeled first iteration.)
        coverage: if an.grid_stride
            && an
                .written_outside_grid_loop
                .is_subset(&an.written_in_grid_loop)
        {
            Coverage::GridStride
        } else {
            Coverage::OneThreadPerElement
        },
        conditions,
        accesses: an.summaries,
        claims: an.claims.into_iter().collect(),
        guards: an
            .guards
            .map(|g| g.into_values().collect())
            .unwrap_or_default(),
        guarded: None,
    };
    Ok((proof, an.used_tags))
}
