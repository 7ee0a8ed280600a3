//! The one failure vocabulary of jitseam.
//!
//! Every variant names the kernel's entry point where one is involved, and the argument, the
//! expected and the found value where relevant. Messages are lowercase without a trailing period
//! so they compose into larger messages.

use std::fmt;

/// A condition the body's proof rests on that a launch must meet ([`Error::LaunchCondition`]).
pub use jitseam_verify::LaunchCondition;
/// What the body verifier could not prove about a kernel ([`Error::BodyRejected`]): the PTX
/// line and its instruction, the [`RejectKind`] of the violation (a store through an input, an
/// address of unknown provenance, an access it cannot bound, …) and why, in words. Match on
/// `kind` to tell violations apart; print the rejection (or the error) for the whole story.
pub use jitseam_verify::{RejectKind, Rejection};

use crate::abi::{AbiSpec, BlockShape, ParamClass, ParamRole, SpecProblem};
use crate::dtype::ElementKind;
use crate::liveness::DeviceId;

/// Everything jitseam can refuse or report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ---- describe / load: host only -------------------------------------------------------
    /// The artifact's ABI spec can describe no kernel.
    #[error("kernel `{entry}`: invalid abi spec: {problem}")]
    InvalidSpec {
        /// Entry point.
        entry: String,
        /// What is wrong.
        problem: SpecProblem,
    },
    /// A PTX artifact whose bytes are not UTF-8.
    #[error("kernel `{entry}`: artifact is not utf-8 text (invalid byte at offset {valid_up_to})")]
    InvalidUtf8 {
        /// Entry point.
        entry: String,
        /// Length of the valid prefix.
        valid_up_to: usize,
    },
    /// Text the driver takes NUL-terminated (PTX, a symbol) holds a NUL byte, which would
    /// silently cut it short.
    #[error("kernel `{entry}`: the {what} holds a nul byte at offset {offset}")]
    InteriorNul {
        /// Entry point (the symbol, where the backend knows no other name).
        entry: String,
        /// `ptx text` or `symbol`.
        what: &'static str,
        /// Byte offset of the first NUL.
        offset: usize,
    },
    /// The artifact is not well-formed PTX.
    #[error("kernel `{entry}`: not valid ptx: {detail}")]
    Ptx {
        /// Entry point.
        entry: String,
        /// The parser's error, with line and column. Part of the message, so not also a
        /// `source()`: an error chain printer would show it twice.
        detail: jitseam_ptx::ParseError,
    },
    /// The module has no entry named like the link's symbol.
    #[error(
        "kernel `{entry}`: no such entry in the module (entries: {}){}",
        list(available),
        mangled_hint(mangled)
    )]
    EntryNotFound {
        /// The symbol looked for.
        entry: String,
        /// The entries the module does have.
        available: Vec<String>,
        /// An entry whose C++-mangled name demangles to the symbol looked for: the kernel was
        /// compiled without `extern "C"`.
        mangled: Option<Box<MangledEntry>>,
    },
    /// The entry has more or fewer parameters than the ABI implies.
    #[error(
        "kernel `{entry}`: expected {expected} parameters from the abi, the entry declares {found}; {lists}"
    )]
    ParamCount {
        /// Entry point.
        entry: String,
        /// Count the ABI implies.
        expected: usize,
        /// Count the PTX declares.
        found: usize,
        /// Both whole lists, side by side.
        lists: Box<ParamLists>,
    },
    /// One parameter's class, size or alignment disagrees with the ABI.
    #[error(
        "kernel `{entry}`: parameter {index} ({}) has the wrong {what}: expected {expected}, found {found}; {lists}",
        lists.label(*index, *role)
    )]
    ParamMismatch {
        /// Entry point.
        entry: String,
        /// Zero-based parameter index.
        index: usize,
        /// What the ABI puts in that slot.
        role: ParamRole,
        /// The class the ABI implies.
        expected: ParamClass,
        /// What the PTX declares, spelled as a class.
        found: String,
        /// Which property differs.
        what: Mismatch,
        /// Both whole lists, side by side.
        lists: Box<ParamLists>,
    },
    /// A parameter's attributes promise something jitseam cannot keep: a `.ptr` into another
    /// state space than global memory, a `.ptr` on a parameter that is no pointer, or an
    /// alignment that is not a power of two.
    #[error("kernel `{entry}`: parameter {index} ({role}) is declared `{attribute}`: {reason}")]
    ParamAttribute {
        /// Entry point.
        entry: String,
        /// Zero-based parameter index.
        index: usize,
        /// What the ABI puts in that slot.
        role: ParamRole,
        /// The attribute as the PTX spells it (`.ptr .shared`, `.align 3`).
        attribute: String,
        /// Why it cannot be honoured.
        reason: &'static str,
    },
    /// A custom kernel's declared block (`block = (x, y, z)`) contradicts a block directive of
    /// its PTX entry (`.reqntid`, `.maxntid`): no launch could satisfy both.
    #[error(
        "kernel `{entry}`: the declared block {} contradicts the entry's `{directive}`: no launch can satisfy both",
        BlockShape(*declared)
    )]
    BlockConflict {
        /// Entry point.
        entry: String,
        /// The declared block.
        declared: [u32; 3],
        /// The directive as the PTX spells it (`.reqntid 32, 8, 1`).
        directive: String,
    },
    /// A cubin whose body cannot be proven: it has no PTX from the same compile with a valid
    /// seal. The caller may take the obligation with `Kernel::load_unverified`.
    #[error(
        "kernel `{entry}`: a cubin's body cannot be verified and no sealed ptx of the same compile is linked to it; load it with `Kernel::load_unverified` if you can vouch for its body"
    )]
    CubinUnverified {
        /// Entry point.
        entry: String,
    },
    /// The body verifier could not prove the kernel's body touches only its operands, within
    /// the bounds its ABI gives them, storing only through outputs.
    #[error(
        "kernel `{entry}`: body rejected: line {} `{}`: {}{}",
        rejection.line,
        rejection.instruction,
        rejection.reason,
        fix.as_ref().map_or_else(String::new, |fix| format!("; fix: {fix}"))
    )]
    BodyRejected {
        /// Entry point.
        entry: String,
        /// The PTX line, its instruction, what kind of violation ([`Rejection::kind`]) and why,
        /// each parameter by its declared name.
        rejection: Box<Rejection>,
        /// What to change, where the kind of violation says (`declare `x` as `out``).
        fix: Option<String>,
    },
    /// The cubin or fatbin image could not be read.
    #[error("kernel `{entry}`: not a readable cubin: {detail}")]
    Cubin {
        /// Entry point.
        entry: String,
        /// The reader's error.
        detail: jitseam_ptx::CubinError,
    },
    /// The fatbin container could not be read.
    #[error("kernel `{entry}`: not a readable fatbin: {detail}")]
    Fatbin {
        /// Entry point.
        entry: String,
        /// The reader's error.
        detail: jitseam_ptx::FatbinError,
    },
    /// A cubin places a parameter elsewhere, or with another size, than the ABI. (A cubin
    /// records only offsets and sizes, not types.)
    #[error(
        "kernel `{entry}`: the cubin places parameter {index} at offset {found_offset} with {found_size} bytes, the abi places it at {expected_offset} with {expected_size}"
    )]
    CubinParamMismatch {
        /// Entry point.
        entry: String,
        /// Zero-based parameter index.
        index: usize,
        /// Offset from the ABI layout.
        expected_offset: usize,
        /// Size from the ABI layout.
        expected_size: usize,
        /// Offset the cubin records.
        found_offset: usize,
        /// Size the cubin records.
        found_size: usize,
    },
    /// A fatbin holds no image `load()` could use, or none for the device at `bind()`.
    #[error(
        "kernel `{entry}`: the fatbin has no usable image {wanted} (images: {})",
        list(available)
    )]
    NoFatbinImage {
        /// Entry point.
        entry: String,
        /// What was looked for, e.g. `for sm_86` or `with verifiable ptx`.
        wanted: String,
        /// The images it has, e.g. `sm_90 cubin`, `compute_80 ptx (lz-compressed)`.
        available: Vec<String>,
    },
    /// A typed signature's spec differs from the artifact's. Printed as two signatures, the
    /// declared one with its names: `the signature declares `scalar(x: in f32, out: out f32)`,
    /// the artifact carries `scalar(in f32, out f16)``.
    #[error(
        "kernel `{entry}`: the signature declares `{}`, the artifact carries `{}`",
        SpecText(expected, declared),
        SpecText(found, &[])
    )]
    SpecMismatch {
        /// Entry point.
        entry: String,
        /// The signature's `SPEC`.
        expected: Box<AbiSpec>,
        /// The artifact's spec.
        found: Box<AbiSpec>,
        /// The signature's declared names ([`Signature::NAMES`](crate::Signature::NAMES)).
        declared: &'static [&'static str],
    },

    // ---- devices ----------------------------------------------------------------------------
    /// No CUDA driver library could be loaded.
    #[error("cuda driver unavailable: {reason}")]
    DriverUnavailable {
        /// Why.
        reason: String,
    },
    /// The requested device ordinal does not exist.
    #[error("no cuda device with ordinal {ordinal} ({available} present)")]
    NoDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices exist.
        available: usize,
    },
    /// A device failed an operation: the emulator, a backend of your own, or jitseam's own
    /// bookkeeping around a device (a handle of another device, deferred cleanup). A failure the
    /// CUDA driver reports is [`Error::Driver`], with its result code.
    #[error("{stage} failed on the device: {message}")]
    Device {
        /// Which operation, including the kernel when there is one.
        stage: String,
        /// What went wrong.
        message: String,
    },
    /// The CUDA driver failed an operation and answered `code`: match on it
    /// (`Error::Driver { code: DriverCode::OUT_OF_MEMORY, .. }`), or ask
    /// [`Error::is_context_poisoned`] whether the context can still be used.
    #[error("{stage} failed on the device: {code}{}", described(message))]
    Driver {
        /// Which operation, including the kernel when there is one.
        stage: String,
        /// The driver's result code (`CUresult`).
        code: DriverCode,
        /// The driver's description of the code (`cuGetErrorString`), empty when it has none.
        message: String,
    },
    /// The PTX targets an architecture the device cannot run (newer, or arch-specific to
    /// another one).
    #[error(
        "kernel `{entry}`: ptx targets {target}, which the device ({device_name}, sm_{device}) cannot run"
    )]
    ArchTooNew {
        /// Entry point.
        entry: String,
        /// The PTX `.target` architecture, e.g. `sm_90a`.
        target: String,
        /// The device's compute capability as an SM number.
        device: u32,
        /// The device's name.
        device_name: String,
    },
    /// The cubin was compiled for an architecture the device cannot run (CUDA runs a cubin for
    /// `sm_XY` on the same major version at minor ≥ Y; an `sm_XYa` cubin only on exactly X.Y).
    #[error(
        "kernel `{entry}`: the cubin is for {cubin}, which the device ({device_name}, sm_{device}) cannot run"
    )]
    CubinArch {
        /// Entry point.
        entry: String,
        /// The cubin's architecture, e.g. `sm_90`.
        cubin: String,
        /// The device's compute capability as an SM number.
        device: u32,
        /// The device's name.
        device_name: String,
    },
    /// The backend runs only PTX, and the kernel's image is a cubin with no PTX to run instead.
    #[error(
        "kernel `{entry}`: {backend} cannot run a cubin, and no verified ptx of the same compile is linked to it"
    )]
    ImageUnsupported {
        /// Entry point.
        entry: String,
        /// The device's name.
        backend: String,
    },
    /// The driver's view of the function's parameters disagrees with the verified list.
    #[error(
        "kernel `{entry}`: the driver reports parameter {index} at offset {found_offset} with {found_size} bytes, the abi places it at {expected_offset} with {expected_size}"
    )]
    DriverParamMismatch {
        /// Entry point.
        entry: String,
        /// Zero-based parameter index.
        index: usize,
        /// Offset from the verified layout.
        expected_offset: usize,
        /// Size from the verified layout.
        expected_size: usize,
        /// Offset the driver reports.
        found_offset: usize,
        /// Size the driver reports.
        found_size: usize,
    },
    /// The driver reports a different parameter count than the verified list.
    #[error("kernel `{entry}`: the driver reports {found} parameters, the abi has {expected}")]
    DriverParamCount {
        /// Entry point.
        entry: String,
        /// Count from the verified layout.
        expected: usize,
        /// Count the driver reports.
        found: usize,
    },

    /// The emulator does not run an instruction, modifier or directive the kernel contains
    /// (textures and surfaces, `mbarrier` and cluster barriers, indirect branches and calls,
    /// recursion, initialized `.shared` or `.local` variables, modifier combinations it cannot
    /// run exactly, …; the README lists them); refused when the function is loaded, before
    /// anything ran. Shared memory, barriers, warp shuffles and votes, atomics and `.func`
    /// calls it does run.
    #[error(
        "kernel `{entry}`: line {line}: `{instruction}` is not supported by the emulator: {reason}"
    )]
    Unsupported {
        /// Entry point.
        entry: String,
        /// The instruction (opcode with modifiers) or directive.
        instruction: String,
        /// Its 1-based line in the PTX.
        line: u32,
        /// What about it is unsupported.
        reason: &'static str,
    },
    /// The kernel has an instruction with a part (its opcode, a modifier) that jitseam's
    /// instruction model does not know; every reader of the model (the emulator, the body
    /// verifier) refuses it with this same description, before anything ran.
    #[error("kernel `{entry}`: {form}")]
    UnknownForm {
        /// Entry point.
        entry: String,
        /// The instruction, its line and what about it is unknown.
        form: jitseam_ptx::inst::UnknownForm,
    },
    /// A kernel running on the emulator accessed memory outside the bytes its operands reach,
    /// stored into an input, or accessed memory misaligned for the access's width. The launch
    /// stopped at that access: writes before it (in the emulator's lockstep order, see
    /// [`jitseam_emu::interp`]) happened, nothing after it was written. Boxed to keep `Error`
    /// small.
    #[error("{0}")]
    MemoryFault(Box<MemoryFault>),
    /// A run-time guard of a guarded kernel (one `load()` proved except for accesses whose
    /// bounds or alignment only the launch decides) caught an access outside what its launch
    /// lets the operand reach: the access did not happen (a load read 0), the rest of the
    /// launch ran, so outputs may hold partial results; no byte outside the launch's operands
    /// changed. Reported by the next synchronizing call that covers the launch
    /// (`Stream::synchronize`, `Stream::read`/`read_into`, `Event::synchronize`,
    /// `Device::synchronize`); the device stays usable. The first failing guard of the
    /// launches since the last report. Boxed to keep `Error` small.
    #[error("{0}")]
    GuardFault(Box<GuardFault>),
    /// A kernel on the emulator ran more instruction steps than the device's budget allows
    /// (`EmulatorConfig::budget`): most likely a loop that never ends (`L: bra L;`, or a
    /// grid-stride step of zero). The launch stopped; what it wrote before stays.
    #[error(
        "kernel `{}`: instruction budget of {budget} steps exceeded {at}; a loop that never ends?",
        at.entry
    )]
    BudgetExceeded {
        /// Where a thread was running when the budget ran out. Boxed to keep `Error` small.
        at: Box<KernelSite>,
        /// The budget, in steps (one instruction run by one lockstep group of threads).
        budget: u64,
    },
    /// A launch on the emulator ran past its deadline (`EmulatorConfig::timeout`). The launch
    /// stopped; what it wrote before stays.
    #[error(
        "kernel `{}`: the launch ran past its {timeout:?} deadline {at}",
        at.entry
    )]
    DeadlineExceeded {
        /// Where a thread was running when the deadline passed. Boxed to keep `Error` small.
        at: Box<KernelSite>,
        /// The time the launch was given.
        timeout: std::time::Duration,
    },
    /// A launch on the emulator was refused before it ran: starting its blocks and thread
    /// groups alone would cost more steps than its budget (`EmulatorConfig::budget`), so it
    /// could never finish.
    #[error(
        "kernel `{entry}`: a launch of {groups} thread groups costs at least {cost} steps, more than its budget of {budget}"
    )]
    LaunchTooCostly {
        /// Entry point.
        entry: String,
        /// Lockstep groups of threads the launch has.
        groups: u64,
        /// The least the launch costs, in steps.
        cost: u64,
        /// The budget, in steps.
        budget: u64,
    },
    /// A kernel on the emulator executed `trap` (or `brkpt`); the launch stopped there.
    #[error("kernel `{}`: trap {at}", at.entry)]
    Trap {
        /// The trapping thread and instruction. Boxed to keep `Error` small.
        at: Box<KernelSite>,
    },
    /// A kernel on the emulator failed a CUDA `assert` (it called `__assertfail`); the launch
    /// stopped there, as it does on a GPU.
    #[error("kernel `{}`: {failure}", failure.at.entry)]
    AssertFailed {
        /// The assertion and the thread that failed it. Boxed to keep `Error` small.
        failure: Box<AssertFailure>,
    },
    /// A launch on the emulator was cancelled before it finished: its device was dropped while
    /// it ran.
    #[error("kernel `{entry}`: launch cancelled")]
    Cancelled {
        /// Entry point.
        entry: String,
    },

    // ---- nvrtc ---------------------------------------------------------------------------------
    /// No usable NVRTC library could be loaded.
    #[error("nvrtc unavailable: {reason}")]
    NvrtcUnavailable {
        /// Why.
        reason: String,
    },
    /// NVRTC refused the source. The log holds every diagnostic with its line number.
    #[error("nvrtc could not compile `{name}` ({status}):\n{log}")]
    Compile {
        /// The program name (the file name, or `kernel.cu`).
        name: String,
        /// NVRTC's status, e.g. `NVRTC_ERROR_COMPILATION`.
        status: String,
        /// NVRTC's full log.
        log: String,
    },
    /// An NVRTC call other than the compile itself failed.
    #[error("nvrtc: {stage} failed: {message}")]
    Nvrtc {
        /// Which call.
        stage: String,
        /// NVRTC's description.
        message: String,
    },
    /// Compile options that cannot be passed to NVRTC as given.
    #[error("invalid compile options: {problem}")]
    CompileOptions {
        /// What is wrong.
        problem: String,
    },

    // ---- launch checks: refused before the device sees anything ------------------------------
    /// An operand, the stream, or the function lives on another device.
    #[error("kernel `{entry}`: {operand} is on {found}, the kernel is bound to {expected}")]
    DeviceMismatch {
        /// Entry point.
        entry: String,
        /// Which argument.
        operand: Operand,
        /// The kernel's device.
        expected: DeviceId,
        /// The argument's device.
        found: DeviceId,
    },
    /// The wrong number of inputs, outputs or params.
    #[error("kernel `{entry}`: expected {expected} {what}, got {found}")]
    ArgumentCount {
        /// Entry point.
        entry: String,
        /// `inputs`, `outputs` or `params`.
        what: &'static str,
        /// Count the spec declares.
        expected: usize,
        /// Count passed.
        found: usize,
    },
    /// An operand's element type differs from the spec.
    #[error("kernel `{entry}`: {operand} holds {found}, the kernel expects {expected}")]
    DtypeMismatch {
        /// Entry point.
        entry: String,
        /// Which operand.
        operand: Operand,
        /// The spec's dtype.
        expected: ElementKind,
        /// The buffer's dtype.
        found: ElementKind,
    },
    /// A param's type differs from the spec (params are never narrowed or widened).
    #[error("kernel `{entry}`: runtime param {index} is {found}, the kernel expects {expected}")]
    ParamType {
        /// Entry point.
        entry: String,
        /// Param index.
        index: usize,
        /// The spec's type.
        expected: ElementKind,
        /// The value's type.
        found: ElementKind,
    },
    /// An operand's element count is not the launch's `n`.
    #[error("kernel `{entry}`: {operand} has {found} elements, the launch covers {expected}")]
    ElementCount {
        /// Entry point.
        entry: String,
        /// Which operand.
        operand: Operand,
        /// `n`.
        expected: usize,
        /// The operand's length.
        found: usize,
    },
    /// A typed launch's operands disagree on their extent and no majority of them names the
    /// odd one out (one input and one output of different lengths, say): both are named. Boxed
    /// to keep `Error` small.
    #[error("{0}")]
    OperandsDisagree(Box<Disagreement>),
    /// A strided operand's shape is not the launch's shape.
    #[error("kernel `{entry}`: {operand} has shape {found:?}, the launch shape is {expected:?}")]
    ShapeMismatch {
        /// Entry point.
        entry: String,
        /// Which operand.
        operand: Operand,
        /// The launch shape.
        expected: Vec<usize>,
        /// The operand's shape.
        found: Vec<usize>,
    },
    /// The scalar and vectorized ABIs index every operand densely.
    #[error(
        "kernel `{entry}`: {operand} is not contiguous, the {abi} abi indexes operands densely"
    )]
    NotContiguous {
        /// Entry point.
        entry: String,
        /// Which operand.
        operand: Operand,
        /// The kernel's ABI (boxed: a custom one carries its table, and errors stay small).
        abi: Box<crate::abi::AbiKind>,
    },
    /// A strided operand's rank is not the kernel's.
    #[error("kernel `{entry}`: {operand} has rank {found}, the kernel has rank {expected}")]
    RankMismatch {
        /// Entry point.
        entry: String,
        /// Which operand (or the launch shape, named as output 0's).
        operand: Operand,
        /// The kernel's rank.
        expected: usize,
        /// The operand's rank.
        found: usize,
    },
    /// An output shares memory with another operand; kernels take `__restrict__` pointers.
    #[error("kernel `{entry}`: output {output} overlaps {other} in memory")]
    Aliasing {
        /// Entry point.
        entry: String,
        /// The output.
        output: usize,
        /// The operand it overlaps.
        other: Operand,
    },
    /// The vectorized ABI needs `n` divisible by the width.
    #[error("kernel `{entry}`: {n} elements are not a multiple of the vector width {width}")]
    NotDivisible {
        /// Entry point.
        entry: String,
        /// Element count.
        n: usize,
        /// Vector width.
        width: usize,
    },
    /// A pointer is not aligned to the vector width times the element size.
    #[error(
        "kernel `{entry}`: {operand} starts at byte offset {offset} of its allocation, not a multiple of the {required}-byte vector"
    )]
    Misaligned {
        /// Entry point.
        entry: String,
        /// Which operand.
        operand: Operand,
        /// Byte offset of the view in its allocation.
        offset: usize,
        /// Required alignment in bytes.
        required: usize,
    },
    /// An operand's address is not aligned as the kernel needs: as its `.ptr .align N`
    /// declares, or to the widest access the body proof found through it (a `float4` load of
    /// an `f32` pointer needs a 16-byte base).
    #[error(
        "kernel `{entry}`: {operand} starts at device address {address:#x}, not a multiple of the {required} bytes the kernel needs (its parameter's `.ptr .align`, or its widest load or store through it)"
    )]
    PointerMisaligned {
        /// Entry point.
        entry: String,
        /// Which operand.
        operand: Operand,
        /// The address the kernel would receive.
        address: u64,
        /// The declared alignment in bytes.
        required: u32,
    },
    /// A strided view reaches outside its allocation.
    #[error(
        "kernel `{entry}`: {operand} reaches elements {lowest}..={highest}, its allocation holds {len}"
    )]
    ViewOutOfBounds {
        /// Entry point.
        entry: String,
        /// Which operand.
        operand: Operand,
        /// Lowest reachable element index (relative to the allocation).
        lowest: i128,
        /// Highest reachable element index.
        highest: i128,
        /// Elements in the allocation.
        len: usize,
    },
    /// An output view writes one element from several indices.
    #[error(
        "kernel `{entry}`: output {output} overlaps itself: with shape {shape:?} and strides {strides:?}, axis {axis} (extent {extent}, stride {}) lands on elements the axes with smaller strides already reach",
        strides.get(*axis).copied().unwrap_or_default()
    )]
    OutputOverlaps {
        /// Entry point.
        entry: String,
        /// Output index.
        output: usize,
        /// The first axis whose stride steps onto elements already reached (a broadcast axis,
        /// stride 0, among them).
        axis: usize,
        /// Its extent.
        extent: usize,
        /// The view's shape.
        shape: Box<[usize]>,
        /// The view's strides, in elements.
        strides: Box<[isize]>,
    },
    /// A condition the body's proof rests on (e.g. an `int` index that must not wrap) does not
    /// hold for this launch.
    #[error(
        "kernel `{entry}`: the body is proven safe only when {condition}; this launch has n = {count} and {threads} threads"
    )]
    LaunchCondition {
        /// Entry point.
        entry: String,
        /// The condition that fails.
        condition: LaunchCondition,
        /// The launch's count (`n`, or vectors for the vectorized ABI; for the custom ABI, its
        /// largest declared extent).
        count: u64,
        /// Threads in the launch (grid × block).
        threads: u64,
    },
    /// Launch geometry does not fit the device's limits.
    #[error("kernel `{entry}`: cannot launch {n} elements: {reason}")]
    LaunchGeometry {
        /// Entry point.
        entry: String,
        /// Element count.
        n: u128,
        /// Why.
        reason: &'static str,
    },

    /// A custom-ABI operand's buffer holds fewer elements than its declared extent evaluates to
    /// for this launch. Boxed to keep `Error` small.
    #[error("{0}")]
    ExtentShort(Box<ShortExtent>),
    /// A custom-ABI extent (or the covered count) has no value for this launch: it overflows,
    /// divides by zero, or names a negative param. Boxed to keep `Error` small.
    #[error("{0}")]
    ExtentInvalid(Box<InvalidExtent>),
    /// The launch configuration does not fit the device or the kernel (`.maxntid`,
    /// `.reqntid`), or was given to (or withheld from) a kernel that takes none (needs one).
    #[error("kernel `{entry}`: {problem}")]
    LaunchConfig {
        /// Entry point.
        entry: String,
        /// What is wrong with the configuration.
        problem: ConfigProblem,
    },

    // ---- slot tables ---------------------------------------------------------------------------
    /// A slot dispatch or release carried a generation that is not the slot's current one: the
    /// binding is stale (released, reclaimed, or from another claim), or the slot is empty.
    /// Generations are unique across the process, so a stale binding never matches a newer
    /// occupant of any slot of any table.
    #[error(
        "slot {slot} of slot table `{table}`: binding of generation {found} is stale, {}",
        slot_state(*expected)
    )]
    StaleSlot {
        /// The table's name.
        table: &'static str,
        /// The slot index.
        slot: usize,
        /// The slot's current generation (0 when it holds no kernel).
        expected: u64,
        /// The generation the call or release carried.
        found: u64,
    },
    /// Every slot of the table holds a kernel whose device is still live.
    #[error(
        "kernel `{entry}`: slot table `{table}` is full: all {capacity} slots hold kernels of live devices"
    )]
    SlotTableFull {
        /// The kernel that asked for a slot.
        entry: String,
        /// The table's name.
        table: &'static str,
        /// Its number of slots.
        capacity: usize,
    },
    /// A slot's kernel was dispatched after every handle to its device was dropped; the slot
    /// will be reclaimed when the table needs room.
    #[error("kernel `{entry}` in slot {slot} of slot table `{table}`: its {device} is gone")]
    DeviceGone {
        /// The occupant's entry point.
        entry: String,
        /// The table's name.
        table: &'static str,
        /// The slot index.
        slot: usize,
        /// The dead device.
        device: DeviceId,
    },

    // ---- buffers ------------------------------------------------------------------------------
    /// A host slice and a device buffer differ in length.
    #[error("{stage}: host slice has {found} elements, the device buffer {expected}")]
    LengthMismatch {
        /// Which copy.
        stage: &'static str,
        /// Device elements.
        expected: usize,
        /// Host elements.
        found: usize,
    },
    /// A copy on the device between a source and a destination of different lengths.
    #[error("copy on the device: the source has {src} elements, the destination {dst}")]
    CopyLengthMismatch {
        /// Elements in the source.
        src: usize,
        /// Elements in the destination.
        dst: usize,
    },
    /// Two events cannot be timed against each other: one was recorded without timing (on a
    /// backend that keeps no time), they belong to different devices, or the later one
    /// completed first.
    #[error("event timing: {reason}")]
    EventTiming {
        /// Why.
        reason: String,
    },
    /// A copy names a buffer and a stream on different devices.
    #[error("{stage}: the buffer is on {buffer}, the stream on {stream}")]
    CopyDeviceMismatch {
        /// Which copy.
        stage: &'static str,
        /// The buffer's device.
        buffer: DeviceId,
        /// The stream's device.
        stream: DeviceId,
    },
    /// A stream was asked to wait for an event of another device.
    #[error("a stream on {stream} cannot wait for an event recorded on {event}")]
    EventDeviceMismatch {
        /// The event's device.
        event: DeviceId,
        /// The stream's device.
        stream: DeviceId,
    },
    /// A cudarc interop call on a device or value it does not apply to.
    #[error("cudarc interop: {reason}")]
    Interop {
        /// Why (`the emulator has no cuda context`, …).
        reason: String,
    },
    /// A view's range or geometry does not fit its buffer.
    #[error("invalid view: {reason}")]
    InvalidView {
        /// Why.
        reason: String,
    },
}

