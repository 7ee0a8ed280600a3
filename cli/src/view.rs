//! `--view i:offset:shape:strides`: a strided window for operand `i` (inputs first, then
//! outputs) instead of the dense row-major array of `--shape`, and the backing buffer it needs.

use std::str::FromStr;

use jitseam::abi::MAX_RANK;

/// One `--view`: operand `operand`'s window, origin element `offset`, `shape` and signed element
/// `strides`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ViewSpec {
    pub(crate) operand: usize,
    pub(crate) offset: usize,
    pub(crate) shape: Vec<usize>,
    pub(crate) strides: Vec<isize>,
}

fn list<T: FromStr>(text: &str, what: &str) -> Result<Vec<T>, String>
where
    T::Err: std::fmt::Display,
{
    text.split(',')
        .map(|item| {
            item.trim()
                .parse()
                .map_err(|e| format!("{what} `{item}`: {e}"))
        })
        .collect()
}

impl FromStr for ViewSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let usage = || format!("`{text}` is not `i:offset:shape:strides` (e.g. `0:0:4,3:1,4`)");
        let mut parts = text.split(':');
        let (Some(operand), Some(offset), Some(shape), Some(strides), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(usage());
        };
        let operand = operand
            .trim()
            .parse()
            .map_err(|e| format!("{}: operand: {e}", usage()))?;
        let offset = offset
            .trim()
            .parse()
            .map_err(|e| format!("{}: offset: {e}", usage()))?;
        let shape: Vec<usize> = list(shape, "extent")?;
        let strides: Vec<isize> = list(strides, "stride")?;
        if shape.len() != strides.len() {
            return Err(format!(
                "view `{text}`: {} extents but {} strides",
                shape.len(),
                strides.len()
            ));
        }
        if shape.len() > MAX_RANK {
            return Err(format!(
                "view `{text}`: rank {} is more than {MAX_RANK}",
                shape.len()
            ));
        }
        Ok(Self {
            operand,
            offset,
            shape,
            strides,
        })
    }
}

impl ViewSpec {
    /// Elements the backing buffer needs: up to the highest element the view reaches (its
    /// offset when it reaches none). Refuses a view that reaches below element 0, and any
    /// arithmetic that overflows.
    pub(crate) fn buffer_len(&self) -> Result<usize, String> {
        let overflow = || format!("view of operand {}: its reach overflows", self.operand);
        let offset = i128::try_from(self.offset).map_err(|_| overflow())?;
        if self.shape.contains(&0) {
            return Ok(self.offset);
        }
        let (mut lowest, mut highest) = (offset, offset);
        for (&extent, &stride) in self.shape.iter().zip(&self.strides) {
            let span = i128::try_from(extent)
                .ok()
                .and_then(|e| (e - 1).checked_mul(i128::try_from(stride).ok()?))
                .ok_or_else(overflow)?;
            if span < 0 {
                lowest = lowest.checked_add(span).ok_or_else(overflow)?;
            } else {
                highest = highest.checked_add(span).ok_or_else(overflow)?;
            }
        }
        if lowest < 0 {
            return Err(format!(
                "view of operand {} reaches element {lowest}, before its buffer's start (raise its offset)",
                self.operand
            ));
        }
        highest
            .checked_add(1)
            .and_then(|len| usize::try_from(len).ok())
            .ok_or_else(overflow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(text: &str) -> ViewSpec {
        text.parse().unwrap()
    }

    #[test]
    fn parses_a_transposed_view_and_sizes_its_buffer() {
        let v = view("0:0:4,3:1,4");
        assert_eq!(
            v,
            ViewSpec {
                operand: 0,
                offset: 0,
                shape: vec![4, 3],
                strides: vec![1, 4],
            }
        );
        assert_eq!(v.buffer_len(), Ok(12));
        assert_eq!(view("2:5:3:-2").buffer_len(), Ok(6));
        assert_eq!(view("1:7:0,3:1,1").buffer_len(), Ok(7));
    }

    #[test]
    fn refuses_malformed_and_unsizable_views() {
        for bad in [
            "",
            "0:0:4",
            "0:0:4:1:9",
            "x:0:4:1",
            "0:-1:4:1",
            "0:0:4,3:1",
            "0:0:4:a",
        ] {
            assert!(bad.parse::<ViewSpec>().is_err(), "{bad}");
        }
        assert!(
            view("0:0:9,9,9,9,9,9,9,9:1,1,1,1,1,1,1,1")
                .buffer_len()
                .is_ok()
        );
        assert!(
            "0:0:1,1,1,1,1,1,1,1,1:1,1,1,1,1,1,1,1,1"
                .parse::<ViewSpec>()
                .is_err()
        );
        assert!(
            view("0:0:3:-1")
                .buffer_len()
                .unwrap_err()
                .contains("before")
        );
        let huge = format!("0:{}:2:{}", usize::MAX, isize::MAX);
        assert!(view(&huge).buffer_len().unwrap_err().contains("overflows"));
    }
}
