//! Which ABI a kernel follows: [`AbiKind`] for the runtime face, with the custom ABI's parameter
//! table inside it, and sealed zero-sized markers for the typed face.

use std::fmt;
use std::str::FromStr;

use crate::{CustomAbi, ElementKind, SpecProblem};

/// Largest rank of the strided ABI.
pub const MAX_RANK: usize = 8;

/// The lane counts of the vectorized ABI.
pub const VECTOR_WIDTHS: [u8; 3] = [2, 4, 8];

/// Most bytes one vector of the vectorized ABI may span (`W · size_of(T)`): the widest load a
/// thread can issue.
pub const MAX_VECTOR_BYTES: usize = 16;

/// The ABI of a kernel, known at run time.
///
/// Spelled `scalar`, `vectorized:W`, `strided:R` or `custom` in text (specs, the CLI, JSON); a
/// custom kernel's parameter table travels beside that word (see [`AbiSpec`](crate::AbiSpec)).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AbiKind {
    /// One element per index; `n` counts elements.
    Scalar,
    /// Each pointer is read as `width`-lane vectors; the count is in vectors.
    Vectorized {
        /// Lanes per vector: 2, 4 or 8.
        width: u8,
    },
    /// Shapes and signed element strides travel by value; `n` is the product of the shape.
    Strided {
        /// Number of axes: 1 to 8.
        rank: u8,
    },
    /// The kernel's own parameter order: pointers with declared extents and by-value params
    /// interleaved, launched with an explicit launch configuration. The table says which.
    Custom(CustomAbi),
}

impl AbiKind {
    /// Lanes per vector unit (1 for the scalar, strided and custom ABIs).
    pub const fn width(&self) -> usize {
        match self {
            Self::Vectorized { width } => *width as usize,
            Self::Scalar | Self::Strided { .. } | Self::Custom(_) => 1,
        }
    }

    /// Rank of the strided ABI, 0 for the others.
    pub const fn rank(&self) -> usize {
        match self {
            Self::Strided { rank } => *rank as usize,
            Self::Scalar | Self::Vectorized { .. } | Self::Custom(_) => 0,
        }
    }

    /// The custom ABI's parameter table, for a custom kernel.
    pub const fn custom(&self) -> Option<&CustomAbi> {
        match self {
            Self::Custom(custom) => Some(custom),
            Self::Scalar | Self::Vectorized { .. } | Self::Strided { .. } => None,
        }
    }

    /// Whether this is the custom ABI.
    pub const fn is_custom(&self) -> bool {
        matches!(self, Self::Custom(_))
    }

    /// The ABI's word: `scalar`, `vectorized`, `strided` or `custom`.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Scalar => "scalar",
            Self::Vectorized { .. } => "vectorized",
            Self::Strided { .. } => "strided",
            Self::Custom(_) => "custom",
        }
    }

    /// Refuses an ABI no kernel can have: a vector width other than 2, 4 or 8, a rank outside
    /// 1..=[`MAX_RANK`], or a malformed custom table.
    pub fn validate(&self) -> Result<(), SpecProblem> {
        match self {
            Self::Scalar => Ok(()),
            Self::Vectorized { width } if VECTOR_WIDTHS.contains(width) => Ok(()),
            Self::Vectorized { width } => Err(SpecProblem::VectorWidth { width: *width }),
            Self::Strided { rank } if (1..=MAX_RANK).contains(&usize::from(*rank)) => Ok(()),
            Self::Strided { rank } => Err(SpecProblem::Rank { rank: *rank }),
            Self::Custom(custom) => custom
                .validate()
                .map_err(|reason| SpecProblem::Custom { reason }),
        }
    }

    /// Refuses an operand of element type `dtype` this ABI cannot move: under the vectorized
    /// ABI, a vector of more than [`MAX_VECTOR_BYTES`].
    pub fn validate_operand(&self, dtype: ElementKind) -> Result<(), SpecProblem> {
        let Self::Vectorized { width } = *self else {
            return Ok(());
        };
        let bytes = usize::from(width) * dtype.size();
        if bytes > MAX_VECTOR_BYTES {
            return Err(SpecProblem::VectorTooWide {
                width,
                dtype,
                bytes,
            });
        }
        Ok(())
    }
}

impl fmt::Display for AbiKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Vectorized { width } => write!(f, "vectorized:{width}"),
            Self::Strided { rank } => write!(f, "strided:{rank}"),
            Self::Scalar | Self::Custom(_) => f.write_str(self.name()),
        }
    }
}

impl FromStr for AbiKind {
    type Err = String;

