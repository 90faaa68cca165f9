//! Short human labels for durations, fractions and tick values.

/// What a missing or undefined value reads as.
const MISSING: &str = "—";

/// Rounds for display: whole numbers from 10 up, one decimal below (so "850", "12", "1.2").
fn round_display(v: f64) -> f64 {
    if v.abs() >= 9.95 { v.round() } else { (v * 10.0).round() / 10.0 }
}

/// Writes an already rounded number without a trailing ".0".
fn trim(r: f64) -> String {
    if r.fract() == 0.0 { format!("{r:.0}") } else { format!("{r:.1}") }
}

/// A duration in seconds as a short label: "850 ms", "1.2 s", "12 s", "45 µs".
///
/// Picks the largest unit (s, ms, µs, ns) in which the value is at least 1, keeps two or three
/// significant digits, and moves up a unit when rounding reaches 1000 (0.9996 s is "1 s").
/// NaN reads "—", infinities "∞" and "-∞".
pub fn format_seconds(s: f64) -> String {
    if s.is_nan() {
        return MISSING.to_string();
    }
    if s.is_infinite() {
        return if s > 0.0 { "∞" } else { "-∞" }.to_string();
    }
    if s == 0.0 {
        return "0 s".to_string();
    }
    const UNITS: [(f64, &str); 4] = [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")];
    let sign = if s < 0.0 { "-" } else { "" };
    let a = s.abs();
    let i = UNITS.iter().position(|&(unit, _)| a >= unit).unwrap_or(UNITS.len() - 1);
    let (unit, name) = UNITS[i];
    let r = round_display(a / unit);
    if r >= 1000.0 && i > 0 {
        // 999.6 ms rounds to 1000 ms, which reads better as the next unit up.
        let (bigger, bigger_name) = UNITS[i - 1];
        return format!("{sign}{} {bigger_name}", trim(round_display(a / bigger)));
    }
    format!("{sign}{} {name}", trim(r))
}

/// A fraction as a percentage: 0.85 is "85%", 1.2 is "120%", 0.005 is "0.5%"; NaN reads "—".
pub fn format_percent(fraction: f64) -> String {
    if !fraction.is_finite() {
        return MISSING.to_string();
    }
    let r = round_display(fraction * 100.0);
    // Avoid "-0%" for tiny negatives that round to zero.
    let r = if r == 0.0 { 0.0 } else { r };
    format!("{}%", trim(r))
}

/// Requests per second as the page writes them: "4.25 req/s", "13.7 req/s", "140 req/s".
pub fn format_rate(rps: f64) -> String {
    if !rps.is_finite() {
        return MISSING.to_string();
    }
    let digits = if rps < 10.0 {
        2
    } else if rps < 100.0 {
        1
    } else {
        0
    };
    format!("{rps:.digits$} req/s")
}

/// A number of things, rounded, with thousands separators: 2048 -> "2,048"; NaN reads "—".
pub fn format_whole(v: f64) -> String {
    if !v.is_finite() {
        return MISSING.to_string();
    }
    let n = v.round();
    let sign = if n < 0.0 { "-" } else { "" };
    format!("{sign}{}", format_count_u64(n.abs() as u64))
}

/// A time-averaged number of things: one decimal below 10 ("2.5"), whole above ("27", "1,024").
pub fn format_mean_count(v: f64) -> String {
    if v.is_finite() && v.abs() < 10.0 { format!("{v:.1}") } else { format_whole(v) }
}

/// A ratio of two values: "3.2×" below 10, "12×" above.
pub fn format_ratio(v: f64) -> String {
    if !v.is_finite() {
        return MISSING.to_string();
    }
    if v.abs() < 10.0 { format!("{v:.1}×") } else { format!("{}×", format_whole(v)) }
}

/// Tokens per second: "12,345 tok/s".
pub fn format_tokens_per_s(v: f64) -> String {
    if !v.is_finite() {
        return MISSING.to_string();
    }
    format!("{} tok/s", format_whole(v))
}

/// A count with thousands separators: 2048 -> "2,048".
pub fn format_count(n: u32) -> String {
    format_count_u64(u64::from(n))
}

fn format_count_u64(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A tick value on an axis whose ticks are `step` apart, with just enough decimals to tell
/// neighbouring ticks apart ("0", "20", "2.5", "0.25").
pub(crate) fn format_tick(v: f64, step: f64) -> String {
    if !v.is_finite() {
        return MISSING.to_string();
    }
    let step = step.abs();
    let decimals = if step.is_finite() && step > 0.0 {
        (0..=4)
            .find(|&d| {
                let scaled = step * libm::pow(10.0, f64::from(d));
                (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
            })
            .unwrap_or(4)
    } else {
        0
    };
    let text = format!("{v:.*}", decimals as usize);
    // "-0" and "-0.0" come from rounding tiny negatives; they read as zero.
    if text.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
        text.trim_start_matches('-').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_in_thousands() {
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(2048), "2,048");
        assert_eq!(format_count(1_234_567), "1,234,567");
    }

    fn check(f: impl Fn(f64) -> String, rows: &[(f64, &str)]) {
        for &(input, expected) in rows {
            assert_eq!(f(input), expected, "input {input:e}");
        }
    }

    #[test]
    fn seconds() {
        check(
            format_seconds,
            &[
                (0.85, "850 ms"),
                (1.2, "1.2 s"),
                (12.0, "12 s"),
                (45e-6, "45 µs"),
                (1.0, "1 s"),
                (0.1, "100 ms"),
                (0.01, "10 ms"),
                (0.0123, "12 ms"),
                (0.0042, "4.2 ms"),
                (2.04, "2 s"),
                (9.96, "10 s"),
                (100.0, "100 s"),
                (1234.0, "1234 s"),
                (0.9996, "1 s"),
                (0.99996, "1 s"),
                (0.95, "950 ms"),
                (0.0, "0 s"),
                (-0.5, "-500 ms"),
                (2e-9, "2 ns"),
                (5e-13, "0 ns"),
                (f64::NAN, "—"),
                (f64::INFINITY, "∞"),
                (f64::NEG_INFINITY, "-∞"),
            ],
        );
    }

    #[test]
    fn percent() {
        check(
            format_percent,
            &[
                (0.85, "85%"),
                (1.2, "120%"),
                (0.0, "0%"),
                (0.005, "0.5%"),
                (0.123, "12%"),
                (1.0, "100%"),
                (-0.0001, "0%"),
                (f64::NAN, "—"),
            ],
        );
    }

    #[test]
    fn ticks() {
        for (v, step, expected) in [
            (20.0, 20.0, "20"),
            (2.5, 2.5, "2.5"),
            (5.0, 2.5, "5.0"),
            (0.25, 0.05, "0.25"),
            (-1e-12, 0.5, "0.0"),
            (3.0, f64::NAN, "3"),
        ] {
            assert_eq!(format_tick(v, step), expected, "{v} step {step}");
        }
    }
}
