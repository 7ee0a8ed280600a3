//! The NVRTC fixtures of tests/fixtures/, embedded so test binaries run on machines without the
//! source tree (the GPU machine). Generated from manifest.json by hand-checked code; keep in sync.

use jitseam::{AbiKind, AbiSpec, Artifact, ElementKind};

/// One entry point of one fixture module.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub file: &'static str,
    pub entry: &'static str,
    pub ptx: &'static str,
    pub spec: AbiSpec,
    pub op: &'static str,
}

impl Fixture {
    /// The fixture as an artifact with its true ABI.
    pub fn artifact(&self) -> Artifact {
        Artifact::ptx(self.ptx, self.entry, self.spec.clone())
    }
}

/// Embedded PTX text by file name.
pub fn ptx(file: &str) -> Option<&'static str> {
    Some(match file {
        "add_bf16_scalar.ptx" => include_str!("../fixtures/add_bf16_scalar.ptx"),
        "add_f16_co_v8.ptx" => include_str!("../fixtures/add_f16_co_v8.ptx"),
        "add_f16_scalar.ptx" => include_str!("../fixtures/add_f16_scalar.ptx"),
        "add_f32_co_v2.ptx" => include_str!("../fixtures/add_f32_co_v2.ptx"),
        "add_f32_co_v4.ptx" => include_str!("../fixtures/add_f32_co_v4.ptx"),
        "add_f32_scalar.ptx" => include_str!("../fixtures/add_f32_scalar.ptx"),
        "add_f32_strided_r1.ptx" => include_str!("../fixtures/add_f32_strided_r1.ptx"),
        "add_f32_strided_r2.ptx" => include_str!("../fixtures/add_f32_strided_r2.ptx"),
        "add_f32_strided_r3.ptx" => include_str!("../fixtures/add_f32_strided_r3.ptx"),
        "add_f64_co_v2.ptx" => include_str!("../fixtures/add_f64_co_v2.ptx"),
        "add_scalar_mul_scalar_f32_scalar.ptx" => {
            include_str!("../fixtures/add_scalar_mul_scalar_f32_scalar.ptx")
        }
        "add_sub_f32_mo2_scalar.ptx" => include_str!("../fixtures/add_sub_f32_mo2_scalar.ptx"),
        "axpb_f64_scalar.ptx" => include_str!("../fixtures/axpb_f64_scalar.ptx"),
        "mul_f64_scalar.ptx" => include_str!("../fixtures/mul_f64_scalar.ptx"),
        "mul_scalar_f64_strided_r2.ptx" => {
            include_str!("../fixtures/mul_scalar_f64_strided_r2.ptx")
        }
        "relu_f32_scalar.ptx" => include_str!("../fixtures/relu_f32_scalar.ptx"),
        "silu_f32_scalar.ptx" => include_str!("../fixtures/silu_f32_scalar.ptx"),
        "two_entries.ptx" => include_str!("../fixtures/two_entries.ptx"),
        _ => return None,
    })
}

/// Every entry of every fixture, with its ABI, from manifest.json (parsed once).
pub fn all() -> &'static [Fixture] {
    static ALL: std::sync::OnceLock<Vec<Fixture>> = std::sync::OnceLock::new();
    ALL.get_or_init(parse_manifest)
}

fn parse_manifest() -> Vec<Fixture> {
    let manifest: Vec<serde_json::Value> =
        serde_json::from_str(include_str!("../fixtures/manifest.json")).unwrap_or_default();
    let kinds = |v: &serde_json::Value| -> Vec<ElementKind> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|d| d.as_str().and_then(ElementKind::from_name))
                    .collect()
            })
            .unwrap_or_default()
    };
    let text = |v: &serde_json::Value, k: &str| -> &'static str {
        let s = v.get(k).and_then(|s| s.as_str()).unwrap_or_default();
        Box::leak(s.to_owned().into_boxed_str())
    };
    manifest
        .iter()
        .filter_map(|f| {
            let file = text(f, "file");
            let abi: AbiKind = text(f, "abi").parse().ok()?;
            Some(Fixture {
                file,
                entry: text(f, "entry"),
                ptx: ptx(file)?,
                spec: AbiSpec::owned(
                    abi,
                    kinds(&f["inputs"]),
                    kinds(&f["outputs"]),
                    kinds(&f["params"]),
                ),
                op: text(f, "op"),
            })
        })
        .collect()
}

/// The fixture with this entry point.
pub fn by_entry(entry: &str) -> Fixture {
    all()
        .iter()
        .find(|f| f.entry == entry)
        .cloned()
        .unwrap_or_else(|| panic!("no fixture entry {entry}"))
}
