//! Medians with their spread, for the benches' own summaries: every figure a bench prints (and
//! the README quotes) is the median of its samples, printed with the fastest and slowest.

use std::fmt;
use std::time::{Duration, Instant};

/// Median, minimum and maximum of a set of samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    pub(crate) median: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
    pub(crate) samples: usize,
}

impl Summary {
    /// The summary of `samples` (the median of an even count is the mean of the middle two).
    /// An empty set gives NaN everywhere.
    pub(crate) fn of(mut samples: Vec<f64>) -> Self {
        samples.sort_by(f64::total_cmp);
        let n = samples.len();
        let median = match n {
            0 => f64::NAN,
            _ if n % 2 == 1 => samples[n / 2],
            _ => (samples[n / 2 - 1] + samples[n / 2]) / 2.0,
        };
        Self {
            median,
            min: samples.first().copied().unwrap_or(f64::NAN),
            max: samples.last().copied().unwrap_or(f64::NAN),
            samples: n,
        }
    }

    /// The same summary with every sample mapped through a decreasing function (a time to a
    /// rate): the median maps to the median, the min to the max.
    pub(crate) fn inverted(self, f: impl Fn(f64) -> f64) -> Self {
        Self {
            median: f(self.median),
            min: f(self.max),
            max: f(self.min),
            samples: self.samples,
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let precision = f.precision().unwrap_or(1);
        write!(
            f,
            "median {:.p$} (min {:.p$}, max {:.p$}, n={})",
            self.median,
            self.min,
            self.max,
            self.samples,
            p = precision
        )
    }
}

/// Nanoseconds per call of `f`: `samples` batches of `batch` calls each, one sample per batch.
pub(crate) fn ns_per_call<R>(samples: usize, batch: usize, mut f: impl FnMut() -> R) -> Summary {
    Summary::of(
        (0..samples)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..batch {
                    std::hint::black_box(f());
                }
                start.elapsed().as_nanos() as f64 / batch as f64
            })
            .collect(),
    )
}

/// The time of one call of `f`, `samples` times.
pub(crate) fn times<R>(samples: usize, mut f: impl FnMut() -> R) -> Vec<Duration> {
    (0..samples)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed()
        })
        .collect()
}

/// Seconds of each duration.
pub(crate) fn secs(times: &[Duration]) -> Vec<f64> {
    times.iter().map(Duration::as_secs_f64).collect()
}

/// The instructions callgrind counts in a run of this very binary with the environment
/// variable `var` set to `value` (which the bench reads to run one piece of work and exit);
/// `None` without valgrind. Two such runs differing only in how much work they do give that
/// work's count, setup and process start cancelling out.
pub(crate) fn callgrind(var: &str, value: &str) -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(&exe)
        .env(var, value)
        .output()
        .ok()?;
    let log = String::from_utf8_lossy(&out.stderr);
    let (_, rest) = log.split_once("Collected : ")?;
    rest.split_whitespace().next()?.parse().ok()
}
