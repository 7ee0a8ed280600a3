//! A small explicit binary format for proofs and contracts, so that a proof can be kept on disk
//! and read back as the very value the verifier made (jitseam's proof cache).
//!
//! Every field is written in order: integers little-endian, strings and lists behind a `u64`
//! length, each enum behind a one-byte tag. The encoding is injective — two different values
//! never encode to the same bytes — so comparing encodings compares values. Decoding takes
//! only a complete, well-formed encoding of the current [`FORMAT`] (an unknown tag, a short
//! field, bytes left over or another format version is `None`); it never panics.
//!
//! The format checks shape, not truth: bytes that decode are some `Proof`, not necessarily one
//! the verifier made. Whoever stores proofs must know who wrote them (jitseam's on-disk cache
//! tags each entry with a per-user secret).

use std::sync::Arc;

use crate::contract::{EntryContract, Extent, ExtentTerm, OperandRef, ParamContract};
use crate::proof::{
    AccessClaim, AccessKind, AccessSummary, ClaimTarget, Coverage, Guard, GuardParam, Guarded,
    LaunchCondition, Limit, Proof,
};
use crate::reject::RejectKind;

/// The version of the proof encoding; [`Proof::decode`] refuses any other.
pub const FORMAT: u8 = 1;

/// Appends fields to a byte buffer.
#[derive(Debug, Default, Clone)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    /// One byte.
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }

    /// Four bytes, little-endian.
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    /// Eight bytes, little-endian.
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    /// A length (as `u64`).
    pub fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }

    /// `bytes` behind their length.
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.len(bytes.len());
        self.0.extend_from_slice(bytes);
    }

    /// A string behind its length.
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}

/// Reads fields from the front of a byte slice; every read is `None` past the end.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a>(pub &'a [u8]);

impl<'a> Reader<'a> {
    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, tail) = self.0.split_at_checked(n)?;
        self.0 = tail;
        Some(head)
    }

    /// One byte.
    pub fn u8(&mut self) -> Option<u8> {
        self.take(1)?.first().copied()
    }

    /// Four bytes, little-endian.
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    /// Eight bytes, little-endian.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A length; `None` for one longer than the bytes left (each item takes at least a byte),
    /// so a damaged length never reserves memory it cannot fill.
    pub fn len(&mut self) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n <= self.0.len()).then_some(n)
    }

    /// Bytes behind their length.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.len()?;
        self.take(n)
    }

    /// A UTF-8 string behind its length.
    pub fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Proof {
    /// The proof in the [`codec`](crate::codec) format, every field included: conditions,
    /// summaries, claims, guards and the guarded PTX.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u8(FORMAT);
        w.u8(match self.coverage {
            Coverage::GridStride => 0,
            Coverage::OneThreadPerElement => 1,
        });
        w.len(self.conditions.len());
        for c in &self.conditions {
            condition(&mut w, c);
        }
        w.len(self.accesses.len());
        for a in &self.accesses {
            for v in [a.param, a.loads, a.stores, a.atomics, a.width, a.align] {
                w.u32(v);
            }
        }
        w.len(self.claims.len());
        for c in &self.claims {
            w.u32(c.line);
            target(&mut w, &c.target);
            w.u8(kind(c.kind));
            w.u32(c.bytes);
        }
        w.len(self.guards.len());
        for g in &self.guards {
            w.u32(g.line);
            target(&mut w, &g.target);
            w.str(&g.name);
            w.u8(kind(g.kind));
            w.u32(g.bytes);
            w.u8(reason(g.reason));
            w.str(&g.why);
            w.u64(g.span.0 as u64);
            w.u64(g.span.1 as u64);
            match &g.limit {
                Limit::Const(n) => {
                    w.u8(0);
                    w.u64(*n);
                }
                Limit::Param(p) => {
                    w.u8(1);
                    guard_param(&mut w, p);
                }
            }
        }
        match self.guarded.as_deref() {
            None => w.u8(0),
            Some(g) => {
                w.u8(1);
                w.str(&g.ptx);
                w.len(g.params.len());
                for p in &g.params {
                    guard_param(&mut w, p);
                }
            }
        }
        w.0
    }

    /// The proof `bytes` encode ([`Proof::encode`]); `None` for anything else.
    pub fn decode(bytes: &[u8]) -> Option<Proof> {
        let mut r = Reader(bytes);
        if r.u8()? != FORMAT {
            return None;
        }
        let coverage = match r.u8()? {
            0 => Coverage::GridStride,
            1 => Coverage::OneThreadPerElement,
            _ => return None,
        };
        let conditions = list(&mut r, read_condition)?;
        let accesses = list(&mut r, |r| {
            Some(AccessSummary {
                param: r.u32()?,
                loads: r.u32()?,
                stores: r.u32()?,
                atomics: r.u32()?,
                width: r.u32()?,
                align: r.u32()?,
            })
        })?;
        let claims = list(&mut r, |r| {
            Some(AccessClaim {
                line: r.u32()?,
                target: read_target(r)?,
                kind: read_kind(r)?,
                bytes: r.u32()?,
            })
        })?;
        let guards = list(&mut r, |r| {
            Some(Guard {
                line: r.u32()?,
                target: read_target(r)?,
                name: r.str()?.to_owned(),
                kind: read_kind(r)?,
                bytes: r.u32()?,
                reason: read_reason(r)?,
                why: r.str()?.to_owned(),
                span: (
                    usize::try_from(r.u64()?).ok()?,
                    usize::try_from(r.u64()?).ok()?,
                ),
                limit: match r.u8()? {
                    0 => Limit::Const(r.u64()?),
                    1 => Limit::Param(read_guard_param(r)?),
                    _ => return None,
                },
            })
        })?;
        let guarded = match r.u8()? {
            0 => None,
            1 => Some(Arc::new(Guarded {
                ptx: r.str()?.to_owned(),
                params: list(&mut r, read_guard_param)?,
            })),
            _ => return None,
        };
        r.is_empty().then_some(Proof {
            coverage,
            conditions,
            accesses,
            claims,
            guards,
            guarded,
        })
    }
}

