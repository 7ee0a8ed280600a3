//! Reading a cubin: the ELF image NVRTC or `ptxas` makes from PTX for one SM architecture.
//!
//! [`parse_cubin`] reads the ELF with the `object` crate and, from NVIDIA's own sections, what a
//! launcher can check before the driver sees the image:
//!
//! - the SM architecture, from the ELF header's flags (`sm_XY` in the low byte under ELF ABI
//!   version 7; in bits 8–15 under version 8, which CUDA uses from Blackwell on; the
//!   arch-specific `a` marker is `0x800` resp. `0x8`);
//! - every kernel: each function symbol marked as an entry (`STO_CUDA_ENTRY`);
//! - from the kernel's `.nv.info.<name>` section, its parameters (`EIATTR_KPARAM_INFO`: ordinal,
//!   offset and size in the parameter constant bank), where that bank lies
//!   (`EIATTR_PARAM_CBANK`), and `__launch_bounds__`-style limits (`EIATTR_MAX_THREADS`,
//!   `EIATTR_REQNTID`);
//! - from the module-wide `.nv.info`, the registers each kernel uses (`EIATTR_REGCOUNT`);
//! - from `.nv.shared.<name>`, its static shared memory.
//!
//! # What a cubin cannot tell
//!
//! A cubin records each parameter's **offset and size only**: a pointer, a `long long` and a
//! `double` are all 8 bytes at some offset, and an `int` and a `float` are both 4. Checking a
//! cubin against an ABI therefore compares count, offsets and sizes; telling types apart needs
//! the PTX of the same compile.
//!
//! Nothing here panics on any input: a truncated or damaged image is a [`CubinError`].

use std::collections::HashMap;

use object::elf;
use object::read::elf::{FileHeader, SectionHeader, Sym};

/// `EM_CUDA`: the ELF machine of NVIDIA GPU code.
pub const EM_CUDA: u16 = 190;

/// `STO_CUDA_ENTRY`: the `st_other` bit that marks a kernel (a `__global__` function).
const STO_CUDA_ENTRY: u8 = 0x10;

// `.nv.info` record formats: every record starts with (format, attribute); `SVAL` is followed
// by a 16-bit length and that many bytes, the others by one 16-bit value.
const EIFMT_SVAL: u8 = 0x04;

// The attributes read here, as `cuobjdump -elf` names them.
const EIATTR_MAX_THREADS: u8 = 0x05;
const EIATTR_PARAM_CBANK: u8 = 0x0a;
const EIATTR_REQNTID: u8 = 0x10;
const EIATTR_KPARAM_INFO: u8 = 0x17;
const EIATTR_CBANK_PARAM_SIZE: u8 = 0x19;
const EIATTR_REGCOUNT: u8 = 0x2f;

/// A parsed cubin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cubin {
    /// The SM architecture the code was compiled for.
    pub arch: SmArch,
    /// `EI_ABIVERSION` of the ELF header (7 before Blackwell, 8 after).
    pub abi_version: u8,
    /// Every kernel, in symbol-table order.
    pub entries: Vec<CubinEntry>,
}

impl Cubin {
    /// The kernel named `name`, if the cubin has one.
    pub fn entry(&self, name: &str) -> Option<&CubinEntry> {
        self.entries.iter().find(|entry| entry.name == name)
    }

    /// The kernel names, in symbol-table order.
    pub fn entry_names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|entry| entry.name.as_str())
    }
}

/// An SM architecture, as a cubin's header records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SmArch {
    /// `major * 10 + minor`: 90 for `sm_90`.
    pub number: u32,
    /// `sm_90a`: code that runs only on exactly this architecture.
    pub arch_specific: bool,
}

impl SmArch {
    /// The compute capability `(major, minor)`.
    pub fn capability(self) -> (u32, u32) {
        (self.number / 10, self.number % 10)
    }

    /// Whether code for this architecture runs on a device of compute capability
    /// `(major, minor)`: CUDA's binary compatibility rule — the same major version and a minor
    /// version at least as high — and, for arch-specific code, exactly this architecture.
    pub fn runs_on(self, major: u32, minor: u32) -> bool {
        let (own_major, own_minor) = self.capability();
        if self.arch_specific {
            (major, minor) == (own_major, own_minor)
        } else {
            major == own_major && minor >= own_minor
        }
    }
}

impl std::fmt::Display for SmArch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "sm_{}{}",
            self.number,
            if self.arch_specific { "a" } else { "" }
        )
    }
}

