//! The run loop: every (block, thread) of the grid in turn, each a tight `match` over pre-decoded
//! instructions on one flat register file.

use super::float::{
    arith_f32, f64_to_f32, f64_to_half, from_half, ftz, half_lane, int_to_float, max32, max64,
    min32, min64, round_integral, sat32, sat64, to_half,
};
use super::memory::Memory;
use super::{Access, ExecError, Fault, FaultKind, LaunchDims};
use crate::decode::{
    CMP_EQ, CMP_GE, CMP_GT, CMP_LE, CMP_LT, CMP_NAN, CMP_NE, CMP_NUM, CMP_UNORDERED, F_BRANCH,
    F_BRANCH_NEG, F_FTZ, F_GUARD_NEG, F_NEG_C, F_SAT, F_SIGNED, F_X2, FMT_F16, FMT_F32, FMT_F64,
    Inst, MAX_SLOTS, NONE, Op, Program,
};

#[inline(always)]
fn mask(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

#[inline(always)]
fn sext(v: u64, bits: u8) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let shift = 64 - u32::from(bits);
        ((v << shift) as i64) >> shift
    }
}

trait Unsigned {
    fn unsigned(self) -> u64;
}

impl Unsigned for i64 {
    #[inline(always)]
    fn unsigned(self) -> u64 {
        self as u64
    }
}

#[inline(always)]
fn f32v(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

#[inline(always)]
fn f32b(x: f32) -> u64 {
    u64::from(x.to_bits())
}

#[inline(always)]
fn f64v(x: u64) -> f64 {
    f64::from_bits(x)
}

/// Reads `len` little-endian bytes (1..=8) as an integer.
#[inline(always)]
fn read_le(bytes: &[u8]) -> u64 {
    match bytes.len() {
        4 => bytes
            .try_into()
            .map_or(0, |b: [u8; 4]| u64::from(u32::from_le_bytes(b))),
        8 => bytes.try_into().map_or(0, u64::from_le_bytes),
        2 => bytes
            .try_into()
            .map_or(0, |b: [u8; 2]| u64::from(u16::from_le_bytes(b))),
        _ => bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)),
    }
}

#[inline(always)]
fn write_le(out: &mut [u8], value: u64) {
    let bytes = value.to_le_bytes();
    let n = out.len().min(8);
    if let (Some(dst), Some(src)) = (out.get_mut(..n), bytes.get(..n)) {
        dst.copy_from_slice(src);
    }
}

fn cmp_int(k: u8, a: u64, b: u64, bits: u8, signed: bool) -> bool {
    let ord = if signed {
        sext(a, bits).cmp(&sext(b, bits))
    } else {
        (a & mask(bits)).cmp(&(b & mask(bits)))
    };
    use std::cmp::Ordering::*;
    match k {
        CMP_EQ => ord == Equal,
        CMP_NE => ord != Equal,
        CMP_LT => ord == Less,
        CMP_LE => ord != Greater,
        CMP_GT => ord == Greater,
        _ => ord != Less,
    }
}

fn cmp_float(k: u8, a: f64, b: f64) -> bool {
    let unordered = a.is_nan() || b.is_nan();
    match k {
        CMP_NUM => !unordered,
        CMP_NAN => unordered,
        _ if unordered => k >= CMP_UNORDERED,
        _ => match k & !CMP_UNORDERED {
            CMP_EQ => a == b,
            CMP_NE => a != b,
            CMP_LT => a < b,
            CMP_LE => a <= b,
            CMP_GT => a > b,
            CMP_GE => a >= b,
            _ => false,
        },
    }
}

fn combine(t: bool, inst: &Inst, regs: &Registers) -> bool {
    if inst.c == NONE {
        return t;
    }
    let c = regs[usize::from(inst.c as u16)] != 0;
    let c = c != (inst.f & F_NEG_C != 0);
    match inst.imm {
        1 => t && c,
        2 => t || c,
        _ => t != c,
    }
}

