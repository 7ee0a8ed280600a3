//! A deterministic mutation fuzzer for the suites in `tests/fuzz.rs` and `cli/tests/fuzz.rs`.
//!
//! Each case is made from a seed input by a few random edits (bytes, dictionary tokens, runs of
//! an opening bracket, interesting integers, splices of another seed) and run on its own thread
//! with a small stack, under a watchdog: a panic or a case that runs longer than the time limit
//! fails the campaign (a stack overflow aborts the test binary, which fails it too). Every
//! case's input comes from `(seed, target, index)` alone, so a failure is replayed by its index.
//!
//! Environment:
//! - `JITSEAM_FUZZ_CASES=N`: about N cases for the whole suite, shared among its targets in
//!   proportion to their CI counts (default: the CI counts, sized for a few seconds in all);
//! - `JITSEAM_FUZZ_SEED=S`: another sequence of cases (default a fixed seed);
//! - `JITSEAM_FUZZ_ONLY=I`: run case I of each target alone (to replay a failure);
//! - `JITSEAM_FUZZ_CASE_SECS=T`: the time limit of one case (default 5 s);
//! - `JITSEAM_FUZZ_TRACE=1`: print each case's index before it runs (to find the case that
//!   aborted the binary).
//!
//! A failing case's input is written to `CARGO_TARGET_TMPDIR/fuzz-failures/`.

use std::fmt::Debug;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// splitmix64: small, fast, and the same sequence on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// True once in `n` times.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A size that is usually small and sometimes large: 1..=2^k for a random k below `bits`.
    pub fn size(&mut self, bits: u32) -> usize {
        let k = self.below(bits as usize) as u32;
        1 + self.below(1usize << k)
    }
}

/// The knobs read from the environment.
#[derive(Debug, Clone)]
pub struct Settings {
    pub total: Option<usize>,
    pub seed: u64,
    pub only: Option<usize>,
    pub case_limit: Duration,
    pub trace: bool,
}

pub fn settings() -> Settings {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let number = |name: &str| var(name).and_then(|v| v.replace('_', "").parse::<u64>().ok());
    Settings {
        total: number("JITSEAM_FUZZ_CASES").map(|n| n as usize),
        seed: number("JITSEAM_FUZZ_SEED").unwrap_or(0x6a69_7473_6561_6d21),
        only: number("JITSEAM_FUZZ_ONLY").map(|n| n as usize),
        case_limit: Duration::from_secs(number("JITSEAM_FUZZ_CASE_SECS").unwrap_or(5)),
        trace: var("JITSEAM_FUZZ_TRACE").is_some(),
    }
}

/// What a case did with its input: both are fine; only panics, hangs and aborts are failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The input was taken (parsed, loaded, read).
    Accepted,
    /// The input was refused with a typed error.
    Refused,
    /// Not run to the end: it is of a known, reported failure's shape (each such filter names
    /// the ignored regression test that holds the failure).
    Skipped,
}

impl<T, E> From<Result<T, E>> for Verdict {
    fn from(result: Result<T, E>) -> Self {
        if result.is_ok() {
            Self::Accepted
        } else {
            Self::Refused
        }
    }
}

/// One target of a suite.
pub struct Campaign {
    /// The target's name (also in failure file names).
    pub name: &'static str,
    /// Cases in CI.
    pub ci_cases: usize,
    /// The CI cases of the whole suite, to share `JITSEAM_FUZZ_CASES` among its targets.
    pub suite_ci_cases: usize,
    /// The stack of each case's thread.
    pub stack: usize,
    /// The least time limit of one case, for targets slower than the default limit allows
    /// (`JITSEAM_FUZZ_CASE_SECS` may only raise it).
    pub min_case_limit: Duration,
}

/// What a campaign counted.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub cases: usize,
    pub accepted: usize,
    pub refused: usize,
    pub skipped: usize,
    pub panics: Vec<usize>,
    pub hangs: Vec<usize>,
    /// The slowest case that finished, and its index.
    pub slowest: (Duration, usize),
}

impl Campaign {
    /// How many cases this target runs under `settings`.
    pub fn cases(&self, settings: &Settings) -> usize {
        match settings.total {
            Some(total) => (total as u128 * self.ci_cases as u128
                / self.suite_ci_cases.max(1) as u128)
                .max(1) as usize,
            None => self.ci_cases,
        }
    }

