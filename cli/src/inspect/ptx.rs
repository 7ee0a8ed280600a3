//! `jitseam inspect` of a PTX module, written straight from the borrowed index: text, or JSON
//! streamed one value at a time, so a module of a million parameters needs little more memory
//! than its text.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use jitseam::AbiSpec;
use jitseam::abi::ptx_param_class;
use jitseam_ptx::{DirectiveRef, EntryRef, ModuleIndex, ParamRef, PerfDirective};
use serde::Serialize;

use crate::verdict::ModuleVerdicts;
use serde::ser::{SerializeMap, Serializer};

/// Reports the PTX `text` read from `file`, as text or (`json`) as JSON; with `spec`, also what
/// the body verifier proves about each entry under it.
pub(super) fn run(
    file: &Path,
    text: &str,
    json: bool,
    spec: Option<&AbiSpec>,
) -> Result<ExitCode, String> {
    // The borrowed index: names point into the text and all parameters share one vector, so a
    // module of a million parameters takes little more memory than its text.
    let index = match jitseam_ptx::scan_module(text) {
        Ok(index) => index,
        Err(e) => {
            eprintln!("{}: {e}", file.display());
            return Ok(ExitCode::FAILURE);
        }
    };
    let verdicts = spec.map(|spec| ModuleVerdicts::new(text, spec));
    let verdicts = verdicts.as_ref();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let written = if json {
        // Streamed: nothing is built but the line being written.
        serde_json::to_writer_pretty(
            &mut out,
            &ModuleJson {
                index: &index,
                verdicts,
            },
        )
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out))
    } else {
        write_text(&mut out, &index, verdicts)
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write the report: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

/// The report of a small PTX module (a fatbin's image) as text and as a JSON value.
pub(super) fn report(
    text: &str,
    spec: Option<&AbiSpec>,
) -> Result<(String, serde_json::Value), String> {
    let index = jitseam_ptx::scan_module(text).map_err(|e| e.to_string())?;
    let verdicts = spec.map(|spec| ModuleVerdicts::new(text, spec));
    let verdicts = verdicts.as_ref();
    let mut written = Vec::new();
    write_text(&mut written, &index, verdicts).map_err(|e| e.to_string())?;
    let json = serde_json::to_value(ModuleJson {
        index: &index,
        verdicts,
    })
    .map_err(|e| e.to_string())?;
    Ok((String::from_utf8_lossy(&written).into_owned(), json))
}

fn class_name(param: &ParamRef<'_>) -> String {
    ptx_param_class(&param.to_owned())
        .map_or_else(|| format!(".{}", param.ty.name()), |c| c.to_string())
}

fn align_of(param: &ParamRef<'_>) -> u64 {
    ptx_param_class(&param.to_owned()).map_or(u64::from(param.ty.bytes()), |c| c.align() as u64)
}

fn directive_text(d: &DirectiveRef) -> String {
    let dims = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    match d.to_owned() {
        PerfDirective::MaxNtid(v) => format!(".maxntid {}", dims(&v)),
        PerfDirective::ReqNtid(v) => format!(".reqntid {}", dims(&v)),
        PerfDirective::MinNctaPerSm(n) => format!(".minnctapersm {n}"),
        PerfDirective::MaxNreg(n) => format!(".maxnreg {n}"),
    }
}

fn write_text(
    out: &mut impl Write,
    index: &ModuleIndex<'_>,
    verdicts: Option<&ModuleVerdicts<'_>>,
) -> std::io::Result<()> {
    write!(
        out,
        "ptx {}.{}  target {}",
        index.version.major, index.version.minor, index.target.arch
    )?;
    for modifier in &index.target.modifiers {
        write!(out, ", {modifier}")?;
    }
    match index.address_size {
        Some(size) => writeln!(out, "  address_size {size}")?,
        None => writeln!(out, "  address_size -")?,
    }
    for entry in index.entries() {
        writeln!(out, "entry {} ({:?})", entry.name, entry.linkage)?;
        let width = entry.params.iter().map(|p| p.name.len()).max().unwrap_or(0);
        for (i, p) in entry.params.iter().enumerate() {
            writeln!(
                out,
                "  {i:>3}  {:<width$}  {:<28}  size {:>3}  align {:>2}",
                p.name,
                class_name(p),
                p.size_bytes(),
                align_of(p),
            )?;
        }
        for d in entry.directives {
            writeln!(out, "  {}", directive_text(d))?;
        }
        if let Some(verdicts) = verdicts {
            let verdict = verdicts.entry(entry.name);
            writeln!(out, "  body: {}", crate::verdict::verdict_text(&verdict))?;
        }
    }
    for func in index.functions() {
        writeln!(
            out,
            "func {} ({} params, {} returns)",
            func.name,
            func.params.len(),
            func.returns.len()
        )?;
    }
    Ok(())
}

/// The module as JSON, serialized straight from the index; with `spec`, every entry carries
/// what the body verifier proves about it.
struct ModuleJson<'i, 'a> {
    index: &'i ModuleIndex<'a>,
    verdicts: Option<&'i ModuleVerdicts<'i>>,
}

impl Serialize for ModuleJson<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let index = self.index;
        let verdicts = self.verdicts;
        let mut map = serializer.serialize_map(Some(6))?;
        map.serialize_entry(
            "version",
            &format!("{}.{}", index.version.major, index.version.minor),
        )?;
        map.serialize_entry("target", &index.target.arch)?;
        map.serialize_entry("target_modifiers", &index.target.modifiers)?;
        map.serialize_entry("address_size", &index.address_size)?;
        map.serialize_entry(
            "entries",
            &Seq(|| index.entries().map(|entry| EntryJson { entry, verdicts })),
        )?;
        map.serialize_entry("functions", &Seq(|| index.functions().map(|f| f.name)))?;
        map.end()
    }
}

struct EntryJson<'i, 'a> {
    entry: EntryRef<'i, 'a>,
    verdicts: Option<&'i ModuleVerdicts<'i>>,
}

impl Serialize for EntryJson<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let entry = &self.entry;
        let mut map = serializer.serialize_map(Some(4 + usize::from(self.verdicts.is_some())))?;
        map.serialize_entry("name", entry.name)?;
        map.serialize_entry("linkage", &format!("{:?}", entry.linkage).to_lowercase())?;
        map.serialize_entry(
            "params",
            &Seq(|| {
                entry
                    .params
                    .iter()
                    .enumerate()
                    .map(|(i, p)| ParamJson(i, p))
            }),
        )?;
        map.serialize_entry(
            "directives",
            &Seq(|| entry.directives.iter().map(directive_text)),
        )?;
        if let Some(verdicts) = self.verdicts {
            map.serialize_entry("verification", &verdicts.entry(entry.name))?;
        }
        map.end()
    }
}

struct ParamJson<'p, 'a>(usize, &'p ParamRef<'a>);

impl Serialize for ParamJson<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (index, p) = (self.0, self.1);
        let mut map = serializer.serialize_map(Some(6))?;
        map.serialize_entry("index", &index)?;
        map.serialize_entry("name", p.name)?;
        map.serialize_entry("type", p.ty.name())?;
        map.serialize_entry("class", &class_name(p))?;
        map.serialize_entry("size", &p.size_bytes())?;
        map.serialize_entry("align", &align_of(p))?;
        map.end()
    }
}

/// A JSON array of whatever `items` yields, written one item at a time.
struct Seq<F>(F);

impl<F, I> Serialize for Seq<F>
where
    F: Fn() -> I,
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}
