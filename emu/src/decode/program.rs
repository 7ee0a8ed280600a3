//! The decoded instruction model: what the decoder emits and the interpreter runs.

use thiserror::Error;

use jitseam_ptx::ParseError;
use jitseam_ptx::inst::UnknownForm;

/// No slot (an absent operand or guard).
pub(crate) const NONE: u32 = u32::MAX;

/// Instruction flags.
pub(crate) const F_GUARD_NEG: u8 = 1;
pub(crate) const F_FTZ: u8 = 2;
pub(crate) const F_SAT: u8 = 4;
pub(crate) const F_NEG_C: u8 = 8;
pub(crate) const F_SIGNED: u8 = 16;
pub(crate) const F_X2: u8 = 32;
/// On a `setp`: the next instruction is `@p bra` (or `@!p bra`, with `F_BRANCH_NEG`) to `imm`,
/// fused so that the pair costs one dispatch.
pub(crate) const F_BRANCH: u8 = 64;
pub(crate) const F_BRANCH_NEG: u8 = 128;

/// Register slots a program may use; the interpreter's register file has exactly this many
/// (indices are 16-bit, so no access needs a bounds check).
pub(crate) const MAX_SLOTS: u32 = 65535;

/// Rounding modes (`k` or `imm` of float instructions).
pub(crate) const RN: u8 = 0;
pub(crate) const RZ: u8 = 1;
pub(crate) const RM: u8 = 2;
pub(crate) const RP: u8 = 3;

/// Float formats (`k`/`w` of conversions and half-precision arithmetic).
pub(crate) const FMT_F16: u8 = 0;
pub(crate) const FMT_BF16: u8 = 1;
pub(crate) const FMT_F32: u8 = 2;
pub(crate) const FMT_F64: u8 = 3;

/// Arithmetic kinds for the slow paths.
pub(crate) const AR_ADD: u8 = 0;
pub(crate) const AR_SUB: u8 = 1;
pub(crate) const AR_MUL: u8 = 2;
pub(crate) const AR_FMA: u8 = 3;
pub(crate) const AR_NEG: u8 = 4;
pub(crate) const AR_ABS: u8 = 5;
pub(crate) const AR_MIN: u8 = 6;
pub(crate) const AR_MAX: u8 = 7;
pub(crate) const AR_EX2: u8 = 8;
pub(crate) const AR_TANH: u8 = 9;

/// Modifier bits in `imm` of [`Op::Half`] and [`Op::CvtHalf`].
pub(crate) const HM_RELU: i64 = 1;
pub(crate) const HM_NAN: i64 = 2;
pub(crate) const HM_XORSIGN_ABS: i64 = 4;
pub(crate) const HM_SATFINITE: i64 = 8;

/// What [`Op::Set`] writes for true (false is all zero bits): `imm >> 8`.
pub(crate) const SET_PRED: i64 = 0;
pub(crate) const SET_INT16: i64 = 1;
pub(crate) const SET_INT32: i64 = 2;
pub(crate) const SET_F32: i64 = 3;
pub(crate) const SET_F16: i64 = 4;
pub(crate) const SET_BF16: i64 = 5;

/// Comparisons of `setp`.
pub(crate) const CMP_EQ: u8 = 0;
pub(crate) const CMP_NE: u8 = 1;
pub(crate) const CMP_LT: u8 = 2;
pub(crate) const CMP_LE: u8 = 3;
pub(crate) const CMP_GT: u8 = 4;
pub(crate) const CMP_GE: u8 = 5;
/// Unordered float comparisons are the ordered code + `CMP_UNORDERED`.
pub(crate) const CMP_UNORDERED: u8 = 8;
pub(crate) const CMP_NUM: u8 = 16;
pub(crate) const CMP_NAN: u8 = 17;

