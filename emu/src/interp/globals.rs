//! The module's `.global` variables: the bytes that live with a loaded program rather than with
//! one launch.
//!
//! On a GPU a module's `.global` variables persist for as long as the module is loaded: a
//! launch sees what the previous launch of any kernel of that module stored. The emulator keeps
//! them in a [`ModuleMemory`] made from the program ([`Program::module_memory`], the variables'
//! initializers, zero where there is none) that the owner hands to every launch
//! ([`run_in_module`](super::run_in_module)); [`run_with`](super::run_with) gives each launch a
//! fresh one. The module's `.const` variables cannot change, so they stay in the [`Program`].

use super::memory::{Region, Regions};
use crate::decode::Program;
use crate::space::{CONST_VARS, GLOBAL_VARS};

/// The current bytes of a program's module `.global` variables (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleMemory {
    bytes: Box<[u8]>,
}

impl ModuleMemory {
    /// The variables' bytes, laid out as the program addresses them.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether this memory has the size `program`'s variables need.
    pub(crate) fn fits(&self, program: &Program) -> bool {
        self.bytes.len() == program.module.globals.len()
    }

    /// The regions one launch maps: the `.global` variables read-write, the `.const` ones
    /// (`consts`, from the program) read-only.
    pub(crate) fn regions<'m>(&'m mut self, consts: &'m [u8]) -> Regions<'m> {
        let mut regions = Vec::with_capacity(2);
        if !self.bytes.is_empty() {
            regions.push(Region::read_write(GLOBAL_VARS, &mut self.bytes));
        }
        if !consts.is_empty() {
            regions.push(Region::read_only(CONST_VARS, consts));
        }
        Regions::from_regions(regions)
    }
}

impl Program {
    /// A fresh [`ModuleMemory`] for this program: its module `.global` variables with their
    /// initial values.
    pub fn module_memory(&self) -> ModuleMemory {
        ModuleMemory {
            bytes: self.module.globals.clone().into_boxed_slice(),
        }
    }

    /// Whether the module has `.global` variables, whose bytes a [`ModuleMemory`] keeps
    /// between launches.
    pub fn has_module_globals(&self) -> bool {
        !self.module.globals.is_empty()
    }
}