impl EntryContract {
    /// The contract in the [`codec`](crate::codec) format: equal contracts, equal bytes, and
    /// only those.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u8(FORMAT);
        w.len(self.params.len());
        for p in &self.params {
            match p {
                ParamContract::Pointer {
                    operand,
                    access_bytes,
                    elem_bytes,
                    extent,
                } => {
                    w.u8(0);
                    operand_ref(&mut w, *operand);
                    w.u32(*access_bytes);
                    w.u32(*elem_bytes);
                    match extent {
                        Extent::Dense => w.u8(0),
                        Extent::Strided { rank } => {
                            w.u8(1);
                            w.u8(*rank);
                        }
                        Extent::Declared(terms) => {
                            w.u8(2);
                            w.len(terms.len());
                            for t in terms {
                                extent_term(&mut w, *t);
                            }
                        }
                    }
                }
                ParamContract::Count => w.u8(1),
                ParamContract::Shape { axis } => {
                    w.u8(2);
                    w.u8(*axis);
                }
                ParamContract::Stride { operand, axis } => {
                    w.u8(3);
                    operand_ref(&mut w, *operand);
                    w.u8(*axis);
                }
                ParamContract::Value => w.u8(4),
                ParamContract::Int { signed, bits } => {
                    w.u8(5);
                    w.u8(u8::from(*signed));
                    w.u8(*bits);
                }
                ParamContract::Guard(g) => {
                    w.u8(6);
                    guard_param(&mut w, g);
                }
            }
        }
        match self.block {
            None => w.u8(0),
            Some([x, y, z]) => {
                w.u8(1);
                w.u32(x);
                w.u32(y);
                w.u32(z);
            }
        }
        match &self.dynamic_shared {
            None => w.u8(0),
            Some(terms) => {
                w.u8(1);
                w.len(terms.len());
                for t in terms {
                    extent_term(&mut w, *t);
                }
            }
        }
        w.0
    }
}

