//! What the published packages need beyond the workspace: copies of workspace fixtures that a
//! package's own unit tests read must stay the fixtures they copy, and every published crate
//! ships both license texts.

use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn the_emulator_crates_fixture_copies_are_the_fixtures() {
    let copies = Path::new(ROOT).join("emu/src/decode/testdata");
    let mut compared = 0;
    for entry in std::fs::read_dir(&copies).unwrap() {
        let copy = entry.unwrap().path();
        if copy.extension().is_none_or(|x| x != "ptx") {
            continue;
        }
        let name = copy.file_name().unwrap();
        let original = Path::new(ROOT).join("tests/fixtures").join(name);
        assert_eq!(
            std::fs::read_to_string(&copy).unwrap(),
            std::fs::read_to_string(&original)
                .unwrap_or_else(|e| panic!("{}: {e}", original.display())),
            "{} differs from {}: copy the fixture again",
            copy.display(),
            original.display()
        );
        compared += 1;
    }
    assert_eq!(
        compared, 3,
        "the copies read by emu/src/decode/undefined.rs"
    );
}

/// The workspace members whose manifests do not say `publish = false`.
fn published_members() -> Vec<String> {
    let manifest = std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    let members = manifest
        .lines()
        .find_map(|line| line.trim().strip_prefix("members = ["))
        .expect("a one-line `members = [...]` in the workspace manifest");
    members
        .split('"')
        .skip(1)
        .step_by(2)
        .filter(|dir| {
            let own = std::fs::read_to_string(Path::new(ROOT).join(dir).join("Cargo.toml"));
            !own.unwrap().lines().any(|l| l.trim() == "publish = false")
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_published_crate_ships_both_licenses() {
    let members = published_members();
    assert!(members.len() >= 4, "{members:?}");
    for dir in &members {
        for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
            let path = Path::new(ROOT).join(dir).join(license);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                text.len() > 1000,
                "{} is not a license text",
                path.display()
            );
        }
    }
}
