//! One replica during one engine step: the waiting queue, the `--max-num-seqs` seats (each
//! decoding, prefilling, or free), the step's `--max-num-batched-tokens` budget split into decode
//! tokens and prefill-chunk tokens, and the KV cache in use.
//!
//! Shape, not colour alone, tells the kinds apart: waiting requests are circles, prefilling
//! seats are striped squares, decoding seats solid squares, free seats empty outlines; every
//! part carries its vLLM name and count as text.
//!
//! Played step after step (`step`, `phase`), it also shows what moves: arrivals sliding into the
//! back of the queue, each request's TTFT clock (an arc that closes at the SLO, then a thick
//! ring once the SLO is exceeded: a shape, not only a colour), preempted requests crossed at the
//! front of the queue, and completions leaving as diamonds.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::format::format_count as thousands;
use crate::frame::{DrawResult, Frame, text_width};
use crate::style::Style;

/// What a seat is doing this step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SeatKind {
    /// Computing one token of output.
    #[default]
    Decode,
    /// Computing a chunk of its prompt.
    Prefill,
    /// In the batch but not in this step (its turn comes when the budget allows).
    Idle,
}

/// How far a request's TTFT clock has run, as a share of the TTFT SLO.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum TtftClock {
    /// Not shown.
    #[default]
    Off,
    /// Still waiting for its first token: the time since arrival over the SLO (past 1: late).
    Running(f64),
    /// Its first token came: the TTFT it got over the SLO (past 1: it was late).
    Done(f64),
}

impl TtftClock {
    fn late(self) -> bool {
        matches!(self, TtftClock::Running(x) | TtftClock::Done(x) if x > 1.0)
    }
}

/// Which engine iteration is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepLabel {
    /// Its number in the run.
    pub index: u64,
    /// When it started (simulated seconds).
    pub t_s: f64,
    /// How long it took.
    pub duration_s: f64,
}

/// What the replica chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplicaData {
    /// `--max-num-seqs`: the seats drawn.
    pub max_num_seqs: u32,
    /// The running requests, one per taken seat.
    pub seats: Vec<SeatKind>,
    /// `num_requests_waiting`.
    pub waiting: u32,
    /// `--max-num-batched-tokens`.
    pub budget_tokens: u32,
    /// Decode tokens in this step.
    pub decode_tokens: u32,
    /// Prefill-chunk tokens in this step.
    pub prefill_tokens: u32,
    /// KV cache in use, 0-1.
    pub kv_usage: f64,
    /// The iteration, when played step by step.
    pub step: Option<StepLabel>,
    /// Each seat's TTFT clock (parallel to `seats`; empty: none shown).
    pub seat_clocks: Vec<TtftClock>,
    /// The TTFT clocks of the first waiting requests, front first.
    pub waiting_clocks: Vec<TtftClock>,
    /// Requests that joined the queue since the last step (the newest at its back).
    pub arrived: u32,
    /// Requests preempted in this step (now at the front of the queue).
    pub preempted: u32,
    /// Requests that finished in this step and leave.
    pub completed: u32,
    /// How far through the step the picture is, 0-1: arrivals slide in, completions leave.
    pub phase: f64,
    /// `num_requests_waiting` over the whole run (the most in each of equal stretches of it),
    /// drawn as a strip under the picture with `history_at` marked (empty: no strip).
    pub history: Vec<u32>,
    /// The stretch of `history` the shown step is in.
    pub history_at: usize,
}

/// The most seats drawn one by one; a larger cap is drawn as its first this many with a note.
const MAX_SEATS_DRAWN: u32 = 256;

