use jitseam::device::{Arg, ArgMut};
use jitseam::{DeviceBuffer, SlotCall, SlotRef, Stream};

jitseam::slot_table!(static TABLE: 4);

// A released binding re-armed with the generation its slot holds now: a call is made only from
// a binding, never from a number.
fn rearm(released: &SlotRef, stream: &Stream, x: &DeviceBuffer<f32>, y: &mut DeviceBuffer<f32>) {
    let inputs = [Arg::from(x)];
    let mut outputs = [ArgMut::from(y)];
    let generation = TABLE.generation(released.index());
    let call = SlotCall::new(generation, stream, &inputs, &mut outputs, &[8], &[]);
    let _ = released.launch(&call);
}

fn main() {}