/// One kernel of a cubin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CubinEntry {
    /// The kernel's symbol.
    pub name: String,
    /// Its parameters, by ordinal (`EIATTR_KPARAM_INFO`). Offsets and sizes only: see the
    /// [module docs](self).
    pub params: Vec<CubinParam>,
    /// Where the parameters lie in constant bank 0 (`EIATTR_PARAM_CBANK`).
    pub param_cbank: Option<ParamCbank>,
    /// Total parameter bytes (`EIATTR_CBANK_PARAM_SIZE`).
    pub param_bytes: Option<u32>,
    /// Registers per thread (`EIATTR_REGCOUNT` in the module-wide `.nv.info`).
    pub registers: Option<u32>,
    /// `.maxntid` / `__launch_bounds__` (`EIATTR_MAX_THREADS`).
    pub max_threads: Option<[u32; 3]>,
    /// `.reqntid` (`EIATTR_REQNTID`).
    pub required_threads: Option<[u32; 3]>,
    /// Static shared memory in bytes (the size of `.nv.shared.<name>`).
    pub shared_bytes: u64,
}

/// One kernel parameter as a cubin records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CubinParam {
    /// Zero-based position in the parameter list.
    pub ordinal: u32,
    /// Byte offset from the start of the parameter block.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
}

/// `EIATTR_PARAM_CBANK`: the parameter block inside constant bank 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParamCbank {
    /// Byte offset of the block in the bank (`0x210` from Volta on).
    pub offset: u32,
    /// Size of the block in bytes.
    pub size: u32,
}

/// Why a byte string is not a cubin jitseam can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CubinError {
    /// Not a well-formed 64-bit ELF file.
    #[error("not a valid 64-bit elf image: {0}")]
    Elf(String),
    /// An ELF file for another machine.
    #[error("elf machine {machine} is not cuda ({EM_CUDA})")]
    NotCuda {
        /// `e_machine`.
        machine: u16,
    },
    /// An `.nv.info` section whose records run past its end or carry impossible values.
    #[error("section `{section}`, byte {offset}: {problem}")]
    Info {
        /// The section's name.
        section: String,
        /// Byte offset of the bad record in the section.
        offset: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// A kernel's parameter ordinals are not exactly `0..n`, each once.
    #[error("kernel `{entry}`: parameter ordinal {ordinal} is {problem}")]
    Ordinals {
        /// The kernel.
        entry: String,
        /// The offending ordinal.
        ordinal: u32,
        /// `duplicated` or `missing`.
        problem: &'static str,
    },
}

type Header = elf::FileHeader64<object::Endianness>;

/// Parses a cubin: its architecture, kernels and their parameters. See the [module docs](self).
pub fn parse_cubin(data: &[u8]) -> Result<Cubin, CubinError> {
    let elf_error = |e: object::read::Error| CubinError::Elf(e.to_string());
    let header = Header::parse(data).map_err(elf_error)?;
    let endian = header.endian().map_err(elf_error)?;
    let machine = header.e_machine(endian);
    if machine != EM_CUDA {
        return Err(CubinError::NotCuda { machine });
    }
    let abi_version = header.e_ident().abi_version;
    let arch = arch_from_flags(abi_version, header.e_flags(endian));
    let sections = header.sections(endian, data).map_err(elf_error)?;
    let symbols = sections
        .symbols(endian, data, elf::SHT_SYMTAB)
        .map_err(elf_error)?;

    let mut names = Vec::new();
    for symbol in symbols.iter() {
        if symbol.st_type() == elf::STT_FUNC && symbol.st_other() & STO_CUDA_ENTRY != 0 {
            let name = symbols.symbol_name(endian, symbol).map_err(elf_error)?;
            names.push(String::from_utf8_lossy(name).into_owned());
        }
    }

    // Kernels by name, so that each section finds its kernel at once: a cubin with many kernels
    // and as many sections must not cost their product.
    let mut by_name: HashMap<String, usize> = HashMap::with_capacity(names.len());
    for (index, name) in names.iter().enumerate() {
        by_name.entry(name.clone()).or_insert(index);
    }
    let mut entries: Vec<CubinEntry> = names
        .into_iter()
        .map(|name| CubinEntry {
            name,
            params: Vec::new(),
            param_cbank: None,
            param_bytes: None,
            registers: None,
            max_threads: None,
            required_threads: None,
            shared_bytes: 0,
        })
        .collect();

    for section in sections.iter() {
        let name = sections.section_name(endian, section).map_err(elf_error)?;
        let name = String::from_utf8_lossy(name);
        if let Some(kernel) = name.strip_prefix(".nv.info.") {
            let Some(entry) = by_name.get(kernel).and_then(|&i| entries.get_mut(i)) else {
                continue;
            };
            let bytes = section.data(endian, data).map_err(elf_error)?;
            read_entry_info(&name, bytes, entry)?;
        } else if name == ".nv.info" {
            let bytes = section.data(endian, data).map_err(elf_error)?;
            for record in Records::new(&name, bytes) {
                let record = record?;
                if record.attribute == EIATTR_REGCOUNT {
                    let (symbol, registers) = record.pair(&name)?;
                    let symbol = symbols
                        .symbol(object::SymbolIndex(symbol as usize))
                        .map_err(elf_error)?;
                    let symbol_name = symbols.symbol_name(endian, symbol).map_err(elf_error)?;
                    let symbol_name = String::from_utf8_lossy(symbol_name);
                    if let Some(entry) = by_name
                        .get(symbol_name.as_ref())
                        .and_then(|&i| entries.get_mut(i))
                    {
                        entry.registers = Some(registers);
                    }
                }
            }
        } else if let Some(kernel) = name.strip_prefix(".nv.shared.")
            && let Some(entry) = by_name.get(kernel).and_then(|&i| entries.get_mut(i))
        {
            entry.shared_bytes = section.sh_size(endian);
        }
    }
    for entry in &mut entries {
        check_ordinals(entry)?;
    }
    Ok(Cubin {
        arch,
        abi_version,
        entries,
    })
}

