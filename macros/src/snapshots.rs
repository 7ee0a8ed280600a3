//! Expansion snapshots: each `tests/expand/<case>.rs` is expanded on stable (the attribute's
//! implementation runs on `proc_macro2` tokens), rendered with `prettyplease` and compared with
//! `tests/expand/<case>.expanded.rs`. `EXPAND=overwrite` rewrites the snapshots.

use std::fs;
use std::path::{Path, PathBuf};

use quote::ToTokens;

#[test]
fn expansions_match_snapshots() -> Result<(), String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expand");
    let overwrite = std::env::var_os("EXPAND").is_some_and(|v| v == "overwrite");
    let mut cases: Vec<PathBuf> = fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "rs")
                && !p.to_string_lossy().ends_with(".expanded.rs")
        })
        .collect();
    cases.sort();
    if cases.is_empty() {
        return Err(format!("no cases in {}", dir.display()));
    }
    let mut stale = Vec::new();
    for case in &cases {
        let rendered = expand_file(case)?;
        let snapshot = case.with_extension("expanded.rs");
        let recorded = fs::read_to_string(&snapshot).unwrap_or_default();
        if rendered != recorded {
            if overwrite {
                fs::write(&snapshot, &rendered)
                    .map_err(|e| format!("{}: {e}", snapshot.display()))?;
            } else {
                stale.push(format!(
                    "{} differs from a fresh expansion:\n{rendered}",
                    snapshot.display()
                ));
            }
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}\nrerun with EXPAND=overwrite and review the diff",
            stale.join("\n")
        ))
    }
}

/// Replaces every `#[kernel(..)]` / `#[jitseam::kernel(..)]` declaration in the file with its
/// expansion and pretty-prints the result.
fn expand_file(path: &Path) -> Result<String, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file: syn::File = syn::parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut items = Vec::new();
    for item in file.items {
        let syn::Item::Verbatim(tokens) = &item else {
            items.push(item);
            continue;
        };
        let mut declaration: syn::ForeignItemFn =
            syn::parse2(tokens.clone()).map_err(|e| format!("{}: {e}", path.display()))?;
        let Some(index) = declaration.attrs.iter().position(|attr| {
            attr.path()
                .segments
                .last()
                .is_some_and(|s| s.ident == "kernel")
        }) else {
            items.push(item);
            continue;
        };
        let attr = declaration.attrs.remove(index);
        let args = match attr.meta {
            syn::Meta::List(list) => list.tokens,
            _ => proc_macro2::TokenStream::new(),
        };
        let expanded = crate::expand::kernel(args, declaration.to_token_stream());
        let expanded: syn::File =
            syn::parse2(expanded).map_err(|e| format!("{}: expansion: {e}", path.display()))?;
        items.extend(expanded.items);
    }
    Ok(prettyplease::unparse(&syn::File {
        shebang: None,
        attrs: file.attrs,
        items,
    }))
}