impl Error {
    /// A stable, `snake_case` name for the kind of error (one per variant, never reused or
    /// renamed): what telemetry counts declines by, and what a log can be grepped for.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::InvalidSpec { .. } => "invalid_spec",
            Self::InvalidUtf8 { .. } => "invalid_utf8",
            Self::InteriorNul { .. } => "interior_nul",
            Self::Ptx { .. } => "ptx",
            Self::EntryNotFound { .. } => "entry_not_found",
            Self::ParamCount { .. } => "param_count",
            Self::ParamMismatch { .. } => "param_mismatch",
            Self::ParamAttribute { .. } => "param_attribute",
            Self::BlockConflict { .. } => "block_conflict",
            Self::CubinUnverified { .. } => "cubin_unverified",
            Self::Cubin { .. } => "cubin",
            Self::Fatbin { .. } => "fatbin",
            Self::CubinParamMismatch { .. } => "cubin_param_mismatch",
            Self::NoFatbinImage { .. } => "no_fatbin_image",
            Self::SpecMismatch { .. } => "spec_mismatch",
            Self::DriverUnavailable { .. } => "driver_unavailable",
            Self::NoDevice { .. } => "no_device",
            Self::Device { .. } => "device",
            Self::Driver { .. } => "driver",
            Self::ArchTooNew { .. } => "arch_too_new",
            Self::CubinArch { .. } => "cubin_arch",
            Self::ImageUnsupported { .. } => "image_unsupported",
            Self::DriverParamMismatch { .. } => "driver_param_mismatch",
            Self::DriverParamCount { .. } => "driver_param_count",
            Self::Unsupported { .. } => "unsupported",
            Self::MemoryFault(_) => "memory_fault",
            Self::GuardFault(_) => "guard_fault",
            Self::BodyRejected { .. } => "body_rejected",
            Self::LaunchCondition { .. } => "launch_condition",
            Self::BudgetExceeded { .. } => "budget_exceeded",
            Self::DeadlineExceeded { .. } => "deadline_exceeded",
            Self::LaunchTooCostly { .. } => "launch_too_costly",
            Self::UnknownForm { .. } => "unknown_form",
            Self::Trap { .. } => "trap",
            Self::AssertFailed { .. } => "assert_failed",
            Self::Cancelled { .. } => "cancelled",
            Self::NvrtcUnavailable { .. } => "nvrtc_unavailable",
            Self::Compile { .. } => "compile",
            Self::Nvrtc { .. } => "nvrtc",
            Self::CompileOptions { .. } => "compile_options",
            Self::DeviceMismatch { .. } => "device_mismatch",
            Self::ArgumentCount { .. } => "argument_count",
            Self::DtypeMismatch { .. } => "dtype_mismatch",
            Self::ParamType { .. } => "param_type",
            Self::ElementCount { .. } => "element_count",
            Self::OperandsDisagree(_) => "operands_disagree",
            Self::ShapeMismatch { .. } => "shape_mismatch",
            Self::NotContiguous { .. } => "not_contiguous",
            Self::RankMismatch { .. } => "rank_mismatch",
            Self::Aliasing { .. } => "aliasing",
            Self::NotDivisible { .. } => "not_divisible",
            Self::Misaligned { .. } => "misaligned",
            Self::PointerMisaligned { .. } => "pointer_misaligned",
            Self::ViewOutOfBounds { .. } => "view_out_of_bounds",
            Self::OutputOverlaps { .. } => "output_overlaps",
            Self::LaunchGeometry { .. } => "launch_geometry",
            Self::ExtentShort(_) => "extent_short",
            Self::ExtentInvalid(_) => "extent_invalid",
            Self::LaunchConfig { .. } => "launch_config",
            Self::StaleSlot { .. } => "stale_slot",
            Self::SlotTableFull { .. } => "slot_table_full",
            Self::DeviceGone { .. } => "device_gone",
            Self::LengthMismatch { .. } => "length_mismatch",
            Self::CopyLengthMismatch { .. } => "copy_length_mismatch",
            Self::EventTiming { .. } => "event_timing",
            Self::CopyDeviceMismatch { .. } => "copy_device_mismatch",
            Self::EventDeviceMismatch { .. } => "event_device_mismatch",
            Self::Interop { .. } => "interop",
            Self::InvalidView { .. } => "invalid_view",
        }
    }

    /// True when jitseam refused before touching a device: the input was wrong, nothing ran.
    /// [`Error::Unsupported`] and [`Error::UnknownForm`] count as declines (refused at load,
    /// nothing ran); [`Error::MemoryFault`], [`Error::BudgetExceeded`],
    /// [`Error::DeadlineExceeded`], [`Error::LaunchTooCostly`], [`Error::Trap`] and
    /// [`Error::Cancelled`] do not (they are reported by the launch, on its stream), nor do
    /// failures of the driver, NVRTC's library or a device ([`Error::Driver`],
    /// [`Error::Device`], …).
    ///
    /// A positive list: a variant added later is not a decline until it is named here.
    pub fn is_decline(&self) -> bool {
        matches!(
            self,
            Self::InvalidSpec { .. }
                | Self::InvalidUtf8 { .. }
                | Self::InteriorNul { .. }
                | Self::Ptx { .. }
                | Self::EntryNotFound { .. }
                | Self::ParamCount { .. }
                | Self::ParamMismatch { .. }
                | Self::ParamAttribute { .. }
                | Self::BlockConflict { .. }
                | Self::CubinUnverified { .. }
                | Self::BodyRejected { .. }
                | Self::Cubin { .. }
                | Self::Fatbin { .. }
                | Self::CubinParamMismatch { .. }
                | Self::NoFatbinImage { .. }
                | Self::SpecMismatch { .. }
                | Self::ArchTooNew { .. }
                | Self::CubinArch { .. }
                | Self::ImageUnsupported { .. }
                | Self::DriverParamMismatch { .. }
                | Self::DriverParamCount { .. }
                | Self::Unsupported { .. }
                | Self::UnknownForm { .. }
                | Self::Compile { .. }
                | Self::CompileOptions { .. }
                | Self::DeviceMismatch { .. }
                | Self::ArgumentCount { .. }
                | Self::DtypeMismatch { .. }
                | Self::ParamType { .. }
                | Self::ElementCount { .. }
                | Self::OperandsDisagree(_)
                | Self::ShapeMismatch { .. }
                | Self::NotContiguous { .. }
                | Self::RankMismatch { .. }
                | Self::Aliasing { .. }
                | Self::NotDivisible { .. }
                | Self::Misaligned { .. }
                | Self::PointerMisaligned { .. }
                | Self::ViewOutOfBounds { .. }
                | Self::OutputOverlaps { .. }
                | Self::LaunchCondition { .. }
                | Self::LaunchGeometry { .. }
                | Self::ExtentShort(_)
                | Self::ExtentInvalid(_)
                | Self::LaunchConfig { .. }
                | Self::StaleSlot { .. }
                | Self::SlotTableFull { .. }
                | Self::DeviceGone { .. }
                | Self::LengthMismatch { .. }
                | Self::CopyLengthMismatch { .. }
                | Self::CopyDeviceMismatch { .. }
                | Self::EventDeviceMismatch { .. }
                | Self::Interop { .. }
                | Self::InvalidView { .. }
        )
    }

    /// Whether the error reports a kernel that went wrong on the device after its launch was
    /// queued, and which kernel when the error names it: the emulator's memory faults, traps
    /// and spent budgets name their entry; a sticky driver error ([`DriverCode::is_sticky`])
    /// names none (the driver does not say which launch). Telemetry counts such a launch as a
    /// fault of its kernel rather than a dispatch. A kind of fault added later (a guard that
    /// caught an access at run time) is one more arm here.
    #[cfg_attr(not(feature = "telemetry"), allow(dead_code))]
    pub(crate) fn kernel_fault(&self) -> Option<Option<&str>> {
        match self {
            Self::MemoryFault(fault) => Some(Some(&fault.entry)),
            Self::GuardFault(fault) => Some(Some(&fault.entry)),
            Self::BudgetExceeded { at, .. } | Self::Trap { at } => Some(Some(&at.entry)),
            Self::AssertFailed { failure } => Some(Some(&failure.at.entry)),
            Self::Driver { code, .. } if code.is_sticky() => Some(None),
            _ => None,
        }
    }

    /// True when the CUDA context can no longer be used: the driver reported a sticky error
    /// (an illegal address, a misaligned access, an illegal instruction, a failed launch, a
    /// device-side assert, a launch timeout, …; see [`DriverCode::is_sticky`]), which every
    /// later call on the context reports again. Drop every handle of the device (its buffers,
    /// streams and kernels) and open it again; on a real driver the process often has to be
    /// restarted. False for every other error: the emulator clears a fault once it was
    /// reported, and a decline never touched the device.
    pub fn is_context_poisoned(&self) -> bool {
        matches!(self, Self::Driver { code, .. } if code.is_sticky())
    }
}

