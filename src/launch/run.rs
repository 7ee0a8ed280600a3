//! [`Launch::run`]: a checked, marshaled launch handed to the backend — the one `unsafe` call of
//! the launch path (`Backend::launch`, whose contract the checks before it establish). The
//! rest of jitseam's `unsafe` code lies below this layer, each block arguing its own contract:
//! the CUDA backend's driver calls and its cudarc slices (`device/cuda/`), the foreign operands'
//! exclusive borrows (`device/operand.rs`), the slot table's occupants and hazard pointers
//! (`slot/`), the telemetry cells' lock-free index (`telemetry/cells.rs`), NVRTC's calls
//! (`nvrtc/`) and the element types' byte views (`dtype.rs`).

use super::check::{accept, check_counts_and_stream};
use super::guarded::marshal_guarded;
use super::{CheckedLaunch, LaunchFacts, check, check_custom, marshal_with};
use crate::abi::ParamValue;
use crate::device::{
    AccessKind, Arg, ArgMut, AsViewDesc, BackendFunction, LaunchConfig, Source, SourceMut, Stream,
    StreamKey, Ticket, ViewDesc,
};
use crate::error::{ConfigProblem, Error, Operand};
use crate::telemetry::DispatchHandle;

/// One launch of a resolved function on a stream, ready to take its operands. Every launch —
/// typed, erased or through a slot — is a `Launch` that [`Launch::run`] checks, marshals and
/// queues; only jitseam builds one.
#[derive(Debug)]
pub struct Launch<'k> {
    facts: LaunchFacts<'k>,
    function: &'k dyn BackendFunction,
    stream: &'k Stream,
    telemetry: Option<&'k DispatchHandle>,
    /// The launch configuration the caller chose (custom ABI only); `None`: the ABI's own.
    config: Option<LaunchConfig>,
}

/// How a launch is shaped: by its logical shape (the scalar, vectorized and strided ABIs, whose
/// grid jitseam chooses) or by a launch configuration (the custom ABI; `None` asks for one
/// thread per element of the kernel's covered count).
#[derive(Debug, Clone, Copy)]
enum Plan<'s> {
    Shape(&'s [usize]),
    Config(Option<LaunchConfig>),
}

impl<'k> Launch<'k> {
    /// A launch of `function`, whose kernel `facts` describe, on `stream`; a successful run
    /// counts one dispatch in `telemetry`, a declined one a decline under its reason.
    pub(crate) fn new(
        facts: LaunchFacts<'k>,
        function: &'k dyn BackendFunction,
        stream: &'k Stream,
        telemetry: Option<&'k DispatchHandle>,
    ) -> Self {
        Self {
            facts,
            function,
            stream,
            telemetry,
            config: None,
        }
    }

    /// The same launch with the configuration `config`, which only a custom-ABI kernel takes.
    pub(crate) fn with_config(mut self, config: LaunchConfig) -> Self {
        self.config = Some(config);
        self
    }

