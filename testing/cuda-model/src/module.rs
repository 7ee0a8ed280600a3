//! Loaded modules and the functions resolved from them.
//!
//! `cuModuleLoadData` parses the PTX and resolves its module-scope names once (a parse error is
//! `CUDA_ERROR_INVALID_PTX`, as when the driver's JIT refuses it); `cuModuleGetFunction`
//! resolves the entry from that and pre-decodes it for the interpreter once, and hands out the
//! same handle for the same name. An entry the interpreter cannot run
//! (an instruction or directive it does not support) is `CUDA_ERROR_NOT_SUPPORTED` there, with the reason on stderr:
//! a real driver would accept it, the model cannot execute it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use jitseam_emu::{DecodeError, Program};
use jitseam_ptx::resolve::ResolvedModule;

use crate::handle;
use crate::lock::lock;
use crate::status::{
    CUDA_ERROR_INVALID_PTX, CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_SUPPORTED, CUresult,
};

/// One `cuModuleLoadData` result.
#[derive(Debug)]
pub(crate) struct LoadedModule {
    pub(crate) id: u64,
    ptx: String,
    module: ResolvedModule,
    /// Function handles already resolved, by entry name.
    resolved: Mutex<HashMap<String, Arc<Function>>>,
    /// Launches of this module's functions queued and not yet finished.
    in_flight: AtomicUsize,
}

/// One `cuModuleGetFunction` result: an entry, pre-decoded.
#[derive(Debug)]
pub(crate) struct Function {
    pub(crate) id: u64,
    pub(crate) module: Arc<LoadedModule>,
    pub(crate) program: Program,
}

impl LoadedModule {
    /// Parses `ptx` as a module.
    pub(crate) fn load(ptx: String) -> Result<Self, CUresult> {
        let module = ResolvedModule::new(&ptx).map_err(|e| {
            eprintln!("jitseam-cuda-model: cuModuleLoadData: the PTX does not parse: {e}");
            CUDA_ERROR_INVALID_PTX
        })?;
        Ok(Self {
            id: handle::next_id(),
            ptx,
            module,
            resolved: Mutex::new(HashMap::new()),
            in_flight: AtomicUsize::new(0),
        })
    }

    /// The function for entry `name`, decoded on first use.
    pub(crate) fn function(self: &Arc<Self>, name: &str) -> Result<Arc<Function>, CUresult> {
        let mut resolved = lock(&self.resolved);
        if let Some(function) = resolved.get(name) {
            return Ok(Arc::clone(function));
        }
        if self.module.module.entry(name).is_none() {
            return Err(CUDA_ERROR_NOT_FOUND);
        }
        let entry = self.module.entry(&self.ptx, name).map_err(|e| {
            eprintln!("jitseam-cuda-model: cuModuleGetFunction `{name}`: {e}");
            CUDA_ERROR_INVALID_PTX
        })?;
        let program = jitseam_emu::decode_entry(&self.module, &entry).map_err(|e| {
            eprintln!("jitseam-cuda-model: cuModuleGetFunction `{name}`: {e}");
            match e {
                DecodeError::Parse(_) => CUDA_ERROR_INVALID_PTX,
                DecodeError::Unsupported { .. } | DecodeError::Unknown(_) => {
                    CUDA_ERROR_NOT_SUPPORTED
                }
            }
        })?;
        let function = Arc::new(Function {
            id: handle::next_id(),
            module: Arc::clone(self),
            program,
        });
        resolved.insert(name.to_owned(), Arc::clone(&function));
        Ok(function)
    }

    /// Forgets the resolved functions (each holds the module, so this breaks the cycle at
    /// unload) and returns their handles. Launches already queued keep their own reference.
    pub(crate) fn release_functions(&self) -> Vec<u64> {
        lock(&self.resolved).drain().map(|(_, f)| f.id).collect()
    }

    /// `.version` as `cuFuncGetAttribute(PTX_VERSION)` reports it: `10 * major + minor`.
    pub(crate) fn ptx_version(&self) -> i32 {
        let v = self.module.module.version;
        i32::try_from(v.major * 10 + v.minor).unwrap_or(0)
    }

    /// A launch was queued.
    pub(crate) fn launch_queued(&self) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
    }

    /// A queued launch finished (or was skipped).
    pub(crate) fn launch_done(&self) {
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }

    /// Launches queued and not finished.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }
}
