//! Property tests: no input makes `load()` panic — arbitrary bytes, and real fixtures with random
//! byte edits. Either it loads or it declines with a typed error.

mod common;

use common::fixtures;
use jitseam::{Artifact, Kernel};
use proptest::prelude::*;

fn load_never_panics(artifact: Artifact) {
    if let Ok(described) = Kernel::describe(artifact) {
        let _ = described.load();
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, u8),
    Delete(usize),
    Replace(usize, u8),
}

fn edit() -> impl Strategy<Value = Edit> {
    // Bytes biased towards PTX punctuation, so edits hit the parser's interesting paths.
    let byte = prop_oneof![
        any::<u8>(),
        prop::sample::select(b"{}()[];,.%<>/*\"\n0123456789fdxU ".to_vec()),
    ];
    prop_oneof![
        (any::<usize>(), byte.clone()).prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), byte).prop_map(|(i, b)| Edit::Replace(i, b)),
    ]
}

fn apply(bytes: &mut Vec<u8>, edit: &Edit) {
    if bytes.is_empty() {
        return;
    }
    match *edit {
        Edit::Insert(i, b) => bytes.insert(i % (bytes.len() + 1), b),
        Edit::Delete(i) => {
            bytes.remove(i % bytes.len());
        }
        Edit::Replace(i, b) => {
            let i = i % bytes.len();
            bytes[i] = b;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5_000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let f = fixtures::by_entry("baracuda_gen_add_f32_scalar");
        let mut artifact = f.artifact();
        artifact.bytes = bytes;
        load_never_panics(artifact);
    }

    #[test]
    fn edited_fixtures_never_panic(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec(edit(), 1..8),
    ) {
        let all = fixtures::all();
        let f = &all[which.index(all.len())];
        let mut artifact = f.artifact();
        for e in &edits {
            apply(&mut artifact.bytes, e);
        }
        load_never_panics(artifact);
    }
}