    /// The facts of the kernel this launch runs.
    pub(super) fn facts(&self) -> LaunchFacts<'k> {
        self.facts
    }

    /// A refused launch: a decline is counted in the kernel's telemetry cell under the error's
    /// kind, and every refusal is reported to `tracing`. Hands `error` back.
    #[cold]
    pub(super) fn declined(&self, error: Error) -> Error {
        if error.is_decline()
            && let Some(cell) = self.telemetry
        {
            cell.record_decline(error.kind_name());
        }
        crate::trace::refused("launch", self.facts.entry, &error);
        error
    }

    /// Checks, orders, marshals and queues the launch.
    ///
    /// Each operand is a live borrow ([`Arg`] and [`ArgMut`] are built only from borrowed
    /// buffers, views or cudarc slices), so the memory it describes exists for the call and
    /// outputs are not aliased by safe code. Before the launch is queued, the stream waits on
    /// the device for each operand's conflicting uses on other streams; once it is queued, it
    /// is logged as a read of every input and a write of every output, so that later uses wait
    /// for it.
    ///
    /// The launch goes to the stream's device, which `check` proves is the device the function
    /// was resolved on (`facts.device`; ids are never reused) — so a caller that holds only a
    /// weak handle to that device (a slot table) launches exactly like a bound kernel.
    pub fn run(
        self,
        inputs: &[Arg<'_>],
        outputs: &[ArgMut<'_>],
        shape: &[usize],
        params: &[ParamValue],
    ) -> Result<(), Error> {
        if self.config.is_some() {
            return Err(self.not_custom());
        }
        let foreign = inputs
            .iter()
            .any(|arg| matches!(arg.source, Source::Foreign(_)))
            || outputs
                .iter()
                .any(|arg| matches!(arg.source, SourceMut::Foreign(_)));
        let queued = if foreign {
            self.run_foreign(inputs, outputs, Plan::Shape(shape), params)
        } else {
            self.run_local(inputs, outputs, shape, params)
        };
        self.finish(queued)
    }

    /// [`Launch::run`] for a custom-ABI kernel: `inputs`, `outputs` and `params` are its `In`
    /// pointers, `Out` pointers and by-value params, each in declaration order; the launch
    /// configuration is the one given with the launch, or one thread per element of the
    /// kernel's covered count. Checked by [`check_custom`](super::check_custom), then marshaled
    /// and queued exactly like every other launch. Out of line: the other ABIs' launches keep
    /// their frame.
    #[doc(hidden)]
    #[inline(never)]
    pub fn run_custom(
        self,
        inputs: &[Arg<'_>],
        outputs: &[ArgMut<'_>],
        params: &[ParamValue],
    ) -> Result<(), Error> {
        // Through the path that completes every description into a copy first (for foreign
        // memory; a copy of the others costs a few stores): one more caller of the queueing
        // code would take it out of line for every ABI's launch.
        let queued = self.run_foreign(inputs, outputs, Plan::Config(self.config), params);
        self.finish(queued)
    }

    /// A launch with a configuration of a kernel whose ABI chooses its own grid.
    #[cold]
    fn not_custom(&self) -> Error {
        self.declined(Error::LaunchConfig {
            entry: self.facts.entry.to_owned(),
            problem: ConfigProblem::NotCustom {
                abi: Box::new(self.facts.spec.abi.clone()),
            },
        })
    }

    /// Counts a queued launch in the kernel's telemetry cell, or reports a refused one.
    #[inline(always)]
    fn finish(&self, queued: Result<(), Error>) -> Result<(), Error> {
        match queued {
            Ok(()) => {
                if let Some(cell) = self.telemetry {
                    cell.record();
                    super::telemetry::launched(self.stream, cell);
                }
                Ok(())
            }
            Err(error) => Err(self.declined(error)),
        }
    }

    /// [`Launch::run`] when every description is complete in its operand: checked and
    /// marshaled in place.
    #[inline(always)]
    fn run_local(
        &self,
        inputs: &[Arg<'_>],
        outputs: &[ArgMut<'_>],
        shape: &[usize],
        params: &[ParamValue],
    ) -> Result<(), Error> {
        // The checks hand back only what they decided; the accepted launch is built here, once,
        // in the frame that queues it.
        let accepted = accept(
            &self.facts,
            self.stream.device_id(),
            inputs,
            outputs,
            shape,
            params,
        )?;
        let checked = CheckedLaunch::accepted(self.facts, inputs, outputs, shape, params, accepted);
        self.queue(&checked, inputs, outputs)
    }

    /// The check of the launch's plan: [`check`] for a shape, [`check_custom`] for a config.
    #[inline(always)]
    fn check<'a, I: AsViewDesc, O: AsViewDesc>(
        &self,
        stream: crate::liveness::DeviceId,
        inputs: &'a [I],
        outputs: &'a [O],
        shape: Plan<'a>,
        params: &'a [ParamValue],
    ) -> Result<CheckedLaunch<'a, I, O>, Error>
    where
        'k: 'a,
    {
        match shape {
            Plan::Shape(shape) => check(self.facts, stream, inputs, outputs, shape, params),
            Plan::Config(config) => {
                check_custom(self.facts, stream, config, inputs, outputs, params)
            }
        }
    }

    /// [`Launch::run`] with foreign memory among the operands (and every custom-ABI launch): a
    /// foreign address is known only once it is acquired (which orders the stream after its
    /// earlier uses), so the descriptions are completed into a copy, checked and marshaled
    /// from there.
    #[inline(never)]
    fn run_foreign(
        &self,
        inputs: &[Arg<'_>],
        outputs: &[ArgMut<'_>],
        shape: Plan<'_>,
        params: &[ParamValue],
    ) -> Result<(), Error> {
        let operands = inputs.len() + outputs.len();
        let mut inline = [EMPTY; INLINE];
        let mut heap = Vec::new();
        let descs = if operands <= INLINE {
            &mut inline[..operands]
        } else {
            heap.resize(operands, EMPTY);
            &mut heap[..]
        };
        let stream = self.stream;
        self.check_foreign_devices(inputs, outputs, params.len())?;
        // Foreign memory orders itself: asking for its address makes the stream wait for its
        // earlier uses, and dropping the guards (after queueing) logs this one with its owner.
        let mut guards = Vec::new();
        let (in_descs, out_descs) = descs.split_at_mut(inputs.len());
        for (desc, arg) in in_descs.iter_mut().zip(inputs) {
            *desc = match arg.source {
                Source::Log(_) => arg.desc,
                Source::Foreign(memory) => {
                    let (desc, guard) = memory.acquire(stream.raw())?;
                    guards.push(guard);
                    desc
                }
            };
        }
        for (desc, arg) in out_descs.iter_mut().zip(outputs) {
            *desc = match &arg.source {
                SourceMut::Log(_) => arg.desc,
                SourceMut::Foreign(memory) => {
                    // SAFETY: the one use of this output's borrow in this launch, dropped (with
                    // its guard) before `run` returns. No other launch can take it meanwhile: the
                    // `ForeignRef` is not `Sync` (no other thread has it), and on this thread
                    // only jitseam's and cudarc's code runs until then, none of which launches
                    // (`check_foreign_devices` proved the stream is a CUDA stream of this
                    // memory's device, whose handle is jitseam's; a custom backend's stream,
                    // whose code could re-enter a launch with this very call, never gets here).
                    let (desc, guard) = unsafe { memory.get() }.acquire_mut(stream.raw())?;
                    guards.push(guard);
                    desc
                }
            };
        }
        let (in_descs, out_descs) = descs.split_at(inputs.len());
        let checked = self.check(stream.device_id(), in_descs, out_descs, shape, params)?;
        self.queue(&checked, inputs, outputs)?;
        drop(guards);
        Ok(())
    }

    /// Refuses foreign memory on another device than the kernel's, and a stream of another
    /// device, before anything is acquired.
    ///
    /// Acquiring lends out each foreign output exclusively (`ForeignRef::get`) and asks the
    /// stream's backend handle for its driver stream — code of the stream's backend, which for
    /// a custom backend is the user's, and could launch again with these very outputs. Checked
    /// first, the stream is on the device of the foreign memory (a CUDA device: only cudarc
    /// slices are foreign), whose streams are jitseam's own handles, so no code but jitseam's
    /// and cudarc's runs while an output is lent. Counts and the stream first, as `check` does.
    fn check_foreign_devices(
        &self,
        inputs: &[Arg<'_>],
        outputs: &[ArgMut<'_>],
        params: usize,
    ) -> Result<(), Error> {
        let facts = self.facts;
        check_counts_and_stream(
            &facts,
            self.stream.device_id(),
            inputs.len(),
            outputs.len(),
            params,
        )?;
        let foreign_inputs = inputs
            .iter()
            .enumerate()
            .filter(|(_, arg)| matches!(arg.source, Source::Foreign(_)))
            .map(|(k, arg)| (Operand::Input(k), arg.desc.device));
        let foreign_outputs = outputs
            .iter()
            .enumerate()
            .filter(|(_, arg)| matches!(arg.source, SourceMut::Foreign(_)))
            .map(|(m, arg)| (Operand::Output(m), arg.desc.device));
        for (operand, device) in foreign_inputs.chain(foreign_outputs) {
            if device != facts.device {
                return Err(Error::DeviceMismatch {
                    entry: facts.entry.to_owned(),
                    operand,
                    expected: facts.device,
                    found: device,
                });
            }
        }
        Ok(())
    }

    /// Orders, marshals and queues a launch `check` accepted for `inputs` and `outputs` (whose
    /// descriptions `checked` holds, in place or completed), and logs it.
    ///
    /// When the stream owns every operand's log — every launch of a program that keeps each
    /// buffer to its stream — each `before` would take its fast path and hand back
    /// [`Ticket::OWNED`]: that is asked of every log first (no side effect), so such a launch
    /// keeps no tickets at all. Otherwise [`Launch::queue_ordered`] runs each `before`.
    #[inline(always)]
    fn queue<I: AsViewDesc, O: AsViewDesc>(
        &self,
        checked: &CheckedLaunch<'_, I, O>,
        inputs: &[Arg<'_>],
        outputs: &[ArgMut<'_>],
    ) -> Result<(), Error> {
        let raw = self.stream.raw_arc();
        let key = StreamKey::of(raw);
        let owned = inputs.iter().all(|arg| match arg.source {
            Source::Log(log) => log.owned(key, AccessKind::Read),
            Source::Foreign(_) => true,
        }) && outputs.iter().all(|arg| match &arg.source {
            SourceMut::Log(log) => log.owned(key, AccessKind::Write),
            SourceMut::Foreign(_) => true,
        });
        if !owned {
            return self.queue_ordered(checked, inputs, outputs);
        }
        // The stream owns every log: no use on another stream to wait for.
        self.hand_off(checked)?;
        for arg in inputs {
            if let Source::Log(log) = arg.source {
                log.after_owned(raw, key, AccessKind::Read);
            }
        }
        for arg in outputs {
            if let SourceMut::Log(log) = &arg.source {
                log.after_owned(raw, key, AccessKind::Write);
            }
        }
        Ok(())
    }

    /// [`Launch::queue`] on a stream that does not own every operand's log: [`Launch::order`]
    /// makes it wait for the conflicting uses on other streams, and each ticket logs the queued
    /// launch. Out of line: the launch that keeps each buffer to its stream never gets here,
    /// and its own path then carries neither the tickets nor a second hand-off.
    #[inline(never)]
    fn queue_ordered<I: AsViewDesc, O: AsViewDesc>(
        &self,
        checked: &CheckedLaunch<'_, I, O>,
        inputs: &[Arg<'_>],
        outputs: &[ArgMut<'_>],
    ) -> Result<(), Error> {
        let raw = self.stream.raw_arc();
        let tickets = self.order(inputs, outputs)?;
        self.hand_off(checked)?;
        let tickets = match &tickets {
            Tickets::Inline(tickets) => &tickets[..],
            Tickets::Heap(tickets) => &tickets[..],
        };
        let (in_tickets, out_tickets) = tickets.split_at(inputs.len().min(tickets.len()));
        for (ticket, arg) in in_tickets.iter().zip(inputs) {
            if let (Source::Log(log), Some(ticket)) = (arg.source, ticket) {
                log.after(raw, AccessKind::Read, *ticket);
            }
        }
        for (ticket, arg) in out_tickets.iter().zip(outputs) {
            if let (SourceMut::Log(log), Some(ticket)) = (&arg.source, ticket) {
                log.after(raw, AccessKind::Write, *ticket);
            }
        }
        Ok(())
    }

    /// Marshals a launch `check` accepted and hands it to the backend, on a stream that already
    /// waits for every conflicting earlier use of each operand: [`Launch::queue`] calls it where
    /// the stream owns every log, [`Launch::queue_ordered`] once `order` made it wait, and
    /// foreign memory ordered itself when it was acquired.
    #[inline(always)]
    fn hand_off<I: AsViewDesc, O: AsViewDesc>(
        &self,
        checked: &CheckedLaunch<'_, I, O>,
    ) -> Result<(), Error> {
        let stream = self.stream;
        let backend = stream.device().backend();
        match self.facts.guarded {
            None => {
                // SAFETY: `packet` comes from `marshal_with` over a launch `check` (or
                // `check_custom`) accepted for this function's verified layout, which proved the
                // stream is on `facts.device`, the device `function` was resolved on: the stream
                // and every operand are on that device (ids are never reused, the stream holds a
                // live handle to it, and each description came from a live buffer, view or cudarc
                // slice borrowed for this call — read in place from the operands, or completed from
                // them once their foreign memory was acquired), every pointer plus every index the
                // ABI lets the kernel touch lies inside its allocation (for the custom ABI: each
                // buffer holds its declared extent for this launch's params and configuration,
                // which fits the device and the kernel's block directives), outputs overlap nothing
                // else, and the count and params have exactly the declared types. The stream now
                // waits for every conflicting earlier use of each operand (both callers' duty,
                // above: the `before` calls of `order`, none needed where the stream owns every
                // log, and the foreign guards), and each is logged once the launch is queued (by
                // the caller, after this returns).
                marshal_with(checked, |packet| unsafe {
                    backend.launch(self.function, stream.raw(), checked.geometry(), packet)
                })
            }
            Some(guarded) => {
                let (record, tag) = stream.device().guard_record(
                    stream.raw_arc(),
                    &guarded.table,
                    &guarded.cache,
                )?;
                // SAFETY: as above for the declared parameters, which `marshal_guarded` writes
                // exactly as `marshal_with` does. The hidden ones after them are what the
                // guarded rewrite (the function `bind()` loaded for this kernel) takes: the
                // address of this stream's fault record — a live allocation of this device
                // of `FAULT_RECORD_BYTES`, written by no one else but launches on this stream,
                // which run in order — and limits no larger than what this checked launch
                // lets each guarded operand reach, which the rewrite's proof assumes of them.
                marshal_guarded(checked, guarded, record, tag, |packet| unsafe {
                    backend.launch(self.function, stream.raw(), checked.geometry(), packet)
                })
            }
        }
    }

    /// Orders a launch on a stream that does not own every operand's log: each log's `before`
    /// makes the stream wait for the conflicting uses on other streams, and its ticket is kept
    /// for the `after` that logs the queued launch. Out of line: the launch that keeps each
    /// buffer to its stream never gets here.
    #[inline(never)]
    fn order(&self, inputs: &[Arg<'_>], outputs: &[ArgMut<'_>]) -> Result<Tickets, Error> {
        let operands = inputs.len() + outputs.len();
        let mut tickets = if operands <= INLINE {
            Tickets::Inline([None; INLINE])
        } else {
            Tickets::Heap(vec![None; operands])
        };
        let all = match &mut tickets {
            Tickets::Inline(tickets) => &mut tickets[..],
            Tickets::Heap(tickets) => &mut tickets[..],
        };
        let backend = self.stream.device().backend();
        let raw = self.stream.raw_arc();
        let (in_tickets, out_tickets) = all.split_at_mut(inputs.len().min(all.len()));
        for (ticket, arg) in in_tickets.iter_mut().zip(inputs) {
            if let Source::Log(log) = arg.source {
                *ticket = Some(log.before(backend, raw, AccessKind::Read)?);
            }
        }
        for (ticket, arg) in out_tickets.iter_mut().zip(outputs) {
            if let SourceMut::Log(log) = &arg.source {
                *ticket = Some(log.before(backend, raw, AccessKind::Write)?);
            }
        }
        Ok(tickets)
    }
}

/// The tickets of one launch's operands, for the `after` of each once it is queued.
enum Tickets {
    /// One per operand, inputs then outputs (`None` for foreign memory), up to [`INLINE`].
    Inline([Option<Ticket>; INLINE]),
    /// As `Inline`, for more operands.
    Heap(Vec<Option<Ticket>>),
}

/// Operands whose tickets (and completed descriptions) live on the stack: every kernel up to
/// eight.
const INLINE: usize = 8;

/// A placeholder the operands' descriptions overwrite.
const EMPTY: ViewDesc = ViewDesc::contiguous(
    crate::liveness::DeviceId::NONE,
    crate::dtype::ElementKind::U8,
    0,
    0,
    0,
    0,
);