fn list<'a, T>(
    r: &mut Reader<'a>,
    mut item: impl FnMut(&mut Reader<'a>) -> Option<T>,
) -> Option<Vec<T>> {
    let n = r.len()?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(item(r)?);
    }
    Some(out)
}

fn condition(w: &mut Writer, c: &LaunchCondition) {
    match *c {
        LaunchCondition::CountPlusThreadsAtMost { limit } => {
            w.u8(0);
            w.u64(limit);
        }
        LaunchCondition::ThreadsAtMost { limit } => {
            w.u8(1);
            w.u64(limit);
        }
        LaunchCondition::AxisThreadsAtMost { limit } => {
            w.u8(2);
            w.u64(limit);
        }
        LaunchCondition::ExtentsAtMost { limit } => {
            w.u8(3);
            w.u64(limit);
        }
        LaunchCondition::ExtentsPlusAxisThreadsAtMost { limit } => {
            w.u8(4);
            w.u64(limit);
        }
        LaunchCondition::DynamicSharedAtLeast { bytes_per_thread_x } => {
            w.u8(5);
            w.u32(bytes_per_thread_x);
        }
        LaunchCondition::BlockAtMost { x, y, z } => {
            w.u8(6);
            w.u32(x);
            w.u32(y);
            w.u32(z);
        }
        LaunchCondition::BlocksAtMost { limit } => {
            w.u8(7);
            w.u64(limit);
        }
    }
}

fn read_condition(r: &mut Reader<'_>) -> Option<LaunchCondition> {
    Some(match r.u8()? {
        0 => LaunchCondition::CountPlusThreadsAtMost { limit: r.u64()? },
        1 => LaunchCondition::ThreadsAtMost { limit: r.u64()? },
        2 => LaunchCondition::AxisThreadsAtMost { limit: r.u64()? },
        3 => LaunchCondition::ExtentsAtMost { limit: r.u64()? },
        4 => LaunchCondition::ExtentsPlusAxisThreadsAtMost { limit: r.u64()? },
        5 => LaunchCondition::DynamicSharedAtLeast {
            bytes_per_thread_x: r.u32()?,
        },
        6 => LaunchCondition::BlockAtMost {
            x: r.u32()?,
            y: r.u32()?,
            z: r.u32()?,
        },
        7 => LaunchCondition::BlocksAtMost { limit: r.u64()? },
        _ => return None,
    })
}

fn target(w: &mut Writer, t: &ClaimTarget) {
    match t {
        ClaimTarget::Param(i) => {
            w.u8(0);
            w.u32(*i);
        }
        ClaimTarget::Shared(name) => {
            w.u8(1);
            w.str(name);
        }
        ClaimTarget::Local(name) => {
            w.u8(2);
            w.str(name);
        }
        ClaimTarget::Table(name) => {
            w.u8(3);
            w.str(name);
        }
    }
}

fn read_target(r: &mut Reader<'_>) -> Option<ClaimTarget> {
    Some(match r.u8()? {
        0 => ClaimTarget::Param(r.u32()?),
        1 => ClaimTarget::Shared(r.str()?.to_owned()),
        2 => ClaimTarget::Local(r.str()?.to_owned()),
        3 => ClaimTarget::Table(r.str()?.to_owned()),
        _ => return None,
    })
}

const KINDS: [AccessKind; 3] = [AccessKind::Load, AccessKind::Store, AccessKind::Atomic];

fn kind(k: AccessKind) -> u8 {
    match k {
        AccessKind::Load => 0,
        AccessKind::Store => 1,
        AccessKind::Atomic => 2,
    }
}

fn read_kind(r: &mut Reader<'_>) -> Option<AccessKind> {
    KINDS.get(usize::from(r.u8()?)).copied()
}

const REASONS: [RejectKind; 10] = [
    RejectKind::StoreThroughInput,
    RejectKind::UnattributedAddress,
    RejectKind::OutOfBounds,
    RejectKind::WrongWidth,
    RejectKind::Misaligned,
    RejectKind::CrossedStride,
    RejectKind::DataDependentIndex,
    RejectKind::MayWrap,
    RejectKind::Unsupported,
    RejectKind::UnknownForm,
];

