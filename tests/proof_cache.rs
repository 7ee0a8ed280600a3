//! The process-wide proof cache: a second `load()` of the same text under the same contract
//! reuses the proof; any other text, entry or contract is a miss and is proven (or declined) on
//! its own; the cache stays within its bounds.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;

use jitseam::abi::AbiContract;
use jitseam::kernel::proof_cache::{MAX_ENTRIES, ProofCache};
use jitseam::{AbiSpec, Artifact, Error, Kernel};

/// The tests share the one cache of the process: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// `out[i] = x[i]` for `i < n`; `{DISP}` is the load's displacement (0 is safe).
const COPY: &str = r#".version 8.8
.target sm_80
.address_size 64

.visible .entry copy(
	.param .u64 copy_param_0,
	.param .u64 copy_param_1,
	.param .u32 copy_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<2>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [copy_param_0];
	ld.param.u64 	%rd2, [copy_param_1];
	ld.param.u32 	%r2, [copy_param_2];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	mul.wide.s32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd1, %rd5;
	ld.global.f32 	%f1, [%rd6+{DISP}];
	add.s64 	%rd7, %rd2, %rd5;
	st.global.f32 	[%rd7], %f1;
$L__BB0_2:
	ret;
}
"#;

const SIG: &str = "x: in f32[n], out: out f32[n], n: i32";

fn text(disp: i32) -> String {
    COPY.replace("{DISP}", &disp.to_string())
}

/// `load_proven()`: every access proven, so an unsafe text is a decline (`load()` would guard
/// it); it reads and fills the same cache.
fn load(text: &str, signature: &str) -> Result<(), Error> {
    let spec = AbiSpec::parse_custom(signature, None).unwrap();
    Kernel::describe(Artifact::ptx(text, "copy", spec))?
        .load_proven()
        .map(|_| ())
        .map_err(|t| t.error)
}

#[test]
fn a_second_load_of_the_same_body_reuses_its_proof() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cache = ProofCache::global();
    cache.clear();
    let safe = text(0);
    load(&safe, SIG).unwrap();
    let first = cache.stats();
    assert_eq!((first.hits, first.misses, first.entries), (0, 1, 1));
    load(&safe, SIG).unwrap();
    let second = cache.stats();
    assert_eq!((second.hits, second.misses, second.entries), (1, 1, 1));
    // The proof kept is the verifier's own.
    let spec = AbiSpec::parse_custom(SIG, None).unwrap();
    let contract = spec.contract();
    let kept = cache.get(&safe, "copy", &contract).unwrap();
    assert_eq!(
        kept,
        jitseam_verify::verify_entry(&safe, "copy", &contract).unwrap()
    );
}

#[test]
fn another_text_or_contract_is_a_miss_and_is_verified_on_its_own() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cache = ProofCache::global();
    cache.clear();
    load(&text(0), SIG).unwrap();
    // The same text reading one element past `x`: not the proven text, so it is declined.
    match load(&text(4), SIG) {
        Err(Error::BodyRejected { .. }) => {}
        other => panic!("expected a decline, got {other:?}"),
    }
    // The proven text under a tighter contract (`x` holds `n - 1`): its proof does not carry
    // over, and this contract's verdict is a decline.
    match load(&text(0), "x: in f32[n - 1], out: out f32[n], n: i32") {
        Err(Error::BodyRejected { .. }) => {}
        other => panic!("expected a decline, got {other:?}"),
    }
    let spec = AbiSpec::parse_custom(SIG, None).unwrap();
    assert!(cache.get(&text(0), "other", &spec.contract()).is_none());
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.entries), (0, 1), "{stats:?}");
}

#[test]
fn the_cache_is_bounded() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cache = ProofCache::global();
    cache.clear();
    let spec = AbiSpec::parse_custom(SIG, None).unwrap();
    let contract = spec.contract();
    let proof = jitseam_verify::verify_entry(&text(0), "copy", &contract).unwrap();
    for k in 0..MAX_ENTRIES + 10 {
        // Distinct texts: a comment makes each its own key.
        let t = format!("{}// {k}\n", text(0));
        cache.insert(&t, "copy", &contract, proof.clone());
    }
    let stats = cache.stats();
    assert_eq!(stats.entries, MAX_ENTRIES);
    // The oldest went first.
    assert!(
        cache
            .get(&format!("{}// 0\n", text(0)), "copy", &contract)
            .is_none()
    );
    let last = format!("{}// {}\n", text(0), MAX_ENTRIES + 9);
    assert!(cache.get(&last, "copy", &contract).is_some());
    cache.clear();
}