/// The SM architecture from `e_flags`; ABI version 8 moved it from the low byte to bits 8–15.
fn arch_from_flags(abi_version: u8, flags: u32) -> SmArch {
    if abi_version >= 8 {
        SmArch {
            number: (flags >> 8) & 0xff,
            arch_specific: flags & 0x8 != 0,
        }
    } else {
        SmArch {
            number: flags & 0xff,
            arch_specific: flags & 0x800 != 0,
        }
    }
}

fn read_entry_info(section: &str, bytes: &[u8], entry: &mut CubinEntry) -> Result<(), CubinError> {
    for record in Records::new(section, bytes) {
        let record = record?;
        match record.attribute {
            EIATTR_KPARAM_INFO => {
                let value = record.sval(section, 12)?;
                // index: u32, ordinal: u16, offset: u16, then a word whose top 14 bits are
                // the size in bytes (the rest: constant bank, pointee alignment, space).
                let ordinal = u32::from(le16(value, 4));
                let offset = u32::from(le16(value, 6));
                let size = le32(value, 8) >> 18;
                entry.params.push(CubinParam {
                    ordinal,
                    offset,
                    size,
                });
            }
            EIATTR_PARAM_CBANK => {
                let value = record.sval(section, 8)?;
                entry.param_cbank = Some(ParamCbank {
                    offset: u32::from(le16(value, 4)),
                    size: u32::from(le16(value, 6)),
                });
            }
            EIATTR_CBANK_PARAM_SIZE => entry.param_bytes = Some(u32::from(record.half)),
            EIATTR_MAX_THREADS => entry.max_threads = Some(record.dims(section)?),
            EIATTR_REQNTID => entry.required_threads = Some(record.dims(section)?),
            _ => {}
        }
    }
    entry.params.sort_by_key(|p| p.ordinal);
    Ok(())
}

fn check_ordinals(entry: &CubinEntry) -> Result<(), CubinError> {
    for (index, param) in entry.params.iter().enumerate() {
        let expected = u32::try_from(index).unwrap_or(u32::MAX);
        if param.ordinal != expected {
            let problem = if param.ordinal < expected {
                "duplicated"
            } else {
                "missing"
            };
            return Err(CubinError::Ordinals {
                entry: entry.name.clone(),
                ordinal: param.ordinal.min(expected),
                problem,
            });
        }
    }
    Ok(())
}

fn le16(bytes: &[u8], at: usize) -> u16 {
    let mut b = [0u8; 2];
    if let Some(src) = bytes.get(at..at + 2) {
        b.copy_from_slice(src);
    }
    u16::from_le_bytes(b)
}

fn le32(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    if let Some(src) = bytes.get(at..at + 4) {
        b.copy_from_slice(src);
    }
    u32::from_le_bytes(b)
}

/// One `.nv.info` record.
struct Record<'a> {
    offset: usize,
    attribute: u8,
    /// The 16-bit value of a non-`SVAL` record (the length of an `SVAL` one).
    half: u16,
    /// The bytes of an `SVAL` record; `None` for the other formats.
    value: Option<&'a [u8]>,
}