/// What an instruction does. Widths, signedness, rounding and flags live in [`Inst`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Op {
    Mov,
    MovMask,
    Add,
    Sub,
    MulLo,
    MulHi,
    MulWide,
    Mad,
    MadWide,
    Div,
    Rem,
    Min,
    Max,
    NegI,
    AbsI,
    And,
    Or,
    Xor,
    Not,
    Shl,
    Shr,
    SetpI,
    SetpF32,
    SetpF64,
    Selp,
    AddF32,
    SubF32,
    MulF32,
    FmaF32,
    ArithF32Dir,
    DivF32,
    NegF32,
    AbsF32,
    MinF32,
    MaxF32,
    SqrtF32,
    RsqrtF32,
    RcpF32,
    Ex2F32,
    Lg2F32,
    SinF32,
    CosF32,
    TanhF32,
    AddF64,
    SubF64,
    MulF64,
    FmaF64,
    DivF64,
    NegF64,
    AbsF64,
    MinF64,
    MaxF64,
    SqrtF64,
    RsqrtF64,
    RcpF64,
    /// Half precision lanes (`F_X2`: two of them), and the f32 `min`/`max` forms that share
    /// their semantics: `k` an `AR_*` kind, `w` the format, `imm` `HM_*` modifiers.
    Half,
    /// A comparison that writes a value (`set`, and `setp` on half precision): `a CMP b`
    /// (`k`; `w` the source format, or integer width with `F_SIGNED`), combined with predicate
    /// `c` (`imm & 0xff`: 0 none, 1 and, 2 or, 3 xor), written as `SET_*` (`imm >> 8 & 0xff`);
    /// `F_X2` compares both halves, or with `SET_PRED` only the half `imm >> 16`.
    Set,
    /// `cvt` from f32 to f16/bf16 (`w`) with `.relu`/`.satfinite` (`imm`), rounding `k`; with
    /// `b` present, `b` goes to the low half and `a` to the high half.
    CvtHalf,
    CvtInt,
    CvtIntToFloat,
    CvtFloatToInt,
    CvtFloat,
    LdGlobal,
    LdGlobalV,
    StGlobal,
    StGlobalV,
    LdKParam,
    Pack,
    Unpack,
    Bra,
    Call,
    /// `ret`; with `imm` 1, `exit`: the thread ends even inside a called function.
    Ret,
    /// Integer bit manipulation, `copysign`, `testp`: `k` is a `BITS_*` kind; up to four
    /// sources `a`, `b`, `c`, `e`.
    Bits,
    /// Extended-precision integer arithmetic (and `mad.hi`): `d = x + y + cin` or
    /// `d = x - y - cin` on `w` bits, where `x, y` are `a, b` or, for a multiply-add, a half of
    /// `a · b` (signed with [`F_SIGNED`]) and `c`; `k` holds `CARRY_*` bits, `e` the carry flag's
    /// slot (read for `CARRY_IN`, written with the carry or borrow out for `CARRY_OUT`).
    Carry,
    /// `d` = a special register computed per thread (`%laneid`, `%warpid`, `%lanemask_*`,
    /// `%clock`, …): `k` is a `SPECIAL_*` kind.
    Special,
    /// `trap`/`brkpt`: the launch ends with a typed error.
    Trap,
    /// A call of CUDA's `__assertfail`: the launch ends with the failed assertion, whose
    /// message, file and function are C strings at the generic addresses in `a`, `b` and `e`,
    /// its source line in `c`.
    AssertFail,
    /// An instruction with no effect for the emulator (`membar`, `fence`, `nanosleep`).
    Nop,
    /// `atom`/`red` on global memory: `d` (or the sink) = old value at `[a + imm]`, which
    /// becomes `old ∘ b` (`c`: the new value of a `cas`); `k` is an `ATOM_*` kind, `w` the size
    /// in bytes.
    Atom,
    /// `d` = the generic address of the shared-space address `a + imm`, checked first against
    /// the block's shared window for an access of `w` bytes (`k`: 0 a load, 1 a store or
    /// atomic).
    ToShared,
    /// A block barrier (`bar`/`barrier`): `k` is a `BAR_*` kind, `a` the barrier, `b` the
    /// thread count ([`NONE`]: every thread of the block), `c` the predicate of `bar.red`
    /// (negated with [`F_NEG_C`]), `d` its result; `w` is 1 for the aligned forms (`bar`,
    /// `.aligned`).
    Barrier,
    /// A warp-level instruction: `k` is a `WARP_*` kind, `e` the member mask; `a`, `b`, `c`
    /// its sources (`c` the predicate of `vote`, negated with [`F_NEG_C`]); `d` its result and
    /// `imm` the slot of its predicate result, or [`NONE`]; `w` the width in bits of `match`.
    Warp,
}

/// Bits of `k` of [`Op::Carry`]: the carry flag is added in (`addc`, `madc`; taken away for
/// `subc`), and written.
pub(crate) const CARRY_IN: u8 = 1;
pub(crate) const CARRY_OUT: u8 = 2;
/// A subtraction: the flag is a borrow.
pub(crate) const CARRY_SUB: u8 = 4;
/// A multiply-add of the low or the high half of the product.
pub(crate) const CARRY_MUL_LO: u8 = 8;
pub(crate) const CARRY_MUL_HI: u8 = 16;

