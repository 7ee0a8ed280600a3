//! Proven or guarded: an access whose provenance and role are known but whose bounds are not
//! is guarded at run time (the PTX rewritten, the rewrite verified again); what no guard can
//! mend is still rejected, naming its line. The guarded PTX runs on the interpreter: in-bounds
//! indices give the unguarded result, an out-of-range one fills the fault record and touches
//! nothing outside the operands.

use jitseam_emu::interp::{LaunchDims, Regions, RunOptions, run_with};
use jitseam_verify::{
    AccessKind, ClaimTarget, EntryContract, Extent, FAULT_RECORD_BYTES, FaultRecord, GuardParam,
    OperandRef, ParamContract, Proof, RejectKind, Rejection, verify_entry, verify_guarded_entry,
};

/// `out[i] = x[idx[i]]` for `i < n`: `x` input 0, `idx` input 1 (s32), `out` output 0.
const GATHER: &str = ".version 8.0
.target sm_80
.address_size 64

.visible .entry gather(
	.param .u64 gather_param_0,
	.param .u64 gather_param_1,
	.param .u64 gather_param_2,
	.param .u64 gather_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<2>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<16>;

	ld.param.u64 	%rd1, [gather_param_0];
	ld.param.u64 	%rd2, [gather_param_1];
	ld.param.u64 	%rd3, [gather_param_2];
	ld.param.u64 	%rd4, [gather_param_3];
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mad.lo.s32 	%r4, %r1, %r2, %r3;
	cvt.s64.s32 	%rd5, %r4;
	setp.ge.s64 	%p1, %rd5, %rd4;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd6, %rd2;
	shl.b64 	%rd7, %rd5, 2;
	add.s64 	%rd8, %rd6, %rd7;
	ld.global.u32 	%r5, [%rd8];
	cvta.to.global.u64 	%rd9, %rd1;
	mul.wide.s32 	%rd10, %r5, 4;
	add.s64 	%rd11, %rd9, %rd10;
	ld.global.f32 	%f1, [%rd11];
	cvta.to.global.u64 	%rd12, %rd3;
	add.s64 	%rd13, %rd12, %rd7;
	st.global.f32 	[%rd13], %f1;

$L__BB0_2:
	ret;

}
";

/// The line of the gather's data-dependent load.
const GATHER_LINE: u32 = 36;

fn ptr(operand: OperandRef) -> ParamContract {
    ParamContract::Pointer {
        operand,
        access_bytes: 4,
        elem_bytes: 4,
        extent: Extent::Dense,
    }
}

fn gather_contract() -> EntryContract {
    EntryContract {
        params: vec![
            ptr(OperandRef::Input(0)),
            ptr(OperandRef::Input(1)),
            ptr(OperandRef::Output(0)),
            ParamContract::Count,
        ],
        block: None,
        dynamic_shared: None,
    }
}

#[track_caller]
fn guarded(result: Result<Proof, Rejection>) -> Proof {
    match result {
        Ok(proof) => proof,
        Err(r) => panic!("rejected: {r}"),
    }
}

#[test]
fn a_data_dependent_gather_is_guarded_on_its_load_alone() {
    let strict = verify_entry(GATHER, "gather", &gather_contract());
    assert_eq!(
        strict.as_ref().map_err(|r| (r.kind, r.line)),
        Err((RejectKind::DataDependentIndex, GATHER_LINE))
    );
    let proof = guarded(verify_guarded_entry(GATHER, "gather", &gather_contract()));
    let lines: Vec<_> = proof
        .guards()
        .iter()
        .map(|g| (g.line, g.target.clone(), g.kind, g.bytes, g.reason))
        .collect();
    assert_eq!(
        lines,
        [(
            GATHER_LINE,
            ClaimTarget::Param(0),
            AccessKind::Load,
            4,
            RejectKind::DataDependentIndex
        )]
    );
    assert_eq!(proof.guards()[0].name, "gather_param_0");
    let guarded = proof.guarded().expect("a guarded entry has its rewrite");
    assert_eq!(
        guarded.params,
        [
            GuardParam::FaultRecord,
            GuardParam::Tag(0),
            GuardParam::Tag(1),
            GuardParam::Limit {
                target: ClaimTarget::Param(0),
                bytes: 4
            }
        ]
    );
    // Every line keeps its number: the guard sits on the load's own line.
    assert_eq!(
        guarded.ptx.lines().count(),
        GATHER.lines().count(),
        "{}",
        guarded.ptx
    );
    for (i, (a, b)) in GATHER.lines().zip(guarded.ptx.lines()).enumerate() {
        let line = i as u32 + 1;
        if line != GATHER_LINE && line != 10 {
            assert_eq!(a, b, "line {line} changed");
        }
    }
    // The rewrite's proof claims the guarded load as proven.
    assert!(
        proof
            .claims
            .iter()
            .any(|c| c.line == GATHER_LINE && c.target == ClaimTarget::Param(0)),
        "{:?}",
        proof.claims
    );
}