    /// Parses the spelling of [`AbiKind`]'s `Display` for the scalar, vectorized and strided
    /// ABIs; range checks are left to [`AbiKind::validate`] so a bad width is reported with its
    /// reason rather than as a syntax error. `custom` alone names no kernel: a custom ABI is its
    /// parameter table ([`CustomAbi::parse`]).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (name, arg) = match text.split_once(':') {
            Some((name, arg)) => (name, Some(arg)),
            None => (text, None),
        };
        let number = |what: &str| -> Result<u8, String> {
            let arg = arg.ok_or_else(|| format!("`{name}` needs a {what}, as in `{name}:4`"))?;
            arg.parse::<u8>()
                .map_err(|_| format!("`{arg}` is not a valid {what} for `{name}`"))
        };
        match name {
            "scalar" if arg.is_none() => Ok(Self::Scalar),
            "scalar" => Err("`scalar` takes no argument".to_owned()),
            "custom" => Err(
                "a `custom` abi is its parameter table: give its signature, as in `out: out f32[n], n: u32`"
                    .to_owned(),
            ),
            "vectorized" => Ok(Self::Vectorized {
                width: number("width")?,
            }),
            "strided" => Ok(Self::Strided {
                rank: number("rank")?,
            }),
            other => Err(format!(
                "unknown abi `{other}`: expected scalar, vectorized:W, strided:R or custom"
            )),
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// An ABI known at compile time. Implemented only for the valid markers, so `Vectorized<3>` or
/// `Strided<9>` is not an `Abi` at all.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid kernel ABI",
    note = "valid ABIs: Scalar, Vectorized<2|4|8>, Strided<1..=8>"
)]
pub trait Abi: sealed::Sealed + 'static {
    /// The runtime spelling of this ABI.
    const KIND: AbiKind;
}

/// The scalar ABI marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Scalar;

/// The vectorized ABI marker, `W` lanes per vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Vectorized<const W: usize>;

/// The strided ABI marker, rank `R`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Strided<const R: usize>;

impl sealed::Sealed for Scalar {}
impl Abi for Scalar {
    const KIND: AbiKind = AbiKind::Scalar;
}

macro_rules! impl_abi {
    ($marker:ident, $field:ident: $($n:literal)*) => {$(
        impl sealed::Sealed for $marker<$n> {}
        impl Abi for $marker<$n> {
            const KIND: AbiKind = AbiKind::$marker { $field: $n };
        }
    )*};
}

impl_abi!(Vectorized, width: 2 4 8);
impl_abi!(Strided, rank: 1 2 3 4 5 6 7 8);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelling_round_trips() {
        for kind in [
            AbiKind::Scalar,
            AbiKind::Vectorized { width: 4 },
            AbiKind::Strided { rank: 3 },
        ] {
            assert_eq!(kind.to_string().parse::<AbiKind>(), Ok(kind));
        }
        // A custom ABI is spelled `custom`, but the word alone is not one: its table is the ABI.
        let custom = CustomAbi::parse("out: out f32[n], n: u32", None).map(AbiKind::Custom);
        assert_eq!(custom.map(|k| k.to_string()).as_deref(), Ok("custom"));
        assert!(
            "custom"
                .parse::<AbiKind>()
                .is_err_and(|e| e.contains("parameter table"))
        );
    }

    #[test]
    fn bad_spellings_are_refused_with_a_reason() {
        assert!(
            "vectorized"
                .parse::<AbiKind>()
                .is_err_and(|e| e.contains("width"))
        );
        assert!(
            "strided:x"
                .parse::<AbiKind>()
                .is_err_and(|e| e.contains("rank"))
        );
        assert!("scalar:1".parse::<AbiKind>().is_err());
        assert!(
            "tiled"
                .parse::<AbiKind>()
                .is_err_and(|e| e.contains("unknown abi"))
        );
    }

    #[test]
    fn markers_spell_their_kind() {
        assert_eq!(<Vectorized<8> as Abi>::KIND.width(), 8);
        assert_eq!(<Strided<5> as Abi>::KIND.rank(), 5);
        assert_eq!(<Scalar as Abi>::KIND, AbiKind::Scalar);
    }

    #[test]
    fn validate_states_each_limit() {
        for width in 0..=u8::MAX {
            let valid = AbiKind::Vectorized { width }.validate().is_ok();
            assert_eq!(valid, matches!(width, 2 | 4 | 8), "width {width}");
        }
        for rank in 0..=u8::MAX {
            let valid = AbiKind::Strided { rank }.validate().is_ok();
            assert_eq!(valid, (1..=8).contains(&rank), "rank {rank}");
        }
        let v4 = AbiKind::Vectorized { width: 4 };
        assert_eq!(v4.validate_operand(ElementKind::F32), Ok(()));
        assert_eq!(
            v4.validate_operand(ElementKind::F64),
            Err(SpecProblem::VectorTooWide {
                width: 4,
                dtype: ElementKind::F64,
                bytes: 32
            })
        );
        assert_eq!(AbiKind::Scalar.validate_operand(ElementKind::F64), Ok(()));
    }
}