    /// Runs the campaign: `make` builds case `i`'s input from its own random stream, `run` runs
    /// it. Panics (failing the test) if any case panicked or ran past the time limit.
    pub fn run<I, M, R>(&self, mut make: M, run: R) -> Tally
    where
        I: Debug + Clone + Send + 'static,
        M: FnMut(&mut Rng) -> I,
        R: Fn(I) -> Verdict + Send + Sync + Clone + 'static,
    {
        let mut settings = settings();
        settings.case_limit = settings.case_limit.max(self.min_case_limit);
        let cases = self.cases(&settings);
        let indices: Box<dyn Iterator<Item = usize>> = match settings.only {
            Some(i) => Box::new(std::iter::once(i)),
            None => Box::new(0..cases),
        };
        let name_hash = self.name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let started = Instant::now();
        let mut tally = Tally::default();
        let mut failures = Vec::new();
        for index in indices {
            let mut rng = Rng::new(
                settings.seed ^ name_hash ^ (index as u64).wrapping_mul(0x2545_f491_4f6c_dd1d),
            );
            let input = make(&mut rng);
            if settings.trace {
                eprintln!("fuzz {} case {index}", self.name);
            }
            let (done, result) = mpsc::channel();
            let run = run.clone();
            let kept = input.clone();
            let worker = std::thread::Builder::new()
                .name(format!("fuzz-{}-{index}", self.name))
                .stack_size(self.stack)
                .spawn(move || {
                    let verdict = run(kept);
                    let _ = done.send(verdict);
                });
            let Ok(worker) = worker else {
                panic!("fuzz {}: cannot start a case thread", self.name);
            };
            tally.cases += 1;
            let case_started = Instant::now();
            let outcome = result.recv_timeout(settings.case_limit);
            let took = case_started.elapsed();
            if took > tally.slowest.0 && outcome.is_ok() {
                tally.slowest = (took, index);
            }
            match outcome {
                Ok(Verdict::Accepted) => tally.accepted += 1,
                Ok(Verdict::Refused) => tally.refused += 1,
                Ok(Verdict::Skipped) => tally.skipped += 1,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // The thread ended without a verdict: it panicked.
                    let _ = worker.join();
                    tally.panics.push(index);
                    failures.push(self.save("panic", settings.seed, index, &input));
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    // Left running: a hung case cannot be stopped, only reported.
                    tally.hangs.push(index);
                    failures.push(self.save("hang", settings.seed, index, &input));
                    break;
                }
            }
            let _ = worker.join();
        }
        eprintln!(
            "fuzz {}: {} cases in {:.1?} (seed {:#x}): {} accepted, {} refused, {} skipped (known), \
             {} panics, {} hangs; slowest case {} in {:.1?}",
            self.name,
            tally.cases,
            started.elapsed(),
            settings.seed,
            tally.accepted,
            tally.refused,
            tally.skipped,
            tally.panics.len(),
            tally.hangs.len(),
            tally.slowest.1,
            tally.slowest.0,
        );
        assert!(
            failures.is_empty(),
            "fuzz {}: {} panics at cases {:?}, {} hangs at cases {:?} (over {:?}); inputs in {:?}; \
             replay one with JITSEAM_FUZZ_SEED={} JITSEAM_FUZZ_ONLY=<case>",
            self.name,
            tally.panics.len(),
            tally.panics,
            tally.hangs.len(),
            tally.hangs,
            settings.case_limit,
            failures,
            settings.seed,
        );
        tally
    }

    fn save<I: Debug>(&self, what: &str, seed: u64, index: usize, input: &I) -> PathBuf {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
        let path = dir.join(format!("{}-{what}-{seed:x}-{index}.txt", self.name));
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(&path, format!("{input:#?}\n"));
        path
    }
}

/// Bytes that matter to parsers: brackets, separators, quotes, comment markers, signs, digits,
/// and the extremes.
const INTERESTING_BYTES: &[u8] = b"{}()[]<>;:,.%@!|&^+-*/=\"\\\n\t 0179axXeE_\x00\x7f\x80\xff";

/// Integers at the edges, for binary formats (written little-endian at a random offset).
const INTERESTING_INTS: &[u64] = &[
    0,
    1,
    2,
    7,
    8,
    16,
    63,
    64,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    0x7fff_ffff_ffff_ffff,
    0x8000_0000_0000_0000,
    u64::MAX,
];

/// Openers whose long runs probe nesting limits.
const OPENERS: &[&[u8]] = &[
    b"{",
    b"(",
    b"[",
    b"-",
    b"!",
    b"{%r1, ",
    b"(1 + ",
    b"div_ceil(",
];