/// A CUDA driver result code (`CUresult`) exactly as the driver returned it, so that a caller
/// can match on it: `Error::Driver { code: DriverCode::OUT_OF_MEMORY, .. }`. Codes the driver
/// has that are not named here keep their number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DriverCode(pub u32);

macro_rules! driver_codes {
    ($($name:ident = $code:literal;)*) => {
        impl DriverCode {
            $(
                #[doc = concat!("`CUDA_ERROR_", stringify!($name), "` (", stringify!($code), ").")]
                pub const $name: Self = Self($code);
            )*

            /// The driver's name for the code (`CUDA_ERROR_ILLEGAL_ADDRESS`), for the codes
            /// named here.
            pub const fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($code => Some(concat!("CUDA_ERROR_", stringify!($name))),)*
                    _ => None,
                }
            }
        }
    };
}

driver_codes! {
    INVALID_VALUE = 1;
    OUT_OF_MEMORY = 2;
    NOT_INITIALIZED = 3;
    DEINITIALIZED = 4;
    NO_DEVICE = 100;
    INVALID_DEVICE = 101;
    INVALID_IMAGE = 200;
    INVALID_CONTEXT = 201;
    NO_BINARY_FOR_GPU = 209;
    ECC_UNCORRECTABLE = 214;
    INVALID_PTX = 218;
    UNSUPPORTED_PTX_VERSION = 222;
    INVALID_HANDLE = 400;
    NOT_FOUND = 500;
    NOT_READY = 600;
    ILLEGAL_ADDRESS = 700;
    LAUNCH_OUT_OF_RESOURCES = 701;
    LAUNCH_TIMEOUT = 702;
    ASSERT = 710;
    HARDWARE_STACK_ERROR = 714;
    ILLEGAL_INSTRUCTION = 715;
    MISALIGNED_ADDRESS = 716;
    INVALID_ADDRESS_SPACE = 717;
    INVALID_PC = 718;
    LAUNCH_FAILED = 719;
    NOT_PERMITTED = 800;
    NOT_SUPPORTED = 801;
    UNKNOWN = 999;
}

