use jitseam::device::{Arg, ArgMut};
use jitseam::{DeviceBuffer, SlotCall, SlotRef, Stream};

jitseam::slot_table!(static TABLE: 4);

// A call spelled out field by field with the generation the slot holds now: its fields are
// private, so only `SlotRef::call` makes one.
fn rearm(released: &SlotRef, stream: &Stream, x: &DeviceBuffer<f32>, y: &mut DeviceBuffer<f32>) {
    let inputs = [Arg::from(x)];
    let mut outputs = [ArgMut::from(y)];
    let call = SlotCall {
        generation: TABLE.generation(released.index()),
        stream,
        inputs: &inputs,
        outputs: &mut outputs,
        shape: &[8],
        params: &[],
    };
    let _ = released.launch(&call);
}

fn main() {}
