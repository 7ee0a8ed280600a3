//! Which ABI a kernel follows: sealed zero-sized markers for the typed face and [`AbiKind`] for
//! the runtime face.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The ABI of a kernel, known at run time.
///
/// Spelled `scalar`, `vectorized:W`, `strided:R` or `custom` in text (specs, the CLI, JSON).
///
#[doc = include_str!("../../docs/abi.md")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
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
    /// interleaved, launched with an explicit launch configuration (the spec's
    /// [`CustomAbi`](crate::abi::CustomAbi) says the rest).
    Custom,
}

impl AbiKind {
    /// Lanes per vector unit (1 for the scalar and strided ABIs).
    pub const fn width(self) -> usize {
        match self {
            Self::Vectorized { width } => width as usize,
            Self::Scalar | Self::Strided { .. } | Self::Custom => 1,
        }
    }

    /// Rank of the strided ABI, 0 for the others.
    pub const fn rank(self) -> usize {
        match self {
            Self::Strided { rank } => rank as usize,
            Self::Scalar | Self::Vectorized { .. } | Self::Custom => 0,
        }
    }
}

impl fmt::Display for AbiKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scalar => f.write_str("scalar"),
            Self::Vectorized { width } => write!(f, "vectorized:{width}"),
            Self::Strided { rank } => write!(f, "strided:{rank}"),
            Self::Custom => f.write_str("custom"),
        }
    }
}

impl FromStr for AbiKind {
    type Err = String;

    /// Parses the spelling of [`AbiKind`]'s `Display`; range checks are left to
    /// [`AbiSpec::validate`](crate::abi::AbiSpec::validate) so a bad width is reported with its
    /// reason rather than as a syntax error.
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
            "custom" if arg.is_none() => Ok(Self::Custom),
            "custom" => Err("`custom` takes no argument".to_owned()),
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

impl TryFrom<String> for AbiKind {
    type Error = String;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

impl From<AbiKind> for String {
    fn from(kind: AbiKind) -> Self {
        kind.to_string()
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
            AbiKind::Custom,
        ] {
            assert_eq!(kind.to_string().parse::<AbiKind>(), Ok(kind));
        }
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
}
