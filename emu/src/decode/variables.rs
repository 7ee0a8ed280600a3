//! Variables: the module's `.global` and `.const` variables laid out with their initial bytes,
//! every `.local` variable given its place in the thread's frame, and every `.shared` one its
//! place in the block's shared memory (see `shared`).
//!
//! An initializer may hold the address of a `.global` or `.const` variable (`generic(x)`,
//! `x+4`). A module variable the emulator cannot hold (an `.extern` one defined
//! elsewhere, one whose initializer it cannot encode exactly) is remembered with the reason,
//! so that only an entry that uses it is refused. `.local` variables of the entry and of every
//! called function get disjoint, fixed offsets: recursion is refused, so no function is ever
//! active twice at once and one static frame per thread holds them all.

use std::collections::HashMap;

use super::decoder::{DResult, Decoder, Sym};
use crate::space::{CONST_VARS, GLOBAL_VARS, Space};
use jitseam_ptx::body::{Initializer, Variable};
use jitseam_ptx::{FloatValue, ScalarType, StateSpace};

/// The most `.local` bytes a thread may use (CUDA's limit per thread).
const MAX_LOCAL: u64 = 512 * 1024;

/// The most bytes of `.global` (and of `.const`) module variables.
const MAX_MODULE: u64 = 1 << 30;

