//! [`Device::best_available`]: the first CUDA device, else the emulator, and why.

use super::Device;

impl Device {
    /// The first CUDA device if one can be opened, else the emulator; the answer says which and
    /// why, so a caller can print it (there is no logging here).
    pub fn best_available() -> Selection {
        match Self::cuda(0) {
            Ok(device) => Selection {
                reason: format!("cuda device 0 ({})", device.properties().name),
                device,
            },
            Err(error) => Selection {
                device: Self::emulator(),
                reason: format!("emulator, because no cuda device could be opened: {error}"),
            },
        }
    }
}

/// What [`Device::best_available`] chose, and why.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The device.
    pub device: Device,
    /// A one-line reason, e.g. `emulator, because no cuda device could be opened: …`.
    pub reason: String,
}
