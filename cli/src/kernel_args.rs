//! The kernel a command acts on: a PTX file, an entry point and the ABI spec it claims. Shared by
//! `check` and `run`, so both spell and parse it the same way.

use std::path::PathBuf;

use jitseam::{AbiKind, AbiSpec, Artifact, ElementKind};

#[derive(Debug, clap::Args)]
pub(crate) struct KernelArgs {
    /// The PTX, cubin (`.cubin`) or fatbin (`.fatbin`) file.
    pub(crate) file: PathBuf,
    /// The entry point (symbol).
    #[arg(long)]
    pub(crate) entry: String,
    /// `scalar`, `vectorized:W` or `strided:R`.
    #[arg(long)]
    abi: String,
    /// Input dtypes, comma-separated (f32, f64, f16, bf16, i8, u8, i16, u16, i32, i64, u32, u64).
    #[arg(long, value_delimiter = ',', default_value = "")]
    inputs: Vec<String>,
    /// Output dtypes, comma-separated.
    #[arg(long, value_delimiter = ',')]
    outputs: Vec<String>,
    /// Runtime param dtypes, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "")]
    params: Vec<String>,
}

impl KernelArgs {
    /// The spec the flags describe.
    pub(crate) fn spec(&self) -> Result<AbiSpec, String> {
        spec_of(&self.abi, &self.inputs, &self.outputs, &self.params)
    }

    /// The file as an artifact entered at `--entry` with the flags' spec: a cubin or fatbin by
    /// its leading bytes, else PTX text.
    pub(crate) fn artifact(&self) -> Result<Artifact, String> {
        let spec = self.spec()?;
        let entry = self.entry.clone();
        Ok(match crate::read_image(&self.file)? {
            crate::Image::Cubin(bytes) => Artifact::cubin(bytes, entry, spec),
            crate::Image::Fatbin(bytes) => Artifact::fatbin(bytes, entry, spec),
            crate::Image::Ptx(text) => Artifact::ptx(text, entry, spec),
        })
    }
}

/// The spec of an `--abi` and its `--inputs`, `--outputs` and `--params` lists.
pub(crate) fn spec_of(
    abi: &str,
    inputs: &[String],
    outputs: &[String],
    params: &[String],
) -> Result<AbiSpec, String> {
    let abi: AbiKind = abi.parse()?;
    Ok(AbiSpec::owned(
        abi,
        dtypes(inputs)?,
        dtypes(outputs)?,
        dtypes(params)?,
    ))
}

/// Parses a dtype list; an empty flag value means no dtypes.
fn dtypes(names: &[String]) -> Result<Vec<ElementKind>, String> {
    names
        .iter()
        .filter(|n| !n.is_empty())
        .map(|n| ElementKind::from_name(n.trim()).ok_or_else(|| format!("unknown dtype `{n}`")))
        .collect()
}
