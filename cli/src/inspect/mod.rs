//! `jitseam inspect FILE [--json]` for a PTX, cubin or fatbin file.

use std::path::PathBuf;
use std::process::ExitCode;

use jitseam::AbiSpec;
use jitseam_ptx::{Cubin, Fatbin, ImageKind};
use serde_json::{Value, json};

mod ptx;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The PTX, cubin or fatbin file.
    file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Verify every PTX entry's body against this ABI (`scalar`, `vectorized:W` or
    /// `strided:R`) and report what is proven: per pointer its loads, stores and width, the
    /// coverage form and the launch conditions, or the rejected line.
    #[arg(long)]
    abi: Option<String>,
    /// Input dtypes for `--abi`, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "")]
    inputs: Vec<String>,
    /// Output dtypes for `--abi`, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "")]
    outputs: Vec<String>,
    /// Runtime param dtypes for `--abi`, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "")]
    params: Vec<String>,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode, String> {
    let spec = args
        .abi
        .as_deref()
        .map(|abi| crate::kernel_args::spec_of(abi, &args.inputs, &args.outputs, &args.params))
        .transpose()?;
    let spec = spec.as_ref();
    let (text, json) = match crate::read_image(&args.file)? {
        crate::Image::Ptx(text) => return ptx::run(&args.file, &text, args.json, spec),
        crate::Image::Cubin(bytes) => match jitseam_ptx::parse_cubin(&bytes) {
            Ok(cubin) => (cubin_text(&cubin), cubin_json(&cubin)),
            Err(e) => {
                eprintln!("{}: {e}", args.file.display());
                return Ok(ExitCode::FAILURE);
            }
        },
        crate::Image::Fatbin(bytes) => match jitseam_ptx::parse_fatbin(&bytes) {
            Ok(fatbin) => fatbin_report(&fatbin, &bytes, spec),
            Err(e) => {
                eprintln!("{}: {e}", args.file.display());
                return Ok(ExitCode::FAILURE);
            }
        },
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?
        );
    } else {
        print!("{text}");
    }
    Ok(ExitCode::SUCCESS)
}

fn cubin_text(cubin: &Cubin) -> String {
    let mut out = format!(
        "cubin {}  elf abi {}  (parameters as offsets and sizes: a cubin records no types)\n",
        cubin.arch, cubin.abi_version
    );
    for e in &cubin.entries {
        out.push_str(&format!(
            "entry {}  registers {}  shared {} bytes{}\n",
            e.name,
            e.registers
                .map_or_else(|| "-".to_owned(), |r| r.to_string()),
            e.shared_bytes,
            e.max_threads
                .map(|[x, y, z]| format!("  max threads {x}, {y}, {z}"))
                .unwrap_or_default()
        ));
        for p in &e.params {
            out.push_str(&format!(
                "  {:>3}  offset {:>4}  size {:>3}\n",
                p.ordinal, p.offset, p.size
            ));
        }
    }
    out
}

fn cubin_json(cubin: &Cubin) -> Value {
    json!({
        "kind": "cubin",
        "arch": cubin.arch.to_string(),
        "elf_abi_version": cubin.abi_version,
        "entries": cubin.entries.iter().map(|e| json!({
            "name": e.name,
            "registers": e.registers,
            "shared_bytes": e.shared_bytes,
            "max_threads": e.max_threads,
            "required_threads": e.required_threads,
            "param_cbank": e.param_cbank.map(|c| json!({"offset": c.offset, "size": c.size})),
            "params": e.params.iter().map(|p| json!({
                "ordinal": p.ordinal, "offset": p.offset, "size": p.size,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

fn fatbin_report(fatbin: &Fatbin, bytes: &[u8], spec: Option<&AbiSpec>) -> (String, Value) {
    let mut text = format!("fatbin with {} images\n", fatbin.images.len());
    let mut images = Vec::new();
    for image in &fatbin.images {
        let compressed = image
            .compression
            .map(|c| format!(" ({c:?}-compressed, not readable)"))
            .unwrap_or_default();
        text.push_str(&format!(
            "\n== {} {}{}\n",
            image.arch_name(),
            image.kind,
            compressed
        ));
        let (body_text, body_json) = match image.kind {
            ImageKind::Ptx => match image
                .ptx_text(bytes)
                .map_err(|e| e.to_string())
                .and_then(|text| ptx::report(text, spec))
            {
                Ok(report) => report,
                Err(e) => (format!("{e}\n"), json!({"error": e})),
            },
            ImageKind::Cubin => match image
                .payload(bytes)
                .map_err(|e| e.to_string())
                .and_then(|p| jitseam_ptx::parse_cubin(p).map_err(|e| e.to_string()))
            {
                Ok(cubin) => (cubin_text(&cubin), cubin_json(&cubin)),
                Err(e) => (format!("{e}\n"), json!({"error": e})),
            },
            ImageKind::Other(_) => (String::new(), Value::Null),
        };
        text.push_str(&body_text);
        images.push(json!({
            "kind": image.kind.to_string(),
            "arch": image.arch_name(),
            "compressed": image.compression.map(|c| format!("{c:?}").to_lowercase()),
            "content": body_json,
        }));
    }
    (text, json!({"kind": "fatbin", "images": images}))
}