/// `seed` edited by 1 to 8 random mutations (a few more now and then); tokens come from `dict`,
/// splices from `others`. The result stays below `max_len` bytes.
pub fn mutate(
    rng: &mut Rng,
    seed: &[u8],
    dict: &[&[u8]],
    others: &[Vec<u8>],
    max_len: usize,
) -> Vec<u8> {
    let mut out = seed.to_vec();
    // Mostly one edit, so that most cases get past the first check and reach deeper code.
    let rounds = match rng.below(20) {
        0 => 8 + rng.below(24),
        1 | 2 => 4 + rng.below(5),
        3..=7 => 2 + rng.below(2),
        _ => 1,
    };
    for _ in 0..rounds {
        let at = rng.below(out.len() + 1);
        match rng.below(17) {
            12..=16 => edit_lines(rng, &mut out),
            0 => {
                if let Some(b) = out.get_mut(at) {
                    *b = rng.next_u64() as u8;
                }
            }
            1 => {
                if let Some(b) = out.get_mut(at) {
                    *b = *rng.pick(INTERESTING_BYTES);
                }
            }
            2 | 3 if !dict.is_empty() => {
                let token = rng.pick(dict);
                out.splice(at..at, token.iter().copied());
            }
            4 => {
                let len = rng.size(8).min(out.len() - at.min(out.len()));
                out.drain(at..at + len);
            }
            5 => {
                // Duplicate a chunk somewhere else.
                let from = rng.below(out.len());
                let len = rng.size(10).min(out.len() - from);
                let chunk: Vec<u8> = out[from..from + len].to_vec();
                let to = rng.below(out.len() + 1);
                out.splice(to..to, chunk);
            }
            6 => {
                // A run of an opener: up to thousands of levels now and then.
                let opener = rng.pick(OPENERS);
                let levels = if rng.one_in(8) {
                    rng.size(15)
                } else {
                    rng.size(7)
                };
                let run: Vec<u8> = opener.repeat(levels);
                out.splice(at..at, run);
            }
            7 => {
                // An interesting integer, in binary at an aligned offset.
                let value = *rng.pick(INTERESTING_INTS);
                let width = *rng.pick(&[1usize, 2, 4, 8]);
                let at = at / width * width;
                let bytes = value.to_le_bytes();
                for (i, b) in bytes.iter().take(width).enumerate() {
                    if let Some(slot) = out.get_mut(at + i) {
                        *slot = *b;
                    }
                }
            }
            8 => {
                // The same, as text.
                let value = *rng.pick(INTERESTING_INTS);
                let text = match rng.below(4) {
                    0 => value.to_string(),
                    1 => format!("{}", value as i64),
                    2 => format!("0x{value:x}"),
                    _ => format!("{value}{value}"),
                };
                out.splice(at..at, text.into_bytes());
            }
            9 => {
                out.truncate(at);
            }
            10 if !others.is_empty() => {
                // Splice in a chunk of another seed.
                let other = rng.pick(others);
                let from = rng.below(other.len());
                let len = rng.size(10).min(other.len() - from);
                out.splice(at..at, other[from..from + len].iter().copied());
            }
            _ => {
                // Swap two bytes.
                let other = rng.below(out.len());
                if at < out.len() {
                    out.swap(at, other);
                }
            }
        }
        out.truncate(max_len);
    }
    out
}

/// An edit that keeps lines whole: delete, duplicate or swap lines, or change a number in one.
fn edit_lines(rng: &mut Rng, out: &mut Vec<u8>) {
    let mut lines: Vec<Vec<u8>> = out.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let a = rng.below(lines.len());
    let b = rng.below(lines.len());
    match rng.below(4) {
        0 => {
            lines.remove(a);
        }
        1 => {
            let line = lines[a].clone();
            lines.insert(b, line);
        }
        2 => lines.swap(a, b),
        _ => {
            // The digits of a number in line `a`, if it has one, replaced.
            let line = &mut lines[a];
            let digits: Vec<usize> = (0..line.len())
                .filter(|&i| line[i].is_ascii_digit())
                .collect();
            if digits.is_empty() {
                return;
            }
            let start = *rng.pick(&digits);
            let end = (start..line.len())
                .find(|&i| !line[i].is_ascii_digit())
                .unwrap_or(line.len());
            let value = *rng.pick(INTERESTING_INTS);
            let text = match rng.below(3) {
                0 => value.to_string(),
                1 => (value % 10).to_string(),
                _ => rng.below(64).to_string(),
            };
            line.splice(start..end, text.into_bytes());
        }
    }
    *out = lines.join(&b'\n');
}

/// [`mutate`] on text: the edited bytes as text (invalid UTF-8 replaced).
pub fn mutate_text(
    rng: &mut Rng,
    seed: &str,
    dict: &[&[u8]],
    others: &[Vec<u8>],
    max_len: usize,
) -> String {
    let bytes = mutate(rng, seed.as_bytes(), dict, others, max_len);
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    }
}

/// Bytes whose `Debug` is their text (invalid UTF-8 replaced), so a saved failure reads as text.
#[derive(Clone)]
pub struct Bytes(pub Vec<u8>);

impl Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.0))
    }
}

/// Text whose `Debug` is the text itself, so that a saved failure reads as written.
#[derive(Clone)]
pub struct Shown(pub String);

impl Debug for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
