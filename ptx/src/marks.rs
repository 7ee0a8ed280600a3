//! Where the bytes that can end a block are: a bit mask of `{`, `}`, `/` and `"` over 64 bytes
//! at a time, so a skipper walks the marks of a whole window instead of searching once per mark.
//!
//! Real NVRTC bodies put a mark every few dozen bytes (vector operands in braces, inline-asm
//! blocks, `// begin inline asm`, `.pragma "nounroll";`), so the cost per mark matters as much as
//! the cost per byte: a search call per mark pays its setup every time, a mask pays a
//! `trailing_zeros`.

/// Bytes per window.
pub(crate) const WINDOW: usize = 64;

/// Bit `i` is set when `bytes[base + i]` is `{`, `}`, `/` or `"`; bits past the end of `bytes`
/// are clear.
#[inline(always)]
pub(crate) fn marks(bytes: &[u8], base: usize) -> u64 {
    match bytes.get(base..base + WINDOW) {
        Some(window) => full_window(window),
        None => partial_window(bytes.get(base..).unwrap_or_default()),
    }
}

/// [`marks`] with AVX2: two 32-byte compares per window instead of four 16-byte ones.
///
/// # Safety
/// The CPU must support AVX2; inline this only into a function compiled with it enabled.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn marks_avx2(bytes: &[u8], base: usize) -> u64 {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8,
    };

    let Some(window) = bytes.get(base..base + WINDOW) else {
        return partial_window(bytes.get(base..).unwrap_or_default());
    };
    let mut mask = 0u64;
    for (k, chunk) in window.chunks_exact(32).enumerate() {
        // SAFETY: the caller guarantees AVX2; `chunk` is 32 readable bytes (`chunks_exact(32)`),
        // and `_mm256_loadu_si256` reads exactly 32 bytes with no alignment requirement.
        let bits = unsafe {
            let v = _mm256_loadu_si256(chunk.as_ptr().cast::<__m256i>());
            let hit = |b: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b as i8));
            _mm256_movemask_epi8(_mm256_or_si256(
                _mm256_or_si256(hit(b'{'), hit(b'}')),
                _mm256_or_si256(hit(b'/'), hit(b'"')),
            ))
        };
        mask |= u64::from(bits as u32) << (32 * k);
    }
    mask
}

#[inline(always)]
fn is_mark(b: u8) -> bool {
    matches!(b, b'{' | b'}' | b'/' | b'"')
}

/// The marks of fewer than [`WINDOW`] bytes, one byte at a time (the end of the input only).
#[cold]
fn partial_window(tail: &[u8]) -> u64 {
    tail.iter()
        .take(WINDOW)
        .enumerate()
        .fold(0, |mask, (i, &b)| mask | (u64::from(is_mark(b)) << i))
}

/// The marks of exactly [`WINDOW`] bytes, with SSE2 (part of every x86-64 CPU).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn full_window(window: &[u8]) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    let mut mask = 0u64;
    for (k, chunk) in window.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of the x86-64 baseline, so every intrinsic here is available;
        // `chunk` is 16 readable bytes (`chunks_exact(16)`), and `_mm_loadu_si128` reads exactly
        // 16 bytes with no alignment requirement.
        let bits = unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
            let hit = |b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
            _mm_movemask_epi8(_mm_or_si128(
                _mm_or_si128(hit(b'{'), hit(b'}')),
                _mm_or_si128(hit(b'/'), hit(b'"')),
            ))
        };
        // `movemask` sets only the low 16 bits.
        mask |= u64::from(bits as u16) << (16 * k);
    }
    mask
}

/// The marks of exactly [`WINDOW`] bytes, portably, one byte at a time.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn full_window(window: &[u8]) -> u64 {
    window
        .iter()
        .enumerate()
        .fold(0, |mask, (i, &b)| mask | (u64::from(is_mark(b)) << i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(bytes: &[u8], base: usize) -> u64 {
        (0..WINDOW)
            .filter(|&i| bytes.get(base + i).is_some_and(|&b| is_mark(b)))
            .fold(0, |mask, i| mask | 1 << i)
    }

    #[test]
    fn every_byte_value_at_every_position() {
        let mut bytes: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        bytes.extend_from_slice(b"{}/\"x{");
        #[cfg(target_arch = "x86_64")]
        let avx2 = std::is_x86_feature_detected!("avx2");
        for base in 0..bytes.len() + 2 {
            assert_eq!(marks(&bytes, base), reference(&bytes, base), "at {base}");
            #[cfg(target_arch = "x86_64")]
            if avx2 {
                // SAFETY: the CPU supports AVX2 (detected above).
                let avx2_marks = unsafe { marks_avx2(&bytes, base) };
                assert_eq!(avx2_marks, reference(&bytes, base), "avx2 at {base}");
            }
        }
    }
}
