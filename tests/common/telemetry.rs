//! A telemetry sink attached to a device, as the telemetry tests use it: fsync off (the tests
//! read what they flushed; they do not survive power loss).

use std::sync::Arc;

use jitseam::Device;
use jitseam::telemetry::{SinkConfig, TelemetrySink};

/// A fresh sink, attached to `device`.
pub fn sink_on(device: &Device) -> Arc<TelemetrySink> {
    let sink = Arc::new(TelemetrySink::with_config(
        SinkConfig::DEFAULT.with_fsync(false),
    ));
    device.attach_telemetry(sink.clone()).unwrap();
    sink
}
