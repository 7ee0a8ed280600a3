//! The one `unsafe` boundary of jitseam: a checked, marshaled launch handed to the backend.

use super::{LaunchFacts, check, marshal_with};
use crate::abi::ParamValue;
use crate::device::{BackendFunction, Stream, ViewDesc};
use crate::error::Error;
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
}

impl<'k> Launch<'k> {
    /// A launch of `function`, whose kernel `facts` describe, on `stream`; a successful run
    /// counts one dispatch in `telemetry`.
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
        }
    }

    /// Checks, marshals and queues the launch. `inputs` and `outputs` must describe operands
    /// borrowed (shared, exclusive) for the duration of the call; the public launchers guarantee
    /// it by construction.
    ///
    /// The launch goes to the stream's device, which `check` proves is the device the function
    /// was resolved on (`facts.device`; ids are never reused) — so a caller that holds only a weak
    /// handle to that device (a slot table) launches exactly like a bound kernel.
    pub fn run(
        self,
        inputs: &[ViewDesc],
        outputs: &[ViewDesc],
        shape: &[usize],
        params: &[ParamValue],
    ) -> Result<(), Error> {
        let stream = self.stream;
        let checked = check(
            self.facts,
            stream.device_id(),
            inputs,
            outputs,
            shape,
            params,
        )?;
        // SAFETY: `packet` comes from `marshal_with` over a launch `check` accepted for this
        // function's verified layout, and `check` proved the stream is on `facts.device`, the
        // device `function` was resolved on: the stream and every operand are on that device (ids
        // are never reused, the stream holds a live handle to it, and each `ViewDesc` came from a
        // live buffer borrowed for this call), every pointer plus every index the ABI lets the
        // kernel touch lies inside its allocation, outputs overlap nothing else, and the count and
        // params have exactly the declared types.
        marshal_with(&checked, |packet| unsafe {
            stream.device().backend().launch(
                self.function,
                stream.raw(),
                checked.geometry(),
                packet,
            )
        })?;
        if let Some(cell) = self.telemetry {
            cell.record();
        }
        Ok(())
    }
}
