//! Writes a realistic example of every chart to target/plot-samples/ for a human to look at.

mod common;

use common::{Chart, all_charts, svg};
use kneelab_plot::Style;
use kneelab_plot::latency::{LatencyData, YScale};
use kneelab_plot::timeline::TimelineData;

#[test]
fn write_samples() {
    // CARGO_TARGET_TMPDIR is <target>/tmp; the samples go beside it.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap().join("plot-samples");
    std::fs::create_dir_all(&dir).unwrap();
    // Variants worth a look beside the defaults: a linear latency axis, a crowded timeline.
    let mut crowded = common::timeline_data();
    let more: Vec<_> = crowded.requests.iter().map(|r| shifted(r, 0.9)).collect();
    crowded.requests.extend(more);
    let variants = [
        ("latency_linear", Chart::Latency(LatencyData { y_scale: YScale::Linear, ..common::latency_data() })),
        ("timeline_12_rows", Chart::Timeline(TimelineData { highlight: Some(7), ..crowded })),
    ];
    let named = all_charts().into_iter().map(|c| (c.name(), c)).chain(variants);
    for (name, chart) in named {
        for (tag, css, style) in [
            ("narrow-light", (360, 240), Style::light(2.0)),
            ("wide-light", (900, 360), Style::light(1.0)),
            ("wide-dark", (900, 360), Style::dark(1.0)),
            ("narrow-dark", (360, 240), Style::dark(1.0)),
        ] {
            let text = svg(&chart, css, style.for_svg());
            assert!(text.starts_with("<svg"), "{name}");
            let path = dir.join(format!("{name}-{tag}.svg"));
            std::fs::write(&path, text).unwrap();
        }
    }
}

/// The same request, later by `dt` seconds.
fn shifted(r: &kneelab_plot::timeline::RequestTrace, dt: f64) -> kneelab_plot::timeline::RequestTrace {
    kneelab_plot::timeline::RequestTrace {
        label: format!("req {}", r.label.trim_start_matches("req ").parse::<u32>().unwrap_or(0) + 6),
        arrival_s: r.arrival_s + dt,
        scheduled_s: r.scheduled_s + dt,
        first_token_s: r.first_token_s + dt,
        token_times_s: r.token_times_s.iter().map(|t| t + dt).collect(),
        finish_s: r.finish_s + dt,
    }
}
