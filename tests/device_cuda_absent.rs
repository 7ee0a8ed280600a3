//! Opening a CUDA device where there may be no driver: always a typed answer, never a panic.
//!
//! Not behind `gpu-tests`: on a machine without libcuda (CI, laptops) this proves the
//! `DriverUnavailable` path; where a driver is installed it checks the other answers are
//! consistent instead of pretending the driver is absent.

use jitseam::device::BackendKind;
use jitseam::{Device, Error};

#[test]
fn opening_cuda_answers_with_a_device_or_a_typed_error() {
    let count = Device::cuda_count();
    match Device::cuda(0) {
        Err(Error::DriverUnavailable { reason }) => {
            assert!(!reason.is_empty());
            // Without a driver there is nothing to count either.
            assert!(
                matches!(count, Err(Error::DriverUnavailable { .. })),
                "cuda(0) says no driver, cuda_count says {count:?}"
            );
            eprintln!("no usable cuda driver here: {reason}");
        }
        Err(Error::NoDevice { ordinal, available }) => {
            assert_eq!((ordinal, available), (0, 0));
            assert_eq!(count.ok(), Some(0));
        }
        Ok(device) => {
            assert_eq!(device.properties().backend, BackendKind::Cuda);
            assert!(count.is_ok_and(|n| n >= 1));
        }
        Err(other) => panic!("unexpected answer from Device::cuda(0): {other:?}"),
    }
}

#[test]
fn an_ordinal_past_every_device_is_refused_not_panicked_on() {
    match Device::cuda(usize::MAX) {
        Err(Error::DriverUnavailable { .. }) => {}
        Err(Error::NoDevice { ordinal, .. }) => assert_eq!(ordinal, usize::MAX),
        other => panic!("unexpected answer from Device::cuda(usize::MAX): {other:?}"),
    }
}

#[test]
fn the_missing_driver_error_is_not_a_decline() {
    // `is_decline` is false for driver errors: the request itself was fine.
    if let Err(e @ Error::DriverUnavailable { .. }) = Device::cuda(0) {
        assert!(!e.is_decline());
        assert!(e.to_string().starts_with("cuda driver unavailable: "));
    }
}