/// Draws the replica chart.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, data: &ReplicaData, style: &Style) -> DrawResult<DB> {
    let f = Frame::new(area, style);
    let t = f.theme;
    area.fill(&t.background)?;
    let font = f.small_font();
    let text = |s: &str, at: (i32, i32), h: HPos, v: VPos| {
        area.draw(&Text::new(s.to_string(), at, f.text(font, t.text).pos(Pos::new(h, v))))
    };
    let (pad, gap) = (f.px(10.0), f.px(if f.narrow { 8.0 } else { 12.0 }));
    let line = (font * 1.35).ceil() as i32;
    let (left, right) = (pad, f.w - pad);
    let width = (right - left).max(1);
    let (decode, prefill, waiting_c) = (t.series.bluish_green, t.series.blue, t.series.orange);
    let stroke = f.stroke(1.0);

    // Legend: the four shapes and what they mean.
    let mut y = pad;
    let sw = f.px(10.0);
    let mut x = left;
    let clocks = !data.seat_clocks.is_empty() || !data.waiting_clocks.is_empty();
    let items: [(&str, u8); 6] =
        [("waiting", 0), ("prefilling", 1), ("decoding", 2), ("free seat", 3), ("TTFT clock", 5), ("over TTFT SLO", 6)];
    let late_c = t.series.vermillion;
    for (label, shape) in items.into_iter().filter(|&(_, shape)| clocks || shape < 5) {
        let w = sw + f.px(5.0) + text_width(label, font) + f.px(14.0);
        if x > left && x + w > right {
            x = left;
            y += line;
        }
        let (cx, cy) = (x + sw / 2, y + line / 2);
        let at = (cx - sw / 2, cy - sw / 2);
        match shape {
            5 => clock(area, &f, at, sw, TtftClock::Running(0.6), t.text, late_c)?,
            6 => clock(area, &f, at, sw, TtftClock::Running(1.5), t.text, late_c)?,
            _ => mark(area, &f, shape, at, sw, [waiting_c, prefill, decode, t.grid])?,
        }
        text(label, (x + sw + f.px(5.0), cy), HPos::Left, VPos::Center)?;
        x += w;
    }
    y += line + gap / 2;
    if let Some(step) = data.step {
        let label = format!(
            "engine step {} at {:.3} s, lasting {:.1} ms",
            thousands(step.index.min(u64::from(u32::MAX)) as u32),
            step.t_s,
            step.duration_s * 1e3
        );
        text(&label, (left, y), HPos::Left, VPos::Top)?;
        y += line + gap / 2;
    }
    let phase = if data.phase.is_finite() { data.phase.clamp(0.0, 1.0) } else { 1.0 };

    // Seats in rows of 16; wide, the waiting queue sits to their left (a third of the width),
    // narrow, above them. Circles and squares share one cell size.
    let seats_drawn = data.max_num_seqs.min(MAX_SEATS_DRAWN);
    let cols = 16.min(seats_drawn.max(1)) as i32;
    let seat_rows = (seats_drawn as i32 + cols - 1) / cols;
    let (queue_w, seats_x) = if f.narrow { (width, left) } else { (width / 3 - gap, left + width / 3) };
    let seats_w = right - seats_x;
    let cell = ((seats_w + f.px(2.0)) / cols).clamp(f.px(6.0), f.px(if f.narrow { 22.0 } else { 24.0 }));
    let size = cell - f.px(2.0).max(1);
    let marks = [waiting_c, prefill, decode, t.grid];

    // The waiting queue: one circle per request, front first, as many as fit, then "+N".
    let queue_label = match data.arrived {
        0 => format!("num_requests_waiting {}", data.waiting),
        n => format!("num_requests_waiting {} ({n} new)", data.waiting),
    };
    text(&queue_label, (left, y), HPos::Left, VPos::Top)?;
    let queue_top = y + line;
    let per_row = (queue_w / cell).max(1);
    let queue_rows = if f.narrow { 2 } else { seat_rows.max(2) };
    let room = (per_row * queue_rows - 1).max(1) as u32;
    let shown = if data.waiting > room + 1 { room } else { data.waiting };
    let newest = data.waiting.saturating_sub(data.arrived);
    for i in 0..shown as i32 {
        let mut at = (left + (i % per_row) * cell, queue_top + (i / per_row) * cell);
        if i as u32 >= newest {
            // A newcomer slides in from the back of the row.
            let back = left + queue_w - cell;
            at.0 += (f64::from((back - at.0).max(0)) * (1.0 - phase)).round() as i32;
        }
        mark(area, &f, 0, at, size, marks)?;
        if (i as u32) < data.preempted {
            cross(area, &f, at, size, t.text)?;
        }
        if let Some(&c) = data.waiting_clocks.get(i as usize) {
            clock(area, &f, at, size, c, t.text, late_c)?;
        }
    }
    if shown < data.waiting {
        let i = shown as i32;
        let at = (left + (i % per_row) * cell, queue_top + (i / per_row) * cell + size / 2);
        text(&format!("+{}", data.waiting - shown), at, HPos::Left, VPos::Center)?;
    }
    if data.waiting == 0 {
        text("(empty)", (left, queue_top + size / 2), HPos::Left, VPos::Center)?;
    }
    let slots = shown as i32 + i32::from(shown < data.waiting);
    let queue_bottom = queue_top + ((slots + per_row - 1) / per_row).max(1) * cell;

    // The seats.
    let seats_top = if f.narrow { queue_bottom + gap } else { y };
    let running = data.seats.len() as u32;
    let label = if f.narrow || seats_w < text_width("num_requests_running 000 of --max-num-seqs 000", font) {
        format!("num_requests_running {running} of {}", data.max_num_seqs)
    } else {
        format!("num_requests_running {running} of --max-num-seqs {}", data.max_num_seqs)
    };
    text(&label, (seats_x, seats_top), HPos::Left, VPos::Top)?;
    let grid_top = seats_top + line;
    for i in 0..seats_drawn {
        let at = (seats_x + (i as i32 % cols) * cell, grid_top + (i as i32 / cols) * cell);
        let shape = match data.seats.get(i as usize) {
            Some(SeatKind::Prefill) => 1,
            Some(SeatKind::Decode) => 2,
            Some(SeatKind::Idle) => 4,
            None => 3,
        };
        mark(area, &f, shape, at, size, marks)?;
        if let Some(&c) = data.seat_clocks.get(i as usize) {
            clock(area, &f, at, size, c, t.text, late_c)?;
        }
    }
    y = (grid_top + seat_rows * cell).max(queue_bottom);
    if seats_drawn < data.max_num_seqs {
        text(&format!("(first {seats_drawn} of {} seats)", data.max_num_seqs), (seats_x, y), HPos::Left, VPos::Top)?;
        y += line;
    }
    if data.preempted > 0 || data.completed > 0 || data.step.is_some() {
        // Who left the batch this step: finished (diamonds sliding out) or preempted (crossed,
        // now at the front of the queue).
        let done = format!("finished {}", data.completed);
        let label = match data.preempted {
            0 => done,
            n if f.narrow => format!("{done}, preempted {n} (to queue front)"),
            n => format!("{done}, preempted {n} (recompute, back to the front of the queue)"),
        };
        text(&label, (left, y + gap / 2), HPos::Left, VPos::Top)?;
        let x0 = left + text_width(&label, font) + f.px(8.0);
        let travel = (f64::from((right - x0 - size).max(0)) * phase).round() as i32;
        for i in 0..data.completed.min(8) as i32 {
            let at = (x0 + i * cell + travel.min((right - x0 - (i + 1) * cell).max(0)), y + gap / 2);
            diamond(area, at, size, decode)?;
        }
        y += line + gap / 2;
    }
    y += gap;

    // The step's token budget.
    let budget = data.budget_tokens.max(1);
    let used = data.decode_tokens + data.prefill_tokens;
    let label = if f.narrow {
        format!(
            "this step: {} decode + {} prefill of {}",
            thousands(data.decode_tokens),
            thousands(data.prefill_tokens),
            thousands(budget)
        )
    } else {
        format!(
            "this step: {} decode tokens + {} prefill tokens of --max-num-batched-tokens {}",
            thousands(data.decode_tokens),
            thousands(data.prefill_tokens),
            thousands(budget)
        )
    };
    text(&label, (left, y), HPos::Left, VPos::Top)?;
    y += line;
    let bar_h = f.px(14.0);
    let scale = |tokens: u32| (f64::from(tokens.min(budget)) / f64::from(budget) * f64::from(width)).round() as i32;
    // A token or two of decode still gets a visible sliver.
    let dw = if data.decode_tokens > 0 { scale(data.decode_tokens).max(f.px(2.0)) } else { 0 };
    let pw = scale(used).max(dw) - dw;
    area.draw(&Rectangle::new([(left, y), (left + dw, y + bar_h)], decode.filled()))?;
    stripes(area, &f, (left + dw, y), (left + dw + pw, y + bar_h), prefill)?;
    area.draw(&Rectangle::new([(left, y), (right, y + bar_h)], t.axis.stroke_width(stroke)))?;
    y += bar_h + gap;

    // The KV cache.
    let kv = if data.kv_usage.is_finite() { data.kv_usage.clamp(0.0, 1.0) } else { 0.0 };
    text(&format!("KV cache {:.0}% used (vllm:kv_cache_usage_perc)", kv * 100.0), (left, y), HPos::Left, VPos::Top)?;
    y += line;
    let kw = (kv * f64::from(width)).round() as i32;
    area.draw(&Rectangle::new([(left, y), (left + kw, y + bar_h)], t.series.reddish_purple.mix(0.6).filled()))?;
    area.draw(&Rectangle::new([(left, y), (right, y + bar_h)], t.axis.stroke_width(stroke)))?;
    if !data.history.is_empty() {
        history(area, &f, (left, y + bar_h + gap), width, data, waiting_c)?;
    }
    Ok(())
}

