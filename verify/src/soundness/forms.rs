//! Instruction forms and the concrete inputs they are tried on.

use jitseam_ptx::ScalarType;

/// One register the form reads, the type it is declared with, and the class of values its
/// abstract atom ranges over (each concrete input is drawn from it).
#[derive(Debug, Clone)]
pub(crate) struct Input {
    pub(crate) name: &'static str,
    pub(crate) ty: ScalarType,
    pub(crate) class: (i128, i128),
    /// A pointer: the register holds [`BASE`] plus a value of the class (an offset), the
    /// abstract state `base(param 0) + atom`.
    pub(crate) pointer: bool,
}

/// The base address of the operand a pointer input points into.
pub(crate) const BASE: u64 = 0x7f00_1234_5678_0000;

/// One instruction form: registers, the instruction(s) under test, what they write.
#[derive(Debug, Clone)]
pub(crate) struct Form {
    /// `(name, type)` of every register the instruction names.
    pub(crate) regs: Vec<(&'static str, ScalarType)>,
    pub(crate) inputs: Vec<Input>,
    /// The instruction(s) under test, `;`-terminated.
    pub(crate) text: String,
    /// The registers written, with their types.
    pub(crate) outputs: Vec<(&'static str, ScalarType)>,
    /// A predicate among the outputs a branch tests: the facts learnt on the branch each case
    /// takes are checked as well.
    pub(crate) branch: Option<&'static str>,
}

const HEADER: &str = ".version 8.8\n.target sm_80\n.address_size 64\n";

fn decl(name: &str, ty: ScalarType) -> String {
    format!("\t.reg .{} {name};\n", ty.name())
}

/// A register type for values of `ty` (PTX has no 8-bit registers: bytes live in 16 bits).
fn reg_type(ty: ScalarType) -> ScalarType {
    match ty {
        ScalarType::U8 => ScalarType::U16,
        ScalarType::S8 => ScalarType::S16,
        ScalarType::B8 => ScalarType::B16,
        other => other,
    }
}

impl Form {
    fn decls(&self) -> String {
        self.regs
            .iter()
            .map(|(n, t)| decl(n, reg_type(*t)))
            .collect()
    }

    /// The entry the analysis lowers: the declarations and the instruction, nothing else.
    pub(crate) fn abstract_text(&self) -> String {
        format!(
            "{HEADER}.visible .entry k()\n{{\n{}\t{}\n\tret;\n}}\n",
            self.decls(),
            self.text
        )
    }

    /// The entry the interpreter runs: thread `t` loads input `i` from `in + 8·(t·I + i)`,
    /// runs the instruction, and stores output `j` at `out + 8·(t·O + j)`; threads past the
    /// case count do nothing.
    pub(crate) fn concrete_text(&self) -> String {
        let n_in = self.inputs.len().max(1);
        let n_out = self.outputs.len().max(1);
        let mut s = format!(
            "{HEADER}.visible .entry k(.param .u64 k_in, .param .u64 k_out, .param .u64 k_n)\n{{\n"
        );
        s.push_str(&self.decls());
        s.push_str(
            "\t.reg .b64 %h_in, %h_out, %h_n, %h_i, %h_at, %h_v;\n\t.reg .b32 %h_t, %h_c, %h_b;\n\
             \t.reg .pred %h_p;\n\t.reg .b16 %h_s;\n",
        );
        s.push_str(
            "\tld.param.u64 %h_in, [k_in];\n\tld.param.u64 %h_out, [k_out];\n\
             \tld.param.u64 %h_n, [k_n];\n\tmov.u32 %h_t, %tid.x;\n\tmov.u32 %h_c, %ctaid.x;\n\
             \tmov.u32 %h_b, %ntid.x;\n\tmad.wide.u32 %h_i, %h_c, %h_b, 0;\n\
             \tcvt.u64.u32 %h_v, %h_t;\n\tadd.s64 %h_i, %h_i, %h_v;\n\
             \tsetp.ge.u64 %h_p, %h_i, %h_n;\n\t@%h_p bra $done;\n",
        );
        for (i, input) in self.inputs.iter().enumerate() {
            s.push_str(&format!(
                "\tmul.lo.s64 %h_at, %h_i, {};\n\tadd.s64 %h_at, %h_at, {};\n\tadd.s64 %h_at, %h_at, %h_in;\n",
                8 * n_in,
                8 * i
            ));
            let name = input.name;
            match reg_type(input.ty) {
                ScalarType::Pred => s.push_str(&format!(
                    "\tld.global.u32 %h_t, [%h_at];\n\tsetp.ne.u32 {name}, %h_t, 0;\n"
                )),
                ty => s.push_str(&format!("\tld.global.{} {name}, [%h_at];\n", load_type(ty))),
            }
        }
        s.push('\t');
        s.push_str(&self.text);
        s.push('\n');
        for (j, (name, ty)) in self.outputs.iter().enumerate() {
            s.push_str(&format!(
                "\tmul.lo.s64 %h_at, %h_i, {};\n\tadd.s64 %h_at, %h_at, {};\n\tadd.s64 %h_at, %h_at, %h_out;\n",
                8 * n_out,
                8 * j
            ));
            match reg_type(*ty) {
                ScalarType::Pred => s.push_str(&format!(
                    "\tselp.u32 %h_t, 1, 0, {name};\n\tst.global.u32 [%h_at], %h_t;\n"
                )),
                ty => s.push_str(&format!("\tst.global.{} [%h_at], {name};\n", load_type(ty))),
            }
        }
        s.push_str("$done:\n\tret;\n}\n");
        s
    }
}

/// The type a register of `ty` is moved through memory as (bits, not value: signed loads
/// would sign-extend into the register's own width, which is the same).
fn load_type(ty: ScalarType) -> &'static str {
    match ty.bytes() {
        2 => "b16",
        4 => "b32",
        _ => "b64",
    }
}

/// The full range of `ty`'s values.
pub(crate) fn full(ty: ScalarType) -> (i128, i128) {
    let w = u32::from((ty.bytes() * 8) as u8);
    if matches!(
        ty,
        ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64
    ) {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

/// The edges the ISA's arithmetic turns on, for a `w`-bit register: around 0, ±2^31, 2^32,
/// ±2^63, 2^64, kept where they fall in `class`.
pub(crate) fn edges(class: (i128, i128)) -> Vec<i128> {
    let mut out = Vec::new();
    let mut push = |v: i128| {
        if v >= class.0 && v <= class.1 && !out.contains(&v) {
            out.push(v);
        }
    };
    for base in [0i128, 1 << 15, 1 << 16, 1 << 31, 1 << 32, 1 << 63, 1 << 64] {
        for d in [-2i128, -1, 0, 1, 2] {
            push(base + d);
            push(-base + d);
        }
    }
    push(class.0);
    push(class.1);
    out
}

/// A small deterministic generator (xorshift), so a counterexample reproduces from its form
/// index.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A value in `lo..=hi`.
    pub(crate) fn within(&mut self, (lo, hi): (i128, i128)) -> i128 {
        let span = (hi - lo + 1) as u128;
        let r = (u128::from(self.next()) << 64 | u128::from(self.next())) % span.max(1);
        lo + r as i128
    }
}

/// `per` cases for `form`: every combination of edges first (as many as fit), then random
/// values from each input's class.
pub(crate) fn cases(form: &Form, per: usize, seed: u64) -> Vec<Vec<i128>> {
    let mut rng = Rng::new(seed + 1);
    let edge_lists: Vec<Vec<i128>> = form.inputs.iter().map(|i| edges(i.class)).collect();
    let mut out: Vec<Vec<i128>> = Vec::new();
    // Edges, combined: each input walks its list at a different stride.
    let edge_cases = per / 2;
    for k in 0..edge_cases {
        let case: Vec<i128> = edge_lists
            .iter()
            .enumerate()
            .map(|(i, list)| {
                if list.is_empty() {
                    0
                } else {
                    list[(k / (i * 3 + 1) + k * i) % list.len()]
                }
            })
            .collect();
        out.push(case);
    }
    while out.len() < per {
        let case = form
            .inputs
            .iter()
            .map(|i| {
                // Half the random values are near an edge, half anywhere in the class.
                if rng.next().is_multiple_of(2) {
                    rng.within(i.class)
                } else {
                    let list = edges(i.class);
                    let e = list[(rng.next() as usize) % list.len().max(1)];
                    let near = e + (rng.next() % 9) as i128 - 4;
                    near.clamp(i.class.0, i.class.1)
                }
            })
            .collect();
        out.push(case);
    }
    out
}
