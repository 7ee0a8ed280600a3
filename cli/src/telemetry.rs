//! `jitseam telemetry`: read what a `TelemetrySink` flushed and show where launches went.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use jitseam::telemetry::{
    DeclineRecord, DispatchRecord, FaultRecord, HwStamp, ImplId, MissRecord, OverflowRecord,
    ReadConfig, TelemetryReport,
};
use serde::Serialize;

/// Telemetry subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum TelemetryCommand {
    /// Show the dispatch, miss, decline and fault cells with the highest counts
    Summary(SummaryArgs),
}

/// Arguments of `jitseam telemetry summary`.
#[derive(Debug, Args)]
pub(crate) struct SummaryArgs {
    /// Directories written by `TelemetrySink::flush_all`; several are merged cell by cell
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// How many cells of each kind to show
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
    /// The most bytes one telemetry file may hold; a larger one is refused
    #[arg(long, value_name = "BYTES", default_value_t = ReadConfig::DEFAULT.max_file_bytes)]
    max_file_bytes: u64,
}

pub(crate) fn run(command: TelemetryCommand) -> ExitCode {
    match command {
        TelemetryCommand::Summary(args) => summary(&args),
    }
}

fn summary(args: &SummaryArgs) -> ExitCode {
    let mut reports = Vec::with_capacity(args.dirs.len());
    for dir in &args.dirs {
        let config = ReadConfig::DEFAULT.with_max_file_bytes(args.max_file_bytes);
        match TelemetryReport::read_dir_with(dir, config) {
            Ok(report) => reports.push(report),
            Err(error) => {
                eprintln!("error: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    let report = TelemetryReport::merge(reports);
    let text = if args.json {
        render_json(&report, args.top)
    } else {
        render_table(&report, args.top)
    };
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`| head`) is the reader's choice, not a failure worth a message.
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: cannot write output: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `--json` output; records keep their wire field order.
#[derive(Serialize)]
struct Summary<'a> {
    dispatches: Section<'a, DispatchRecord>,
    misses: Section<'a, MissRecord>,
    declines: Section<'a, DeclineRecord>,
    faults: Section<'a, FaultRecord>,
    overflow: OverflowRecord,
}

#[derive(Serialize)]
struct Section<'a, T> {
    cells: usize,
    /// `null` when the total overflows (then `launches_overflow` is true).
    launches: Option<u64>,
    launches_overflow: bool,
    top: Vec<&'a T>,
}

impl<'a, T> Section<'a, T> {
    fn new(cells: usize, launches: Option<u64>, top: Vec<&'a T>) -> Self {
        Self {
            cells,
            launches,
            launches_overflow: launches.is_none(),
            top,
        }
    }
}

fn render_json(report: &TelemetryReport, top: usize) -> String {
    let summary = Summary {
        dispatches: Section::new(
            report.dispatches.len(),
            report.total_dispatches(),
            report.top_dispatches(top),
        ),
        misses: Section::new(
            report.misses.len(),
            report.total_misses(),
            report.top_misses(top),
        ),
        declines: Section::new(
            report.declines.len(),
            report.total_declines(),
            report.top_declines(top),
        ),
        faults: Section::new(
            report.faults.len(),
            report.total_faults(),
            report.top_faults(top),
        ),
        overflow: report.overflow,
    };
    let mut text = serde_json::to_string_pretty(&summary).unwrap_or_else(|error| {
        // Plain data always serializes; say so in the output rather than panic if it did not.
        format!("{{\"error\":{:?}}}", error.to_string())
    });
    text.push('\n');
    text
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// A count as written; one that reached `u64::MAX` stopped there (counters saturate), so it
/// stands for at least that many.
fn count(n: u64) -> String {
    if n == u64::MAX {
        format!("≥{n}")
    } else {
        n.to_string()
    }
}

/// A total of launches: its count, or that it overflows a 64-bit count (then it is at least
/// `u64::MAX`: the sum exceeds it, or one count saturated there).
fn launches(total: Option<u64>) -> String {
    match total {
        Some(total) => plural(total, "launch", "launches"),
        None => format!("{} launches (the total overflows)", count(u64::MAX)),
    }
}

/// `count`'s share of `total`; none when the total is zero or overflows (a share of an unknown
/// total would be a guess).
fn share(count: u64, total: Option<u64>) -> String {
    match total {
        Some(total) if total > 0 => format!("{:.1}%", count as f64 * 100.0 / total as f64),
        _ => "-".to_owned(),
    }
}

fn render_table(report: &TelemetryReport, top: usize) -> String {
    let mut out = String::new();
    let total = report.total_dispatches();
    let _ = writeln!(
        out,
        "dispatches: {} in {}",
        launches(total),
        plural(report.dispatches.len() as u64, "cell", "cells")
    );
    let rows: Vec<Vec<String>> = report
        .top_dispatches(top)
        .into_iter()
        .map(|record: &DispatchRecord| {
            vec![
                count(record.count),
                share(record.count, total),
                record
                    .structure_key
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), ToString::to_string),
                record.chosen.to_string(),
                record.hw.to_string(),
            ]
        })
        .collect();
    push_table(
        &mut out,
        &["count", "share", "structure key", "chosen", "hardware"],
        &rows,
    );

    let total = report.total_misses();
    let _ = writeln!(
        out,
        "\nmisses: {} in {}",
        launches(total),
        plural(report.misses.len() as u64, "cell", "cells")
    );
    let rows: Vec<Vec<String>> = report
        .top_misses(top)
        .into_iter()
        .map(|record: &MissRecord| {
            vec![
                count(record.count),
                share(record.count, total),
                record.wanted.to_string(),
                record.fallback.to_string(),
                record.hw.to_string(),
            ]
        })
        .collect();
    push_table(
        &mut out,
        &["count", "share", "wanted", "fallback", "hardware"],
        &rows,
    );

    let declines = report.top_declines(top);
    push_reasons(
        &mut out,
        "refused",
        ("declines", report.declines.len(), report.total_declines()),
        declines
            .iter()
            .map(|r| (r.count, r.reason.as_str(), &r.chosen, &r.hw)),
    );
    // Only when there are any: a run without faults reads as it always did.
    if !report.faults.is_empty() {
        let faults = report.top_faults(top);
        push_reasons(
            &mut out,
            "faulted on the device",
            ("faults", report.faults.len(), report.total_faults()),
            faults
                .iter()
                .map(|r| (r.count, r.reason.as_str(), &r.chosen, &r.hw)),
        );
    }

    let overflow = report.overflow;
    if overflow.dispatch_records > 0 || overflow.miss_records > 0 || overflow.decline_records > 0 {
        let _ = writeln!(
            out,
            "\noverflow: {} dispatch, {} miss and {} declined launches found no cell (the sink was full)",
            count(overflow.dispatch_records),
            count(overflow.miss_records),
            count(overflow.decline_records)
        );
    }
    out
}

/// The declines or the faults: a heading (`title`: its cells and launches) and a table of the
/// top `rows` (count, reason, kernel, hardware).
fn push_reasons<'r>(
    out: &mut String,
    what: &str,
    (title, cells, total): (&str, usize, Option<u64>),
    rows: impl Iterator<Item = (u64, &'r str, &'r ImplId, &'r HwStamp)>,
) {
    let _ = writeln!(
        out,
        "\n{title}: {} {what} in {}",
        launches(total),
        plural(cells as u64, "cell", "cells")
    );
    let rows: Vec<Vec<String>> = rows
        .map(|(n, reason, chosen, hw)| {
            vec![
                count(n),
                share(n, total),
                reason.to_owned(),
                chosen.to_string(),
                hw.to_string(),
            ]
        })
        .collect();
    push_table(
        out,
        &["count", "share", "reason", "kernel", "hardware"],
        &rows,
    );
}

/// Appends an aligned table: numeric columns (the first two) right-aligned, text left-aligned,
/// no trailing spaces.
fn push_table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    if rows.is_empty() {
        out.push_str("  (none)\n");
        return;
    }
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::from(" ");
        for (column, (cell, width)) in row.iter().zip(&widths).enumerate() {
            let pad = width.saturating_sub(cell.chars().count());
            line.push(' ');
            if column < 2 {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad));
            }
            line.push(' ');
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use jitseam::telemetry::{StructureKey, TELEMETRY_SCHEMA};

    use super::*;

    fn report() -> TelemetryReport {
        let hw = HwStamp::gpu((9, 0), "H200", "570");
        let add = ImplId::new("cuda", "add", ["f32", "f32", "f32"], "synth", 0xab);
        let generic = ImplId::new("cuda", "add", ["f32", "f32", "f32"], "generic", 1);
        TelemetryReport::merge([TelemetryReport {
            dispatches: vec![
                DispatchRecord::new(Some(StructureKey::new("ew:add")), add.clone(), hw.clone())
                    .with_count(3),
                DispatchRecord::new(None, generic.clone(), hw.clone()).with_count(1),
            ],
            misses: vec![MissRecord::new(
                StructureKey::new("ew:add:rev"),
                generic,
                hw.clone(),
            )],
            declines: vec![
                DeclineRecord::new(None, add.clone(), "element_count", hw.clone()).with_count(2),
                DeclineRecord::new(None, add, "aliasing", hw),
            ],
            faults: vec![],
            overflow: OverflowRecord {
                schema: TELEMETRY_SCHEMA,
                dispatch_records: 2,
                miss_records: 0,
                decline_records: 0,
            },
        }])
    }

    #[test]
    fn table_is_aligned_and_ordered_by_count() {
        let table = render_table(&report(), 10);
        let expected = "\
dispatches: 4 launches in 2 cells
  count  share  structure key  chosen                                          hardware
      3  75.0%  ew:add         cuda:add(f32,f32,f32) synth@00000000000000ab    H200 sm_90 driver 570
      1  25.0%  -              cuda:add(f32,f32,f32) generic@0000000000000001  H200 sm_90 driver 570

misses: 1 launch in 1 cell
  count   share  wanted      fallback                                        hardware
      1  100.0%  ew:add:rev  cuda:add(f32,f32,f32) generic@0000000000000001  H200 sm_90 driver 570

declines: 3 launches refused in 2 cells
  count  share  reason         kernel                                        hardware
      2  66.7%  element_count  cuda:add(f32,f32,f32) synth@00000000000000ab  H200 sm_90 driver 570
      1  33.3%  aliasing       cuda:add(f32,f32,f32) synth@00000000000000ab  H200 sm_90 driver 570

overflow: 2 dispatch, 0 miss and 0 declined launches found no cell (the sink was full)
";
        assert_eq!(table, expected);
    }

    #[test]
    fn top_limits_rows_and_empty_kinds_say_none() {
        let mut report = report();
        report.misses.clear();
        let table = render_table(&report, 1);
        // One dispatch row and one decline row.
        assert_eq!(table.lines().filter(|l| l.contains("cuda:add")).count(), 2);
        assert_eq!(table.lines().filter(|l| l.contains("aliasing")).count(), 0);
        assert!(table.contains("misses: 0 launches in 0 cells\n  (none)\n"));
    }

    #[test]
    fn json_carries_totals_and_top_records() {
        let text = render_json(&report(), 1);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(value["dispatches"]["cells"], 2);
        assert_eq!(value["dispatches"]["launches"], 4);
        assert_eq!(value["dispatches"]["top"].as_array().map(Vec::len), Some(1));
        assert_eq!(value["dispatches"]["top"][0]["count"], 3);
        assert_eq!(value["misses"]["top"][0]["wanted"], "ew:add:rev");
        assert_eq!(value["overflow"]["dispatch_records"], 2);
        assert_eq!(value["declines"]["cells"], 2);
        assert_eq!(value["declines"]["launches"], 3);
        assert_eq!(value["declines"]["top"][0]["reason"], "element_count");
        // Records keep their wire field order.
        let schema = text.find("\"schema\"").unwrap_or(usize::MAX);
        let chosen = text.find("\"chosen\"").unwrap_or(0);
        assert!(schema < chosen, "{text}");
    }

    /// Two cells whose counts add past `u64::MAX`, and one whose count saturated: before totals
    /// knew they could overflow, the total saturated and each row printed a share of it, adding
    /// up past 100 %.
    #[test]
    fn overflowing_totals_are_reported_as_overflowing_not_as_shares() {
        let hw = HwStamp::cpu("emulator", "");
        let kernel = |source: &str| ImplId::new("emulator", "add", ["f32"], source, 1);
        let half = u64::MAX / 2 + 1;
        let report = TelemetryReport {
            dispatches: vec![
                DispatchRecord::new(None, kernel("a"), hw.clone()).with_count(half),
                DispatchRecord::new(None, kernel("b"), hw.clone()).with_count(half),
            ],
            misses: vec![
                MissRecord::new(StructureKey::new("m"), kernel("g"), hw.clone())
                    .with_count(u64::MAX),
            ],
            declines: vec![],
            faults: vec![],
            overflow: OverflowRecord {
                schema: TELEMETRY_SCHEMA,
                dispatch_records: u64::MAX,
                miss_records: 0,
                decline_records: 0,
            },
        };
        let table = render_table(&report, 10);
        assert!(
            table.contains(
                "dispatches: ≥18446744073709551615 launches (the total overflows) in 2 cells"
            ),
            "{table}"
        );
        assert!(
            table
                .contains("misses: ≥18446744073709551615 launches (the total overflows) in 1 cell"),
            "{table}"
        );
        // The saturated count says it is a floor; no row claims a share of an unknown total.
        assert!(
            table.contains("  ≥18446744073709551615      -  m  "),
            "{table}"
        );
        assert!(!table.contains('%'), "{table}");
        assert!(
            table.contains("overflow: ≥18446744073709551615 dispatch"),
            "{table}"
        );

        let value: serde_json::Value =
            serde_json::from_str(&render_json(&report, 10)).unwrap_or_default();
        assert_eq!(value["dispatches"]["launches"], serde_json::Value::Null);
        assert_eq!(value["dispatches"]["launches_overflow"], true);
        assert_eq!(value["misses"]["launches_overflow"], true);
        assert_eq!(value["declines"]["launches"], 0);
        assert_eq!(value["declines"]["launches_overflow"], false);
    }

    /// Shares of an exact total add up to 100 % (to rounding), whatever the counts.
    #[test]
    fn shares_of_an_exact_total_add_up_to_a_hundred() {
        let text = render_table(&report(), 10);
        let dispatch_shares: f64 = text
            .lines()
            .skip(2)
            .take(2)
            .filter_map(|line| line.split_whitespace().nth(1))
            .filter_map(|share| share.trim_end_matches('%').parse::<f64>().ok())
            .sum();
        assert!((dispatch_shares - 100.0).abs() < 0.11, "{text}");
    }
}
