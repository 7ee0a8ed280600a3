// Slot tables are capped at 4096 dispatchers.
jitseam::slot_table!(pub static HUGE: 4097);

fn main() {}
