//! One launch on a stream's worker: the emulator's settings, the grid a grid-stride body runs
//! with, and the interpreter run over exactly the launch's operand bytes, its failures turned
//! into [`Error`]s.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jitseam_emu::Program;
use jitseam_emu::interp::{
    AccessTrace, ExecError, LaunchDims, ModuleMemory, RunOptions, ThreadSite, available_workers,
    default_budget, run_in_module, run_with,
};

use super::heap::{Heap, lock};
use crate::abi::OperandRange;
use crate::device::Geometry;
use crate::error::{Error, KernelSite, MemoryFault};

/// How the emulator runs launches.
#[derive(Debug, Clone, Default)]
pub struct EmulatorConfig {
    /// Steps one launch may run (one step: one instruction run by one lockstep group of up to
    /// [`jitseam_emu::interp::LANES`] threads, or the work of starting a group or a block)
    /// before it ends with [`Error::BudgetExceeded`]. `None` (the default) scales with the
    /// launch: [`default_budget`] of the threads it was launched with (before a grid-stride
    /// body's grid is capped), so a kernel of a few threads that never ends stops within about a
    /// second and no legitimate kernel comes near it. Tests that expect a kernel to spin set a
    /// small one.
    pub budget: Option<u64>,
    /// How long one launch may run, from when its stream's worker starts it; past it, it ends
    /// with [`Error::DeadlineExceeded`]. `None` (the default): no deadline beyond the budget.
    pub timeout: Option<Duration>,
    /// Worker threads each launch runs its blocks on; 0 (the default) means one per available
    /// core.
    pub workers: usize,
    /// Receives every load, store and atomic of every launch (a checker's: the verifier's
    /// whole-kernel soundness test compares each access with the proof). `None`, the default:
    /// no trace, at no cost.
    pub trace: Option<Arc<dyn AccessTrace>>,
}

impl PartialEq for EmulatorConfig {
    fn eq(&self, other: &Self) -> bool {
        let same_trace = match (&self.trace, &other.trace) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        self.budget == other.budget
            && self.timeout == other.timeout
            && self.workers == other.workers
            && same_trace
    }
}

impl Eq for EmulatorConfig {}

impl EmulatorConfig {
    /// The worker threads a launch uses.
    pub fn effective_workers(&self) -> usize {
        match self.workers {
            0 => available_workers(),
            n => n,
        }
    }
}

/// Blocks per worker a grid-stride body is capped to: enough that a worker whose blocks end
/// early finds more, few enough that per-thread setup (most of a one-element thread's
/// instructions) is paid a handful of times per worker rather than once per element.
pub(super) const BLOCKS_PER_WORKER: u32 = 4;

/// The grid a launch runs with: for a grid-stride body (which covers every element whatever the
/// grid) at most [`BLOCKS_PER_WORKER`] blocks per worker, otherwise the geometry's own.
pub(super) fn grid_for(geometry: Geometry, grid_stride: bool, config: &EmulatorConfig) -> Geometry {
    if !grid_stride {
        return geometry;
    }
    let workers = u32::try_from(config.effective_workers()).unwrap_or(u32::MAX);
    // Grid-stride bodies are the 1-D ABIs': only x is capped.
    let mut capped = geometry;
    capped.grid[0] = geometry.grid[0]
        .min(workers.saturating_mul(BLOCKS_PER_WORKER))
        .max(1);
    capped
}

/// A pre-decoded entry and its module's `.global` variables, which persist from one launch of
/// the loaded function to the next, as a loaded module's do on a GPU (each `load_function` is a
/// module of its own there too).
#[derive(Debug)]
pub(super) struct LoadedKernel {
    pub(super) program: Program,
    /// `None` when the module has no `.global` variable: nothing to keep, and launches of the
    /// function on several streams need not take turns.
    module: Option<Mutex<ModuleMemory>>,
}

impl LoadedKernel {
    pub(super) fn new(program: Program) -> Self {
        let module = program
            .has_module_globals()
            .then(|| Mutex::new(program.module_memory()));
        Self { program, module }
    }
}

/// Runs one launch to completion over exactly the bytes its operands reach (see
/// [`Heap::lend`]) and the module's own variables, holding only those allocations' locks and
/// (last, so that no two launches wait for each other in a circle) the module's. `launched`
/// is the number of threads the launch was made with (its default budget's measure), which
/// `geometry`, capped for a grid-stride body, may have fewer of.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_launch(
    heap: &Heap,
    config: &EmulatorConfig,
    cancel: &AtomicBool,
    kernel: &LoadedKernel,
    packet: &[u8],
    operands: &[OperandRange],
    geometry: Geometry,
    launched: u128,
) -> Result<(), Error> {
    let program = &kernel.program;
    let lent = heap.lend(operands);
    let dims = LaunchDims {
        grid: geometry.grid,
        block: geometry.block,
        dynamic_shared_bytes: geometry.dynamic_shared_bytes,
    };
    let options = RunOptions {
        budget: Some(config.budget.unwrap_or_else(|| default_budget(launched))),
        timeout: config.timeout,
        workers: config.workers,
        cancel: Some(cancel),
        trace: config.trace.as_deref().map(|t| -> &dyn AccessTrace { t }),
    };
    lent.with_regions(|memory| match &kernel.module {
        Some(module) => {
            let mut module = lock(module);
            run_in_module(program, packet, dims, memory, &mut module, &options)
        }
        None => run_with(program, packet, dims, memory, &options),
    })
    .map_err(|error| launch_error(program, error))
}

fn site(at: ThreadSite) -> Box<KernelSite> {
    let ThreadSite {
        entry,
        block,
        thread,
        instruction,
        line,
    } = at;
    Box::new(KernelSite {
        entry,
        block: block[0],
        thread: thread[0],
        instruction,
        line,
    })
}

fn launch_error(program: &Program, error: ExecError) -> Error {
    match error {
        ExecError::Fault(fault) => Error::MemoryFault(Box::new(MemoryFault {
            entry: fault.entry,
            block: fault.block[0],
            thread: fault.thread[0],
            instruction: fault.instruction,
            line: fault.line,
            address: fault.address,
            size: fault.size,
            access: fault.access,
            kind: fault.kind,
            nearest: fault.nearest.map(|a| (a.base, a.size)),
        })),
        ExecError::BudgetExceeded { at, budget } => Error::BudgetExceeded {
            at: site(*at),
            budget,
        },
        ExecError::DeadlineExceeded { at, timeout } => Error::DeadlineExceeded {
            at: site(*at),
            timeout,
        },
        ExecError::TooCostly {
            entry,
            groups,
            cost,
            budget,
        } => Error::LaunchTooCostly {
            entry,
            groups,
            cost,
            budget,
        },
        ExecError::Trap { at } => Error::Trap { at: site(*at) },
        ExecError::Cancelled { entry } => Error::Cancelled { entry },
        other => Error::Device {
            stage: format!("launch of `{}`", program.entry()),
            message: other.to_string(),
        },
    }
}
