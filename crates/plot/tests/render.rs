//! Every chart rendered to SVG at the sizes the page uses, checked for what a reader needs.

mod common;

use common::{Chart, all_charts, count, svg, texts};
use kneelab_plot::Style;
use kneelab_plot::timeline::RequestTrace;

const NARROW: (u32, u32) = (360, 240);
const WIDE: (u32, u32) = (900, 360);

/// Every style the page can ask for at a size.
fn styles() -> Vec<Style> {
    vec![Style::light(1.0), Style::light(2.0), Style::dark(1.0), Style::dark(2.0)]
}

/// Axis titles and tick labels (with units) each chart must show.
fn expected_texts(chart: &Chart, narrow: bool) -> Vec<&'static str> {
    let rate = if narrow { "req/s" } else { "requests/s" };
    match chart {
        Chart::Latency(_) => vec![
            "offered load (% of capacity)",
            if narrow { "TTFT (log)" } else { "TTFT (log scale)" },
            "100 ms",
            "1 s",
            "100%",
            "p50",
            "p99",
        ],
        Chart::Throughput(_) => vec!["offered load (% of capacity)", rate, "throughput", "goodput"],
        Chart::Queue(_) => vec!["simulated time (s)", "requests", "running", "waiting"],
        Chart::Timeline(_) => {
            vec!["time since first arrival (ms)", "req 1", "req 6", "queue wait", "prefill", "tokens", "TTFT 160 ms"]
        }
        Chart::GoodputSlo(_) => vec![if narrow { "TTFT SLO (log)" } else { "TTFT SLO (log scale)" }, rate, "1 s"],
        Chart::Limits(_) => vec![
            rate,
            if narrow { "seq cap" } else { "sequence cap" },
            "4.25 req/s, binds",
            "engine saturates at 4.24 req/s",
        ],
        Chart::Tail(_) => {
            vec!["percentile of requests", "TTFT", "p50", "p99", "p99.9", "85%", "100%", "now 90%", "SLO 2 s"]
        }
        Chart::Replica(_) => vec![
            "num_requests_waiting 3",
            if narrow { "num_requests_running 41 of 64" } else { "num_requests_running 41 of --max-num-seqs 64" },
            if narrow {
                "this step: 40 decode + 2,008 prefill of 2,048"
            } else {
                "this step: 40 decode tokens + 2,008 prefill tokens of --max-num-batched-tokens 2,048"
            },
            "KV cache 27% used (vllm:kv_cache_usage_perc)",
            "prefilling",
            "decoding",
        ],
    }
}

#[test]
fn every_chart_shows_its_axes_at_every_size_and_style() {
    for chart in all_charts() {
        for (css, narrow) in [(NARROW, true), (WIDE, false)] {
            for style in styles() {
                let out = svg(&chart, css, style);
                let what = format!("{} at {css:?} x{} dark={}", chart.name(), style.scale, style.dark);
                let size = format!(
                    "width=\"{}\" height=\"{}\"",
                    f64::from(css.0) * style.scale,
                    f64::from(css.1) * style.scale
                );
                assert!(out.contains(&size), "{what}: no {size}");
                let found = texts(&out);
                for want in expected_texts(&chart, narrow) {
                    assert!(found.iter().any(|t| t == want), "{what}: no {want:?} in {found:?}");
                }
                assert!(!found.iter().any(|t| t == "no data"), "{what}: says no data");
            }
        }
    }
}

/// A chart, a change to its data, and label texts that must then be present or absent.
struct LabelCase {
    name: &'static str,
    chart: Chart,
    present: &'static [&'static str],
    absent: &'static [&'static str],
}