/// Kinds of [`Op::Barrier`].
pub(crate) const BAR_SYNC: u8 = 0;
pub(crate) const BAR_ARRIVE: u8 = 1;
pub(crate) const BAR_RED_POPC: u8 = 2;
pub(crate) const BAR_RED_AND: u8 = 3;
pub(crate) const BAR_RED_OR: u8 = 4;

/// Kinds of [`Op::Warp`].
pub(crate) const WARP_SHFL_UP: u8 = 0;
pub(crate) const WARP_SHFL_DOWN: u8 = 1;
pub(crate) const WARP_SHFL_BFLY: u8 = 2;
pub(crate) const WARP_SHFL_IDX: u8 = 3;
pub(crate) const WARP_VOTE_ALL: u8 = 4;
pub(crate) const WARP_VOTE_ANY: u8 = 5;
pub(crate) const WARP_VOTE_UNI: u8 = 6;
pub(crate) const WARP_VOTE_BALLOT: u8 = 7;
pub(crate) const WARP_REDUX_ADD: u8 = 8;
pub(crate) const WARP_REDUX_MIN: u8 = 9;
pub(crate) const WARP_REDUX_MAX: u8 = 10;
pub(crate) const WARP_REDUX_AND: u8 = 11;
pub(crate) const WARP_REDUX_OR: u8 = 12;
pub(crate) const WARP_REDUX_XOR: u8 = 13;
pub(crate) const WARP_MATCH_ANY: u8 = 14;
pub(crate) const WARP_MATCH_ALL: u8 = 15;
pub(crate) const WARP_ACTIVEMASK: u8 = 16;
pub(crate) const WARP_SYNC: u8 = 17;

/// The most shared memory, static and dynamic, a block may have: 227 KiB, the largest a block
/// may opt in to on sm_90.
pub const MAX_SHARED_BYTES: u64 = 227 * 1024;

/// Kinds of [`Op::Atom`].
pub(crate) const ATOM_ADD: u8 = 0;
pub(crate) const ATOM_ADD_F32: u8 = 1;
pub(crate) const ATOM_ADD_F64: u8 = 2;
pub(crate) const ATOM_MIN: u8 = 3;
pub(crate) const ATOM_MAX: u8 = 4;
pub(crate) const ATOM_INC: u8 = 5;
pub(crate) const ATOM_DEC: u8 = 6;
pub(crate) const ATOM_CAS: u8 = 7;
pub(crate) const ATOM_EXCH: u8 = 8;
pub(crate) const ATOM_AND: u8 = 9;
pub(crate) const ATOM_OR: u8 = 10;
pub(crate) const ATOM_XOR: u8 = 11;

/// Kinds of [`Op::Special`].
pub(crate) const SPECIAL_LANEID: u8 = 0;
pub(crate) const SPECIAL_WARPID: u8 = 1;
pub(crate) const SPECIAL_NWARPID: u8 = 2;
pub(crate) const SPECIAL_LANEMASK_EQ: u8 = 3;
pub(crate) const SPECIAL_LANEMASK_LT: u8 = 4;
pub(crate) const SPECIAL_LANEMASK_LE: u8 = 5;
pub(crate) const SPECIAL_LANEMASK_GT: u8 = 6;
pub(crate) const SPECIAL_LANEMASK_GE: u8 = 7;
pub(crate) const SPECIAL_CLOCK: u8 = 8;
pub(crate) const SPECIAL_CLOCK64: u8 = 9;
pub(crate) const SPECIAL_ZERO: u8 = 10;
pub(crate) const SPECIAL_ONE: u8 = 11;
pub(crate) const SPECIAL_GLOBALTIMER: u8 = 12;

/// One pre-decoded instruction (40 bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inst {
    pub(crate) op: Op,
    /// Width in bits for integer ops; size in bytes for memory ops; a format for conversions.
    pub(crate) w: u8,
    /// A sub-kind: comparison, rounding mode, source format, arithmetic kind.
    pub(crate) k: u8,
    /// `F_*` flags.
    pub(crate) f: u8,
    /// Guard predicate slot, or [`NONE`].
    pub(crate) guard: u32,
    pub(crate) d: u32,
    pub(crate) a: u32,
    pub(crate) b: u32,
    pub(crate) c: u32,
    pub(crate) e: u32,
    /// Address offset, branch target, a second width, or a `setp` combining operation.
    pub(crate) imm: i64,
}

