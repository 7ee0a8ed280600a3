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
    /// `scalar`, `vectorized:W` or `strided:R` (or `custom`, implied by `--signature`).
    #[arg(long, required_unless_present = "signature")]
    abi: Option<String>,
    /// A custom-abi kernel's parameters in its own order: pointers as `name: in|out DTYPE[EXTENT]`,
    /// by-value params as `name: DTYPE`, e.g. `out: out f32[n], x: in f32[n], n: i32, a: f32`.
    /// Extents: integer literals, integer params, grid.x/y/z, block.x/y/z, + - * /,
    /// div_ceil(a, b), parentheses. Replaces `--abi/--inputs/--outputs/--params`.
    #[arg(long, conflicts_with_all = ["inputs", "outputs", "params"])]
    signature: Option<String>,
    /// With `--signature`: the element count the kernel covers with one thread each (`n`), so
    /// that it launches without `--grid/--block`.
    #[arg(long, requires = "signature")]
    covers: Option<String>,
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
        if let Some(signature) = &self.signature {
            if let Some(abi) = self.abi.as_deref().filter(|abi| *abi != "custom") {
                return Err(format!(
                    "--signature declares a custom-abi kernel, not `{abi}`"
                ));
            }
            return AbiSpec::parse_custom(signature, self.covers.as_deref())
                .map_err(|e| format!("--signature: {e}"));
        }
        spec_of(
            self.abi.as_deref().unwrap_or_default(),
            &self.inputs,
            &self.outputs,
            &self.params,
        )
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
    if abi == "custom" {
        return Err("a custom-abi kernel is described with --signature".to_owned());
    }
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