#[test]
fn reference_labels_appear_only_when_given() {
    let cases = vec![
        LabelCase {
            name: "latency with SLO and knee",
            chart: Chart::Latency(common::latency_data()),
            present: &["SLO 2 s", "knee 85%"],
            absent: &[],
        },
        LabelCase {
            name: "latency without SLO",
            chart: Chart::Latency(kneelab_plot::latency::LatencyData { slo_s: None, ..common::latency_data() }),
            present: &["knee 85%"],
            absent: &["SLO"],
        },
        LabelCase {
            name: "latency with an open-loop curve to compare",
            chart: Chart::Latency(kneelab_plot::latency::LatencyData {
                compare_loads: vec![0.5, 1.0, 1.2],
                compare_p99_s: vec![1.0, 30.0, 300.0],
                compare_label: "p99 open loop".into(),
                ..common::latency_data()
            }),
            present: &["p99 open loop"],
            absent: &[],
        },
        LabelCase {
            name: "latency without a curve to compare",
            chart: Chart::Latency(common::latency_data()),
            present: &["p99"],
            absent: &["open loop"],
        },
        LabelCase {
            name: "latency without knee",
            chart: Chart::Latency(kneelab_plot::latency::LatencyData { knee_load: None, ..common::latency_data() }),
            present: &["SLO 2 s"],
            absent: &["knee"],
        },
        LabelCase {
            name: "throughput with capacity and knee",
            chart: Chart::Throughput(common::throughput_data()),
            present: &["capacity", "knee 85%", "offered"],
            absent: &[],
        },
        LabelCase {
            name: "throughput with a measured replica",
            chart: Chart::Throughput(kneelab_plot::throughput::ThroughputData {
                current_label: Some("you: 3.1 req/s".into()),
                ..common::throughput_data()
            }),
            present: &["you: 3.1 req/s", "knee 85%"],
            absent: &[],
        },
        LabelCase {
            name: "throughput bare",
            chart: Chart::Throughput(kneelab_plot::throughput::ThroughputData {
                capacity_rps: None,
                knee_load: None,
                offered_rps: Vec::new(),
                ..common::throughput_data()
            }),
            present: &["throughput", "goodput"],
            absent: &["capacity", "knee"],
        },
        LabelCase {
            name: "queue with cap",
            chart: Chart::Queue(common::queue_data()),
            present: &["max-num-seqs 64"],
            absent: &[],
        },
        LabelCase {
            name: "queue without cap",
            chart: Chart::Queue(kneelab_plot::queue::QueueData { max_num_seqs: None, ..common::queue_data() }),
            present: &["running"],
            absent: &["max-num-seqs"],
        },
        LabelCase {
            name: "timeline highlighted",
            chart: Chart::Timeline(common::timeline_data()),
            present: &["TTFT 160 ms", "TPOT 25 ms"],
            absent: &[],
        },
        LabelCase {
            // Row 0 cannot be placed; the highlight still means the caller's row 2 (req 3).
            name: "timeline highlight after a dropped row",
            chart: Chart::Timeline({
                let mut t = common::timeline_data();
                t.requests[0].arrival_s = f64::NAN;
                t
            }),
            present: &["TTFT 160 ms", "req 2"],
            absent: &["req 1"],
        },
        LabelCase {
            name: "timeline without highlight",
            chart: Chart::Timeline(kneelab_plot::timeline::TimelineData { highlight: None, ..common::timeline_data() }),
            present: &["req 3"],
            absent: &["TTFT", "TPOT"],
        },
        LabelCase {
            name: "timeline highlight out of range",
            chart: Chart::Timeline(kneelab_plot::timeline::TimelineData {
                highlight: Some(99),
                ..common::timeline_data()
            }),
            present: &["req 3"],
            absent: &["TTFT", "TPOT"],
        },
        LabelCase {
            name: "goodput without current SLO",
            chart: Chart::GoodputSlo(kneelab_plot::goodput_slo::GoodputSloData {
                current_slo_s: None,
                ..common::goodput_slo_data()
            }),
            present: &["goodput"],
            absent: &["SLO 2 s"],
        },
    ];
    for case in cases {
        for css in [NARROW, WIDE] {
            let found = texts(&svg(&case.chart, css, Style::light(1.0)));
            for want in case.present {
                assert!(
                    found.iter().any(|t| t.starts_with(want)),
                    "{} at {css:?}: no {want:?} in {found:?}",
                    case.name
                );
            }
            for unwanted in case.absent {
                assert!(
                    !found.iter().any(|t| t.starts_with(unwanted)),
                    "{} at {css:?}: unexpected {unwanted:?} in {found:?}",
                    case.name
                );
            }
        }
    }
    // The "offered" legend entry (not the axis title "offered load ...") only with the line.
    let legend_says_offered = |data| {
        let found = texts(&svg(&Chart::Throughput(data), WIDE, Style::light(1.0)));
        found.iter().any(|t| t == "offered")
    };
    assert!(legend_says_offered(common::throughput_data()));
    assert!(!legend_says_offered(kneelab_plot::throughput::ThroughputData {
        offered_rps: Vec::new(),
        ..common::throughput_data()
    }));
}

