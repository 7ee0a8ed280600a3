//! `jitseam run FILE.ptx --entry NAME --abi … --inputs … --outputs … [--params …] --shape …`:
//! runs a kernel on the emulator (or the best available device) through the checked launch path.
//!
//! File format: raw little-endian element arrays, row-major, no header (what
//! `numpy.ndarray.tofile` writes, and `numpy.fromfile(path, dtype)` reads back). Every operand is
//! a dense row-major array of `--shape`, unless a `--view i:offset:shape:strides` gives operand
//! `i` (inputs first, then outputs) a strided window: its buffer (and file) then holds every
//! element up to the highest the window reaches. Inputs come from `--input-file` (one per input,
//! in order) or are generated with `--fill iota|random`; outputs go to `--output-dir` as
//! `out0.bin`, `out1.bin`, … (each output's whole buffer).
//!
//! A custom-abi kernel (`--signature`) launches with `--grid X[,Y[,Z]] --block X[,Y[,Z]]` and
//! `--smem BYTES`, or, if it `--covers` a count, one thread per element; each pointer's buffer
//! holds exactly its declared extent for the given params and geometry.
//!
//! Every size the command line implies is computed with checked arithmetic and bounded by
//! `--max-host-bytes` before anything is read or allocated. On the emulator, a launch ends at
//! its budget of steps (`--budget`, by default scaled with its threads) or its deadline
//! (`--timeout SECONDS`), whichever comes first, with an error naming the line it was at.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use half::{bf16, f16};
use jitseam::abi::{CustomKind, ExtentEnv};
use jitseam::device::{Arg, ArgMut, EmulatorConfig};
use jitseam::{
    AbiKind, Artifact, Device, DeviceBuffer, Element, ElementKind, Kernel, LaunchConfig,
};
use jitseam::{Erased, ParamValue};

use crate::kernel_args::KernelArgs;
use crate::view::ViewSpec;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    kernel: KernelArgs,
    /// Runtime param values, comma-separated, one per `--params` dtype.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "",
        allow_hyphen_values = true
    )]
    values: Vec<String>,
    /// The launch shape: `N` elements for scalar and vectorized kernels, `D0,D1,…` for strided.
    #[arg(long, value_delimiter = ',', required_unless_present = "signature")]
    shape: Vec<usize>,
    /// Custom abi: blocks per grid, `X[,Y[,Z]]` (with `--block`).
    #[arg(long, value_delimiter = ',', requires = "block")]
    grid: Vec<u32>,
    /// Custom abi: threads per block, `X[,Y[,Z]]` (with `--grid`).
    #[arg(long, value_delimiter = ',', requires = "grid")]
    block: Vec<u32>,
    /// Custom abi: bytes of dynamic shared memory per block.
    #[arg(long, default_value_t = 0)]
    smem: u32,
    /// Raw little-endian input files, one per input, in order.
    #[arg(long = "input-file")]
    input_files: Vec<PathBuf>,
    /// How to generate inputs without files: `iota` (0, 1, 2, …) or `random` (fixed seed).
    #[arg(long, default_value = "iota")]
    fill: String,
    /// Where to write `out0.bin`, `out1.bin`, ….
    #[arg(long, default_value = ".")]
    output_dir: PathBuf,
    /// A strided window for operand I (inputs first, then outputs): origin element OFFSET,
    /// SHAPE and signed element STRIDES, comma-separated (`--view 0:0:4,3:1,4` reads a 3 × 4
    /// row-major input transposed). Repeat for other operands.
    #[arg(
        long = "view",
        value_name = "I:OFFSET:SHAPE:STRIDES",
        allow_hyphen_values = true
    )]
    views: Vec<ViewSpec>,
    /// Run on the best available device (CUDA if present) instead of the emulator.
    #[arg(long, conflicts_with = "unverified")]
    best: bool,
    /// For debugging: load without the body proof (`Kernel::load_unverified`) and run on the
    /// emulator, whose memory checker then catches what the body verifier would refuse (a
    /// store into an input, an access outside the operands). Emulator only.
    #[arg(long)]
    unverified: bool,
    /// Most host memory the operands may take, in bytes, all inputs and outputs together (a
    /// larger shape is refused before anything is allocated).
    #[arg(long, default_value_t = 4 << 30)]
    max_host_bytes: u64,
    /// Emulator: the most steps the launch may run (one step: one instruction of one group of
    /// up to 64 threads, or the work of starting a group or block); by default it scales with
    /// the launch's threads, so that a kernel that never ends stops within seconds.
    #[arg(long, conflicts_with = "best")]
    budget: Option<u64>,
    /// Emulator: the most seconds the launch may run (e.g. `2.5`); past them it ends with an
    /// error naming the line it was at.
    #[arg(long, conflicts_with = "best", value_parser = seconds)]
    timeout: Option<Duration>,
}