impl Inst {
    pub(crate) fn new(op: Op) -> Self {
        Self {
            op,
            w: 0,
            k: 0,
            f: 0,
            guard: NONE,
            d: NONE,
            a: NONE,
            b: NONE,
            c: NONE,
            e: NONE,
            imm: 0,
        }
    }
}

/// Where an instruction came from, for diagnostics.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    pub(crate) text: String,
    pub(crate) line: u32,
}

/// Slots of the special registers, in this order: `%tid`, `%ntid`, `%ctaid`, `%nctaid`, each
/// `.x .y .z`.
pub(crate) const SPECIAL_SLOTS: u32 = 12;

/// A kernel ready to run: pre-decoded once, launched any number of times.
#[derive(Debug, Clone)]
pub struct Program {
    pub(crate) insts: Vec<Inst>,
    pub(crate) sites: Vec<Site>,
    pub(crate) lanes: Vec<u32>,
    pub(crate) consts: Vec<(u32, u64)>,
    pub(crate) num_regs: usize,
    pub(crate) entry_pc: u32,
    pub(crate) entry: String,
    pub(crate) params: Vec<(usize, usize)>,
    pub(crate) param_bytes: usize,
    /// Deepest chain of nested calls.
    pub(crate) max_depth: usize,
    /// Registers some path may read before writing them: cleared for every group of threads,
    /// so that a never-written register reads as zero.
    pub(crate) zero_slots: Vec<u32>,
    /// Whether the threads of a block must run together (shared memory, barriers, warp-level
    /// instructions): groups then never span two blocks, and may wait at barriers.
    pub(crate) block_scoped: bool,
    /// Bytes of static shared memory.
    pub(crate) shared_static: u64,
    /// Offset of the dynamic shared memory (after the static variables).
    pub(crate) shared_dynamic_offset: u64,
    /// Bytes of each thread's `.local` frame.
    pub(crate) local_bytes: usize,
    /// The module's variables.
    pub(crate) module: ModuleImage,
}

/// The module's variables as a program addresses them: the initial bytes of its `.global`
/// variables and the bytes of its `.const` ones.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModuleImage {
    pub(crate) globals: Vec<u8>,
    pub(crate) consts: Vec<u8>,
}

impl Program {
    /// The entry point's name.
    pub fn entry(&self) -> &str {
        &self.entry
    }

    /// `(offset, size)` of every kernel parameter in the argument packet, as this program reads
    /// them: each parameter at the next multiple of its alignment (the C rule CUDA uses).
    pub fn param_layout(&self) -> &[(usize, usize)] {
        &self.params
    }

    /// Bytes of argument packet the program reads.
    pub fn param_bytes(&self) -> usize {
        self.param_bytes
    }

    /// Number of pre-decoded instructions (entry and called functions).
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    /// Whether the program has no instruction.
    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }

    /// Bytes of static `.shared` memory a block of this program has.
    pub fn static_shared_bytes(&self) -> u64 {
        self.shared_static
    }

    /// Bytes of shared memory a block has with `dynamic` bytes of dynamic shared memory.
    pub fn shared_bytes(&self, dynamic: u64) -> u64 {
        if dynamic == 0 {
            self.shared_static
        } else {
            self.shared_dynamic_offset.saturating_add(dynamic)
        }
    }

    /// Number of 64-bit register slots a thread uses.
    pub fn register_slots(&self) -> usize {
        self.num_regs
    }

    /// Bytes of each thread's `.local` frame: every `.local` variable of the entry and of the
    /// functions it calls.
    pub fn local_frame_bytes(&self) -> usize {
        self.local_bytes
    }
}

/// Why a module cannot be turned into a [`Program`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The text is not valid PTX (including undeclared names and malformed operands).
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// An instruction with a part (its opcode, a modifier) that jitseam's instruction model
    /// does not know: the body verifier refuses it with the same error.
    #[error(transparent)]
    Unknown(#[from] UnknownForm),
    /// Valid PTX that the interpreter does not run.
    #[error(
        "entry `{entry}`: line {line}: `{instruction}` is not supported by the emulator: {reason}"
    )]
    Unsupported {
        /// The entry being decoded.
        entry: String,
        /// The instruction (or directive) as written.
        instruction: String,
        /// Its 1-based line.
        line: u32,
        /// Why.
        reason: &'static str,
    },
}