impl DriverCode {
    /// Whether the code is one the CUDA driver documents as leaving the context unusable: it
    /// is returned again by every later call on the context, which has to be destroyed
    /// ([`Error::is_context_poisoned`]). These are the errors of a kernel that went wrong on
    /// the device: an illegal or misaligned address, an invalid address space or program
    /// counter, an illegal instruction, a hardware stack error, a device-side assert, a launch
    /// timeout, and the unspecified launch failure.
    pub const fn is_sticky(self) -> bool {
        matches!(
            self,
            Self::ILLEGAL_ADDRESS
                | Self::LAUNCH_TIMEOUT
                | Self::ASSERT
                | Self::HARDWARE_STACK_ERROR
                | Self::ILLEGAL_INSTRUCTION
                | Self::MISALIGNED_ADDRESS
                | Self::INVALID_ADDRESS_SPACE
                | Self::INVALID_PC
                | Self::LAUNCH_FAILED
        )
    }
}

impl fmt::Display for DriverCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "CUresult {}", self.0),
        }
    }
}

/// The whole parameter list an ABI implies, next to the one the PTX entry declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamLists {
    /// What the ABI expects, in order.
    pub expected: Vec<crate::abi::ExpectedParam>,
    /// What the entry declares, spelled as PTX (`.u64`, `.align 2 .b8 [2]`).
    pub found: Vec<String>,
    /// The name each expected parameter is declared with, where the kernel has declared names
    /// (a typed signature, or a custom ABI's own table); `None` for the ABI's own parameters
    /// (`n`, shapes, strides) and where no name is known.
    pub declared: Vec<Option<String>>,
}

