// A slot table with no slots could never hold a kernel.
jitseam::slot_table!(pub static EMPTY: 0);

fn main() {}