impl Decoder<'_> {
    /// Lays out the module's `.global` and `.const` variables and gives every module variable
    /// its place.
    pub(super) fn module_variables(&mut self) -> DResult<()> {
        let module = self.module;
        let vars = &module.vars;
        for var in vars {
            let sym = match var.space {
                _ if var.opaque => Sym::Refused("textures, samplers and surfaces"),
                StateSpace::Shared => self.shared_var(var)?,
                StateSpace::Local if var.init.is_some() => {
                    Sym::Refused("initialized local variables")
                }
                StateSpace::Local => self.local_var(var)?,
                StateSpace::Global | StateSpace::Const if var.external => {
                    Sym::Refused("variables defined in another module")
                }
                StateSpace::Global | StateSpace::Const => {
                    self.place(var).unwrap_or_else(Sym::Refused)
                }
            };
            self.module_syms.push(sym);
        }
        // An initializer names a variable by its text: the last declaration of the name is
        // the one it means, as at module scope.
        let by_name: HashMap<&str, usize> = vars
            .iter()
            .enumerate()
            .map(|(i, v)| (v.name.as_str(), i))
            .collect();
        // Every variable has its address now, so initializers may name any of them.
        for (index, var) in vars.iter().enumerate() {
            let (Some(init), Some(&Sym::Var { space, addr })) =
                (&var.init, self.module_syms.get(index))
            else {
                continue;
            };
            if !matches!(space, Space::Global | Space::Const) {
                continue;
            }
            let size = var.size_bytes().unwrap_or(0);
            let mut bytes = vec![0u8; usize::try_from(size).unwrap_or(0)];
            let resolve =
                |name: &str, offset: i64| self.address_initializer(&by_name, name, offset);
            match write(init, &shape(var, size), var.ty, 0, &mut bytes, &resolve) {
                Ok(()) => {
                    let (image, base) = if space == Space::Const {
                        (&mut self.image.consts, CONST_VARS)
                    } else {
                        (&mut self.image.globals, GLOBAL_VARS)
                    };
                    let start = usize::try_from(addr - base).unwrap_or(usize::MAX);
                    if let Some(slot) = image.get_mut(start..start.saturating_add(bytes.len())) {
                        slot.copy_from_slice(&bytes);
                    }
                }
                Err(reason) => {
                    if let Some(sym) = self.module_syms.get_mut(index) {
                        *sym = Sym::Refused(reason);
                    }
                }
            }
        }
        Ok(())
    }

    /// The value of an address initializer `name + offset` (written `name` or `generic(name)`),
    /// where `name` is a `.global` or `.const` variable (whose own addresses are generic ones
    /// here, so both forms give the same value).
    fn address_initializer(
        &self,
        by_name: &HashMap<&str, usize>,
        name: &str,
        offset: i64,
    ) -> Result<u64, &'static str> {
        let sym = by_name.get(name).and_then(|&i| self.module_syms.get(i));
        let addr = match sym {
            Some(Sym::Var {
                space: Space::Global | Space::Const,
                addr,
            }) => *addr,
            Some(Sym::Refused(reason)) => return Err(reason),
            _ if self.module.module.functions.iter().any(|f| f.name == name) => {
                return Err("addresses of functions");
            }
            _ => return Err("addresses of variables of this state space"),
        };
        Ok(addr.wrapping_add(offset as u64))
    }

    /// Where a variable declared in a body lives.
    pub(super) fn declare(&mut self, var: &Variable) -> DResult<Sym> {
        match var.space {
            StateSpace::Local if var.init.is_some() => {
                Err(self.unsupported_at(var.offset, ".local", "initialized local variables"))
            }
            StateSpace::Local => self.local_var(var),
            StateSpace::Shared => self.shared_var(var),
            StateSpace::Global | StateSpace::Const => {
                let what = if var.space == StateSpace::Global {
                    ".global"
                } else {
                    ".const"
                };
                Err(self.unsupported_at(
                    var.offset,
                    what,
                    "module variables declared inside a function",
                ))
            }
        }
    }

    /// A `.local` variable's place in the frame.
    fn local_var(&mut self, var: &Variable) -> DResult<Sym> {
        let Some(size) = var.size_bytes() else {
            return Err(self.unsupported_at(var.offset, &var.name, "local arrays of unknown size"));
        };
        let addr = self.frame_alloc(size, var.alignment(), var.offset, &var.name)?;
        Ok(Sym::Var {
            space: Space::Local,
            addr,
        })
    }

    /// A `.param` array of `len` elements of `ty` (a function's, or a call sequence's): held
    /// in the frame, so that it can be accessed at any offset.
    pub(super) fn param_array(
        &mut self,
        ty: ScalarType,
        len: u32,
        align: Option<u32>,
        offset: usize,
        name: &str,
    ) -> DResult<Sym> {
        if len == 0 {
            return Err(self.unsupported_at(offset, name, "unsized parameter arrays"));
        }
        let size = u64::from(ty.bytes()) * u64::from(len);
        let align = align.map_or(u64::from(ty.bytes()), u64::from).max(1);
        let addr = self.frame_alloc(size, align, offset, name)?;
        Ok(Sym::ParamMem {
            addr,
            size: u32::try_from(size).unwrap_or(u32::MAX),
        })
    }

    /// `size` bytes of the frame aligned to `align`: their offset.
    fn frame_alloc(&mut self, size: u64, align: u64, offset: usize, name: &str) -> DResult<u64> {
        if !align.is_power_of_two() {
            return Err(self.unsupported_at(
                offset,
                name,
                "alignments that are not a power of two",
            ));
        }
        let at = self.local_bytes.next_multiple_of(align);
        match at.checked_add(size) {
            Some(end) if end <= MAX_LOCAL => {
                self.local_bytes = end;
                Ok(at)
            }
            _ => Err(self.unsupported_at(
                offset,
                name,
                "more than 512 KiB of local memory per thread",
            )),
        }
    }

    /// A module `.global` or `.const` variable placed in the module image with its initial
    /// bytes, or why it cannot be.
    fn place(&mut self, var: &Variable) -> Result<Sym, &'static str> {
        let size = var.size_bytes().ok_or("arrays of unknown size")?;
        let align = var.alignment();
        if !align.is_power_of_two() {
            return Err("alignments that are not a power of two");
        }
        let (image, base, space) = match var.space {
            StateSpace::Const => (&mut self.image.consts, CONST_VARS, Space::Const),
            _ => (&mut self.image.globals, GLOBAL_VARS, Space::Global),
        };
        let at = (image.len() as u64).next_multiple_of(align);
        if at.saturating_add(size) > MAX_MODULE {
            return Err("more than 1 GiB of module variables");
        }
        let end = usize::try_from(at + size).map_err(|_| "variables this large")?;
        image.resize(end, 0);
        Ok(Sym::Var {
            space,
            addr: base + at,
        })
    }
}

/// Elements per level of a variable's initializer: each array dimension, then the vector.
fn shape(var: &Variable, size: u64) -> Vec<u64> {
    let mut shape: Vec<u64> = var
        .dims
        .iter()
        .enumerate()
        .map(|(i, dim)| match (dim, &var.init) {
            (Some(len), _) => u64::from(*len),
            (None, Some(Initializer::List(items))) if i == 0 => items.len() as u64,
            _ => size,
        })
        .collect();
    if let Some(n) = var.vector.filter(|&n| n > 1) {
        shape.push(u64::from(n));
    }
    shape
}