/// `--timeout`: a non-negative, finite number of seconds.
fn seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("`{text}` is not a number of seconds"))
}

/// The device the launch runs on, and how it was chosen: the best available with `--best`, else
/// the emulator with `--budget` and `--timeout`.
fn device(args: &Args) -> (Device, String) {
    if args.best {
        let choice = Device::best_available();
        return (choice.device, choice.reason);
    }
    let config = EmulatorConfig {
        budget: args.budget,
        timeout: args.timeout,
        ..EmulatorConfig::default()
    };
    (Device::emulator_with(config), "emulator".to_owned())
}

/// Bytes of `count` elements of `kind`, refused past `limit` (or past what `usize` holds) so that
/// no size from the command line can overflow, or ask the allocator for more than was allowed.
fn host_bytes(count: usize, kind: ElementKind, limit: u64) -> Result<usize, String> {
    count
        .checked_mul(kind.size())
        .filter(|&bytes| bytes as u64 <= limit)
        .ok_or_else(|| {
            format!(
                "{count} elements of {kind} take more than the {limit} host bytes allowed \
                 (--max-host-bytes)"
            )
        })
}

/// A device buffer of any element type.
enum AnyBuffer {
    F32(DeviceBuffer<f32>),
    F64(DeviceBuffer<f64>),
    F16(DeviceBuffer<f16>),
    BF16(DeviceBuffer<bf16>),
    I8(DeviceBuffer<i8>),
    U8(DeviceBuffer<u8>),
    I16(DeviceBuffer<i16>),
    U16(DeviceBuffer<u16>),
    I32(DeviceBuffer<i32>),
    I64(DeviceBuffer<i64>),
    U32(DeviceBuffer<u32>),
    U64(DeviceBuffer<u64>),
}

macro_rules! each_kind {
    ($value:expr, $b:ident => $body:expr) => {
        match $value {
            AnyBuffer::F32($b) => $body,
            AnyBuffer::F64($b) => $body,
            AnyBuffer::F16($b) => $body,
            AnyBuffer::BF16($b) => $body,
            AnyBuffer::I8($b) => $body,
            AnyBuffer::U8($b) => $body,
            AnyBuffer::I16($b) => $body,
            AnyBuffer::U16($b) => $body,
            AnyBuffer::I32($b) => $body,
            AnyBuffer::I64($b) => $body,
            AnyBuffer::U32($b) => $body,
            AnyBuffer::U64($b) => $body,
        }
    };
}

fn decode<T: Element>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(T::KIND.size())
        .filter_map(T::read_le)
        .collect()
}

