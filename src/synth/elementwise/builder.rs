//! The PTX text builder the writer and the ops share: the compute type, register classes,
//! registers, and a body of instruction lines that declares the registers it used.

use std::fmt::{self, Write as _};

use crate::dtype::ElementKind;

/// The type arithmetic happens in: f32 for f32, f16 and bf16; f64 for f64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compute {
    F32,
    F64,
}

impl Compute {
    pub(crate) const fn ty(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F64 => "f64",
        }
    }

    pub(crate) const fn class(self) -> Class {
        match self {
            Self::F32 => Class::F32,
            Self::F64 => Class::F64,
        }
    }

    pub(crate) const fn kind(self) -> ElementKind {
        match self {
            Self::F32 => ElementKind::F32,
            Self::F64 => ElementKind::F64,
        }
    }

    /// A float immediate in PTX's exact hexadecimal spelling.
    pub(crate) fn imm(self, value: f64) -> String {
        match self {
            Self::F32 => format!("0f{:08X}", (value as f32).to_bits()),
            Self::F64 => format!("0d{:016X}", value.to_bits()),
        }
    }
}

/// A register class, one `.reg` declaration each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Pred,
    B16,
    B32,
    F32,
    F64,
    B64,
}

impl Class {
    const ALL: [Class; 6] = [
        Class::Pred,
        Class::B16,
        Class::B32,
        Class::F32,
        Class::F64,
        Class::B64,
    ];

    const fn index(self) -> usize {
        self as usize
    }

    const fn prefix(self) -> &'static str {
        match self {
            Class::Pred => "p",
            Class::B16 => "h",
            Class::B32 => "r",
            Class::F32 => "f",
            Class::F64 => "fd",
            Class::B64 => "rd",
        }
    }

    const fn decl(self) -> &'static str {
        match self {
            Class::Pred => ".pred",
            Class::B16 => ".b16",
            Class::B32 => ".b32",
            Class::F32 => ".f32",
            Class::F64 => ".f64",
            Class::B64 => ".b64",
        }
    }
}

/// A virtual register, numbered from 1 within its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reg {
    class: Class,
    n: u32,
}

impl Reg {
    /// Stands for an operand lowering guaranteed to exist. It prints as an undeclared register,
    /// so a lowering bug makes the PTX fail to assemble instead of computing on garbage.
    pub(crate) const NONE: Reg = Reg {
        class: Class::Pred,
        n: 0,
    };
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.n == 0 {
            return f.write_str("%none");
        }
        write!(f, "%{}{}", self.class.prefix(), self.n)
    }
}

/// A kernel body being written: instruction text plus the register count of each class.
#[derive(Debug)]
pub(crate) struct Body {
    pub(super) text: String,
    pub(super) counts: [u32; 6],
}

impl Body {
    pub(super) fn new() -> Self {
        Self {
            text: String::with_capacity(4096),
            counts: [0; 6],
        }
    }

    pub(crate) fn reg(&mut self, class: Class) -> Reg {
        let count = &mut self.counts[class.index()];
        *count += 1;
        Reg { class, n: *count }
    }

    /// One instruction; the `;` is added here.
    pub(crate) fn ins(&mut self, instruction: fmt::Arguments<'_>) {
        // Writing into a `String` cannot fail.
        let _ = writeln!(self.text, "\t{instruction};");
    }

    pub(crate) fn comment(&mut self, text: &str) {
        let _ = writeln!(self.text, "\t// {text}");
    }

    pub(super) fn label(&mut self, name: &str) {
        let _ = writeln!(self.text, "{name}:");
    }

    pub(super) fn blank(&mut self) {
        self.text.push('\n');
    }

    pub(super) fn declarations(&self) -> String {
        let mut out = String::new();
        for class in Class::ALL {
            let count = self.counts[class.index()];
            if count > 0 {
                let _ = writeln!(
                    out,
                    "\t.reg {} \t%{}<{}>;",
                    class.decl(),
                    class.prefix(),
                    count + 1
                );
            }
        }
        out
    }
}
