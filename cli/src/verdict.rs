//! What `load()` proved about an entry's body, as JSON: one builder for `check --json` and
//! `inspect --json`, so both report a proof the same way.

use jitseam::abi::AbiContract;
use jitseam::kernel::prove_entry;
use jitseam::{AbiSpec, Error, Rejection};
use jitseam_ptx::resolve::ResolvedModule;
use jitseam_verify::{AccessKind, ClaimTarget, Coverage, ParamContract, Proof};
use serde_json::{Value, json};

/// The proof as JSON: coverage, the launch conditions, and per pointer parameter its role in
/// the ABI and the loads, stores and atomics proven through it with their width in bytes.
pub(crate) fn proof_json(spec: &AbiSpec, proof: Option<&Proof>) -> Value {
    let Some(proof) = proof else {
        return json!({ "verified": false });
    };
    let contract = spec.contract();
    json!({
        "verified": true,
        "coverage": match proof.coverage {
            Coverage::GridStride => "grid_stride",
            Coverage::OneThreadPerElement => "one_thread_per_element",
        },
        "conditions": proof.conditions.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "accesses": proof.accesses.iter().map(|a| {
            let role = match contract.params.get(a.param as usize) {
                Some(ParamContract::Pointer { operand, .. }) => Some(operand.to_string()),
                _ => None,
            };
            json!({
                "param": a.param,
                "role": role,
                "loads": a.loads,
                "stores": a.stores,
                "atomics": a.atomics,
                "width": a.width,
            })
        }).collect::<Vec<_>>(),
        "guards": guards_json(proof),
    })
}

/// What `inspect --abi` reports of each entry of one PTX module: the module is parsed and
/// resolved once, and each entry proven as `load()` would prove it
/// ([`jitseam::kernel::prove_entry`]), so a module of many entries costs what its entries do.
pub(crate) struct ModuleVerdicts<'t> {
    text: &'t str,
    module: Result<ResolvedModule, jitseam_ptx::ParseError>,
    spec: &'t AbiSpec,
}

impl<'t> ModuleVerdicts<'t> {
    pub(crate) fn new(text: &'t str, spec: &'t AbiSpec) -> Self {
        Self {
            text,
            module: ResolvedModule::new(text),
            spec,
        }
    }

    /// The outcome for `entry`: the proof, the rejected line and why, or the load error.
    pub(crate) fn entry(&self, entry: &str) -> Value {
        let proved = match &self.module {
            Ok(module) => prove_entry(self.text, module, entry, self.spec),
            Err(unread) => Err(Error::BodyRejected {
                entry: entry.to_owned(),
                rejection: Box::new(Rejection::unparsed(unread)),
                fix: None,
            }),
        };
        match proved {
            Ok(proof) => proof_json(self.spec, Some(&proof)),
            Err(Error::BodyRejected { rejection, fix, .. }) => json!({
                "verified": false,
                "rejection": {
                    "line": rejection.line,
                    "instruction": rejection.instruction,
                    "kind": rejection.kind.as_str(),
                    "reason": rejection.reason,
                    "fix": fix,
                },
            }),
            Err(e) => json!({ "verified": false, "error": e.to_string() }),
        }
    }
}

/// The accesses the proof guards at run time instead of proving: line, operand, kind, width
/// and why the proof does not cover them.
pub(crate) fn guards_json(proof: &Proof) -> Value {
    proof
        .guards()
        .iter()
        .map(|g| {
            json!({
                "line": g.line,
                "operand": g.name,
                "kind": access_kind(g.kind),
                "bytes": g.bytes,
                "reason": g.reason.as_str(),
                "why": g.why,
            })
        })
        .collect()
}

fn access_kind(kind: AccessKind) -> &'static str {
    match kind {
        AccessKind::Load => "load",
        AccessKind::Store => "store",
        AccessKind::Atomic => "atomic",
    }
}

/// `guarded: N of M accesses (lines …)`: how many of the body's access instructions (through
/// its declared operands and shared variables) are guarded at run time; `None` for a body
/// proven as written.
pub(crate) fn guarded_summary(spec: &AbiSpec, proof: &Proof) -> Option<String> {
    if proof.guards().is_empty() {
        return None;
    }
    let declared = spec.contract().params.len();
    let mut lines: Vec<u32> = proof
        .claims
        .iter()
        .filter(|c| match &c.target {
            ClaimTarget::Param(p) => (*p as usize) < declared,
            ClaimTarget::Shared(_) | ClaimTarget::Local(_) | ClaimTarget::Table(_) => true,
        })
        .map(|c| c.line)
        .collect();
    lines.sort_unstable();
    lines.dedup();
    let guarded: Vec<String> = proof.guards().iter().map(|g| g.line.to_string()).collect();
    Some(format!(
        "guarded: {} of {} accesses (line{} {})",
        guarded.len(),
        lines.len().max(guarded.len()),
        if guarded.len() == 1 { "" } else { "s" },
        guarded.join(", ")
    ))
}

/// One line for the text report: what was proven, or why not.
pub(crate) fn verdict_text(verdict: &Value) -> String {
    if verdict["verified"] == true {
        let conditions: Vec<&str> = verdict["conditions"]
            .as_array()
            .map(|c| c.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let accesses: Vec<String> = verdict["accesses"]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|a| {
                        format!(
                            "param {} ({}): {} loads, {} stores, {} atomics of {} bytes",
                            a["param"],
                            a["role"].as_str().unwrap_or("-"),
                            a["loads"],
                            a["stores"],
                            a["atomics"],
                            a["width"]
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut line = format!(
            "proven safe; coverage {}",
            verdict["coverage"].as_str().unwrap_or("-")
        );
        if !conditions.is_empty() {
            line.push_str(&format!("; every launch checks {}", conditions.join(", ")));
        }
        for a in accesses {
            line.push_str(&format!("\n    {a}"));
        }
        for g in verdict["guards"].as_array().into_iter().flatten() {
            line.push_str(&format!(
                "\n    guarded at run time: line {} ({} of {} bytes through {}): {}",
                g["line"],
                g["kind"].as_str().unwrap_or("-"),
                g["bytes"],
                g["operand"].as_str().unwrap_or("-"),
                g["why"].as_str().unwrap_or("-")
            ));
        }
        line
    } else if let Some(r) = verdict.get("rejection") {
        format!(
            "rejected: line {} `{}`: {}",
            r["line"],
            r["instruction"].as_str().unwrap_or_default(),
            r["reason"].as_str().unwrap_or_default()
        )
    } else {
        format!(
            "not verified: {}",
            verdict["error"].as_str().unwrap_or("no proof")
        )
    }
}