/// The kind's position in [`REASONS`] (the tests check the two agree).
fn reason(k: RejectKind) -> u8 {
    match k {
        RejectKind::StoreThroughInput => 0,
        RejectKind::UnattributedAddress => 1,
        RejectKind::OutOfBounds => 2,
        RejectKind::WrongWidth => 3,
        RejectKind::Misaligned => 4,
        RejectKind::CrossedStride => 5,
        RejectKind::DataDependentIndex => 6,
        RejectKind::MayWrap => 7,
        RejectKind::Unsupported => 8,
        RejectKind::UnknownForm => 9,
    }
}

fn read_reason(r: &mut Reader<'_>) -> Option<RejectKind> {
    REASONS.get(usize::from(r.u8()?)).copied()
}

fn guard_param(w: &mut Writer, p: &GuardParam) {
    match p {
        GuardParam::FaultRecord => w.u8(0),
        GuardParam::Tag(i) => {
            w.u8(1);
            w.u8(*i);
        }
        GuardParam::Limit { target: t, bytes } => {
            w.u8(2);
            target(w, t);
            w.u32(*bytes);
        }
    }
}

fn read_guard_param(r: &mut Reader<'_>) -> Option<GuardParam> {
    Some(match r.u8()? {
        0 => GuardParam::FaultRecord,
        1 => GuardParam::Tag(r.u8()?),
        2 => GuardParam::Limit {
            target: read_target(r)?,
            bytes: r.u32()?,
        },
        _ => return None,
    })
}

fn operand_ref(w: &mut Writer, o: OperandRef) {
    match o {
        OperandRef::Input(k) => {
            w.u8(0);
            w.u32(k);
        }
        OperandRef::Output(m) => {
            w.u8(1);
            w.u32(m);
        }
    }
}