/// Writes `init` for elements of `shape` of type `ty` at byte `at` of `out`. A list may be
/// shorter than its level (the rest stays zero, as the PTX ISA says), never longer; a number
/// fills exactly one element.
/// `address` gives the value of an address initializer (a variable's name and an offset).
fn write(
    init: &Initializer,
    shape: &[u64],
    ty: ScalarType,
    at: u64,
    out: &mut [u8],
    address: &dyn Fn(&str, i64) -> Result<u64, &'static str>,
) -> Result<(), &'static str> {
    match init {
        Initializer::List(items) => {
            let Some((&len, rest)) = shape.split_first() else {
                return Err("a braced initializer for one element");
            };
            if items.len() as u64 > len {
                return Err("more initializers than elements");
            }
            let stride = rest.iter().product::<u64>() * u64::from(ty.bytes());
            for (i, item) in items.iter().enumerate() {
                write(item, rest, ty, at + i as u64 * stride, out, address)?;
            }
            Ok(())
        }
        Initializer::Int(_)
        | Initializer::Float(_)
        | Initializer::Address { .. }
        | Initializer::Other(_) => {
            if !shape.is_empty() {
                return Err("array initializers without their braces");
            }
            let value = match init {
                Initializer::Address { name, offset, .. }
                    if ty.bytes() == 8 && class_is_int(ty) =>
                {
                    address(name, *offset)?
                }
                Initializer::Address { .. } => return Err("addresses in variables of this type"),
                Initializer::Other(_) => {
                    return Err("initializers that are expressions other than addresses");
                }
                _ => encode(init, ty)?,
            };
            let n = ty.bytes() as usize;
            let start = usize::try_from(at).map_err(|_| "variables this large")?;
            let slot = out
                .get_mut(start..start + n)
                .ok_or("more initializers than elements")?;
            slot.copy_from_slice(value.to_le_bytes().get(..n).unwrap_or_default());
            Ok(())
        }
    }
}

fn class_is_int(ty: ScalarType) -> bool {
    matches!(ty, ScalarType::B64 | ScalarType::U64 | ScalarType::S64)
}

/// The bits of one initializer value as an element of type `ty`; a value that the type cannot
/// hold exactly is refused.
fn encode(init: &Initializer, ty: ScalarType) -> Result<u64, &'static str> {
    use ScalarType as T;
    match (ty, init) {
        (
            T::B8
            | T::B16
            | T::B32
            | T::B64
            | T::U8
            | T::U16
            | T::U32
            | T::U64
            | T::S8
            | T::S16
            | T::S32
            | T::S64,
            Initializer::Int(v),
        ) => {
            let bits = ty.bytes() * 8;
            if bits == 64 || v >> bits == 0 || (*v as i64) >> (bits - 1) == -1 {
                Ok(if bits == 64 {
                    *v
                } else {
                    v & ((1u64 << bits) - 1)
                })
            } else {
                Err("an initializer too large for its type")
            }
        }
        (T::F32, Initializer::Int(v)) => {
            let f = *v as i64 as f32;
            if f as i64 == *v as i64 {
                Ok(u64::from(f.to_bits()))
            } else {
                Err("an integer initializer a float cannot hold exactly")
            }
        }
        (T::F64, Initializer::Int(v)) => {
            let f = *v as i64 as f64;
            if f as i64 == *v as i64 {
                Ok(f.to_bits())
            } else {
                Err("an integer initializer a float cannot hold exactly")
            }
        }
        (T::F32, Initializer::Float(FloatValue::F32(f))) => Ok(u64::from(f.to_bits())),
        (T::F32, Initializer::Float(FloatValue::F64(f))) => Ok(u64::from((*f as f32).to_bits())),
        (T::F64, Initializer::Float(FloatValue::F32(f))) => Ok(f64::from(*f).to_bits()),
        (T::F64, Initializer::Float(FloatValue::F64(f))) => Ok(f.to_bits()),
        (_, Initializer::Float(_)) if ty.bytes() <= 8 && ty != T::F16 && ty != T::BF16 => {
            Err("a float initializer for an integer variable")
        }
        _ => Err("initializers of this type"),
    }
}
