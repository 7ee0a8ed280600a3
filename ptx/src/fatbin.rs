//! Reading a fatbin: NVIDIA's container of cubins and PTX for several architectures, as
//! `nvcc -fatbin` or `fatbinary` make it.
//!
//! A fatbin is one or more containers back to back. Each container is a 16-byte header
//! (magic `0xBA55ED50`, version, header size, size of what follows) and then images, each with
//! its own header: kind (1 = PTX, 2 = cubin), header size, payload size, the architecture
//! (`sm_XY` as the number XY), the PTX ISA or ELF version, and flags (`0x1` 64-bit, `0x10`
//! Linux, `0x1000`/`0x2000` NVIDIA's LZ-style compression, `0x8000` zstd).
//!
//! Compressed images are listed with [`FatbinImage::compression`] set, but their payload is
//! declined ([`FatbinError::Compressed`]): jitseam does not implement NVIDIA's undocumented
//! compression, and an image it cannot read it cannot verify. `fatbinary --compress=false` (or
//! `nvcc -Xfatbin -compress-all=false`) makes uncompressed ones.
//!
//! [`Fatbin::select`] chooses the image for a device the way the driver would: a cubin for
//! exactly its architecture if one is wanted, else the PTX of the highest architecture not
//! above it (which the driver compiles for the device).
//!
//! Nothing here panics on any input; every failure is a [`FatbinError`].

use std::ops::Range;

/// The first four bytes of a fatbin container (little-endian `0xBA55ED50`).
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;

const CONTAINER_HEADER: usize = 16;
const IMAGE_HEADER_MIN: usize = 64;
const FLAG_COMPRESS_LZ: u64 = 0x1000;
const FLAG_COMPRESS_LZ4: u64 = 0x2000;
const FLAG_COMPRESS_ZSTD: u64 = 0x8000;

/// A parsed fatbin: its images, in file order. Payloads are byte ranges of the parsed slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fatbin {
    /// Every image of every container.
    pub images: Vec<FatbinImage>,
}

/// What an image holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageKind {
    /// PTX text for a virtual architecture.
    Ptx,
    /// A cubin (ELF) for one SM architecture.
    Cubin,
    /// A kind jitseam does not know.
    Other(u16),
}

impl std::fmt::Display for ImageKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Ptx => f.write_str("ptx"),
            Self::Cubin => f.write_str("cubin"),
            Self::Other(kind) => write!(f, "kind {kind}"),
        }
    }
}

/// How an image's payload is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// NVIDIA's LZ-style scheme (flag `0x1000` or `0x2000`).
    Lz,
    /// zstd (flag `0x8000`).
    Zstd,
}

/// One image of a fatbin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatbinImage {
    /// PTX, cubin or other.
    pub kind: ImageKind,
    /// The architecture as a number: 90 for `sm_90` / `compute_90`.
    pub sm: u32,
    /// `(major, minor)` from the image header: the PTX ISA version of a PTX image.
    pub version: (u16, u16),
    /// The raw flags.
    pub flags: u64,
    /// Set when the payload is compressed (and so not readable here).
    pub compression: Option<Compression>,
    /// The payload's byte range in the parsed slice (padding included for PTX: read it with
    /// [`FatbinImage::ptx_text`]).
    pub payload: Range<usize>,
}

impl FatbinImage {
    /// The payload bytes of an uncompressed image.
    pub fn payload<'a>(&self, fatbin: &'a [u8]) -> Result<&'a [u8], FatbinError> {
        if let Some(compression) = self.compression {
            return Err(FatbinError::Compressed {
                kind: self.kind,
                sm: self.sm,
                compression,
            });
        }
        fatbin
            .get(self.payload.clone())
            .ok_or(FatbinError::Truncated {
                offset: self.payload.start,
                what: "image payload",
            })
    }

    /// The PTX text of an uncompressed PTX image, without the NUL padding.
    pub fn ptx_text<'a>(&self, fatbin: &'a [u8]) -> Result<&'a str, FatbinError> {
        let bytes = self.payload(fatbin)?;
        let end = memchr::memchr(0, bytes).unwrap_or(bytes.len());
        let bytes = bytes.get(..end).unwrap_or(bytes);
        std::str::from_utf8(bytes).map_err(|e| FatbinError::PtxNotUtf8 {
            sm: self.sm,
            valid_up_to: e.valid_up_to(),
        })
    }

    /// `sm_90` for a cubin, `compute_80` for PTX.
    pub fn arch_name(&self) -> String {
        match self.kind {
            ImageKind::Ptx => format!("compute_{}", self.sm),
            _ => format!("sm_{}", self.sm),
        }
    }
}

impl Fatbin {
    /// The image to run on a device of SM number `device_sm`: a cubin for exactly that
    /// architecture when `allow_cubin`, else the PTX image of the highest architecture not above
    /// it. Compressed images are never chosen (they cannot be read, so they cannot be checked).
    pub fn select(&self, device_sm: u32, allow_cubin: bool) -> Option<&FatbinImage> {
        let readable = || self.images.iter().filter(|i| i.compression.is_none());
        let cubin = readable().find(|i| i.kind == ImageKind::Cubin && i.sm == device_sm);
        cubin.filter(|_| allow_cubin).or_else(|| {
            readable()
                .filter(|i| i.kind == ImageKind::Ptx && i.sm <= device_sm)
                .max_by_key(|i| i.sm)
        })
    }

    /// The PTX images, in file order.
    pub fn ptx_images(&self) -> impl Iterator<Item = &FatbinImage> {
        self.images.iter().filter(|i| i.kind == ImageKind::Ptx)
    }