impl AnyBuffer {
    fn upload(device: &Device, kind: ElementKind, bytes: &[u8]) -> Result<Self, jitseam::Error> {
        Ok(match kind {
            ElementKind::F32 => Self::F32(device.upload(&decode::<f32>(bytes))?),
            ElementKind::F64 => Self::F64(device.upload(&decode::<f64>(bytes))?),
            ElementKind::F16 => Self::F16(device.upload(&decode::<f16>(bytes))?),
            ElementKind::BF16 => Self::BF16(device.upload(&decode::<bf16>(bytes))?),
            ElementKind::I8 => Self::I8(device.upload(&decode::<i8>(bytes))?),
            ElementKind::U8 => Self::U8(device.upload(&decode::<u8>(bytes))?),
            ElementKind::I16 => Self::I16(device.upload(&decode::<i16>(bytes))?),
            ElementKind::U16 => Self::U16(device.upload(&decode::<u16>(bytes))?),
            ElementKind::I32 => Self::I32(device.upload(&decode::<i32>(bytes))?),
            ElementKind::I64 => Self::I64(device.upload(&decode::<i64>(bytes))?),
            ElementKind::U32 => Self::U32(device.upload(&decode::<u32>(bytes))?),
            ElementKind::U64 => Self::U64(device.upload(&decode::<u64>(bytes))?),
        })
    }

    fn read(&self, device: &Device) -> Result<Vec<u8>, jitseam::Error> {
        let stream = device.default_stream();
        let mut bytes = Vec::new();
        each_kind!(self, b => {
            for v in stream.read(b)? {
                v.write_le(&mut bytes);
            }
        });
        Ok(bytes)
    }

    fn preview(&self, device: &Device) -> Result<String, jitseam::Error> {
        let stream = device.default_stream();
        Ok(each_kind!(self, b => {
            let values = stream.read(b)?;
            let shown: Vec<String> = values.iter().take(6).map(|v| format!("{v:?}")).collect();
            let more = if values.len() > 6 { ", …" } else { "" };
            format!("[{}{more}]", shown.join(", "))
        }))
    }
}

/// Bytes of `count` generated elements of `kind`.
fn generate(kind: ElementKind, count: usize, fill: &str, seed: u64) -> Result<Vec<u8>, String> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut bytes = Vec::with_capacity(count.saturating_mul(kind.size()));
    for i in 0..count {
        let x = match fill {
            "iota" => i as f64,
            "random" if kind.is_float() => next() * 2.0 - 1.0,
            "random" => (next() * 100.0).floor(),
            other => return Err(format!("unknown --fill `{other}` (iota or random)")),
        };
        let value = number(kind, x);
        value.write_to(&mut bytes);
    }
    Ok(bytes)
}

/// A number of `kind` nearest to `x` (wrapping for integers).
fn number(kind: ElementKind, x: f64) -> ParamValue {
    match kind {
        ElementKind::F32 => ParamValue::F32(x as f32),
        ElementKind::F64 => ParamValue::F64(x),
        ElementKind::F16 => ParamValue::F16(f16::from_f64(x)),
        ElementKind::BF16 => ParamValue::BF16(bf16::from_f64(x)),
        ElementKind::I8 => ParamValue::I8(x as i64 as i8),
        ElementKind::U8 => ParamValue::U8(x as u64 as u8),
        ElementKind::I16 => ParamValue::I16(x as i64 as i16),
        ElementKind::U16 => ParamValue::U16(x as u64 as u16),
        ElementKind::I32 => ParamValue::I32(x as i64 as i32),
        ElementKind::I64 => ParamValue::I64(x as i64),
        ElementKind::U32 => ParamValue::U32(x as u64 as u32),
        ElementKind::U64 => ParamValue::U64(x as u64),
    }
}

trait WriteTo {
    fn write_to(&self, out: &mut Vec<u8>);
}

impl WriteTo for ParamValue {
    fn write_to(&self, out: &mut Vec<u8>) {
        match *self {
            ParamValue::F32(v) => v.write_le(out),
            ParamValue::F64(v) => v.write_le(out),
            ParamValue::F16(v) => v.write_le(out),
            ParamValue::BF16(v) => v.write_le(out),
            ParamValue::I8(v) => v.write_le(out),
            ParamValue::U8(v) => v.write_le(out),
            ParamValue::I16(v) => v.write_le(out),
            ParamValue::U16(v) => v.write_le(out),
            ParamValue::I32(v) => v.write_le(out),
            ParamValue::I64(v) => v.write_le(out),
            ParamValue::U32(v) => v.write_le(out),
            ParamValue::U64(v) => v.write_le(out),
        }
    }
}

