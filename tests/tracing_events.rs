//! With a `tracing` subscriber installed, every transition reports its outcome: the stage, the
//! kernel and, for a refusal, the error and whether it was a decline.

use std::sync::{Arc, Mutex};

use jitseam::{AbiKind, AbiSpec, Artifact, Device, ElementKind::F32, Kernel};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// One event's fields, as text.
type Fields = Vec<(String, String)>;

/// A subscriber that keeps every event it sees.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Fields>>>);

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Vec::new();
        event.record(&mut Collect(&mut fields));
        self.0.lock().unwrap().push(fields);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn field<'f>(fields: &'f Fields, name: &str) -> Option<&'f str> {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn every_transition_reports_its_outcome_and_every_refusal_its_reason() {
    let recorder = Recorder::default();
    let events = recorder.0.clone();
    tracing::subscriber::with_default(recorder, || {
        let spec = AbiSpec::new(AbiKind::Scalar, &[F32], &[F32], &[]);
        let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
                    .visible .entry k(.param .u64 a, .param .u64 b, .param .u64 n)\n{\n\tret;\n}\n";
        let kernel = Kernel::describe(Artifact::ptx(text, "k", spec.clone()))
            .unwrap()
            .load()
            .unwrap()
            .bind(&Device::emulator())
            .unwrap();
        drop(kernel);
        let no_outputs = AbiSpec::new(AbiKind::Scalar, &[F32], &[], &[]);
        assert!(Kernel::describe(Artifact::ptx(text, "k", no_outputs)).is_err());
        let missing = Kernel::describe(Artifact::ptx(text, "nope", spec)).unwrap();
        assert!(missing.load().is_err());
    });
    let events = events.lock().unwrap();
    let stages: Vec<(&str, Option<&str>)> = events
        .iter()
        .map(|e| (field(e, "stage").unwrap_or("?"), field(e, "decline")))
        .collect();
    assert_eq!(
        stages,
        [
            ("describe", None),
            ("load", None),
            ("bind", None),
            ("describe", Some("true")),
            ("describe", None),
            ("load", Some("true")),
        ]
    );
    let refused = &events[5];
    assert_eq!(field(refused, "entry"), Some("nope"));
    assert!(
        field(refused, "error").is_some_and(|e| e.contains("no such entry")),
        "{refused:?}"
    );
}

#[test]
fn every_launch_refusal_reports_its_kind() {
    let recorder = Recorder::default();
    let events = recorder.0.clone();
    let spec = AbiSpec::new(AbiKind::Scalar, &[F32], &[F32], &[]);
    let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
                .visible .entry k(.param .u64 a, .param .u64 b, .param .u64 n)\n{\n\tret;\n}\n";
    let device = Device::emulator();
    // Set up under a subscriber of its own, whose events are not this test's: a callsite first
    // reached with no subscriber anywhere in the process is cached as never interesting, and
    // the other test, on another thread, would then miss this load's and bind's events.
    let setup = tracing::subscriber::with_default(Recorder::default(), || {
        Kernel::describe(Artifact::ptx(text, "k", spec))
            .unwrap()
            .load()
            .unwrap()
            .bind(&device)
    });
    let kernel = setup.unwrap();
    let x = device.alloc::<f32>(8).unwrap();
    let mut y = device.alloc::<f32>(8).unwrap();
    let stream = device.default_stream();
    tracing::subscriber::with_default(recorder, || {
        kernel
            .launch(&stream, &[(&x).into()], &mut [(&mut y).into()], &[8], &[])
            .unwrap();
        assert!(
            kernel
                .launch(&stream, &[(&x).into()], &mut [(&mut y).into()], &[9], &[])
                .is_err()
        );
    });
    let events = events.lock().unwrap();
    // A successful launch says nothing (the hot path stays quiet); the refusal is one event.
    assert_eq!(events.len(), 1, "{events:?}");
    let refused = &events[0];
    assert_eq!(field(refused, "stage"), Some("launch"));
    assert_eq!(field(refused, "entry"), Some("k"));
    assert_eq!(field(refused, "decline"), Some("true"));
    assert_eq!(field(refused, "kind"), Some("element_count"));
    assert!(
        field(refused, "error").is_some_and(|e| e.contains("the launch covers 9")),
        "{refused:?}"
    );
}
