//! Byte offset → (line, column) conversion, for diagnostics only.
//!
//! Tokens carry byte offsets; positions are derived here when an error is reported, so the hot
//! lexing path never counts lines.

/// Converts byte offsets to 1-based (line, column) pairs. Columns count characters, so a tab or
/// a multi-byte character is one column.
///
/// Build one when many positions are needed (an interpreter reporting several diagnostics); for a
/// single error, [`line_col`] avoids the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes the line starts of `src`.
    pub fn new(src: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', src.as_bytes()).map(|i| i + 1));
        Self { line_starts }
    }

    /// The 1-based line of `offset` (offsets past the last line start are on the last line).
    pub fn line(&self, offset: usize) -> u32 {
        saturate(
            self.line_starts
                .partition_point(|&start| start <= offset)
                .max(1),
        )
    }

    /// The text of 1-based `line` of `src` (the text this index was built from), without its
    /// line break; empty past the last line.
    pub fn line_text<'s>(&self, src: &'s str, line: u32) -> &'s str {
        let i = (line as usize).saturating_sub(1);
        let Some(&start) = self.line_starts.get(i) else {
            return "";
        };
        let end = self.line_starts.get(i + 1).copied().unwrap_or(src.len());
        src.get(start..end).unwrap_or("")
    }

    /// The 1-based (line, column) of `offset` in `src` (the text this index was built from).
    /// Offsets past the end are clamped to the end.
    pub fn line_col(&self, src: &str, offset: usize) -> (u32, u32) {
        let offset = offset.min(src.len());
        let line = self
            .line_starts
            .partition_point(|&start| start <= offset)
            .max(1);
        let line_start = self.line_starts.get(line - 1).copied().unwrap_or(0);
        (saturate(line), column(src, line_start, offset))
    }
}

/// The 1-based (line, column) of byte `offset` in `src`, without building an index.
pub fn line_col(src: &str, offset: usize) -> (u32, u32) {
    let offset = offset.min(src.len());
    let before = src.as_bytes().get(..offset).unwrap_or_default();
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    (saturate(line), column(src, line_start, offset))
}

fn column(src: &str, line_start: usize, offset: usize) -> u32 {
    let text = src.as_bytes().get(line_start..offset).unwrap_or_default();
    // Counting non-continuation bytes counts characters even when `offset` is mid-character.
    let chars = text.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
    saturate(chars + 1)
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