#[test]
fn adding_a_series_adds_elements() {
    let latency = common::latency_data();
    let throughput = common::throughput_data();
    let queue = common::queue_data();
    let timeline = common::timeline_data();
    let goodput = common::goodput_slo_data();
    // (name, without, with, SVG tag that must grow)
    let cases = [
        (
            "latency p99",
            Chart::Latency(kneelab_plot::latency::LatencyData {
                p99_s: Vec::new(),
                current_load: None,
                ..latency.clone()
            }),
            Chart::Latency(kneelab_plot::latency::LatencyData { current_load: None, ..latency }),
            "polyline",
        ),
        (
            // Offered kept within the other series' range: a taller axis would change how
            // many dashes the dashed lines break into.
            "throughput offered",
            Chart::Throughput(kneelab_plot::throughput::ThroughputData {
                offered_rps: Vec::new(),
                ..throughput.clone()
            }),
            Chart::Throughput(kneelab_plot::throughput::ThroughputData {
                offered_rps: throughput.goodput_rps.clone(),
                ..throughput.clone()
            }),
            "polyline",
        ),
        (
            "throughput current dots",
            Chart::Throughput(kneelab_plot::throughput::ThroughputData { current_load: None, ..throughput.clone() }),
            Chart::Throughput(throughput),
            "circle",
        ),
        (
            "queue waiting",
            Chart::Queue(kneelab_plot::queue::QueueData { waiting: Vec::new(), ..queue.clone() }),
            Chart::Queue(queue),
            "polyline",
        ),
        (
            "timeline rows",
            Chart::Timeline(kneelab_plot::timeline::TimelineData {
                requests: timeline.requests[..3].to_vec(),
                ..timeline.clone()
            }),
            Chart::Timeline(timeline),
            "rect",
        ),
        (
            "goodput throughput line",
            Chart::GoodputSlo(kneelab_plot::goodput_slo::GoodputSloData {
                throughput_rps: Vec::new(),
                ..goodput.clone()
            }),
            Chart::GoodputSlo(goodput),
            "polyline",
        ),
    ];
    for (name, without, with, tag) in cases {
        let before = count(&svg(&without, WIDE, Style::light(1.0)), tag);
        let after = count(&svg(&with, WIDE, Style::light(1.0)), tag);
        assert!(after > before, "{name}: {tag} {before} -> {after}");
    }
}

#[test]
fn background_follows_the_scheme() {
    for chart in all_charts() {
        for (style, colour) in [(Style::dark(1.0), "#111827"), (Style::light(2.0), "#FFFFFF")] {
            let out = svg(&chart, NARROW, style);
            let first_rect = out.split("<rect").nth(1).unwrap_or_default();
            assert!(
                first_rect.contains(&format!("fill=\"{colour}\"")),
                "{} dark={}: first rect {first_rect:.120}",
                chart.name(),
                style.dark
            );
        }
    }
}

