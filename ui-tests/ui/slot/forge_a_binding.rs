use jitseam::SlotRef;

jitseam::slot_table!(static TABLE: 4);

// A binding forged for whatever slot 0 holds now: a `SlotRef` comes only from a claim.
fn forge() -> SlotRef {
    SlotRef {
        dispatch: TABLE.dispatchers()[0],
        index: 0,
        generation: TABLE.generation(0),
    }
}

fn main() {}
