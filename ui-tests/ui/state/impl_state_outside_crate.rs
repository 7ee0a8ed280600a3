use jitseam::State;

// States are sealed: a kernel's state data is produced only by jitseam's transitions.
struct Launched;

impl State for Launched {
    type Data = ();
}

fn main() {}