/// Largest `font-size` in the SVG.
fn max_font_size(svg: &str) -> f64 {
    svg.split("font-size=\"").skip(1).filter_map(|s| s.split('"').next()?.parse::<f64>().ok()).fold(0.0, f64::max)
}

#[test]
fn text_and_layout_scale_with_the_pixel_ratio_and_width() {
    for chart in all_charts() {
        let one = max_font_size(&svg(&chart, NARROW, Style::light(1.0)));
        let two = max_font_size(&svg(&chart, NARROW, Style::light(2.0)));
        assert!(one > 0.0 && (two / one - 2.0).abs() < 0.01, "{}: {one} -> {two}", chart.name());
        let svg_one = max_font_size(&svg(&chart, NARROW, Style::light(1.0).for_svg()));
        assert!((svg_one / one - kneelab_plot::SVG_FONT_SCALE).abs() < 0.01, "{}", chart.name());
    }
    // Fewer x ticks when narrow, so labels never collide.
    let chart = Chart::Latency(common::latency_data());
    let percent_ticks = |css| {
        texts(&svg(&chart, css, Style::light(1.0)))
            .iter()
            .filter(|t| t.ends_with('%') && !t.starts_with("knee"))
            .count()
    };
    let (narrow, wide) = (percent_ticks(NARROW), percent_ticks(WIDE));
    assert!(narrow >= 3 && narrow < wide, "narrow {narrow}, wide {wide}");
}

#[test]
fn a_linear_latency_axis_clips_at_five_times_the_slo() {
    let chart = Chart::Latency(kneelab_plot::latency::LatencyData {
        y_scale: kneelab_plot::latency::YScale::Linear,
        ..common::latency_data()
    });
    let found = texts(&svg(&chart, WIDE, Style::light(1.0)));
    assert!(found.iter().any(|t| t == "10 s"), "{found:?}");
    assert!(!found.iter().any(|t| t == "20 s" || t == "100 s"), "{found:?}");
    assert!(found.iter().any(|t| t == "TTFT"), "{found:?}");
}

#[test]
fn a_p99_past_the_linear_axis_is_marked_at_its_top_with_its_value() {
    let data = kneelab_plot::latency::LatencyData {
        y_scale: kneelab_plot::latency::YScale::Linear,
        current_load: Some(1.0),
        ..common::latency_data()
    };
    let top = kneelab_plot::latency::LatencyData { current_p99_s: Some(30.0), ..data.clone() };
    let inside = kneelab_plot::latency::LatencyData { current_p99_s: Some(4.0), ..data };
    let (above, within) =
        (svg(&Chart::Latency(top), WIDE, Style::light(1.0)), svg(&Chart::Latency(inside), WIDE, Style::light(1.0)));
    // The axis still stops at 5 x the SLO; the dot is a triangle on its edge, named with its value.
    assert!(texts(&above).iter().any(|t| t == "p99 30 s"), "{:?}", texts(&above));
    assert!(!texts(&within).iter().any(|t| t.starts_with("p99 ")), "{:?}", texts(&within));
    assert!(count(&above, "polygon") > count(&within, "polygon"), "a triangle for the marker");
}

/// Odd inputs every chart must survive, and whether it should then say "no data".
fn degenerate_series() -> Vec<(&'static str, Vec<f64>, Vec<f64>, bool)> {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    vec![
        ("empty", vec![], vec![], true),
        ("all NaN", vec![nan, nan], vec![nan, nan], true),
        ("infinite", vec![inf, 1.0], vec![1.0, -inf], true),
        ("single point", vec![0.5], vec![1.0], false),
        ("mismatched lengths", vec![0.1, 0.2, 0.3], vec![1.0], false),
        ("unsorted with duplicates", vec![0.3, 0.1, 0.1, 0.2], vec![3.0, 1.0, 2.0, 2.0], false),
        ("NaN in the middle", vec![0.1, 0.2, 0.3], vec![1.0, nan, 3.0], false),
        ("huge", vec![0.1, 1e300], vec![1e-300, 1e300], false),
        ("negative", vec![-1.0, 0.5], vec![-5.0, 2.0], false),
        ("range overflows", vec![-1.7e308, 1.7e308], vec![-1.7e308, 1.7e308], false),
        ("tiny span", vec![1.0, 1.0 + 1e-15], vec![1.0, 1.0 + 1e-15], false),
    ]
}