/// Value of a float register in format `fmt`, as f64 (exact).
fn float_in(bits: u64, fmt: u8, flush: bool) -> f64 {
    match fmt {
        FMT_F64 => f64v(bits),
        FMT_F32 => {
            let x = f32v(bits);
            f64::from(if flush { ftz(x) } else { x })
        }
        _ => f64::from(from_half(bits as u16, fmt)),
    }
}

/// Per-launch state reused by every thread: no allocation inside the loop.
/// The register file: one slot per 16-bit index, so indexing needs no bounds check.
type Registers = [u64; MAX_SLOTS as usize + 1];

pub(crate) struct Machine<'p> {
    program: &'p Program,
    regs: Box<Registers>,
    hints: Vec<u32>,
    stack: Vec<u32>,
}

impl<'p> Machine<'p> {
    pub(crate) fn new(program: &'p Program, dims: &LaunchDims) -> Self {
        let mut regs: Box<Registers> = vec![0u64; MAX_SLOTS as usize + 1]
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| Box::new([0; MAX_SLOTS as usize + 1]));
        for &(slot, value) in &program.consts {
            regs[usize::from(slot as u16)] = value;
        }
        for axis in 0..3 {
            if let Some(r) = regs.get_mut(3 + axis) {
                *r = u64::from(dims.block[axis]);
            }
            if let Some(r) = regs.get_mut(9 + axis) {
                *r = u64::from(dims.grid[axis]);
            }
        }
        Self {
            program,
            regs,
            hints: vec![0; program.insts.len()],
            stack: Vec::with_capacity(program.max_depth + 1),
        }
    }

    #[inline]
    pub(crate) fn set_block(&mut self, block: [u32; 3]) {
        for (axis, &v) in block.iter().enumerate() {
            if let Some(r) = self.regs.get_mut(6 + axis) {
                *r = u64::from(v);
            }
        }
    }

    /// Runs one thread to its `ret`.
    pub(crate) fn run_thread<M: Memory>(
        &mut self,
        block: [u32; 3],
        thread: [u32; 3],
        params: &[u8],
        memory: &mut M,
    ) -> Result<(), ExecError> {
        for (axis, &v) in thread.iter().enumerate() {
            if let Some(r) = self.regs.get_mut(axis) {
                *r = u64::from(v);
            }
        }
        let program = self.program;
        let insts = &program.insts[..];
        let lanes = &program.lanes[..];
        let regs: &mut Registers = &mut self.regs;
        let hints = &mut self.hints[..];
        let stack = &mut self.stack;
        stack.clear();
        let mut pc = program.entry_pc as usize;

        macro_rules! r {
            ($i:expr) => {
                regs[usize::from($i as u16)]
            };
        }
        macro_rules! fault {
            ($pc:expr, $addr:expr, $size:expr, $access:expr, $kind:expr) => {
                return Err(self_fault(
                    program, memory, $pc, block, thread, $addr, $size, $access, $kind,
                ))
            };
        }

        loop {
            let Some(inst) = insts.get(pc) else {
                return Ok(());
            };
            let at = pc;
            pc += 1;
            if inst.guard != NONE && (r!(inst.guard) != 0) == (inst.f & F_GUARD_NEG != 0) {
                continue;
            }
            match inst.op {
                Op::Mov => r!(inst.d) = r!(inst.a),
                Op::MovMask => r!(inst.d) = r!(inst.a) & mask(inst.w),
                Op::Add => r!(inst.d) = r!(inst.a).wrapping_add(r!(inst.b)) & mask(inst.w),
                Op::Sub => r!(inst.d) = r!(inst.a).wrapping_sub(r!(inst.b)) & mask(inst.w),
                Op::MulLo => r!(inst.d) = r!(inst.a).wrapping_mul(r!(inst.b)) & mask(inst.w),
                Op::Mad => {
                    r!(inst.d) =
                        r!(inst.a).wrapping_mul(r!(inst.b)).wrapping_add(r!(inst.c)) & mask(inst.w)
                }
                Op::MulHi => {
                    let w = inst.w;
                    let v = if inst.f & F_SIGNED != 0 {
                        ((i128::from(sext(r!(inst.a), w)) * i128::from(sext(r!(inst.b), w))) >> w)
                            as u64
                    } else {
                        ((u128::from(r!(inst.a) & mask(w)) * u128::from(r!(inst.b) & mask(w))) >> w)
                            as u64
                    };
                    r!(inst.d) = v & mask(w);
                }
                Op::MulWide | Op::MadWide => {
                    let w = inst.w;
                    let mut v = if inst.f & F_SIGNED != 0 {
                        sext(r!(inst.a), w).wrapping_mul(sext(r!(inst.b), w)) as u64
                    } else {
                        (r!(inst.a) & mask(w)).wrapping_mul(r!(inst.b) & mask(w))
                    };
                    if inst.op == Op::MadWide {
                        v = v.wrapping_add(r!(inst.c));
                    }
                    r!(inst.d) = v & mask(w.saturating_mul(2));
                }
                Op::Div | Op::Rem => {
                    let w = inst.w;
                    let is_div = inst.op == Op::Div;
                    let v = if inst.f & F_SIGNED != 0 {
                        let (a, b) = (sext(r!(inst.a), w), sext(r!(inst.b), w));
                        // Division by zero has no trap on a GPU; results are defined here as
                        // all ones (quotient) and the dividend (remainder).
                        match (b, is_div) {
                            (0, true) => -1,
                            (0, false) => a,
                            (_, true) => a.wrapping_div(b),
                            (_, false) => a.wrapping_rem(b),
                        }
                        .unsigned()
                    } else {
                        let (a, b) = (r!(inst.a) & mask(w), r!(inst.b) & mask(w));
                        match (b, is_div) {
                            (0, true) => u64::MAX,
                            (0, false) => a,
                            (_, true) => a / b,
                            (_, false) => a % b,
                        }
                    };
                    r!(inst.d) = v & mask(w);
                }
                Op::Min | Op::Max => {
                    let w = inst.w;
                    let (a, b) = (r!(inst.a), r!(inst.b));
                    let a_less = if inst.f & F_SIGNED != 0 {
                        sext(a, w) < sext(b, w)
                    } else {
                        (a & mask(w)) < (b & mask(w))
                    };
                    let pick_a = a_less == (inst.op == Op::Min);
                    r!(inst.d) = if pick_a { a } else { b } & mask(w);
                }
                Op::NegI => r!(inst.d) = r!(inst.a).wrapping_neg() & mask(inst.w),
                Op::AbsI => {
                    r!(inst.d) = sext(r!(inst.a), inst.w).wrapping_abs().unsigned() & mask(inst.w)
                }
                Op::And => r!(inst.d) = r!(inst.a) & r!(inst.b) & mask(inst.w),
                Op::Or => r!(inst.d) = (r!(inst.a) | r!(inst.b)) & mask(inst.w),
                Op::Xor => r!(inst.d) = (r!(inst.a) ^ r!(inst.b)) & mask(inst.w),
                Op::Not => r!(inst.d) = !r!(inst.a) & mask(inst.w),
                Op::Shl => {
                    let amount = r!(inst.b) & 0xffff_ffff;
                    r!(inst.d) = if amount >= u64::from(inst.w) {
                        0
                    } else {
                        (r!(inst.a) << amount) & mask(inst.w)
                    };
                }
                Op::Shr => {
                    let amount = (r!(inst.b) & 0xffff_ffff).min(63) as u32;
                    let w = inst.w;
                    r!(inst.d) = if inst.f & F_SIGNED != 0 {
                        (sext(r!(inst.a), w) >> amount).unsigned() & mask(w)
                    } else if u64::from(amount) >= u64::from(w) {
                        0
                    } else {
                        (r!(inst.a) & mask(w)) >> amount
                    };
                }
                Op::SetpI => {
                    let t = cmp_int(
                        inst.k,
                        r!(inst.a),
                        r!(inst.b),
                        inst.w,
                        inst.f & F_SIGNED != 0,
                    );
                    let p = combine(t, inst, regs);
                    r!(inst.d) = u64::from(p);
                    if inst.e != NONE {
                        let q = combine(!t, inst, regs);
                        r!(inst.e) = u64::from(q);
                    }
                }
                Op::SetpF32 | Op::SetpF64 => {
                    let fmt = if inst.op == Op::SetpF32 {
                        FMT_F32
                    } else {
                        FMT_F64
                    };
                    let flush = inst.f & F_FTZ != 0;
                    let a = float_in(r!(inst.a), fmt, flush);
                    let b = float_in(r!(inst.b), fmt, flush);
                    let t = cmp_float(inst.k, a, b);
                    if inst.f & F_BRANCH != 0 {
                        r!(inst.d) = u64::from(t);
                        pc = branch(pc, t, inst);
                        continue;
                    }
                    let p = combine(t, inst, regs);
                    r!(inst.d) = u64::from(p);
                    if inst.e != NONE {
                        let q = combine(!t, inst, regs);
                        r!(inst.e) = u64::from(q);
                    }
                }
                Op::Selp => {
                    r!(inst.d) = if r!(inst.c) != 0 {
                        r!(inst.a)
                    } else {
                        r!(inst.b)
                    };
                }
                Op::AddF32
                | Op::SubF32
                | Op::MulF32
                | Op::FmaF32
                | Op::DivF32
                | Op::MinF32
                | Op::MaxF32 => {
                    let (mut a, mut b) = (f32v(r!(inst.a)), f32v(r!(inst.b)));
                    let flags = inst.f & (F_FTZ | F_SAT);
                    if flags & F_FTZ != 0 {
                        a = ftz(a);
                        b = ftz(b);
                    }
                    let mut v = match inst.op {
                        Op::AddF32 => a + b,
                        Op::SubF32 => a - b,
                        Op::MulF32 => a * b,
                        Op::FmaF32 => {
                            let mut c = f32v(r!(inst.c));
                            if flags & F_FTZ != 0 {
                                c = ftz(c);
                            }
                            a.mul_add(b, c)
                        }
                        Op::DivF32 => a / b,
                        Op::MinF32 => min32(a, b),
                        _ => max32(a, b),
                    };
                    if flags != 0 {
                        v = out32(v, flags);
                    }
                    r!(inst.d) = f32b(v);
                }
                Op::ArithF32Dir => {
                    let flags = inst.f & (F_FTZ | F_SAT);
                    let mut a = f32v(r!(inst.a));
                    let mut b = f32v(r!(inst.b));
                    let mut c = if inst.c == NONE {
                        0.0
                    } else {
                        f32v(r!(inst.c))
                    };
                    if flags & F_FTZ != 0 {
                        a = ftz(a);
                        b = ftz(b);
                        c = ftz(c);
                    }
                    let v = arith_f32(inst.k, inst.imm as u8, a, b, c);
                    r!(inst.d) = f32b(out32(v, flags));
                }
                Op::NegF32
                | Op::AbsF32
                | Op::SqrtF32
                | Op::RsqrtF32
                | Op::RcpF32
                | Op::Ex2F32
                | Op::Lg2F32
                | Op::SinF32
                | Op::CosF32
                | Op::TanhF32 => {
                    let flags = inst.f & (F_FTZ | F_SAT);
                    let mut a = f32v(r!(inst.a));
                    if flags & F_FTZ != 0 {
                        a = ftz(a);
                    }
                    let v = match inst.op {
                        Op::NegF32 => -a,
                        Op::AbsF32 => a.abs(),
                        Op::SqrtF32 => a.sqrt(),
                        Op::RsqrtF32 => 1.0 / a.sqrt(),
                        Op::RcpF32 => 1.0 / a,
                        Op::Ex2F32 => a.exp2(),
                        Op::Lg2F32 => a.log2(),
                        Op::SinF32 => a.sin(),
                        Op::CosF32 => a.cos(),
                        _ => a.tanh(),
                    };
                    r!(inst.d) = f32b(out32(v, flags));
                }
                Op::AddF64 => r!(inst.d) = (f64v(r!(inst.a)) + f64v(r!(inst.b))).to_bits(),
                Op::SubF64 => r!(inst.d) = (f64v(r!(inst.a)) - f64v(r!(inst.b))).to_bits(),
                Op::MulF64 => r!(inst.d) = (f64v(r!(inst.a)) * f64v(r!(inst.b))).to_bits(),
                Op::DivF64 => r!(inst.d) = (f64v(r!(inst.a)) / f64v(r!(inst.b))).to_bits(),
                Op::FmaF64 => {
                    r!(inst.d) = f64v(r!(inst.a))
                        .mul_add(f64v(r!(inst.b)), f64v(r!(inst.c)))
                        .to_bits()
                }
                Op::MinF64 => r!(inst.d) = min64(f64v(r!(inst.a)), f64v(r!(inst.b))).to_bits(),
                Op::MaxF64 => r!(inst.d) = max64(f64v(r!(inst.a)), f64v(r!(inst.b))).to_bits(),
                Op::NegF64 => r!(inst.d) = (-f64v(r!(inst.a))).to_bits(),
                Op::AbsF64 => r!(inst.d) = f64v(r!(inst.a)).abs().to_bits(),
                Op::SqrtF64 => r!(inst.d) = f64v(r!(inst.a)).sqrt().to_bits(),
                Op::RsqrtF64 => r!(inst.d) = (1.0 / f64v(r!(inst.a)).sqrt()).to_bits(),
                Op::RcpF64 => r!(inst.d) = (1.0 / f64v(r!(inst.a))).to_bits(),
                Op::Half => {
                    let lanes_n = if inst.f & F_X2 != 0 { 2 } else { 1 };
                    let (a, b) = (r!(inst.a), r!(inst.b));
                    let c = if inst.c == NONE { 0 } else { r!(inst.c) };
                    let mut out = 0u64;
                    for lane in 0..lanes_n {
                        let shift = 16 * lane;
                        let v = half_lane(
                            inst.k,
                            inst.w,
                            (a >> shift) as u16,
                            (b >> shift) as u16,
                            (c >> shift) as u16,
                        );
                        out |= u64::from(v) << shift;
                    }
                    r!(inst.d) = out;
                }
                Op::CvtInt => {
                    let v = if inst.f & F_SIGNED != 0 {
                        sext(r!(inst.a), inst.w).unsigned()
                    } else {
                        r!(inst.a) & mask(inst.w)
                    };
                    r!(inst.d) = v & mask(inst.imm as u8);
                }
                Op::CvtIntToFloat => {
                    let v = if inst.f & F_SIGNED != 0 {
                        i128::from(sext(r!(inst.a), inst.w))
                    } else {
                        i128::from(r!(inst.a) & mask(inst.w))
                    };
                    let mut bits = int_to_float(v, inst.k, inst.imm as u8);
                    if inst.f & F_SAT != 0 {
                        bits = saturate_bits(bits, inst.k);
                    }
                    r!(inst.d) = bits;
                }
                Op::CvtFloatToInt => {
                    let x = float_in(r!(inst.a), inst.k, inst.f & F_FTZ != 0);
                    let x = round_integral(x, inst.imm as u8);
                    let w = inst.w;
                    let v = if inst.f & F_SIGNED != 0 {
                        let lo = if w >= 64 {
                            i64::MIN
                        } else {
                            -(1i64 << (w - 1))
                        };
                        let hi = if w >= 64 {
                            i64::MAX
                        } else {
                            (1i64 << (w - 1)) - 1
                        };
                        (x as i64).clamp(lo, hi).unsigned()
                    } else {
                        (x as u64).min(mask(w))
                    };
                    r!(inst.d) = v & mask(w);
                }
                Op::CvtFloat => {
                    r!(inst.d) = cvt_float(r!(inst.a), inst);
                }
                Op::LdGlobal => {
                    let addr = r!(inst.a).wrapping_add(inst.imm as u64);
                    let size = usize::from(inst.w);
                    if addr & (u64::from(inst.w) - 1) != 0 {
                        fault!(at, addr, size, Access::Load, FaultKind::Misaligned);
                    }
                    let mut spare = 0u32;
                    let hint = hints.get_mut(at).unwrap_or(&mut spare);
                    let Some(bytes) = memory.bytes(addr, size, hint) else {
                        fault!(at, addr, size, Access::Load, FaultKind::OutOfBounds);
                    };
                    r!(inst.d) = read_le(bytes);
                }
                Op::LdGlobalV => {
                    let addr = r!(inst.a).wrapping_add(inst.imm as u64);
                    let size = usize::from(inst.w);
                    let total = size * inst.c as usize;
                    if addr & (total as u64 - 1) != 0 {
                        fault!(at, addr, total, Access::Load, FaultKind::Misaligned);
                    }
                    let mut spare = 0u32;
                    let hint = hints.get_mut(at).unwrap_or(&mut spare);
                    let Some(bytes) = memory.bytes(addr, total, hint) else {
                        fault!(at, addr, total, Access::Load, FaultKind::OutOfBounds);
                    };
                    let slots = lanes.get(inst.d as usize..).unwrap_or_default();
                    for (chunk, &slot) in bytes.chunks_exact(size).zip(slots) {
                        r!(slot) = read_le(chunk);
                    }
                }
                Op::StGlobal => {
                    let addr = r!(inst.a).wrapping_add(inst.imm as u64);
                    let size = usize::from(inst.w);
                    if addr & (u64::from(inst.w) - 1) != 0 {
                        fault!(at, addr, size, Access::Store, FaultKind::Misaligned);
                    }
                    let value = r!(inst.b);
                    let mut spare = 0u32;
                    let hint = hints.get_mut(at).unwrap_or(&mut spare);
                    let Some(bytes) = memory.bytes_mut(addr, size, hint) else {
                        fault!(at, addr, size, Access::Store, FaultKind::OutOfBounds);
                    };
                    write_le(bytes, value);
                }
                Op::StGlobalV => {
                    let addr = r!(inst.a).wrapping_add(inst.imm as u64);
                    let size = usize::from(inst.w);
                    let total = size * inst.c as usize;
                    if addr & (total as u64 - 1) != 0 {
                        fault!(at, addr, total, Access::Store, FaultKind::Misaligned);
                    }
                    let slots = lanes.get(inst.b as usize..).unwrap_or_default();
                    let mut values = [0u64; 4];
                    for (value, &slot) in values.iter_mut().zip(slots).take(inst.c as usize) {
                        *value = r!(slot);
                    }
                    let mut spare = 0u32;
                    let hint = hints.get_mut(at).unwrap_or(&mut spare);
                    let Some(bytes) = memory.bytes_mut(addr, total, hint) else {
                        fault!(at, addr, total, Access::Store, FaultKind::OutOfBounds);
                    };
                    for (chunk, &value) in bytes.chunks_exact_mut(size).zip(&values) {
                        write_le(chunk, value);
                    }
                }
                Op::LdKParam => {
                    let start = inst.imm as usize;
                    let Some(bytes) = params.get(start..start + usize::from(inst.w)) else {
                        return Err(ExecError::ShortPacket {
                            entry: program.entry.clone(),
                            needed: program.param_bytes,
                            found: params.len(),
                        });
                    };
                    r!(inst.d) = read_le(bytes);
                }
                Op::Pack => {
                    let w = inst.w;
                    let slots = lanes.get(inst.b as usize..).unwrap_or_default();
                    let mut v = 0u64;
                    for (i, &slot) in slots.iter().take(inst.c as usize).enumerate() {
                        v |= (r!(slot) & mask(w)) << (u32::from(w) * i as u32);
                    }
                    r!(inst.d) = v;
                }
                Op::Unpack => {
                    let w = inst.w;
                    let v = r!(inst.a);
                    let slots = lanes.get(inst.b as usize..).unwrap_or_default();
                    for (i, &slot) in slots.iter().take(inst.c as usize).enumerate() {
                        r!(slot) = (v >> (u32::from(w) * i as u32)) & mask(w);
                    }
                }
                Op::Bra => pc = inst.imm as usize,
                Op::Call => {
                    stack.push(pc as u32);
                    pc = inst.imm as usize;
                }
                Op::Ret => match stack.pop() {
                    Some(back) => pc = back as usize,
                    None => return Ok(()),
                },
            }
        }
    }
}

