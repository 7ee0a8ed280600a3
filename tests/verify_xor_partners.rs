//! Exclusive-or partners in shared memory: NVRTC's bitonic sort of the real-kernel corpus
//! (`lscat_bitonic_sort_block`, `tile[tid ^ j]` over a static tile of 256 floats) is proven for
//! blocks no wider than the tile (the outer loop `k <= blockDim.x` doubles `k`, the inner one
//! halves `j = k / 2`), a tile half as large only for blocks half as wide; a partner moved past
//! the tile (`tid ^ 256`) or an outer bound past the block (`k <= 2 * blockDim.x`) is rejected
//! at the access it makes.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use jitseam_verify::{LaunchCondition, RejectKind};

#[path = "common/custom_verify.rs"]
mod custom_verify;
use custom_verify::{mutate, rejects, verify};

const PTX: &str = include_str!("fixtures/real/lscat_bitonic.ptx");
const ENTRY: &str = "lscat_bitonic_sort_block";
const SIGNATURE: &str = "values: out f32[n], n: i32";
const TILE: &str = ".b8 _ZZ24lscat_bitonic_sort_blockE4tile[1024];";

/// The block bound of `text`'s proof: the `x` of its `block <= (x, y, z)`.
fn block_x(text: &str) -> u32 {
    let proof = verify(text, ENTRY, SIGNATURE).unwrap();
    let bounds: Vec<u32> = proof
        .conditions
        .iter()
        .filter_map(|c| match c {
            LaunchCondition::BlockAtMost { x, .. } => Some(*x),
            _ => None,
        })
        .collect();
    assert_eq!(bounds.len(), 1, "{:?}", proof.conditions);
    bounds[0]
}

#[test]
fn the_bitonic_tile_is_proven_for_blocks_no_wider_than_it() {
    assert_eq!(block_x(PTX), 256);
}

#[test]
fn a_tile_half_as_large_is_proven_only_for_blocks_half_as_wide() {
    let text = mutate(
        PTX,
        ENTRY,
        TILE,
        ".b8 _ZZ24lscat_bitonic_sort_blockE4tile[512];",
    );
    assert_eq!(block_x(&text), 128);
}

#[test]
fn a_partner_past_the_tile_is_rejected() {
    // `tid ^ 256` sets bit 8: every partner is one of the 256 floats past the tile. Only a
    // block of one thread, which never enters the network (`k = 2 > blockDim.x`), is safe.
    let text = mutate(
        PTX,
        ENTRY,
        "xor.b32  \t%r8, %r19, %r2;",
        "xor.b32  \t%r8, 256, %r2;",
    );
    assert_eq!(block_x(&text), 1);
    rejects(
        &text,
        ENTRY,
        &format!("{SIGNATURE}; block = (256, 1, 1)"),
        RejectKind::OutOfBounds,
        "ld.shared.f32 \t%f3, [%rd3];",
    );
}

#[test]
fn the_network_under_its_declared_block_is_proven() {
    let proof = verify(PTX, ENTRY, &format!("{SIGNATURE}; block = (256, 1, 1)")).unwrap();
    assert!(
        !proof
            .conditions
            .iter()
            .any(|c| matches!(c, LaunchCondition::BlockAtMost { .. })),
        "{:?}",
        proof.conditions
    );
}

#[test]
fn an_outer_bound_past_the_tile_is_rejected() {
    // `k <= 2 * blockDim.x`: the last round's `j = blockDim.x` partners the tile's second half
    // with slots past it for a block of 256 (`tid ^ 256`): `j` is then bounded by no fact,
    // and the partner is some 32-bit number.
    let text = mutate(
        PTX,
        ENTRY,
        "setp.le.u32 \t%p11, %r18, %r1;",
        "shl.b32 \t%r0, %r1, 1;\n\tsetp.le.u32 \t%p11, %r18, %r0;",
    );
    rejects(
        &text,
        ENTRY,
        &format!("{SIGNATURE}; block = (256, 1, 1)"),
        RejectKind::MayWrap,
        "ld.shared.f32 \t%f3, [%rd3];",
    );
}
