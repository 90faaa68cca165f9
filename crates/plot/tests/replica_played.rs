//! The replica chart played step by step: the iteration's label, arrivals sliding into the
//! queue, TTFT clocks (an arc, then a thick ring past the SLO), preemptions and completions, on
//! the SVG backend at the page's widths.

mod common;

use common::{Chart, count, svg, texts};
use kneelab_plot::Style;
use kneelab_plot::replica::{ReplicaData, StepLabel, TtftClock};

const NARROW: (u32, u32) = (360, 420);
const WIDE: (u32, u32) = (900, 380);

fn played(phase: f64) -> ReplicaData {
    let base = common::replica_data();
    let n = base.seats.len();
    ReplicaData {
        step: Some(StepLabel { index: 2066, t_s: 31.3168, duration_s: 0.01514 }),
        seat_clocks: (0..n).map(|i| if i == 7 { TtftClock::Running(0.5) } else { TtftClock::Done(0.2) }).collect(),
        waiting_clocks: vec![TtftClock::Running(1.4), TtftClock::Running(0.3), TtftClock::Running(0.1)],
        arrived: 2,
        preempted: 1,
        completed: 2,
        phase,
        ..base
    }
}

#[test]
fn a_played_step_names_what_happened_in_it() {
    for (css, narrow) in [(NARROW, true), (WIDE, false)] {
        for style in [Style::light(1.0), Style::dark(2.0)] {
            let found = texts(&svg(&Chart::Replica(played(0.5)), css, style));
            let preempted = if narrow {
                "finished 2, preempted 1 (to queue front)"
            } else {
                "finished 2, preempted 1 (recompute, back to the front of the queue)"
            };
            for want in [
                "engine step 2,066 at 31.317 s, lasting 15.1 ms",
                "num_requests_waiting 3 (2 new)",
                preempted,
                "TTFT clock",
                "over TTFT SLO",
            ] {
                assert!(found.iter().any(|t| t == want), "{css:?}: no {want:?} in {found:?}");
            }
        }
    }
    // The hero's still picture names none of it.
    let still = texts(&svg(&Chart::Replica(common::replica_data()), WIDE, Style::light(1.0)));
    assert!(!still.iter().any(|t| t.contains("TTFT") || t.contains("engine step") || t.contains("finished")));
}

#[test]
fn arrivals_and_completions_move_with_the_phase() {
    let (start, end) = (
        svg(&Chart::Replica(played(0.0)), WIDE, Style::light(1.0)),
        svg(&Chart::Replica(played(1.0)), WIDE, Style::light(1.0)),
    );
    assert_ne!(start, end);
    // Only positions change: the same elements.
    for tag in ["circle", "polygon", "text", "rect"] {
        assert_eq!(count(&start, tag), count(&end, tag), "{tag}");
    }
}

#[test]
fn a_late_request_gets_a_ring_and_an_early_one_an_arc() {
    let late = ReplicaData { waiting_clocks: vec![TtftClock::Running(1.5); 3], ..played(1.0) };
    let early = ReplicaData { waiting_clocks: vec![TtftClock::Running(0.5); 3], ..played(1.0) };
    let (late, early) =
        (svg(&Chart::Replica(late), WIDE, Style::light(1.0)), svg(&Chart::Replica(early), WIDE, Style::light(1.0)));
    assert_eq!(count(&late, "circle"), count(&early, "circle") + 3, "a ring per late request");
    assert!(count(&early, "polyline") > count(&late, "polyline"), "an arc per early request");
}

#[test]
fn the_queue_strip_marks_the_shown_step_and_names_its_peak() {
    let history: Vec<u32> = (0..600).map(|i| (i / 20) % 7).collect();
    for (css, narrow) in [(NARROW, true), (WIDE, false)] {
        let with = |at| ReplicaData { history: history.clone(), history_at: at, ..played(0.5) };
        let (early, late) = (
            svg(&Chart::Replica(with(10)), css, Style::light(1.0)),
            svg(&Chart::Replica(with(560)), css, Style::light(1.0)),
        );
        let want = if narrow {
            "waiting over the run (peak 6), this step marked"
        } else {
            "num_requests_waiting over the whole run (peak 6); the triangle marks this step"
        };
        assert!(texts(&early).iter().any(|t| t == want), "{css:?}: no {want:?}");
        // The cursor moves; the strip does not.
        assert_ne!(early, late);
        assert_eq!(count(&early, "rect"), count(&late, "rect"));
        let without = svg(&Chart::Replica(played(0.5)), css, Style::light(1.0));
        assert!(count(&early, "rect") > count(&without, "rect") + 100, "one bar per busy pixel column");
    }
}

#[test]
fn odd_inputs_never_panic() {
    for phase in [f64::NAN, -1.0, 2.0, f64::INFINITY] {
        let data = ReplicaData {
            waiting_clocks: vec![TtftClock::Running(f64::NAN), TtftClock::Done(f64::INFINITY)],
            arrived: 1000,
            preempted: 1000,
            completed: 1000,
            history: vec![0, u32::MAX, 3],
            history_at: usize::MAX,
            ..played(phase)
        };
        for css in [NARROW, WIDE, (40, 30)] {
            svg(&Chart::Replica(data.clone()), css, Style::light(1.0));
        }
    }
}