/// After a fused `setp`: jump to the `bra`'s target, or step over the `bra`.
#[inline(always)]
fn branch(pc: usize, p: bool, inst: &Inst) -> usize {
    if p != (inst.f & F_BRANCH_NEG != 0) {
        inst.imm as usize
    } else {
        pc + 1
    }
}

#[inline]
fn out32(v: f32, flags: u8) -> f32 {
    let v = if flags & F_FTZ != 0 { ftz(v) } else { v };
    if flags & F_SAT != 0 { sat32(v) } else { v }
}

fn saturate_bits(bits: u64, fmt: u8) -> u64 {
    match fmt {
        FMT_F64 => sat64(f64v(bits)).to_bits(),
        FMT_F32 => f32b(sat32(f32v(bits))),
        _ => u64::from(to_half(sat32(from_half(bits as u16, fmt)), fmt)),
    }
}

fn cvt_float(bits: u64, inst: &Inst) -> u64 {
    let (src, dst) = (inst.k, inst.w);
    let flush = inst.f & F_FTZ != 0;
    let x = float_in(bits, src, flush);
    let mode = inst.imm as u8;
    let out = if (4..8).contains(&mode) {
        // Integer rounding within one format: exact in f64 for every source format.
        let r = round_integral(x, mode - 4);
        encode(r, dst, 0)
    } else {
        encode(x, dst, if mode == 8 { 0 } else { mode })
    };
    let out = if dst == FMT_F32 && flush {
        f32b(ftz(f32v(out)))
    } else {
        out
    };
    if inst.f & F_SAT != 0 {
        saturate_bits(out, dst)
    } else {
        out
    }
}

/// An exact f64 value in format `fmt`, rounded in `mode` where it does not fit.
fn encode(x: f64, fmt: u8, mode: u8) -> u64 {
    match fmt {
        FMT_F64 => x.to_bits(),
        FMT_F32 => f32b(f64_to_f32(x, mode)),
        FMT_F16 => u64::from(f64_to_half(x, FMT_F16)),
        _ => u64::from(f64_to_half(x, fmt)),
    }
}

#[allow(clippy::too_many_arguments)]
#[cold]
fn self_fault<M: Memory>(
    program: &Program,
    memory: &M,
    pc: usize,
    block: [u32; 3],
    thread: [u32; 3],
    address: u64,
    size: usize,
    access: Access,
    kind: FaultKind,
) -> ExecError {
    let site = program.sites.get(pc);
    ExecError::Fault(Box::new(Fault {
        entry: program.entry.clone(),
        block,
        thread,
        instruction: site.map(|s| s.text.clone()).unwrap_or_default(),
        line: site.map_or(0, |s| s.line),
        address,
        size: size as u32,
        access,
        kind,
        nearest: memory.nearest(address),
    }))
}