impl ParamLists {
    /// The lists, with no declared names yet.
    pub(crate) fn new(expected: Vec<crate::abi::ExpectedParam>, found: Vec<String>) -> Self {
        Self {
            expected,
            found,
            declared: Vec::new(),
        }
    }

    /// What parameter `index` is called: its declared name, else its name in the ABI's
    /// templates (`in0`, `n`).
    fn name(&self, index: usize) -> String {
        match self.declared.get(index).cloned().flatten() {
            Some(name) => name,
            None => self
                .expected
                .get(index)
                .map_or_else(|| format!("#{index}"), |p| p.role.short_name()),
        }
    }

    /// Parameter `index` as an error names it: `` `out`, pointer of output 0 ``, or the role
    /// alone where no name was declared.
    fn label(&self, index: usize, role: ParamRole) -> String {
        match self.declared.get(index).cloned().flatten() {
            Some(name) => format!("`{name}`, {role}"),
            None => role.to_string(),
        }
    }
}

impl fmt::Display for ParamLists {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the abi expects (")?;
        for (i, p) in self.expected.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{} {}", p.class.ptx_spelling(), self.name(i))?;
        }
        f.write_str("), the entry declares (")?;
        for (i, found) in self.found.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{found}")?;
        }
        f.write_str(")")
    }
}