/// The queue over the run: `num_requests_waiting` per stretch as a filled strip (each pixel
/// column the most waiting among its stretches), its peak as text, and the shown step as a
/// vertical line with a triangle over it.
fn history<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    f: &Frame,
    (left, top): (i32, i32),
    width: i32,
    data: &ReplicaData,
    color: RGBColor,
) -> DrawResult<DB> {
    let t = f.theme;
    let font = f.small_font();
    let line = (font * 1.35).ceil() as i32;
    let steps = data.history.len();
    let peak = data.history.iter().copied().max().unwrap_or(0);
    let label = if f.narrow {
        format!("waiting over the run (peak {}), this step marked", thousands(peak))
    } else {
        format!("num_requests_waiting over the whole run (peak {}); the triangle marks this step", thousands(peak))
    };
    let style = f.text(font, t.text).pos(Pos::new(HPos::Left, VPos::Top));
    area.draw(&Text::new(label, (left, top), style))?;
    let (y0, h) = (top + line + f.px(6.0), f.px(36.0));
    let bottom = y0 + h;
    let cols = width.max(1) as usize;
    let scale = f64::from(peak.max(1));
    for col in 0..cols {
        // The stretches under this column (at least one, when there are fewer than columns).
        let a = (col * steps / cols).min(steps - 1);
        let b = ((col + 1) * steps / cols).clamp(a + 1, steps);
        let most = data.history[a..b].iter().copied().max().unwrap_or(0);
        if most > 0 {
            let top = bottom - (f64::from(most) / scale * f64::from(h)).round().max(1.0) as i32;
            let x = left + col as i32;
            area.draw(&Rectangle::new([(x, top), (x + 1, bottom)], color.mix(0.75).filled()))?;
        }
    }
    area.draw(&PathElement::new(vec![(left, bottom), (left + width, bottom)], t.axis.stroke_width(f.stroke(1.0))))?;
    let at = data.history_at.min(steps - 1);
    let x = left + ((at as f64 + 0.5) / steps as f64 * f64::from(width)).round() as i32;
    let hand = t.text.stroke_width(f.stroke(1.5));
    area.draw(&PathElement::new(vec![(x, y0 - f.px(2.0)), (x, bottom)], hand))?;
    let tri = f.px(4.0);
    area.draw(&Polygon::new(
        vec![(x - tri, y0 - f.px(6.0)), (x + tri, y0 - f.px(6.0)), (x, y0 - f.px(1.0))],
        t.text.filled(),
    ))
}