    /// The cubin images, in file order.
    pub fn cubin_images(&self) -> impl Iterator<Item = &FatbinImage> {
        self.images.iter().filter(|i| i.kind == ImageKind::Cubin)
    }
}

/// Why a byte string is not a fatbin jitseam can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FatbinError {
    /// The data does not start with the fatbin magic.
    #[error("not a fatbin: the first bytes are not the magic 0xba55ed50")]
    NotFatbin,
    /// A header or payload runs past the end of the data.
    #[error("truncated fatbin: the {what} at byte {offset} runs past the end")]
    Truncated {
        /// Byte offset of the header or payload.
        offset: usize,
        /// Which structure.
        what: &'static str,
    },
    /// A header field holds an impossible value.
    #[error("malformed fatbin at byte {offset}: {problem}")]
    Malformed {
        /// Byte offset of the header.
        offset: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// The image's payload is compressed.
    #[error(
        "the {kind} image for {sm} is {compression:?}-compressed, which jitseam cannot read; make the fatbin with compression off"
    )]
    Compressed {
        /// The image's kind.
        kind: ImageKind,
        /// Its architecture number.
        sm: u32,
        /// How it is compressed.
        compression: Compression,
    },
    /// A PTX image that is not UTF-8.
    #[error("the ptx image for compute_{sm} is not utf-8 (invalid byte at {valid_up_to})")]
    PtxNotUtf8 {
        /// Its architecture number.
        sm: u32,
        /// Length of the valid prefix.
        valid_up_to: usize,
    },
}

fn read<const N: usize>(data: &[u8], at: usize) -> Option<[u8; N]> {
    let mut out = [0u8; N];
    out.copy_from_slice(data.get(at..at.checked_add(N)?)?);
    Some(out)
}

fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    read::<2>(data, at).map(u16::from_le_bytes)
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    read::<4>(data, at).map(u32::from_le_bytes)
}

fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    read::<8>(data, at).map(u64::from_le_bytes)
}

/// Whether `data` starts like a fatbin.
pub fn is_fatbin(data: &[u8]) -> bool {
    u32_at(data, 0) == Some(FATBIN_MAGIC)
}

/// Parses every container and image of a fatbin. See the [module docs](self).
pub fn parse_fatbin(data: &[u8]) -> Result<Fatbin, FatbinError> {
    if !is_fatbin(data) {
        return Err(FatbinError::NotFatbin);
    }
    let mut images = Vec::new();
    let mut at = 0usize;
    // Containers may be padded to 8 bytes between each other; trailing zero padding ends it.
    while at < data.len()
        && data
            .get(at..)
            .is_some_and(|rest| rest.iter().any(|&b| b != 0))
    {
        let truncated = FatbinError::Truncated {
            offset: at,
            what: "container header",
        };
        if u32_at(data, at) != Some(FATBIN_MAGIC) {
            return Err(FatbinError::Malformed {
                offset: at,
                problem: "expected another container's magic",
            });
        }
        let header_size = usize::from(u16_at(data, at + 6).ok_or(truncated.clone())?);
        let body_size = u64_at(data, at + 8).ok_or(truncated)?;
        if header_size < CONTAINER_HEADER {
            return Err(FatbinError::Malformed {
                offset: at,
                problem: "container header shorter than 16 bytes",
            });
        }
        let body_start = at + header_size;
        let body_end = usize::try_from(body_size)
            .ok()
            .and_then(|size| body_start.checked_add(size))
            .filter(|&end| end <= data.len())
            .ok_or(FatbinError::Truncated {
                offset: at,
                what: "container",
            })?;
        let mut image_at = body_start;
        while image_at < body_end {
            let (image, next) = parse_image(data, image_at, body_end)?;
            images.push(image);
            image_at = next;
        }
        at = body_end;
    }
    Ok(Fatbin { images })
}

fn parse_image(data: &[u8], at: usize, end: usize) -> Result<(FatbinImage, usize), FatbinError> {
    let truncated = FatbinError::Truncated {
        offset: at,
        what: "image header",
    };
    let header = data.get(at..end).ok_or(truncated.clone())?;
    if header.len() < IMAGE_HEADER_MIN {
        return Err(truncated);
    }
    let field16 = |o| u16_at(header, o).unwrap_or(0);
    let field32 = |o| u32_at(header, o).unwrap_or(0);
    let kind = match field16(0) {
        1 => ImageKind::Ptx,
        2 => ImageKind::Cubin,
        other => ImageKind::Other(other),
    };
    let header_size = field32(4) as usize;
    let payload_size = u64_at(header, 8).unwrap_or(0);
    if header_size < IMAGE_HEADER_MIN {
        return Err(FatbinError::Malformed {
            offset: at,
            problem: "image header shorter than 64 bytes",
        });
    }
    let payload_start = at.checked_add(header_size).ok_or(truncated.clone())?;
    let payload_end = usize::try_from(payload_size)
        .ok()
        .and_then(|size| payload_start.checked_add(size))
        .filter(|&e| e <= end)
        .ok_or(FatbinError::Truncated {
            offset: at,
            what: "image payload",
        })?;
    let flags = u64_at(header, 40).unwrap_or(0);
    let compression = if flags & FLAG_COMPRESS_ZSTD != 0 {
        Some(Compression::Zstd)
    } else if flags & (FLAG_COMPRESS_LZ | FLAG_COMPRESS_LZ4) != 0 {
        Some(Compression::Lz)
    } else {
        None
    };
    let image = FatbinImage {
        kind,
        sm: field32(28),
        version: (field16(26), field16(24)),
        flags,
        compression,
        payload: payload_start..payload_end,
    };
    Ok((image, payload_end))
}