/// An ABI spec as signature text: `scalar(x: in f32, out: out f32, scale: f32)` with the
/// declared `names` (inputs, outputs, then params), the kinds alone without them; a custom ABI
/// as its own table, which has its names and extents.
struct SpecText<'a>(&'a AbiSpec, &'a [&'a str]);

impl fmt::Display for SpecText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self(spec, names) = *self;
        if let Some(custom) = spec.abi.custom() {
            return write!(f, "{}({custom})", spec.abi);
        }
        write!(f, "{}(", spec.abi)?;
        let operands = spec
            .inputs
            .iter()
            .map(|kind| ("in ", kind))
            .chain(spec.outputs.iter().map(|kind| ("out ", kind)))
            .chain(spec.params.iter().map(|kind| ("", kind)));
        for (i, (direction, kind)) in operands.enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            match names.get(i) {
                Some(name) => write!(f, "{sep}{name}: {direction}{kind}")?,
                None => write!(f, "{sep}{direction}{kind}")?,
            }
        }
        f.write_str(")")
    }
}

/// The name `role` is declared with in `spec`: from a custom ABI's own table, else from the
/// signature's `names` (inputs, outputs, then params, as [`crate::Signature::NAMES`]).
pub(crate) fn declared_name(spec: &AbiSpec, names: &[&str], role: ParamRole) -> Option<String> {
    use crate::abi::CustomKind;
    if let Some(custom) = spec.abi.custom() {
        let (wanted, index): (fn(&CustomKind) -> bool, u32) = match role {
            ParamRole::Input(k) => (|c| matches!(c, CustomKind::In(_)), k),
            ParamRole::Output(m) => (|c| matches!(c, CustomKind::Out(_)), m),
            ParamRole::Param(p) => (|c| matches!(c, CustomKind::Value(_)), p),
            _ => return None,
        };
        return custom
            .params
            .iter()
            .filter(|param| wanted(&param.kind))
            .nth(index as usize)
            .map(|param| param.name.to_string());
    }
    let (inputs, outputs) = (spec.inputs.len(), spec.outputs.len());
    let position = match role {
        ParamRole::Input(k) => k as usize,
        ParamRole::Output(m) => inputs + m as usize,
        ParamRole::Param(p) => inputs + outputs + p as usize,
        _ => return None,
    };
    names.get(position).map(|name| (*name).to_owned())
}