fn extent_term(w: &mut Writer, t: ExtentTerm) {
    match t {
        ExtentTerm::Lit(v) => {
            w.u8(0);
            w.u64(v);
        }
        ExtentTerm::Param(i) => {
            w.u8(1);
            w.u32(i);
        }
        ExtentTerm::Grid(a) => {
            w.u8(2);
            w.u8(a);
        }
        ExtentTerm::Block(a) => {
            w.u8(3);
            w.u8(a);
        }
        ExtentTerm::Add => w.u8(4),
        ExtentTerm::Sub => w.u8(5),
        ExtentTerm::Mul => w.u8(6),
        ExtentTerm::Div => w.u8(7),
        ExtentTerm::DivCeil => w.u8(8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A proof with every variant the format knows, guarded.
    fn sample() -> Proof {
        let limit = GuardParam::Limit {
            target: ClaimTarget::Param(1),
            bytes: 16,
        };
        Proof {
            coverage: Coverage::OneThreadPerElement,
            conditions: vec![
                LaunchCondition::CountPlusThreadsAtMost {
                    limit: u64::MAX - 1,
                },
                LaunchCondition::ThreadsAtMost { limit: 1 << 31 },
                LaunchCondition::AxisThreadsAtMost { limit: 7 },
                LaunchCondition::ExtentsAtMost { limit: 8 },
                LaunchCondition::ExtentsPlusAxisThreadsAtMost { limit: 9 },
                LaunchCondition::BlocksAtMost { limit: 10 },
                LaunchCondition::DynamicSharedAtLeast {
                    bytes_per_thread_x: 12,
                },
                LaunchCondition::BlockAtMost { x: 32, y: 8, z: 1 },
            ],
            accesses: vec![AccessSummary {
                param: 1,
                loads: 2,
                stores: 3,
                atomics: 4,
                width: 4,
                align: 16,
            }],
            claims: vec![
                AccessClaim {
                    line: 20,
                    target: ClaimTarget::Shared("tile".into()),
                    kind: AccessKind::Store,
                    bytes: 4,
                },
                AccessClaim {
                    line: 21,
                    target: ClaimTarget::Local("frame".into()),
                    kind: AccessKind::Atomic,
                    bytes: 8,
                },
                AccessClaim {
                    line: 22,
                    target: ClaimTarget::Table("lut".into()),
                    kind: AccessKind::Load,
                    bytes: 2,
                },
            ],
            guards: vec![
                Guard {
                    line: 30,
                    target: ClaimTarget::Param(1),
                    name: "bias".into(),
                    kind: AccessKind::Load,
                    bytes: 16,
                    reason: RejectKind::OutOfBounds,
                    why: "may fall outside `bias`".into(),
                    span: (100, 140),
                    limit: Limit::Param(limit.clone()),
                },
                Guard {
                    line: 31,
                    target: ClaimTarget::Shared("tile".into()),
                    name: "tile".into(),
                    kind: AccessKind::Store,
                    bytes: 4,
                    reason: RejectKind::UnknownForm,
                    why: "ü".into(),
                    span: (141, 170),
                    limit: Limit::Const(256),
                },
            ],
            guarded: Some(Arc::new(Guarded {
                ptx: ".version 8.8\n".into(),
                params: vec![GuardParam::FaultRecord, GuardParam::Tag(1), limit],
            })),
        }
    }

    #[test]
    fn a_proof_round_trips_and_only_its_whole_encoding_decodes() {
        let proof = sample();
        let bytes = proof.encode();
        assert_eq!(Proof::decode(&bytes), Some(proof.clone()));
        let plain = Proof {
            guards: Vec::new(),
            guarded: None,
            ..proof
        };
        assert_eq!(Proof::decode(&plain.encode()), Some(plain));
        for cut in 0..bytes.len() {
            assert_eq!(Proof::decode(&bytes[..cut]), None, "truncated at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(Proof::decode(&longer), None);
        let mut other = bytes;
        other[0] = FORMAT + 1;
        assert_eq!(Proof::decode(&other), None);
    }

    #[test]
    fn every_reject_kind_has_its_own_tag() {
        for (i, &k) in REASONS.iter().enumerate() {
            assert_eq!(usize::from(reason(k)), i, "{k}");
        }
    }

    #[test]
    fn different_contracts_encode_differently() {
        let pointer = |extent| ParamContract::Pointer {
            operand: OperandRef::Input(0),
            access_bytes: 4,
            elem_bytes: 4,
            extent,
        };
        let contracts = [
            EntryContract::default(),
            EntryContract {
                params: vec![pointer(Extent::Dense), ParamContract::Count],
                block: None,
                dynamic_shared: None,
            },
            EntryContract {
                params: vec![pointer(Extent::Dense), ParamContract::Count],
                block: Some([32, 8, 1]),
                dynamic_shared: None,
            },
            EntryContract {
                params: vec![pointer(Extent::Dense), ParamContract::Count],
                block: None,
                dynamic_shared: Some(vec![ExtentTerm::Lit(128)]),
            },
            EntryContract {
                params: vec![pointer(Extent::Strided { rank: 2 }), ParamContract::Count],
                block: None,
                dynamic_shared: None,
            },
            EntryContract {
                params: vec![
                    pointer(Extent::Declared(vec![
                        ExtentTerm::Param(1),
                        ExtentTerm::Lit(1),
                        ExtentTerm::Sub,
                    ])),
                    ParamContract::Int {
                        signed: true,
                        bits: 32,
                    },
                ],
                block: None,
                dynamic_shared: None,
            },
            EntryContract {
                params: vec![
                    pointer(Extent::Declared(vec![ExtentTerm::Param(1)])),
                    ParamContract::Int {
                        signed: true,
                        bits: 32,
                    },
                ],
                block: None,
                dynamic_shared: None,
            },
        ];
        for (i, a) in contracts.iter().enumerate() {
            for (j, b) in contracts.iter().enumerate() {
                assert_eq!(a.encode() == b.encode(), i == j, "{a:?} vs {b:?}");
            }
        }
    }
}