fn degenerate_charts(xs: &[f64], ys: &[f64]) -> Vec<Chart> {
    let nan = f64::NAN;
    let trace = RequestTrace {
        label: String::new(),
        arrival_s: xs.first().copied().unwrap_or(nan),
        scheduled_s: xs.get(1).copied().unwrap_or(nan),
        first_token_s: ys.first().copied().unwrap_or(nan),
        token_times_s: ys.to_vec(),
        finish_s: ys.last().copied().unwrap_or(nan),
    };
    vec![
        Chart::Latency(kneelab_plot::latency::LatencyData {
            loads: xs.to_vec(),
            p50_s: ys.to_vec(),
            p99_s: ys.to_vec(),
            current_load: Some(0.5),
            ..Default::default()
        }),
        Chart::Throughput(kneelab_plot::throughput::ThroughputData {
            loads: xs.to_vec(),
            throughput_rps: ys.to_vec(),
            goodput_rps: ys.to_vec(),
            offered_rps: xs.to_vec(),
            current_load: Some(nan),
            capacity_rps: Some(f64::INFINITY),
            ..Default::default()
        }),
        Chart::Queue(kneelab_plot::queue::QueueData {
            t_s: xs.to_vec(),
            running: ys.to_vec(),
            waiting: ys.to_vec(),
            max_num_seqs: Some(nan),
        }),
        Chart::Timeline(kneelab_plot::timeline::TimelineData {
            requests: if xs.is_empty() { vec![] } else { vec![trace; 14] },
            highlight: Some(0),
        }),
        Chart::GoodputSlo(kneelab_plot::goodput_slo::GoodputSloData {
            slo_s: xs.to_vec(),
            goodput_rps: ys.to_vec(),
            throughput_rps: ys.to_vec(),
            current_slo_s: Some(-1.0),
        }),
    ]
}

#[test]
fn degenerate_inputs_never_panic() {
    for (name, xs, ys, no_data) in degenerate_series() {
        for chart in degenerate_charts(&xs, &ys) {
            for css in [NARROW, WIDE] {
                for style in [Style::light(1.0), Style::dark(2.0)] {
                    let found = texts(&svg(&chart, css, style));
                    let says_no_data = found.iter().any(|t| t == "no data");
                    // The log axes cannot show zero or negatives, and a timeline needs only
                    // an arrival, so only check the cases whose answer does not depend on that.
                    if no_data || matches!(chart, Chart::Queue(_) | Chart::Throughput(_)) {
                        assert_eq!(says_no_data, no_data, "{} {name} at {css:?}", chart.name());
                    }
                }
            }
        }
    }
}

#[test]
fn all_zeros_and_tiny_areas_never_panic() {
    let zeros = vec![0.0; 5];
    for chart in degenerate_charts(&zeros, &zeros) {
        let found = texts(&svg(&chart, WIDE, Style::light(1.0)));
        // Zero latency cannot sit on a log axis; zero rates and queues are real data.
        let expect_no_data = matches!(chart, Chart::Latency(_) | Chart::GoodputSlo(_));
        assert_eq!(found.iter().any(|t| t == "no data"), expect_no_data, "{}", chart.name());
    }
    for chart in all_charts() {
        for css in [(0, 0), (1, 1), (40, 30), (120, 80)] {
            for scale in [0.0, f64::NAN, 1.0, 3.0] {
                svg(&chart, css, Style::light(scale));
            }
        }
    }
}
