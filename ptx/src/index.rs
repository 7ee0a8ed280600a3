//! The borrowed module index produced by [`crate::scan_module`].
//!
//! Names borrow the source text, and the parameters and performance directives of every entry
//! and function live in two shared vectors that entries address by range, so scanning a module
//! allocates a handful of growing vectors instead of several small allocations per entry. A
//! caller that needs only one kernel (as `load()` does) converts just that entry with
//! [`EntryRef::to_owned`]; [`ModuleIndex::to_module`] converts everything into the owned
//! [`Module`] that [`crate::parse_module`] returns.

use std::ops::Range;

use crate::model::{
    Entry, Function, Linkage, Module, Param, PerfDirective, PtrAttr, ScalarType, Target, Version,
};

/// A scanned PTX module: owned header fields, borrowed entries and functions.
///
/// Built by [`crate::scan_module`]; `scan_module(src)?.to_module()` equals
/// `parse_module(src)?`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleIndex<'a> {
    /// `.version MAJOR.MINOR`.
    pub version: Version,
    /// `.target …`.
    pub target: Target,
    /// `.address_size 32|64`; `None` when absent (PTX then defaults to 32).
    pub address_size: Option<u32>,
    pub(crate) entries: Vec<EntrySlot<'a>>,
    pub(crate) functions: Vec<FunctionSlot<'a>>,
    /// Parameters (and return parameters) of every entry and function, in source order.
    pub(crate) params: Vec<ParamRef<'a>>,
    /// Performance directives of every entry, in source order.
    pub(crate) directives: Vec<DirectiveRef>,
}

/// Storage for one `.entry`: its lists are ranges into the index's shared vectors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntrySlot<'a> {
    pub(crate) name: &'a str,
    pub(crate) linkage: Linkage,
    pub(crate) params: Range<usize>,
    pub(crate) directives: Range<usize>,
    pub(crate) body: Option<Range<usize>>,
    pub(crate) offset: usize,
}

/// Storage for one `.func`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FunctionSlot<'a> {
    pub(crate) name: &'a str,
    pub(crate) linkage: Linkage,
    pub(crate) returns: Range<usize>,
    pub(crate) params: Range<usize>,
    pub(crate) body: Option<Range<usize>>,
    pub(crate) offset: usize,
}

impl<'a> ModuleIndex<'a> {
    /// Number of `.entry` directives.
    pub fn entry_count(&self) -> usize {
        self.entries.len()
    }

    /// Every entry, in source order.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = EntryRef<'_, 'a>> + '_ {
        self.entries.iter().map(|slot| self.entry_ref(slot))
    }

    /// The first entry named `name`, if the module has one.
    pub fn entry(&self, name: &str) -> Option<EntryRef<'_, 'a>> {
        self.entries
            .iter()
            .find(|slot| slot.name == name)
            .map(|slot| self.entry_ref(slot))
    }

    /// The entry names, in source order.
    pub fn entry_names(&self) -> impl ExactSizeIterator<Item = &'a str> + '_ {
        self.entries.iter().map(|slot| slot.name)
    }

    /// Every `.func` (definitions, declarations and `.extern` prototypes), in source order.
    pub fn functions(&self) -> impl ExactSizeIterator<Item = FunctionRef<'_, 'a>> + '_ {
        self.functions.iter().map(|slot| FunctionRef {
            name: slot.name,
            linkage: slot.linkage,
            returns: self.params.get(slot.returns.clone()).unwrap_or_default(),
            params: self.params.get(slot.params.clone()).unwrap_or_default(),
            body: slot.body.clone(),
            offset: slot.offset,
        })
    }

    /// Converts the whole index into the owned model.
    pub fn to_module(&self) -> Module {
        Module {
            version: self.version,
            target: self.target.clone(),
            address_size: self.address_size,
            entries: self.entries().map(|entry| entry.to_owned()).collect(),
            functions: self.functions().map(|func| func.to_owned()).collect(),
        }
    }

    fn entry_ref(&self, slot: &EntrySlot<'a>) -> EntryRef<'_, 'a> {
        EntryRef {
            name: slot.name,
            linkage: slot.linkage,
            // The parser only records ranges of what it pushed, so these never fall back.
            params: self.params.get(slot.params.clone()).unwrap_or_default(),
            directives: self
                .directives
                .get(slot.directives.clone())
                .unwrap_or_default(),
            body: slot.body.clone(),
            offset: slot.offset,
        }
    }
}

impl From<ModuleIndex<'_>> for Module {
    fn from(index: ModuleIndex<'_>) -> Self {
        index.to_module()
    }
}

