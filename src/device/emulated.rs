//! The emulator device: the `jitseam-ptx` interpreter behind the [`Backend`] trait.
//!
//! Memory is a table of allocations (base address → bytes). Bases are 256-byte aligned like
//! `cuMemAlloc`'s, start far from zero (a null or small pointer faults), are never reused (a
//! stale pointer to freed memory faults), and are separated by unmapped guard gaps, so an
//! off-by-one overrun faults instead of reading a neighbour. Every load and store a kernel makes
//! is checked against the table; the first access outside every allocation, or misaligned for
//! its width, stops the launch with [`Error::MemoryFault`]. Threads run in lockstep groups of
//! [`jitseam_ptx::interp::LANES`] in launch order: writes made before the fault stay (those of
//! earlier groups, the faulting group's earlier instructions, and the faulting instruction's
//! lanes before the faulting one); nothing is written after it.
//!
//! `load_function` parses the module and pre-decodes the entry (and the `.func`s it calls)
//! once; an instruction the interpreter does not run is refused there with
//! [`Error::Unsupported`]. A launch reads the parameters from the very packet
//! [`crate::launch::marshal`] builds for CUDA, at the offsets the PTX parameter list implies
//! (reported by [`BackendFunction::param_info`], so `bind` cross-checks them against the
//! verified layout). Streams execute synchronously: a launch has finished when it returns.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use jitseam_ptx::interp::{ExecError, LaunchDims, Regions};
use jitseam_ptx::{DecodeError, Program};

use super::Device;
use super::backend::{
    Backend, BackendFunction, BackendKind, BackendStream, DeviceProperties, Geometry,
};
use crate::abi::ArgPacket;
use crate::error::{Error, MemoryFault};

/// First allocation address: far from zero, so null and small pointers fault.
const FIRST_BASE: u64 = 0x7f00_0000_0000;
/// Allocation alignment, as `cuMemAlloc` guarantees.
const ALIGN: u64 = 256;
/// Unmapped bytes between two allocations.
const GUARD: u64 = 4096;

/// The PTX interpreter as a device. Create one with [`crate::Device::emulator`].
#[derive(Debug)]
pub struct EmulatorBackend {
    properties: DeviceProperties,
    heap: Mutex<Heap>,
}

#[derive(Debug)]
struct Heap {
    allocations: BTreeMap<u64, Vec<u8>>,
    next: u64,
}

impl Default for EmulatorBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl EmulatorBackend {
    /// A fresh emulator with no allocations.
    pub fn new() -> Self {
        Self {
            properties: DeviceProperties {
                name: "jitseam emulator".to_owned(),
                backend: BackendKind::Emulator,
                compute_capability: None,
                max_grid_x: i32::MAX as u32,
                max_block_x: 1024,
                driver_version: None,
            },
            heap: Mutex::new(Heap {
                allocations: BTreeMap::new(),
                next: FIRST_BASE,
            }),
        }
    }

    fn heap(&self) -> MutexGuard<'_, Heap> {
        // No code path panics while holding the lock; a poisoned lock still guards valid data.
        self.heap.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Heap {
    /// The allocation holding `[address, address + len)`, as (base, bytes).
    fn range_mut(&mut self, address: u64, len: usize) -> Option<&mut [u8]> {
        let (&base, bytes) = self.allocations.range_mut(..=address).next_back()?;
        let start = usize::try_from(address - base).ok()?;
        let end = start.checked_add(len)?;
        bytes.get_mut(start..end)
    }
}

fn copy_error(stage: &str, address: u64, len: usize) -> Error {
    Error::Device {
        stage: stage.to_owned(),
        message: format!("{len} bytes at {address:#x} do not lie inside one emulator allocation"),
    }
}

/// A stream of the emulator: work runs when it is queued.
#[derive(Debug)]
struct EmulatedStream;

impl BackendStream for EmulatedStream {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A pre-decoded entry point.
#[derive(Debug)]
struct EmulatedFunction {
    program: Program,
}

impl BackendFunction for EmulatedFunction {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn param_info(&self) -> Result<Option<Vec<(usize, usize)>>, Error> {
        Ok(Some(self.program.param_layout().to_vec()))
    }
}

impl Backend for EmulatorBackend {
    fn properties(&self) -> &DeviceProperties {
        &self.properties
    }

    fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        let fail = |message: String| Error::Device {
            stage: "allocation".to_owned(),
            message,
        };
        let mut data = Vec::new();
        data.try_reserve_exact(bytes)
            .map_err(|e| fail(format!("cannot allocate {bytes} bytes: {e}")))?;
        data.resize(bytes, 0);
        let mut heap = self.heap();
        let base = heap.next;
        let span = (bytes as u64)
            .checked_next_multiple_of(ALIGN)
            .and_then(|s| s.checked_add(GUARD))
            .and_then(|s| base.checked_add(s))
            .ok_or_else(|| fail("the emulator's address space is exhausted".to_owned()))?;
        heap.next = span;
        heap.allocations.insert(base, data);
        Ok(base)
    }

    fn free(&self, address: u64, _bytes: usize) {
        self.heap().allocations.remove(&address);
    }

    fn default_stream(&self) -> Arc<dyn BackendStream> {
        Arc::new(EmulatedStream)
    }

    fn new_stream(&self) -> Result<Arc<dyn BackendStream>, Error> {
        Ok(Arc::new(EmulatedStream))
    }

    fn write(&self, _stream: &dyn BackendStream, address: u64, src: &[u8]) -> Result<(), Error> {
        let mut heap = self.heap();
        let dst = heap
            .range_mut(address, src.len())
            .ok_or_else(|| copy_error("copy to device", address, src.len()))?;
        dst.copy_from_slice(src);
        Ok(())
    }

    fn read(&self, _stream: &dyn BackendStream, address: u64, dst: &mut [u8]) -> Result<(), Error> {
        let mut heap = self.heap();
        let src = heap
            .range_mut(address, dst.len())
            .ok_or_else(|| copy_error("copy to host", address, dst.len()))?;
        dst.copy_from_slice(src);
        Ok(())
    }

    fn load_function(&self, ptx: &str, symbol: &str) -> Result<Arc<dyn BackendFunction>, Error> {
        let module = jitseam_ptx::parse_module(ptx).map_err(|detail| Error::Ptx {
            entry: symbol.to_owned(),
            detail,
        })?;
        let program = jitseam_ptx::decode(ptx, &module, symbol).map_err(|error| match error {
            DecodeError::Parse(detail) => Error::Ptx {
                entry: symbol.to_owned(),
                detail,
            },
            DecodeError::Unsupported {
                entry,
                instruction,
                line,
                reason,
            } => Error::Unsupported {
                entry,
                instruction,
                line,
                reason,
            },
        })?;
        Ok(Arc::new(EmulatedFunction { program }))
    }

    /// Runs the launch to completion before returning.
    ///
    /// # Safety
    /// Nothing the kernel does can touch host memory: every access is checked against the
    /// emulator's own allocation table, so any packet is memory-safe to launch here. The
    /// trait's contract still applies for the results to mean anything.
    unsafe fn launch(
        &self,
        function: &dyn BackendFunction,
        _stream: &dyn BackendStream,
        geometry: Geometry,
        packet: &ArgPacket<'_>,
    ) -> Result<(), Error> {
        let Some(function) = function.as_any().downcast_ref::<EmulatedFunction>() else {
            return Err(Error::Device {
                stage: "launch".to_owned(),
                message: "the function was not loaded by the emulator".to_owned(),
            });
        };
        let program = &function.program;
        if geometry.block > self.properties.max_block_x
            || geometry.grid > self.properties.max_grid_x
        {
            return Err(Error::Device {
                stage: format!("launch of `{}`", program.entry()),
                message: format!(
                    "geometry {geometry:?} exceeds the emulator's limits (grid {}, block {})",
                    self.properties.max_grid_x, self.properties.max_block_x
                ),
            });
        }
        let mut heap = self.heap();
        let mut memory = Regions::new(
            heap.allocations
                .iter_mut()
                .map(|(&base, bytes)| (base, bytes.as_mut_slice()))
                .collect(),
        );
        let dims = LaunchDims::linear(geometry.grid, geometry.block);
        jitseam_ptx::interp::run(program, packet.bytes(), dims, &mut memory).map_err(|error| {
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
                other => Error::Device {
                    stage: format!("launch of `{}`", program.entry()),
                    message: other.to_string(),
                },
            }
        })
    }

    fn synchronize(&self, _stream: &dyn BackendStream) -> Result<(), Error> {
        Ok(())
    }
}

impl Device {
    /// A new emulator device: the PTX interpreter on the CPU, with every memory access checked
    /// (see [`EmulatorBackend`]).
    pub fn emulator() -> Self {
        Self::with_backend(Arc::new(EmulatorBackend::new()))
    }
}