/// Runs `text` (the guarded gather) over `x` and `idx` with `n` threads: `out` and the fault
/// record.
fn run_gather(text: &str, x: &[f32], idx: &[i32], tags: [u64; 2]) -> (Vec<u32>, Vec<u8>) {
    const X: u64 = 0x10_0000;
    const IDX: u64 = 0x20_0000;
    const OUT: u64 = 0x30_0000;
    const RECORD: u64 = 0x40_0000;
    let n = idx.len();
    let module = jitseam_ptx::parse_module(text).expect("parses");
    let program = jitseam_emu::decode(text, &module, "gather").expect("decodes");
    let mut xb: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut ib: Vec<u8> = idx.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut ob = vec![0xa5u8; n * 4];
    let mut rb = vec![0u8; FAULT_RECORD_BYTES];
    {
        let memory = Regions::new(vec![
            (X, &mut xb[..]),
            (IDX, &mut ib[..]),
            (OUT, &mut ob[..]),
            (RECORD, &mut rb[..]),
        ]);
        let mut params = Vec::new();
        for word in [
            X,
            IDX,
            OUT,
            n as u64,
            RECORD,
            tags[0],
            tags[1],
            x.len() as u64,
        ] {
            params.extend_from_slice(&word.to_le_bytes());
        }
        let dims = LaunchDims {
            grid: [n.div_ceil(32) as u32, 1, 1],
            block: [32, 1, 1],
            dynamic_shared_bytes: 0,
        };
        run_with(&program, &params, dims, &memory, &RunOptions::default())
            .unwrap_or_else(|e| panic!("the guarded gather faulted: {e}"));
    }
    let out = ob
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (out, rb)
}

#[test]
fn the_guarded_gather_runs_in_bounds_and_reports_the_first_fault() {
    let proof = guarded(verify_guarded_entry(GATHER, "gather", &gather_contract()));
    let text = &proof.guarded().expect("guarded").ptx;
    let x: Vec<f32> = (0..40).map(|i| i as f32 * 0.5 + 1.0).collect();
    let idx: Vec<i32> = (0..40).map(|i| (i * 7) % 40).collect();
    let (out, record) = run_gather(text, &x, &idx, [11, 12]);
    for (i, &o) in out.iter().enumerate() {
        assert_eq!(o, x[idx[i] as usize].to_bits(), "out[{i}]");
    }
    assert_eq!(FaultRecord::read(&record), None);
    // One index past the end, one negative: the first to fail fills the record, the others
    // read 0 and every in-range one still gathers.
    let mut bad = idx.clone();
    bad[37] = 40;
    bad[38] = -1;
    let (out, record) = run_gather(text, &x, &bad, [11, 12]);
    for (i, &o) in out.iter().enumerate() {
        let want = match i {
            37 | 38 => 0,
            _ => x[bad[i] as usize].to_bits(),
        };
        assert_eq!(o, want, "out[{i}]");
    }
    let fault = FaultRecord::read(&record).expect("a fault was recorded");
    assert_eq!(fault.guard, 0);
    assert_eq!(fault.tags, [11, 12]);
    assert_eq!(fault.block, [1, 0, 0]);
    assert!(
        fault.thread == [5, 0, 0] || fault.thread == [6, 0, 0],
        "{fault:?}"
    );
    let offset = if fault.thread[0] == 5 {
        160
    } else {
        (-4i64) as u64
    };
    assert_eq!(fault.offset, offset);
    assert_eq!(fault.limit, 40);
}

/// A store through an input, at a loaded index: no guard mends the role.
#[test]
fn a_store_through_an_input_at_a_loaded_index_is_rejected() {
    let text = GATHER.replace(
        "ld.global.f32 	%f1, [%rd11];",
        "st.global.f32 	[%rd11], %f1; // bad",
    );
    let r = verify_guarded_entry(&text, "gather", &gather_contract()).unwrap_err();
    assert_eq!(r.kind, RejectKind::StoreThroughInput, "{r}");
    assert_eq!(r.line, GATHER_LINE);
}

/// An address loaded from memory has no provenance to guard against.
#[test]
fn an_address_loaded_from_memory_is_rejected() {
    let text = GATHER.replace(
        "ld.global.f32 	%f1, [%rd11];",
        "cvt.u64.u32 	%rd14, %r5; ld.global.f32 	%f1, [%rd14];",
    );
    let r = verify_guarded_entry(&text, "gather", &gather_contract()).unwrap_err();
    assert_eq!(r.kind, RejectKind::UnattributedAddress, "{r}");
    assert_eq!(r.line, GATHER_LINE);
}