/// A borrowed view of one kernel (`.entry`) of a [`ModuleIndex`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRef<'i, 'a> {
    /// The entry point name (also its symbol).
    pub name: &'a str,
    /// Its linkage.
    pub linkage: Linkage,
    /// The `.param` list, in order.
    pub params: &'i [ParamRef<'a>],
    /// Performance directives between the parameter list and the body.
    pub directives: &'i [DirectiveRef],
    /// Byte range of the body's contents, between (excluding) its `{` and `}`; `None` for a
    /// prototype.
    pub body: Option<Range<usize>>,
    /// Byte offset of the `.entry` directive.
    pub offset: usize,
}

impl EntryRef<'_, '_> {
    /// The owned [`Entry`] with the same contents.
    pub fn to_owned(&self) -> Entry {
        Entry {
            name: self.name.to_owned(),
            linkage: self.linkage,
            params: self.params.iter().map(ParamRef::to_owned).collect(),
            directives: self.directives.iter().map(DirectiveRef::to_owned).collect(),
            body: self.body.clone(),
            offset: self.offset,
        }
    }
}

/// A borrowed view of one device function (`.func`) of a [`ModuleIndex`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionRef<'i, 'a> {
    /// The function name.
    pub name: &'a str,
    /// Its linkage.
    pub linkage: Linkage,
    /// The return parameter list; empty when the function returns nothing.
    pub returns: &'i [ParamRef<'a>],
    /// The parameter list, in order.
    pub params: &'i [ParamRef<'a>],
    /// Byte range of the body's contents, excluding the braces; `None` for a declaration.
    pub body: Option<Range<usize>>,
    /// Byte offset of the `.func` directive.
    pub offset: usize,
}

impl FunctionRef<'_, '_> {
    /// The owned [`Function`] with the same contents.
    pub fn to_owned(&self) -> Function {
        Function {
            name: self.name.to_owned(),
            linkage: self.linkage,
            returns: self.returns.iter().map(ParamRef::to_owned).collect(),
            params: self.params.iter().map(ParamRef::to_owned).collect(),
            body: self.body.clone(),
            offset: self.offset,
        }
    }
}

/// One `.param`, its name borrowed from the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamRef<'a> {
    /// The parameter name.
    pub name: &'a str,
    /// Element type (`.b8` for byte arrays).
    pub ty: ScalarType,
    /// `.align N` written before the type.
    pub align: Option<u32>,
    /// `N` of `name[N]`; `None` for a scalar, `Some(0)` for an unsized `name[]` too.
    pub array_len: Option<u32>,
    /// The `.ptr` attribute, if any.
    pub ptr: Option<PtrAttr>,
    /// Declared in the `.reg` space instead of `.param`.
    pub reg: bool,
    /// Byte offset of the `.param` directive.
    pub offset: usize,
}

impl ParamRef<'_> {
    /// Size in bytes: element size times array length (1 for a scalar).
    pub fn size_bytes(&self) -> u64 {
        u64::from(self.ty.bytes()) * u64::from(self.array_len.unwrap_or(1))
    }

    /// The owned [`Param`] with the same contents.
    pub fn to_owned(&self) -> Param {
        Param {
            name: self.name.to_owned(),
            ty: self.ty,
            align: self.align,
            array_len: self.array_len,
            ptr: self.ptr,
            reg: self.reg,
            offset: self.offset,
        }
    }
}

/// A performance directive stored without allocating (see [`PerfDirective`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DirectiveRef {
    /// `.maxntid x[, y[, z]]`.
    MaxNtid(Dims),
    /// `.reqntid x[, y[, z]]`.
    ReqNtid(Dims),
    /// `.minnctapersm n`.
    MinNctaPerSm(u32),
    /// `.maxnreg n`.
    MaxNreg(u32),
}

impl DirectiveRef {
    /// The owned [`PerfDirective`] with the same contents.
    pub fn to_owned(&self) -> PerfDirective {
        match self {
            Self::MaxNtid(dims) => PerfDirective::MaxNtid(dims.as_slice().to_vec()),
            Self::ReqNtid(dims) => PerfDirective::ReqNtid(dims.as_slice().to_vec()),
            Self::MinNctaPerSm(n) => PerfDirective::MinNctaPerSm(*n),
            Self::MaxNreg(n) => PerfDirective::MaxNreg(*n),
        }
    }
}

/// One to three thread-block dimensions, stored inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dims {
    values: [u32; 3],
    len: u8,
}

impl Dims {
    /// One dimension.
    pub(crate) fn new(x: u32) -> Self {
        Self {
            values: [x, 0, 0],
            len: 1,
        }
    }

    /// Appends a dimension; `false` (and no change) when three are already stored.
    pub(crate) fn push(&mut self, value: u32) -> bool {
        match self.values.get_mut(usize::from(self.len)) {
            Some(slot) => {
                *slot = value;
                self.len += 1;
                true
            }
            None => false,
        }
    }

    /// Number of dimensions written (1 to 3).
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Never true: a directive has at least one dimension.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The dimensions as written.
    pub fn as_slice(&self) -> &[u32] {
        self.values.get(..self.len()).unwrap_or_default()
    }
}