/// Parses a runtime param value of exactly `kind` (never converted from another type).
fn param_value(kind: ElementKind, text: &str) -> Result<ParamValue, String> {
    let bad = |e: &dyn std::fmt::Display| format!("param `{text}` is not a valid {kind}: {e}");
    Ok(match kind {
        ElementKind::F32 => ParamValue::F32(text.parse().map_err(|e| bad(&e))?),
        ElementKind::F64 => ParamValue::F64(text.parse().map_err(|e| bad(&e))?),
        ElementKind::F16 => ParamValue::F16(f16::from_f64(text.parse().map_err(|e| bad(&e))?)),
        ElementKind::BF16 => ParamValue::BF16(bf16::from_f64(text.parse().map_err(|e| bad(&e))?)),
        ElementKind::I8 => ParamValue::I8(text.parse().map_err(|e| bad(&e))?),
        ElementKind::U8 => ParamValue::U8(text.parse().map_err(|e| bad(&e))?),
        ElementKind::I16 => ParamValue::I16(text.parse().map_err(|e| bad(&e))?),
        ElementKind::U16 => ParamValue::U16(text.parse().map_err(|e| bad(&e))?),
        ElementKind::I32 => ParamValue::I32(text.parse().map_err(|e| bad(&e))?),
        ElementKind::I64 => ParamValue::I64(text.parse().map_err(|e| bad(&e))?),
        ElementKind::U32 => ParamValue::U32(text.parse().map_err(|e| bad(&e))?),
        ElementKind::U64 => ParamValue::U64(text.parse().map_err(|e| bad(&e))?),
    })
}

fn read_input(
    path: &Path,
    kind: ElementKind,
    count: usize,
    want: usize,
) -> Result<Vec<u8>, String> {
    let found = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .len();
    if found != want as u64 {
        return Err(format!(
            "{} has {found} bytes; {count} elements of {kind} need {want}",
            path.display()
        ));
    }
    let bytes = crate::read_bounded(path)?;
    if bytes.len() != want {
        return Err(format!(
            "{} has {} bytes; {count} elements of {kind} need {want}",
            path.display(),
            bytes.len()
        ));
    }
    Ok(bytes)
}