impl Error {
    /// The same error, its parameter lists naming each parameter as `spec` and the signature's
    /// `names` declare it.
    pub(crate) fn with_declared_names(mut self, spec: &AbiSpec, names: &[&str]) -> Self {
        if let Self::ParamCount { lists, .. } | Self::ParamMismatch { lists, .. } = &mut self {
            lists.declared = lists
                .expected
                .iter()
                .map(|p| declared_name(spec, names, p.role))
                .collect();
        }
        self
    }
}

/// An entry with a C++-mangled name, and what it demangles to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MangledEntry {
    /// The name in the module (`_Z8my_saxpyPKfPfx`).
    pub mangled: String,
    /// What it demangles to (`my_saxpy(float const*, float*, long long)`).
    pub demangled: String,
}

/// The end of [`Error::EntryNotFound`]'s message when a mangled entry names the symbol.
fn mangled_hint(mangled: &Option<Box<MangledEntry>>) -> String {
    match mangled.as_deref() {
        Some(MangledEntry { mangled, demangled }) => format!(
            "; compiled without `extern \"C\"`? found `{demangled}` as `{mangled}`: declare the kernel `extern \"C\"`, or use `symbol = \"{mangled}\"`"
        ),
        None => String::new(),
    }
}

/// Which property of a parameter differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mismatch {
    /// Integer vs float vs byte array.
    Class,
    /// Same class, other width.
    Size,
    /// Same byte array, other alignment.
    Alignment,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Class => "class",
            Self::Size => "size",
            Self::Alignment => "alignment",
        })
    }
}

/// A launch argument, as named in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand {
    /// Input `k`.
    Input(usize),
    /// Output `m`.
    Output(usize),
    /// The stream.
    Stream,
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Input(k) => write!(f, "input {k}"),
            Self::Output(m) => write!(f, "output {m}"),
            Self::Stream => f.write_str("the stream"),
        }
    }
}

/// A custom-ABI operand shorter than its declared extent (see [`Error::ExtentShort`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortExtent {
    /// Entry point.
    pub entry: String,
    /// Which operand.
    pub operand: Operand,
    /// Its declared name.
    pub name: String,
    /// The extent expression, as declared (`m * k`).
    pub extent: String,
    /// What the expression evaluates to for this launch, in elements.
    pub needed: u64,
    /// Elements the operand's buffer (or view) holds.
    pub found: usize,
}

impl fmt::Display for ShortExtent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernel `{}`: {} `{}` must hold `{}` = {} elements, its buffer holds {}",
            self.entry, self.operand, self.name, self.extent, self.needed, self.found
        )
    }
}

/// A custom-ABI extent with no value for a launch (see [`Error::ExtentInvalid`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidExtent {
    /// Entry point.
    pub entry: String,
    /// Whose extent: the pointer's declared name, or `the covered count`.
    pub of: String,
    /// The expression, as declared.
    pub extent: String,
    /// Why it has no value.
    pub problem: crate::abi::ExtentProblem,
    /// The problem in words, with param names.
    pub reason: String,
}

impl fmt::Display for InvalidExtent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernel `{}`: the extent `{}` of {} has no value for this launch: {}",
            self.entry, self.extent, self.of, self.reason
        )
    }
}

/// Why a launch configuration was refused (see [`Error::LaunchConfig`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigProblem {
    /// A grid or block extent of 0.
    Empty {
        /// `grid` or `block`.
        what: &'static str,
        /// The axis: 0 = x, 1 = y, 2 = z.
        axis: u8,
    },
    /// A value over a limit of the device or the kernel.
    OverLimit {
        /// What: `block.y`, `grid.x`, `threads per block`, `dynamic shared memory bytes`.
        what: &'static str,
        /// The launch's value.
        value: u64,
        /// The limit.
        limit: u64,
        /// Whose limit: `the device`, `the kernel's .maxntid`.
        by: &'static str,
    },
    /// The block is not the exact shape the kernel's `.reqntid` requires.
    RequiredBlock {
        /// The kernel's `.reqntid`.
        required: [u32; 3],
        /// The launch's block.
        block: [u32; 3],
    },
    /// The block is not the exact shape the kernel declares (`block = (x, y, z)` in its
    /// signature).
    DeclaredBlock {
        /// The declared block.
        declared: [u32; 3],
        /// The launch's block.
        block: [u32; 3],
    },
    /// The launch's dynamic shared bytes are fewer than the kernel declares (`shared = EXPR`
    /// in its signature) for these params and geometry.
    DeclaredShared {
        /// The declared expression, as written.
        declared: String,
        /// Its value for this launch.
        needed: u64,
        /// The launch's dynamic shared bytes.
        bytes: u32,
    },
    /// A custom-ABI kernel without a covered count was launched without a configuration.
    NeedsConfig,
    /// A configuration was given to a kernel whose ABI fixes its own grid.
    NotCustom {
        /// The kernel's ABI (boxed, as in [`Error::NotContiguous`]).
        abi: Box<crate::abi::AbiKind>,
    },
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty { what, axis } => write!(
                f,
                "{what}.{} is 0: every launch dimension needs at least 1",
                ['x', 'y', 'z'].get(usize::from(*axis)).copied().unwrap_or('?')
            ),
            Self::OverLimit {
                what,
                value,
                limit,
                by,
            } => write!(f, "{what} = {value} exceeds {by}'s limit of {limit}"),
            Self::RequiredBlock { required, block } => write!(
                f,
                "the block is {block:?}, the kernel's `.reqntid` requires exactly {required:?}"
            ),
            Self::DeclaredBlock { declared, block } => write!(
                f,
                "the block is {}, the kernel declares `block = {}`",
                BlockShape(*block),
                BlockShape(*declared)
            ),
            Self::DeclaredShared {
                declared,
                needed,
                bytes,
            } => write!(
                f,
                "the launch gives {bytes} bytes of dynamic shared memory, the kernel declares `shared = {declared}`, which is {needed} here"
            ),
            Self::NeedsConfig => f.write_str(
                "a custom-abi kernel launches with a launch config (`launch_with`, or `launch_custom` on the erased face), or with none only when it declares `covers`",
            ),
            Self::NotCustom { abi } => write!(
                f,
                "only custom-abi kernels take a launch config; this kernel's abi is {abi}, which chooses its own grid"
            ),
        }
    }
}