/// A filled box with diagonal white stripes: prefill, told apart from decode by shape.
fn stripes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    f: &Frame,
    a: (i32, i32),
    b: (i32, i32),
    color: RGBColor,
) -> DrawResult<DB> {
    if b.0 <= a.0 || b.1 <= a.1 {
        return Ok(());
    }
    area.draw(&Rectangle::new([a, b], color.filled()))?;
    let step = f.px(5.0).max(3);
    let h = b.1 - a.1;
    let light = f.theme.background.stroke_width(f.stroke(1.25));
    let mut x = a.0 - h;
    while x < b.0 {
        // From (x, bottom) up to (x + h, top), clipped to the box.
        let (x0, y0) = if x < a.0 { (a.0, b.1 - (a.0 - x)) } else { (x, b.1) };
        let (x1, y1) = if x + h > b.0 { (b.0, a.1 + (x + h - b.0)) } else { (x + h, a.1) };
        if x1 > x0 {
            area.draw(&PathElement::new(vec![(x0, y0), (x1, y1)], light))?;
        }
        x += step;
    }
    Ok(())
}

/// One mark `size` px square at `at` (top left): 0 a waiting circle, 1 a prefilling (striped)
/// seat, 2 a decoding (solid) seat, 3 a free seat (outline), 4 a seat in the batch sitting this
/// step out (outline with a dot).
fn mark<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    f: &Frame,
    shape: u8,
    at: (i32, i32),
    size: i32,
    [waiting, prefill, decode, free]: [RGBColor; 4],
) -> DrawResult<DB> {
    let b = (at.0 + size, at.1 + size);
    match shape {
        0 => area.draw(&Circle::new((at.0 + size / 2, at.1 + size / 2), (size / 2).max(2), waiting.filled())),
        1 => stripes(area, f, at, b, prefill),
        2 => area.draw(&Rectangle::new([at, b], decode.filled())),
        4 => {
            area.draw(&Rectangle::new([at, b], decode.stroke_width(f.stroke(1.5))))?;
            area.draw(&Circle::new((at.0 + size / 2, at.1 + size / 2), (size / 6).max(1), decode.filled()))
        }
        _ => area.draw(&Rectangle::new([at, b], free.stroke_width(f.stroke(1.0)))),
    }
}

