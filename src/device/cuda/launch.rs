//! Launching: the `void**` array `cuLaunchKernel` reads, pointed into the argument packet, and
//! the launch itself. Launches are asynchronous; the function handle notes the stream so its
//! module outlives the queued work.

use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use cudarc::driver::result;

use super::error::driver_error;
use super::module::CudaFunction;
use super::shared::Shared;
use super::stream;
use crate::abi::ArgPacket;
use crate::device::{BackendFunction, BackendStream, Geometry};
use crate::error::Error;

/// Parameter pointers for launches with at most this many parameters live on the stack.
const INLINE_PARAMS: usize = 64;

/// Queues one launch of `function` on `stream`, both of which must belong to `shared`'s device
/// handle.
///
/// # Safety
/// The contract of [`crate::device::Backend::launch`]: `packet` comes from a plan checked for
/// this function on this device, so every device pointer in it addresses live memory of this
/// device large enough for the kernel's ABI.
pub(super) unsafe fn launch(
    shared: &Arc<Shared>,
    function: &dyn BackendFunction,
    stream: &dyn BackendStream,
    geometry: Geometry,
    packet: &ArgPacket<'_>,
) -> Result<(), Error> {
    let function = CudaFunction::of(function, shared).ok_or_else(|| Error::Device {
        stage: "launch".to_owned(),
        message: format!("{function:?} was not loaded by this cuda device handle"),
    })?;
    // Formatted only on an error: a launch that succeeds formats nothing.
    let stage = LaunchStage(&function.symbol);
    let stream = stream::resolve(shared, stream, "launch")?;
    shared.drain(0);
    let mut inline = [std::ptr::null_mut::<c_void>(); INLINE_PARAMS];
    let mut heap = Vec::new();
    let params = packet.layout().params();
    let pointers: &mut [*mut c_void] = if params.len() <= INLINE_PARAMS {
        &mut inline[..params.len()]
    } else {
        heap.resize(params.len(), std::ptr::null_mut());
        &mut heap
    };
    param_pointers(packet, pointers).map_err(|message| Error::Device {
        stage: stage.to_string(),
        message,
    })?;
    shared.bind(stage)?;
    function.note_stream(stream);
    // SAFETY: `function` is a live function of this (current) context: its module is
    // unloaded only after the handle drops and the work queued on every stream noted above
    // has finished. `stream` belongs to this context (checked) and outlives the call.
    // `pointers[i]` addresses parameter `i` inside `packet`, whose layout is the entry's
    // verified `.param` list (cross-checked with the driver at bind where it can tell); the
    // driver copies the parameters before returning, so `packet` need not outlive the
    // call. The caller guarantees (this fn's contract) that every device pointer in the
    // packet addresses live memory of this device large enough for the kernel's ABI.
    unsafe {
        result::launch_kernel(
            function.function,
            (geometry.grid[0], geometry.grid[1], geometry.grid[2]),
            (geometry.block[0], geometry.block[1], geometry.block[2]),
            geometry.dynamic_shared_bytes,
            stream.cu_stream(),
            pointers,
        )
    }
    .map_err(|e| driver_error(stage.to_string(), e))
}

/// The stage a launch error names: `launch kernel `<symbol>``.
#[derive(Debug, Clone, Copy)]
struct LaunchStage<'a>(&'a str);

impl fmt::Display for LaunchStage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "launch kernel `{}`", self.0)
    }
}

/// Points `pointers[i]` at parameter `i` of `packet` — the `void**` array `cuLaunchKernel`
/// reads. Allocation-free; `pointers` has exactly one slot per parameter.
fn param_pointers(packet: &ArgPacket<'_>, pointers: &mut [*mut c_void]) -> Result<(), String> {
    let bytes = packet.bytes();
    let params = packet.layout().params();
    if params.len() != pointers.len() {
        return Err(format!(
            "{} parameter slots for {} parameters",
            pointers.len(),
            params.len()
        ));
    }
    for (index, (slot, placed)) in pointers.iter_mut().zip(params).enumerate() {
        let end = placed.offset.checked_add(placed.class.size());
        let Some(param) = end.and_then(|end| bytes.get(placed.offset..end)) else {
            return Err(format!(
                "parameter {index} at offset {} does not fit the {}-byte packet",
                placed.offset,
                bytes.len()
            ));
        };
        // The driver only reads through these pointers; its C signature is not const-correct.
        *slot = param.as_ptr().cast_mut().cast::<c_void>();
    }
    Ok(())
}