/// The contract of the rewrite: the declared parameters, then the hidden ones.
fn hidden_contract(proof: &Proof) -> EntryContract {
    let mut contract = gather_contract();
    contract.params.extend(
        proof
            .guarded()
            .expect("guarded")
            .params
            .iter()
            .cloned()
            .map(ParamContract::Guard),
    );
    contract
}

/// A rewriter bug is a decline, not a hole: each guard broken by hand — a bound off by one, the
/// alignment test dropped, the access at its original address, the slot unmasked, the limit of
/// another width, the access left unpredicated where the fault record's path joins the
/// in-bounds one — is rejected by the re-verification at the guard's line, while the rewrite
/// as made is proven.
#[test]
fn a_broken_guard_is_rejected_by_the_re_verification() {
    let proof = guarded(verify_guarded_entry(GATHER, "gather", &gather_contract()));
    let text = &proof.guarded().expect("guarded").ptx;
    let contract = hidden_contract(&proof);
    assert!(verify_entry(text, "gather", &contract).is_ok());
    let breaks: [(&str, &str, &str); 6] = [
        ("off by one", "setp.lt.and.u64", "setp.le.and.u64"),
        (
            "no alignment or wrap test",
            "setp.eq.u64 %__jsgp0, %__jsgr3, %__jsgr1; setp.lt.and.u64 %__jsgp0, %__jsgr2, %__jsgr4, %__jsgp0;",
            "setp.lt.u64 %__jsgp0, %__jsgr1, %__jsgr4;",
        ),
        (
            "the original address",
            "@%__jsgp0 ld.global.f32 \t%f1, [%__jsgr3];",
            "@%__jsgp0 ld.global.f32 \t%f1, [%rd11];",
        ),
        (
            "the slot unmasked and unscaled",
            "shl.b64 %__jsgr3, %__jsgr2, 2;",
            "shl.b64 %__jsgr3, %__jsgr2, 3;",
        ),
        (
            "the predicate inverted",
            "@%__jsgp0 ld.global.f32",
            "@%__jsgp1 ld.global.f32",
        ),
        (
            "the access unpredicated where the fault record's path joins the in-bounds one",
            "@%__jsgp0 ld.global.f32 \t%f1, [%__jsgr3];",
            "ld.global.f32 \t%f1, [%__jsgr3];",
        ),
    ];
    for (what, from, to) in breaks {
        assert!(
            text.contains(from),
            "{what}: `{from}` not in the rewrite:\n{text}"
        );
        let broken = text.replacen(from, to, 1);
        match verify_entry(&broken, "gather", &contract) {
            Err(r) => assert_eq!(r.line, GATHER_LINE, "{what}: {r}"),
            Ok(_) => panic!("{what}: the broken guard was proven:\n{broken}"),
        }
    }
}

/// The fault record is written only at its words: a guard that writes past its end or across
/// two of its words is rejected.
#[test]
fn the_fault_record_is_written_only_at_its_words() {
    let proof = guarded(verify_guarded_entry(GATHER, "gather", &gather_contract()));
    let text = &proof.guarded().expect("guarded").ptx;
    let contract = hidden_contract(&proof);
    for (from, to) in [
        ("[%__jsgr5+40]", "[%__jsgr5+64]"),
        ("[%__jsgr5+16]", "[%__jsgr5+18]"),
    ] {
        let broken = text.replacen(from, to, 1);
        assert_ne!(&broken, text);
        let r = verify_entry(&broken, "gather", &contract).unwrap_err();
        assert_eq!(r.line, GATHER_LINE, "{r}");
    }
}

/// A mix of two parameters' addresses has no single provenance: no guard.
#[test]
fn an_address_of_two_operands_is_rejected() {
    let text = GATHER.replace(
        "add.s64 	%rd11, %rd9, %rd10;",
        "add.s64 	%rd11, %rd9, %rd6;",
    );
    let r = verify_guarded_entry(&text, "gather", &gather_contract()).unwrap_err();
    assert_eq!(r.line, GATHER_LINE, "{r}");
    assert_eq!(r.kind, RejectKind::UnattributedAddress, "{r}");
}

/// An access inside a `.func` cannot be guarded: its text serves every call.
#[test]
fn a_data_dependent_access_in_a_func_is_rejected() {
    let text = GATHER
        .replace(
            ".visible .entry gather(",
            ".func (.reg .f32 %v) pick(.reg .b64 %a)\n{\n\tld.global.f32 \t%v, [%a]; // in the func\n\tret;\n}\n\n.visible .entry gather(",
        )
        .replace(
            "ld.global.f32 	%f1, [%rd11];",
            "call.uni (%f1), pick, (%rd11);",
        );
    let func_line = text
        .lines()
        .position(|l| l.contains("// in the func"))
        .expect("marked") as u32
        + 1;
    let r = verify_guarded_entry(&text, "gather", &gather_contract()).unwrap_err();
    assert_eq!(r.line, func_line, "{r}");
    assert!(r.reason.contains(".func"), "{r}");
}