pub(crate) fn run(args: &Args) -> Result<ExitCode, String> {
    let artifact = args.kernel.artifact()?;
    let spec = &artifact.abi;
    let abi = spec.abi.clone();
    let (inputs, outputs, params) = (
        spec.inputs.to_vec(),
        spec.outputs.to_vec(),
        spec.params.to_vec(),
    );
    let values: Vec<&String> = args.values.iter().filter(|v| !v.is_empty()).collect();
    if values.len() != params.len() {
        return Err(format!(
            "{} param dtypes but {} --values",
            params.len(),
            values.len()
        ));
    }
    let param_values = params
        .iter()
        .zip(values)
        .map(|(&kind, text)| param_value(kind, text.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    if abi.is_custom() {
        return run_custom(args, artifact, &param_values);
    }
    if !args.grid.is_empty() || args.smem != 0 {
        return Err(
            "--grid, --block and --smem are for custom-abi kernels (--signature)".to_owned(),
        );
    }
    if !args.input_files.is_empty() && args.input_files.len() != inputs.len() {
        return Err(format!(
            "{} inputs but {} --input-file",
            inputs.len(),
            args.input_files.len()
        ));
    }
    let count: usize = args
        .shape
        .iter()
        .try_fold(1usize, |n, &e| n.checked_mul(e))
        .ok_or("the shape's element count overflows")?;
    // Elements of every operand's buffer: the shape's, or what its view reaches.
    let operands = inputs.len() + outputs.len();
    let mut views: Vec<Option<&ViewSpec>> = vec![None; operands];
    for view in &args.views {
        match views.get_mut(view.operand) {
            Some(slot @ None) => *slot = Some(view),
            Some(Some(_)) => return Err(format!("two --view for operand {}", view.operand)),
            None => {
                return Err(format!(
                    "--view for operand {}, but the kernel has {operands} operands (inputs first, then outputs)",
                    view.operand
                ));
            }
        }
    }
    let lens = views
        .iter()
        .map(|view| view.map_or(Ok(count), |v| v.buffer_len()))
        .collect::<Result<Vec<usize>, _>>()?;
    // Every operand's bytes, and all of them together, within the host budget before anything
    // is read or allocated.
    let mut total: u64 = 0;
    for (&kind, &len) in inputs.iter().chain(&outputs).zip(&lens) {
        total = total.saturating_add(host_bytes(len, kind, args.max_host_bytes)? as u64);
    }
    if total > args.max_host_bytes {
        return Err(format!(
            "the operands take {total} host bytes, more than the {} allowed (--max-host-bytes)",
            args.max_host_bytes
        ));
    }
    let input_bytes = inputs
        .iter()
        .enumerate()
        .map(|(k, &kind)| {
            let len = lens.get(k).copied().unwrap_or(count);
            let want = host_bytes(len, kind, args.max_host_bytes)?;
            match args.input_files.get(k) {
                Some(path) => read_input(path, kind, len, want),
                None => generate(kind, len, &args.fill, k as u64 + 1),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (device, how) = device(args);
    let outcome = (|| -> Result<(usize, std::time::Duration, Vec<AnyBuffer>), jitseam::Error> {
        let described: Kernel<Erased, _> = Kernel::describe(artifact)?;
        let loaded = if args.unverified {
            // SAFETY: `--unverified` runs only on the emulator (`--best` conflicts with it), which
            // lends a launch exactly its operands' bytes and checks every access the kernel
            // makes against them: a body that breaks `load_unverified`'s contract faults with a
            // typed error instead of touching memory it was not lent.
            unsafe { described.load_unverified() }?
        } else {
            described.load()?
        };
        let kernel = loaded.bind(&device)?;
        let mut ins = Vec::with_capacity(inputs.len());
        for (&kind, bytes) in inputs.iter().zip(&input_bytes) {
            ins.push(AnyBuffer::upload(&device, kind, bytes)?);
        }
        let mut outs = Vec::with_capacity(outputs.len());
        for (m, &kind) in outputs.iter().enumerate() {
            let len = lens.get(inputs.len() + m).copied().unwrap_or(count);
            let sentinel = if kind.is_float() { f64::NAN } else { 0.0 };
            let mut bytes = Vec::with_capacity(len.saturating_mul(kind.size()));
            for _ in 0..len {
                number(kind, sentinel).write_to(&mut bytes);
            }
            outs.push(AnyBuffer::upload(&device, kind, &bytes)?);
        }
        let strided = matches!(abi, AbiKind::Strided { .. });
        let launch_shape = if strided {
            args.shape.clone()
        } else {
            vec![count]
        };
        let elapsed = {
            let (in_specs, out_specs) = views.split_at(inputs.len());
            let in_views: Vec<AnyView<'_>> = ins
                .iter()
                .zip(in_specs)
                .map(|(b, view)| AnyView::of(b, &launch_shape, *view))
                .collect::<Result<_, _>>()?;
            let mut out_views: Vec<AnyViewMut<'_>> = outs
                .iter_mut()
                .zip(out_specs)
                .map(|(b, view)| AnyViewMut::of(b, &launch_shape, *view))
                .collect::<Result<_, _>>()?;
            let in_args: Vec<Arg<'_>> = in_views.iter().map(AnyView::arg).collect();
            let mut out_args: Vec<ArgMut<'_>> = out_views.iter_mut().map(AnyViewMut::arg).collect();
            let stream = device.default_stream();
            let start = Instant::now();
            kernel.launch(
                &stream,
                &in_args,
                &mut out_args,
                &launch_shape,
                &param_values,
            )?;
            stream.synchronize()?;
            start.elapsed()
        };
        Ok((count, elapsed, outs))
    })();
    let (count, elapsed, outs) = match outcome {
        Ok(done) => done,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    std::fs::create_dir_all(&args.output_dir)
        .map_err(|e| format!("cannot create {}: {e}", args.output_dir.display()))?;
    println!(
        "ran {} on {how}: {count} elements in {:.3} ms",
        args.kernel.entry,
        elapsed.as_secs_f64() * 1e3
    );
    for (m, out) in outs.iter().enumerate() {
        let bytes = out.read(&device).map_err(|e| e.to_string())?;
        let path = args.output_dir.join(format!("out{m}.bin"));
        std::fs::write(&path, &bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let preview = out.preview(&device).map_err(|e| e.to_string())?;
        println!("out{m} ({}) -> {}: {preview}", outputs[m], path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `X[,Y[,Z]]` as three extents (missing ones are 1).
fn dims(flag: &str, values: &[u32]) -> Result<[u32; 3], String> {
    if values.len() > 3 {
        return Err(format!("--{flag} takes at most three extents, X,Y,Z"));
    }
    let mut out = [1; 3];
    out[..values.len()].copy_from_slice(values);
    Ok(out)
}

/// `jitseam run` for a custom-abi kernel: buffers sized by the declared extents, the launch
/// through the erased face's `launch_custom`.
fn run_custom(
    args: &Args,
    artifact: Artifact,
    param_values: &[ParamValue],
) -> Result<ExitCode, String> {
    let spec = artifact.abi.clone();
    let custom = spec
        .abi
        .custom()
        .cloned()
        .ok_or("the custom spec has no signature")?;
    if !args.views.is_empty() {
        return Err(
            "--view is for strided kernels; a custom kernel's operands are dense".to_owned(),
        );
    }
    // The configuration the launch gets: the flags', or one thread per covered element in
    // blocks of 256 (what jitseam chooses for `covers`), to size the buffers the same way.
    let config = if args.grid.is_empty() {
        None
    } else {
        Some(
            LaunchConfig::new(dims("grid", &args.grid)?, dims("block", &args.block)?)
                .dynamic_shared_bytes(args.smem),
        )
    };
    let names = |pointer: usize| custom.extent_text(pointer);
    let mut env = ExtentEnv {
        params: param_values,
        grid: config.map_or([1; 3], |c| c.grid),
        block: config.map_or([1; 3], |c| c.block),
    };
    let values = custom.evaluate(&env);
    let pointers = custom.params.iter().filter(|p| p.kind.is_pointer()).count();
    if config.is_none() {
        let covered = match (custom.covers, values.get(pointers)) {
            (true, Some(Ok(count))) => *count,
            (true, _) => return Err("the covered count has no value for these --values".to_owned()),
            (false, _) => {
                return Err("this signature has no --covers: give --grid and --block".to_owned());
            }
        };
        let blocks = u32::try_from(covered.div_ceil(256).max(1))
            .map_err(|_| format!("{covered} covered elements need more than 2^32 blocks"))?;
        env.grid = [blocks, 1, 1];
        env.block = [256, 1, 1];
    }
    let values = custom.evaluate(&env);
    let mut lens = Vec::with_capacity(pointers);
    for (pointer, value) in values.iter().take(pointers).enumerate() {
        let len = value.as_ref().map_err(|problem| {
            format!("the extent `{}` has no value: {problem}", names(pointer))
        })?;
        lens.push(
            usize::try_from(*len)
                .map_err(|_| format!("an extent of {len} elements does not fit this host"))?,
        );
    }
    // Buffers per pointer in kernel order, split into inputs and outputs.
    let mut in_lens = Vec::new();
    let mut out_lens = Vec::new();
    for (param, &len) in custom
        .params
        .iter()
        .filter(|p| p.kind.is_pointer())
        .zip(&lens)
    {
        match param.kind {
            CustomKind::In(kind) => in_lens.push((kind, len)),
            CustomKind::Out(kind) => out_lens.push((kind, len)),
            CustomKind::Value(_) => {}
        }
    }
    if !args.input_files.is_empty() && args.input_files.len() != in_lens.len() {
        return Err(format!(
            "{} inputs but {} --input-file",
            in_lens.len(),
            args.input_files.len()
        ));
    }
    let mut total: u64 = 0;
    for &(kind, len) in in_lens.iter().chain(&out_lens) {
        total = total.saturating_add(host_bytes(len, kind, args.max_host_bytes)? as u64);
    }
    if total > args.max_host_bytes {
        return Err(format!(
            "the operands take {total} host bytes, more than the {} allowed (--max-host-bytes)",
            args.max_host_bytes
        ));
    }
    let input_bytes = in_lens
        .iter()
        .enumerate()
        .map(|(k, &(kind, len))| {
            let want = host_bytes(len, kind, args.max_host_bytes)?;
            match args.input_files.get(k) {
                Some(path) => read_input(path, kind, len, want),
                None => generate(kind, len, &args.fill, k as u64 + 1),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (device, how) = device(args);
    let outcome = (|| -> Result<(std::time::Duration, Vec<AnyBuffer>), jitseam::Error> {
        let described: Kernel<Erased, _> = Kernel::describe(artifact)?;
        let loaded = if args.unverified {
            // SAFETY: `--unverified` runs only on the emulator (`--best` conflicts with it), which
            // lends a launch exactly its operands' bytes (here each buffer holds exactly its
            // declared extent) and checks every access the kernel makes against them.
            unsafe { described.load_unverified() }?
        } else {
            described.load()?
        };
        let kernel = loaded.bind(&device)?;
        let mut ins = Vec::with_capacity(in_lens.len());
        for (&(kind, _), bytes) in in_lens.iter().zip(&input_bytes) {
            ins.push(AnyBuffer::upload(&device, kind, bytes)?);
        }
        let mut outs = Vec::with_capacity(out_lens.len());
        for &(kind, len) in &out_lens {
            let sentinel = if kind.is_float() { f64::NAN } else { 0.0 };
            let mut bytes = Vec::with_capacity(len.saturating_mul(kind.size()));
            for _ in 0..len {
                number(kind, sentinel).write_to(&mut bytes);
            }
            outs.push(AnyBuffer::upload(&device, kind, &bytes)?);
        }
        let elapsed = {
            let in_views: Vec<AnyView<'_>> = ins
                .iter()
                .zip(&in_lens)
                .map(|(b, &(_, len))| AnyView::of(b, &[len], None))
                .collect::<Result<_, _>>()?;
            let mut out_views: Vec<AnyViewMut<'_>> = outs
                .iter_mut()
                .zip(&out_lens)
                .map(|(b, &(_, len))| AnyViewMut::of(b, &[len], None))
                .collect::<Result<_, _>>()?;
            let in_args: Vec<Arg<'_>> = in_views.iter().map(AnyView::arg).collect();
            let mut out_args: Vec<ArgMut<'_>> = out_views.iter_mut().map(AnyViewMut::arg).collect();
            let stream = device.default_stream();
            let start = Instant::now();
            kernel.launch_custom(&stream, config, &in_args, &mut out_args, param_values)?;
            stream.synchronize()?;
            start.elapsed()
        };
        Ok((elapsed, outs))
    })();
    let (elapsed, outs) = match outcome {
        Ok(done) => done,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    std::fs::create_dir_all(&args.output_dir)
        .map_err(|e| format!("cannot create {}: {e}", args.output_dir.display()))?;
    println!(
        "ran {} on {how}: grid {:?}, block {:?}, {} dynamic shared bytes, in {:.3} ms",
        args.kernel.entry,
        env.grid,
        env.block,
        args.smem,
        elapsed.as_secs_f64() * 1e3
    );
    for (m, (out, &(kind, _))) in outs.iter().zip(&out_lens).enumerate() {
        let bytes = out.read(&device).map_err(|e| e.to_string())?;
        let path = args.output_dir.join(format!("out{m}.bin"));
        std::fs::write(&path, &bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let preview = out.preview(&device).map_err(|e| e.to_string())?;
        println!("out{m} ({kind}) -> {}: {preview}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

macro_rules! any_view {
    ($name:ident, $view:ident, $method:ident, $strided:ident, $arg:ident $(, $m:ident)?) => {
        /// A view of an [`AnyBuffer`]: row-major over `shape`, or the `--view` window.
        enum $name<'b> {
            F32(jitseam::device::$view<'b, f32>),
            F64(jitseam::device::$view<'b, f64>),
            F16(jitseam::device::$view<'b, f16>),
            BF16(jitseam::device::$view<'b, bf16>),
            I8(jitseam::device::$view<'b, i8>),
            U8(jitseam::device::$view<'b, u8>),
            I16(jitseam::device::$view<'b, i16>),
            U16(jitseam::device::$view<'b, u16>),
            I32(jitseam::device::$view<'b, i32>),
            I64(jitseam::device::$view<'b, i64>),
            U32(jitseam::device::$view<'b, u32>),
            U64(jitseam::device::$view<'b, u64>),
        }

        impl<'b> $name<'b> {
            fn of(
                buffer: &'b $($m)? AnyBuffer,
                shape: &[usize],
                view: Option<&ViewSpec>,
            ) -> Result<Self, jitseam::Error> {
                macro_rules! window {
                    ($b:expr) => {
                        match view {
                            Some(v) => $b.$strided(v.offset, &v.shape, &v.strides)?,
                            None => $b.$method(shape)?,
                        }
                    };
                }
                Ok(match buffer {
                    AnyBuffer::F32(b) => Self::F32(window!(b)),
                    AnyBuffer::F64(b) => Self::F64(window!(b)),
                    AnyBuffer::F16(b) => Self::F16(window!(b)),
                    AnyBuffer::BF16(b) => Self::BF16(window!(b)),
                    AnyBuffer::I8(b) => Self::I8(window!(b)),
                    AnyBuffer::U8(b) => Self::U8(window!(b)),
                    AnyBuffer::I16(b) => Self::I16(window!(b)),
                    AnyBuffer::U16(b) => Self::U16(window!(b)),
                    AnyBuffer::I32(b) => Self::I32(window!(b)),
                    AnyBuffer::I64(b) => Self::I64(window!(b)),
                    AnyBuffer::U32(b) => Self::U32(window!(b)),
                    AnyBuffer::U64(b) => Self::U64(window!(b)),
                })
            }

            fn arg<'v>(view: &'v $($m)? Self) -> $arg<'v> {
                match view {
                    Self::F32(v) => v.into(),
                    Self::F64(v) => v.into(),
                    Self::F16(v) => v.into(),
                    Self::BF16(v) => v.into(),
                    Self::I8(v) => v.into(),
                    Self::U8(v) => v.into(),
                    Self::I16(v) => v.into(),
                    Self::U16(v) => v.into(),
                    Self::I32(v) => v.into(),
                    Self::I64(v) => v.into(),
                    Self::U32(v) => v.into(),
                    Self::U64(v) => v.into(),
                }
            }
        }
    };
}

any_view!(AnyView, StridedView, shaped, strided, Arg);
any_view!(
    AnyViewMut,
    StridedViewMut,
    shaped_mut,
    strided_mut,
    ArgMut,
    mut
);
