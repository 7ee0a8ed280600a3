//! `jitseam inspect FILE.ptx [--json]`.

use std::path::PathBuf;
use std::process::ExitCode;

use jitseam::abi::ParamClass;
use jitseam_ptx::{Entry, Module, Param, PerfDirective};
use serde_json::{Value, json};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The PTX file.
    file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args) -> Result<ExitCode, String> {
    let text = crate::read_text(&args.file)?;
    let module = match jitseam_ptx::parse_module(&text) {
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
