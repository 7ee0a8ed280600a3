//! Pre-decoding: a resolved body becomes a [`Program`], a flat array of compact instructions
//! whose operands are slots of one register file.
//!
//! Every register (of every type), every immediate, every special register (`%tid.x`, …) and
//! every `.param` variable of a call sequence gets one 64-bit slot; an instruction names slots by
//! index, so running it needs no lookup, allocation or string handling. Immediates live in slots
//! written once per launch. `.func`s are compiled once each, into the same array, with their own
//! slots (recursion is refused, so a frame never needs saving). Anything the interpreter cannot
//! run exactly is refused here, as [`DecodeError::Unsupported`], naming the instruction and line —
//! never a wrong answer later; what jitseam's instruction model does not know at all is
//! [`DecodeError::Unknown`], the error the body verifier gives for it too.
//!
//! The decoder reads only the typed model of `jitseam-ptx`: the resolver's bodies
//! ([`ResolvedEntry`](jitseam_ptx::resolve::ResolvedEntry)) of typed
//! [`Instruction`](jitseam_ptx::inst::Instruction)s, whose names are already resolved, whose
//! modifiers are typed and whose registers read and written are the model's.
//!
//! `program` is the emulator's own instruction set: instructions, their flags and encodings,
//! and the linked [`Program`]. `decoder` drives one body at a time (register slots, variables,
//! labels, linking, compare-and-branch fusion) and `functions` gives each called `.func` its
//! slots. `instruction` refuses what the model does not know, applies guards and hands each
//! opcode to its family in one exhaustive match — `arith`, `carry` (extended precision),
//! `bits`, `compare`, `convert`, `half` (half precision and the float forms that share its
//! lanes), `intbits`, `memory`, `atomic`, `control` — which build on `operands` (slots of
//! registers, immediates and special registers) and `class` (how a type and a rounding
//! compute).
//! `variables` lays out the module's variables and every `.local` one, `shared` (with `layout`)
//! the block's `.shared` ones and the shared-space instructions, `address` what a name's address
//! is in each state space; `barrier` and `warp` decode the block- and warp-level instructions.

mod address;
mod arith;
mod atomic;
mod barrier;
mod bits;
mod carry;
mod class;
mod compare;
mod control;
mod convert;
mod decoder;
mod functions;
mod half;
mod instruction;
mod intbits;
mod layout;
mod memory;
mod operands;
mod program;
mod shared;
mod undefined;
mod variables;
mod warp;

pub use decoder::{decode, decode_entry};
pub(crate) use intbits::{
    BITS_A_SIGNED, BITS_ADD, BITS_B_SIGNED, BITS_BFE, BITS_BFI, BITS_BFIND, BITS_BREV, BITS_CLZ,
    BITS_COPYSIGN, BITS_DP2A, BITS_DP4A, BITS_MODE, BITS_MUL24, BITS_POPC, BITS_PRMT, BITS_SAD,
    BITS_SHF_L, BITS_SHF_R, BITS_TESTP, TESTP_FINITE, TESTP_INFINITE, TESTP_NAN, TESTP_NORMAL,
    TESTP_NUMBER,
};
pub(crate) use program::ModuleImage;
pub(crate) use program::{
    AR_ABS, AR_ADD, AR_EX2, AR_FMA, AR_MAX, AR_MIN, AR_MUL, AR_NEG, AR_SUB, AR_TANH, ATOM_ADD,
    ATOM_ADD_F32, ATOM_ADD_F64, ATOM_AND, ATOM_CAS, ATOM_DEC, ATOM_EXCH, ATOM_INC, ATOM_MAX,
    ATOM_MIN, ATOM_OR, ATOM_XOR, BAR_ARRIVE, BAR_RED_AND, BAR_RED_OR, BAR_RED_POPC, BAR_SYNC,
    CARRY_IN, CARRY_MUL_HI, CARRY_MUL_LO, CARRY_OUT, CARRY_SUB, CMP_EQ, CMP_GE, CMP_GT, CMP_LE,
    CMP_LT, CMP_NAN, CMP_NE, CMP_NUM, CMP_UNORDERED, F_BRANCH, F_BRANCH_NEG, F_FTZ, F_GUARD_NEG,
    F_NEG_C, F_SAT, F_SIGNED, F_X2, FMT_BF16, FMT_F16, FMT_F32, FMT_F64, HM_NAN, HM_RELU,
    HM_SATFINITE, HM_XORSIGN_ABS, Inst, MAX_SLOTS, NONE, Op, RM, RN, RP, RZ, SET_BF16, SET_F16,
    SET_F32, SET_INT16, SET_INT32, SET_PRED, SPECIAL_CLOCK, SPECIAL_CLOCK64, SPECIAL_GLOBALTIMER,
    SPECIAL_LANEID, SPECIAL_LANEMASK_EQ, SPECIAL_LANEMASK_GE, SPECIAL_LANEMASK_GT,
    SPECIAL_LANEMASK_LE, SPECIAL_LANEMASK_LT, SPECIAL_NWARPID, SPECIAL_ONE, SPECIAL_SLOTS,
    SPECIAL_WARPID, SPECIAL_ZERO, Site, WARP_ACTIVEMASK, WARP_MATCH_ALL, WARP_MATCH_ANY,
    WARP_REDUX_ADD, WARP_REDUX_AND, WARP_REDUX_MAX, WARP_REDUX_MIN, WARP_REDUX_OR, WARP_REDUX_XOR,
    WARP_SHFL_BFLY, WARP_SHFL_DOWN, WARP_SHFL_IDX, WARP_SHFL_UP, WARP_SYNC, WARP_VOTE_ALL,
    WARP_VOTE_ANY, WARP_VOTE_BALLOT, WARP_VOTE_UNI,
};
pub use program::{DecodeError, MAX_SHARED_BYTES, Program};