/// A request's TTFT clock over its mark: an arc from twelve o'clock that closes at the SLO, then
/// a thick ring once it is past it (shape and weight, not only colour, say "late").
fn clock<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    f: &Frame,
    at: (i32, i32),
    size: i32,
    clock: TtftClock,
    hand: RGBColor,
    late: RGBColor,
) -> DrawResult<DB> {
    let c = (at.0 + size / 2, at.1 + size / 2);
    let r = size / 2 + f.px(2.0);
    if clock.late() {
        return area.draw(&Circle::new(c, r, late.stroke_width(f.stroke(2.5))));
    }
    let TtftClock::Running(x) = clock else {
        return Ok(());
    };
    let x = if x.is_finite() { x.clamp(0.0, 1.0) } else { 0.0 };
    let n = (x * 24.0).ceil() as i32;
    let points: Vec<(i32, i32)> = (0..=n)
        .map(|i| {
            let a = std::f64::consts::TAU * x * f64::from(i) / f64::from(n.max(1)) - std::f64::consts::FRAC_PI_2;
            let (sin, cos) = libm::sincos(a); // as the sampler does: one routine, not three, in the wasm
            (c.0 + (f64::from(r) * cos).round() as i32, c.1 + (f64::from(r) * sin).round() as i32)
        })
        .collect();
    if points.len() > 1 {
        area.draw(&PathElement::new(points, hand.stroke_width(f.stroke(1.25))))?;
    }
    Ok(())
}

/// A cross over a mark: a preempted request.
fn cross<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    f: &Frame,
    at: (i32, i32),
    size: i32,
    color: RGBColor,
) -> DrawResult<DB> {
    let style = color.stroke_width(f.stroke(1.5));
    let (a, b) = (at, (at.0 + size, at.1 + size));
    area.draw(&PathElement::new(vec![a, b], style))?;
    area.draw(&PathElement::new(vec![(a.0, b.1), (b.0, a.1)], style))
}

/// A filled diamond: a request leaving with its last token.
fn diamond<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    size: i32,
    color: RGBColor,
) -> DrawResult<DB> {
    let (h, cx, cy) = (size / 2, at.0 + size / 2, at.1 + size / 2);
    area.draw(&Polygon::new(vec![(cx, cy - h), (cx + h, cy), (cx, cy + h), (cx - h, cy)], color.filled()))
}
