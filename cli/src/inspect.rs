//! `jitseam inspect FILE [--json]` for a PTX, cubin or fatbin file.

use std::path::PathBuf;
use std::process::ExitCode;

use jitseam::abi::ParamClass;
use jitseam_ptx::{Cubin, Entry, Fatbin, ImageKind, Module, Param, PerfDirective};
use serde_json::{Value, json};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The PTX, cubin or fatbin file.
    file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode, String> {
    let (text, json) = match crate::read_image(&args.file)? {
        crate::Image::Ptx(text) => return run_ptx(args, &text),
        crate::Image::Cubin(bytes) => match jitseam_ptx::parse_cubin(&bytes) {
            Ok(cubin) => (cubin_text(&cubin), cubin_json(&cubin)),
            Err(e) => {
                eprintln!("{}: {e}", args.file.display());
                return Ok(ExitCode::FAILURE);
            }
        },
        crate::Image::Fatbin(bytes) => match jitseam_ptx::parse_fatbin(&bytes) {
            Ok(fatbin) => fatbin_report(&fatbin, &bytes),
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

fn fatbin_report(fatbin: &Fatbin, bytes: &[u8]) -> (String, Value) {
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
                .and_then(|t| jitseam_ptx::parse_module(t).map_err(|e| e.to_string()))
            {
                Ok(module) => (module_text(&module), module_json(&module)),
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

fn run_ptx(args: &Args, text: &str) -> Result<ExitCode, String> {
    let module = match jitseam_ptx::parse_module(text) {
        Ok(module) => module,
        Err(e) => {
            eprintln!("{}: {e}", args.file.display());
            return Ok(ExitCode::FAILURE);
        }
    };
    if args.json {
        let doc = module_json(&module);
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", module_text(&module));
    }
    Ok(ExitCode::SUCCESS)
}

fn class_name(param: &Param) -> String {
    ParamClass::of_ptx(param).map_or_else(|| format!(".{}", param.ty.name()), |c| c.to_string())
}

fn align_of(param: &Param) -> u64 {
    ParamClass::of_ptx(param).map_or(u64::from(param.ty.bytes()), |c| c.align() as u64)
}

fn directive_text(d: &PerfDirective) -> String {
    let dims = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    match d {
        PerfDirective::MaxNtid(v) => format!(".maxntid {}", dims(v)),
        PerfDirective::ReqNtid(v) => format!(".reqntid {}", dims(v)),
        PerfDirective::MinNctaPerSm(n) => format!(".minnctapersm {n}"),
        PerfDirective::MaxNreg(n) => format!(".maxnreg {n}"),
    }
}

fn module_text(module: &Module) -> String {
    let mut out = format!(
        "ptx {}.{}  target {}{}  address_size {}\n",
        module.version.major,
        module.version.minor,
        module.target.arch,
        module
            .target
            .modifiers
            .iter()
            .map(|m| format!(", {m}"))
            .collect::<String>(),
        module
            .address_size
            .map_or_else(|| "-".to_owned(), |a| a.to_string()),
    );
    for entry in &module.entries {
        out.push_str(&entry_text(entry));
    }
    for func in &module.functions {
        out.push_str(&format!(
            "func {} ({} params, {} returns)\n",
            func.name,
            func.params.len(),
            func.returns.len()
        ));
    }
    out
}

fn entry_text(entry: &Entry) -> String {
    let mut out = format!("entry {} ({:?})\n", entry.name, entry.linkage);
    let width = entry.params.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for (i, p) in entry.params.iter().enumerate() {
        out.push_str(&format!(
            "  {i:>3}  {:<width$}  {:<28}  size {:>3}  align {:>2}\n",
            p.name,
            class_name(p),
            p.size_bytes(),
            align_of(p),
        ));
    }
    for d in &entry.directives {
        out.push_str(&format!("  {}\n", directive_text(d)));
    }
    out
}

fn module_json(module: &Module) -> Value {
    let entries: Vec<Value> = module
        .entries
        .iter()
        .map(|e| {
            json!({
                "name": e.name,
                "linkage": format!("{:?}", e.linkage).to_lowercase(),
                "params": e.params.iter().enumerate().map(|(i, p)| json!({
                    "index": i,
                    "name": p.name,
                    "type": p.ty.name(),
                    "class": class_name(p),
                    "size": p.size_bytes(),
                    "align": align_of(p),
                })).collect::<Vec<_>>(),
                "directives": e.directives.iter().map(directive_text).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "version": format!("{}.{}", module.version.major, module.version.minor),
        "target": module.target.arch,
        "target_modifiers": module.target.modifiers,
        "address_size": module.address_size,
        "entries": entries,
        "functions": module.functions.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
    })
}
