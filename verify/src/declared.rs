//! Declared extents (the custom ABI's): a postfix expression over integer params, the launch
//! geometry and literals, as a polynomial over the same atoms the body's values use.
//!
//! The launch check evaluates every declared extent with checked unsigned arithmetic and
//! refuses a launch where one has no value, so at every launch the verifier reasons about:
//! every param an extent names is `≥ 0`, every step's exact integer value lies in `[0, 2^64)`
//! (a sum or product never wrapped, a difference `a − b` had `a ≥ b`), and every divisor was
//! `≥ 1`. Under those facts the polynomial below equals the extent's value exactly.

use super::atoms::{Atoms, I0, INF, NCTAID, NTID, S};
use super::contract::ExtentTerm;
use super::poly::{Atom, Poly};

/// The polynomial of a declared extent, and facts that hold at every launch (`a − b ≥ 0` for a
/// difference, a quotient's definition). `param_atoms` maps a `.param` index to its atom;
/// `None` where the expression names a param without one, or is malformed: the extent is then
/// not modeled and every access through its pointer is refused.
pub(crate) fn declared_extent(
    atoms: &mut Atoms,
    code: &[ExtentTerm],
    param_atoms: &[Option<Atom>],
    facts: &mut Vec<Poly>,
) -> Option<Poly> {
    let mut stack: Vec<Poly> = Vec::new();
    for &term in code {
        let leaf = match term {
            ExtentTerm::Lit(v) => Some(Poly::constant(i128::from(v))),
            ExtentTerm::Param(i) => Some(Poly::atom(param_atoms.get(i as usize).copied()??)),
            ExtentTerm::Grid(axis) => Some(geometry(atoms, 3, axis)?),
            ExtentTerm::Block(axis) => Some(geometry(atoms, 1, axis)?),
            _ => None,
        };
        if let Some(p) = leaf {
            stack.push(p);
            continue;
        }
        let b = stack.pop()?;
        let a = stack.pop()?;
        let value = match term {
            ExtentTerm::Add => a.add(&b)?,
            ExtentTerm::Mul => a.mul(&b)?,
            ExtentTerm::Sub => {
                // The launch refuses `a < b`: the difference is exact and nonnegative.
                let d = a.sub(&b)?;
                facts.push(d.clone());
                d
            }
            ExtentTerm::Div | ExtentTerm::DivCeil => {
                // `ceil(a / b) = floor((a + b − 1) / b)` for `b ≥ 1`; the launch refuses
                // `b = 0`, and `a ≥ 0` as every value is. The quotient's defining facts hold at
                // every launch, so they are facts of the whole body.
                let num = if term == ExtentTerm::DivCeil {
                    a.add(&b)?.add_const(-1)?
                } else {
                    a
                };
                facts.push(b.add_const(-1)?);
                let (f, local) = atoms.floor(&num, &b, 0, INF)?;
                facts.extend(local);
                Poly::atom(f)
            }
            _ => return None,
        };
        stack.push(value);
    }
    let top = stack.pop()?;
    if !stack.is_empty() {
        return None;
    }
    let top = atoms.canon(&top)?;
    facts.push(top.clone());
    Some(top)
}

/// `%ntid` (`group` 1) or `%nctaid` (`group` 3) along `axis`.
fn geometry(atoms: &Atoms, group: u8, axis: u8) -> Option<Poly> {
    if axis == 0 {
        return Some(Poly::atom(if group == 1 { NTID } else { NCTAID }));
    }
    atoms.axis_atom(group, axis).map(Poly::atom)
}

/// The grid's blocks, `nctaid.x · nctaid.y · nctaid.z` (`None` for a one-dimensional launch).
pub(crate) fn blocks(atoms: &Atoms) -> Option<Poly> {
    if atoms.axes.is_empty() {
        return None;
    }
    atoms.axes.iter().try_fold(Poly::atom(NCTAID), |acc, axis| {
        acc.mul(&Poly::atom(axis[3]))
    })
}

/// The products a launch's thread count bounds, each at most `grid.x·grid.y·grid.z ·
/// block.x·block.y·block.z` (every factor is at least 1): the x axis's threads `S.x =
/// nctaid.x·ntid.x` times the y axis's blocks, then the z axis's too (a thread's linear index
/// over a grid of one-dimensional blocks), and `S.x·S.y`, `S.x·S.y·S.z` (every axis's
/// threads). Empty for a one-dimensional launch.
pub(crate) fn thread_products(atoms: &Atoms) -> Vec<Poly> {
    let [y, z] = match atoms.axes.as_slice() {
        [y, z] => [y, z],
        _ => return Vec::new(),
    };
    let x = Poly::atom(S);
    let mut out = Vec::with_capacity(4);
    for group in [3, 5] {
        if let Some(xy) = x.mul(&Poly::atom(y[group])) {
            out.extend(xy.mul(&Poly::atom(z[group])));
            out.push(xy);
        }
    }
    out
}

/// The global index and thread count of every axis there is: `(I0, S)` along x, then y, z.
pub(crate) fn axis_threads(atoms: &Atoms) -> Vec<(Atom, Atom)> {
    let mut out = vec![(I0, S)];
    out.extend(atoms.axes.iter().map(|x| (x[4], x[5])));
    out
}