/// Two operands of one launch that disagree on their extent (see [`Error::OperandsDisagree`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// Entry point.
    pub entry: String,
    /// The first operand.
    pub first: Operand,
    /// Its extent.
    pub first_extent: Extent,
    /// The first operand that differs from it.
    pub second: Operand,
    /// Its extent.
    pub second_extent: Extent,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernel `{}`: {} has {}, {} has {}: the operands of one launch must agree",
            self.entry, self.first, self.first_extent, self.second, self.second_extent
        )
    }
}

/// An operand's extent as a launch compares it: an element count (scalar and vectorized ABIs)
/// or a shape (strided ABI).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Extent {
    /// A dense operand's element count.
    Elements(usize),
    /// A strided operand's shape.
    Shape(Vec<usize>),
}

impl fmt::Display for Extent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Elements(n) => write!(f, "{n} elements"),
            Self::Shape(shape) => write!(f, "shape {shape:?}"),
        }
    }
}

fn slot_state(generation: u64) -> String {
    if generation == 0 {
        "the slot is empty".to_owned()
    } else {
        format!("the slot holds generation {generation}")
    }
}

/// Which guard of a guarded kernel caught an access, and where (see [`Error::GuardFault`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardFault {
    /// Entry point.
    pub entry: String,
    /// 1-based PTX line of the guarded access (the artifact's line: the rewrite keeps lines).
    pub line: u32,
    /// The operand it goes through: the declared name where the signature has one, else the
    /// PTX parameter's (or the shared or local variable's) name.
    pub operand: String,
    /// `%ctaid` of the thread whose access was caught.
    pub block: [u32; 3],
    /// `%tid` of that thread.
    pub thread: [u32; 3],
    /// The access's byte offset from its operand's base (two's complement: an address below
    /// the base reads as a huge offset).
    pub offset: u64,
    /// Bytes the access moves.
    pub bytes: u32,
    /// How many `bytes`-wide slots the launch let the operand reach: the access was allowed
    /// at offsets `0, bytes, …, (limit − 1)·bytes`.
    pub limit: u64,
}

impl fmt::Display for GuardFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(
            f,
            "kernel `{}`: guarded access at line {} through `{}` by block ({bx}, {by}, {bz}) \
             thread ({tx}, {ty}, {tz}) at byte offset {} is outside the {} {}-byte slots the \
             launch lets it reach (or misaligned); the access did not happen",
            self.entry, self.line, self.operand, self.offset as i64, self.limit, self.bytes,
        )
    }
}

/// Where and how a kernel on the emulator faulted (see [`Error::MemoryFault`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFault {
    /// Entry point.
    pub entry: String,
    /// `%ctaid.x` of the faulting thread.
    pub block: u32,
    /// `%tid.x` of the faulting thread.
    pub thread: u32,
    /// The instruction as written in the PTX.
    pub instruction: String,
    /// Its 1-based line.
    pub line: u32,
    /// First byte of the access.
    pub address: u64,
    /// Bytes accessed.
    pub size: u32,
    /// Load or store.
    pub access: jitseam_emu::interp::Access,
    /// Out of bounds, write to input, or misaligned.
    pub kind: jitseam_emu::interp::FaultKind,
    /// `(base, size)` of the byte range lent to the launch (an operand's reach, clipped to its
    /// allocation) nearest to `address`, if the launch was lent any.
    pub nearest: Option<(u64, u64)>,
}

impl fmt::Display for MemoryFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernel `{}`: {} {}-byte {} at {:#x} by block {} thread {}, line {}: `{}`; {}",
            self.entry,
            self.kind,
            self.size,
            self.access,
            self.address,
            self.block,
            self.thread,
            self.line,
            self.instruction,
            nearest_text(self.nearest)
        )
    }
}

/// A failed CUDA `assert` on the emulator (see [`Error::AssertFailed`]): the assertion's text,
/// where it is in the CUDA source, and the thread and PTX line that failed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssertFailure {
    /// The thread and its `call __assertfail` instruction.
    pub at: KernelSite,
    /// The assertion as written (`srcIndex < srcSelectDimSize`).
    pub message: String,
    /// The CUDA source file.
    pub file: String,
    /// The line in that file.
    pub line: u32,
    /// The function the assertion is in.
    pub function: String,
}

impl fmt::Display for AssertFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "assertion `{}` failed at {}:{} in `{}`, {}",
            self.message, self.file, self.line, self.function, self.at
        )
    }
}

/// A thread of a kernel on the emulator and the instruction it was at (see
/// [`Error::BudgetExceeded`] and [`Error::Trap`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSite {
    /// Entry point.
    pub entry: String,
    /// `%ctaid.x` of the thread.
    pub block: u32,
    /// `%tid.x` of the thread.
    pub thread: u32,
    /// The instruction as written in the PTX.
    pub instruction: String,
    /// Its 1-based line (0 for the implicit return at the end of a body).
    pub line: u32,
}

impl fmt::Display for KernelSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at line {}: `{}` (block {} thread {})",
            self.line, self.instruction, self.block, self.thread
        )
    }
}

fn nearest_text(nearest: Option<(u64, u64)>) -> String {
    match nearest {
        Some((base, size)) => format!(
            "nearest allocation {base:#x}..{:#x} ({size} bytes)",
            base.saturating_add(size)
        ),
        None => "no allocation exists".to_owned(),
    }
}

/// `: description`, or nothing for an empty one.
fn described(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// A failed consuming transition: the error, and the kernel given back unchanged so nothing is
/// lost. Converts into [`Error`] for `?`. The kernel is boxed so the error path stays small.
#[derive(Debug)]
pub struct TransitionError<K> {
    /// Why the transition was refused.
    pub error: Error,
    /// The kernel, in the state it had before.
    pub kernel: Box<K>,
}

impl<K> TransitionError<K> {
    pub(crate) fn new(error: Error, kernel: K) -> Self {
        Self {
            error,
            kernel: Box::new(kernel),
        }
    }

    /// The error and the kernel.
    pub fn into_parts(self) -> (Error, K) {
        (self.error, *self.kernel)
    }
}

impl<K> fmt::Display for TransitionError<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl<K: fmt::Debug> std::error::Error for TransitionError<K> {
    /// The inner error's own source: its message is already this one's, so an error chain
    /// printer (anyhow's `{:?}`, say) must not show it a second time.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

impl<K> From<TransitionError<K>> for Error {
    fn from(e: TransitionError<K>) -> Self {
        e.error
    }
}