impl<'a> Record<'a> {
    /// The value of an `SVAL` record that must be at least `len` bytes long.
    fn sval(&self, section: &str, len: usize) -> Result<&'a [u8], CubinError> {
        match self.value {
            Some(value) if value.len() >= len => Ok(value),
            _ => Err(self.bad(section, "attribute value too short")),
        }
    }

    /// `(u32, u32)` of an 8-byte `SVAL` record.
    fn pair(&self, section: &str) -> Result<(u32, u32), CubinError> {
        let value = self.sval(section, 8)?;
        Ok((le32(value, 0), le32(value, 4)))
    }

    /// `[x, y, z]` of a 12-byte `SVAL` record.
    fn dims(&self, section: &str) -> Result<[u32; 3], CubinError> {
        let value = self.sval(section, 12)?;
        Ok([le32(value, 0), le32(value, 4), le32(value, 8)])
    }

    fn bad(&self, section: &str, problem: &'static str) -> CubinError {
        CubinError::Info {
            section: section.to_owned(),
            offset: self.offset,
            problem,
        }
    }
}

/// The records of one `.nv.info` section, in order.
struct Records<'a, 's> {
    section: &'s str,
    bytes: &'a [u8],
    at: usize,
    failed: bool,
}

impl<'a, 's> Records<'a, 's> {
    fn new(section: &'s str, bytes: &'a [u8]) -> Self {
        Self {
            section,
            bytes,
            at: 0,
            failed: false,
        }
    }
}

impl<'a> Iterator for Records<'a, '_> {
    type Item = Result<Record<'a>, CubinError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.bytes.len() {
            return None;
        }
        let offset = self.at;
        let Some(head) = self.bytes.get(offset..offset + 4) else {
            self.failed = true;
            return Some(Err(CubinError::Info {
                section: self.section.to_owned(),
                offset,
                problem: "record header runs past the end of the section",
            }));
        };
        let (format, attribute, half) = (head[0], head[1], le16(head, 2));
        let mut value = None;
        self.at = offset + 4;
        if format == EIFMT_SVAL {
            let end = self.at + usize::from(half);
            let Some(bytes) = self.bytes.get(self.at..end) else {
                self.failed = true;
                return Some(Err(CubinError::Info {
                    section: self.section.to_owned(),
                    offset,
                    problem: "attribute value runs past the end of the section",
                }));
            };
            value = Some(bytes);
            self.at = end;
        }
        Some(Ok(Record {
            offset,
            attribute,
            half,
            value,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_flags_of_both_abi_versions() {
        assert_eq!(
            arch_from_flags(7, 0x5a055a),
            SmArch {
                number: 90,
                arch_specific: false
            }
        );
        assert_eq!(arch_from_flags(7, 0x5a0d5a).to_string(), "sm_90a");
        assert_eq!(arch_from_flags(8, 0x0600_5a04).to_string(), "sm_90");
        assert_eq!(arch_from_flags(8, 0x0600_640a).to_string(), "sm_100a");
    }

    #[test]
    fn binary_compatibility() {
        let sm80 = SmArch {
            number: 80,
            arch_specific: false,
        };
        assert!(sm80.runs_on(8, 0) && sm80.runs_on(8, 6) && !sm80.runs_on(9, 0));
        let sm90a = SmArch {
            number: 90,
            arch_specific: true,
        };
        assert!(sm90a.runs_on(9, 0) && !sm90a.runs_on(9, 1));
    }

    #[test]
    fn records_decode_and_refuse_overruns() {
        let bytes = [
            0x04, 0x17, 0x0c, 0x00, 0, 0, 0, 0, 1, 0, 8, 0, 0x00, 0xf0, 0x21, 0x00, 0x03, 0x19,
            0x10, 0x00,
        ];
        let mut entry = CubinEntry {
            name: "k".into(),
            params: vec![],
            param_cbank: None,
            param_bytes: None,
            registers: None,
            max_threads: None,
            required_threads: None,
            shared_bytes: 0,
        };
        read_entry_info(".nv.info.k", &bytes, &mut entry).unwrap();
        assert_eq!(
            entry.params,
            vec![CubinParam {
                ordinal: 1,
                offset: 8,
                size: 8
            }]
        );
        assert_eq!(entry.param_bytes, Some(16));
        assert!(read_entry_info(".nv.info.k", &bytes[..10], &mut entry).is_err());
        assert!(read_entry_info(".nv.info.k", &bytes[..2], &mut entry).is_err());
    }
}
