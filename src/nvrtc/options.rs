//! What to compile for and how: [`CompileOptions`] and its [`CompileTarget`].

use std::fmt;
use std::path::PathBuf;

use crate::error::Error;

/// The architecture NVRTC compiles for: `compute_XY` gives PTX only, `sm_XY` (or `sm_XYa`) PTX
/// and a cubin from the same program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CompileTarget {
    number: u32,
    real: bool,
    arch_specific: bool,
}

impl CompileTarget {
    /// `sm_XY`: PTX and a cubin.
    pub fn sm(number: u32) -> Self {
        Self {
            number,
            real: true,
            arch_specific: false,
        }
    }

    /// `compute_XY`: PTX only.
    pub fn compute(number: u32) -> Self {
        Self {
            number,
            real: false,
            arch_specific: false,
        }
    }

    /// Parses `sm_90`, `sm_90a`, `compute_80` or `compute_90a`.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let bad = || Error::CompileOptions {
            problem: format!(
                "`{text}` is not an architecture: expected sm_XY, sm_XYa or compute_XY"
            ),
        };
        let (real, rest) = if let Some(rest) = text.strip_prefix("sm_") {
            (true, rest)
        } else if let Some(rest) = text.strip_prefix("compute_") {
            (false, rest)
        } else {
            return Err(bad());
        };
        let (digits, arch_specific) = match rest.strip_suffix('a') {
            Some(digits) => (digits, true),
            None => (rest, false),
        };
        if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let number = digits.parse().map_err(|_| bad())?;
        Ok(Self {
            number,
            real,
            arch_specific,
        })
    }

    /// `major * 10 + minor`.
    pub fn number(self) -> u32 {
        self.number
    }

    /// Whether NVRTC also makes a cubin (`sm_XY`).
    pub fn makes_cubin(self) -> bool {
        self.real
    }
}

impl fmt::Display for CompileTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = if self.real { "sm" } else { "compute" };
        let suffix = if self.arch_specific { "a" } else { "" };
        write!(f, "{prefix}_{}{suffix}", self.number)
    }
}

/// Options for one NVRTC compile.
///
/// ```
/// use jitseam::nvrtc::{CompileOptions, CompileTarget};
/// let options = CompileOptions::new(CompileTarget::sm(90))
///     .include("/opt/cuda/include")
///     .define("TILE", "128")
///     .flag("--std=c++17");
/// assert_eq!(
///     options.to_args()?,
///     ["--gpu-architecture=sm_90", "--include-path=/opt/cuda/include", "--define-macro=TILE=128", "--std=c++17"]
/// );
/// # Ok::<(), jitseam::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// The architecture.
    pub target: CompileTarget,
    /// `--include-path` directories, in order.
    pub include_dirs: Vec<PathBuf>,
    /// `--define-macro` definitions: `NAME` or `NAME=VALUE`.
    pub defines: Vec<(String, Option<String>)>,
    /// `--use_fast_math`.
    pub fast_math: bool,
    /// Further NVRTC flags, passed last and verbatim.
    pub extra: Vec<String>,
    /// The program name NVRTC uses in its log (`kernel.cu` unless set).
    pub name: String,
}

impl CompileOptions {
    /// Options for `target`, with nothing else set.
    pub fn new(target: CompileTarget) -> Self {
        Self {
            target,
            include_dirs: Vec::new(),
            defines: Vec::new(),
            fast_math: false,
            extra: Vec::new(),
            name: "kernel.cu".to_owned(),
        }
    }

    /// Adds an include directory.
    pub fn include(mut self, dir: impl Into<PathBuf>) -> Self {
        self.include_dirs.push(dir.into());
        self
    }

    /// Defines `name` as `value`.
    pub fn define(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.defines.push((name.into(), Some(value.into())));
        self
    }

    /// Turns on `--use_fast_math`.
    pub fn fast_math(mut self) -> Self {
        self.fast_math = true;
        self
    }

    /// Adds a flag, passed verbatim after the others.
    pub fn flag(mut self, flag: impl Into<String>) -> Self {
        self.extra.push(flag.into());
        self
    }

    /// Names the program in NVRTC's log.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The NVRTC argument list, in order. Refuses what NVRTC cannot take as given: a path that
    /// is not UTF-8, an empty macro name, a NUL byte anywhere.
    pub fn to_args(&self) -> Result<Vec<String>, Error> {
        let mut args = vec![format!("--gpu-architecture={}", self.target)];
        for dir in &self.include_dirs {
            let dir = dir.to_str().ok_or_else(|| Error::CompileOptions {
                problem: format!("include path {} is not utf-8", dir.display()),
            })?;
            args.push(format!("--include-path={dir}"));
        }
        for (name, value) in &self.defines {
            if name.is_empty() || name.contains('=') {
                return Err(Error::CompileOptions {
                    problem: format!("`{name}` is not a macro name"),
                });
            }
            args.push(match value {
                Some(value) => format!("--define-macro={name}={value}"),
                None => format!("--define-macro={name}"),
            });
        }
        if self.fast_math {
            args.push("--use_fast_math".to_owned());
        }
        args.extend(self.extra.iter().cloned());
        if let Some(arg) = args.iter().find(|a| a.contains('\0')) {
            return Err(Error::CompileOptions {
                problem: format!("option `{}` holds a nul byte", arg.escape_debug()),
            });
        }
        Ok(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_print() {
        for text in ["sm_90", "sm_90a", "compute_80", "sm_100a", "compute_120"] {
            assert_eq!(CompileTarget::parse(text).unwrap().to_string(), text);
        }
        for bad in ["sm90", "sm_", "sm_9", "compute_x0", "sm_90b", "", "gfx90a"] {
            assert!(CompileTarget::parse(bad).is_err(), "{bad}");
        }
        assert!(CompileTarget::parse("sm_80").unwrap().makes_cubin());
        assert!(!CompileTarget::parse("compute_80").unwrap().makes_cubin());
    }

    #[test]
    fn args_refuse_what_nvrtc_cannot_take() {
        let base = CompileOptions::new(CompileTarget::compute(80));
        assert!(base.clone().define("", "1").to_args().is_err());
        assert!(base.clone().define("A=B", "1").to_args().is_err());
        assert!(base.clone().flag("-x\0y").to_args().is_err());
        let args = base.fast_math().flag("-lineinfo").to_args().unwrap();
        assert_eq!(
            args,
            [
                "--gpu-architecture=compute_80",
                "--use_fast_math",
                "-lineinfo"
            ]
        );
    }
}
