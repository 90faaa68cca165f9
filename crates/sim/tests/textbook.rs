//! The replica reduced to textbook queues must reproduce their exact results
//! (reference.md, "Textbook queues the engine must reproduce").

mod common;

use common::{assert_close, seed_mean, textbook};
use kneelab_sim::{DistConfig, LoadConfig};

/// M/G/1 against Pollaczek-Khinchine: Wq = lambda E[S^2] / (2 (1 - rho)), with one seat, a 10 ms
/// step and outputs of mean 100 (E[S] = 1 s). Tolerances follow the statistics: the variance of a
/// mean waiting time grows like 1 / (1 - rho)^4, so high loads get wider rows.
#[test]
fn mg1_waiting_time_matches_pollaczek_khinchine() {
    // (output distribution, E[S^2] / E[S]^2, utilisation, requests per seed, seeds, tolerance)
    let geometric = || DistConfig::geometric(100.0);
    let fixed = || DistConfig::fixed(100);
    let rows = [
        ("geometric", geometric(), 2.0 - 1.0 / 100.0, 0.3, 200_000, 4, 0.02),
        ("geometric", geometric(), 2.0 - 1.0 / 100.0, 0.5, 200_000, 4, 0.02),
        ("geometric", geometric(), 2.0 - 1.0 / 100.0, 0.7, 400_000, 4, 0.03),
        ("geometric", geometric(), 2.0 - 1.0 / 100.0, 0.9, 500_000, 6, 0.05),
        ("fixed (M/D/1)", fixed(), 1.0, 0.3, 100_000, 4, 0.02),
        ("fixed (M/D/1)", fixed(), 1.0, 0.5, 100_000, 4, 0.02),
        ("fixed (M/D/1)", fixed(), 1.0, 0.7, 200_000, 4, 0.03),
        ("fixed (M/D/1)", fixed(), 1.0, 0.9, 400_000, 6, 0.05),
    ];
    for (name, output, es2, rho, requests, seeds, tol) in rows {
        let config = textbook(1, 10.0, output, LoadConfig::open_rate(rho), requests);
        let wq = seed_mean(&config, seeds, |s| s.queue_s.mean);
        let want = rho * es2 / (2.0 * (1.0 - rho));
        assert_close(&format!("M/G/1 {name} rho={rho}: mean wait"), wq, want, tol);
    }
}

/// Outputs geometric with a large mean make the service nearly exponential: M/M/1 sojourn times
/// are exponential with rate mu - lambda, so p50 = ln 2 / (mu - lambda), p99 = ln 100 / (mu - lambda).
#[test]
fn mm1_sojourn_percentiles_are_exponential() {
    for (rho, tol) in [(0.5, 0.03), (0.8, 0.05)] {
        let config = textbook(1, 1.0, DistConfig::geometric(1000.0), LoadConfig::open_rate(rho), 300_000);
        let rate = 1.0 - rho; // mu = 1 / E[S] = 1 per second
        let mean = seed_mean(&config, 4, |s| s.e2e_s.mean);
        let p50 = seed_mean(&config, 4, |s| s.e2e_s.p50);
        let p99 = seed_mean(&config, 4, |s| s.e2e_s.p99);
        assert_close(&format!("M/M/1 rho={rho}: mean sojourn"), mean, 1.0 / rate, tol);
        assert_close(&format!("M/M/1 rho={rho}: p50 sojourn"), p50, std::f64::consts::LN_2 / rate, tol);
        assert_close(&format!("M/M/1 rho={rho}: p99 sojourn"), p99, libm::log(100.0) / rate, tol);
    }
}

/// Erlang C: probability that all c servers are busy, for offered traffic a = lambda / mu.
fn erlang_c(c: u32, a: f64) -> f64 {
    let mut term = 1.0; // a^k / k!
    let mut sum = 1.0;
    for k in 1..c {
        term *= a / k as f64;
        sum += term;
    }
    let top = term * a / c as f64 * (c as f64 / (c as f64 - a));
    top / (sum + top)
}

/// `max_num_seqs = c` with a constant step serves c requests at once: M/M/c, plus at most one
/// step (here 1 ms of a 1 s service) of admission delay.
#[test]
fn c_seats_match_erlang_c() {
    for (c, rho, tol) in [(4, 0.7, 0.04), (4, 0.9, 0.06), (8, 0.7, 0.04), (8, 0.9, 0.06)] {
        let lambda = rho * c as f64;
        let config = textbook(c, 1.0, DistConfig::geometric(1000.0), LoadConfig::open_rate(lambda), 300_000);
        let wq = seed_mean(&config, 4, |s| s.queue_s.mean);
        let want = erlang_c(c, lambda) / (c as f64 - lambda);
        assert_close(&format!("M/M/{c} rho={rho}: mean wait (Erlang C)"), wq, want, tol);
    }
}

/// Exact Mean Value Analysis of a closed loop: N users, exponential think Z, one FCFS server with
/// exponential service S. Returns (throughput, response time).
fn mva(n: u32, s: f64, z: f64) -> (f64, f64) {
    let (mut q, mut x, mut r) = (0.0, 0.0, 0.0);
    for k in 1..=n {
        r = s * (1.0 + q);
        x = k as f64 / (r + z);
        q = x * r;
    }
    (x, r)
}

#[test]
fn closed_loop_matches_exact_mva_and_the_response_time_law() {
    for (users, think_s, tol) in [(3, 5.0, 0.03), (6, 5.0, 0.03), (12, 5.0, 0.04), (30, 20.0, 0.04)] {
        let config = textbook(1, 1.0, DistConfig::geometric(1000.0), LoadConfig::closed(users, think_s), 200_000);
        let (x_want, r_want) = mva(users, 1.0, think_s);
        let x = seed_mean(&config, 3, |s| s.throughput_rps);
        let r = seed_mean(&config, 3, |s| s.e2e_s.mean);
        assert_close(&format!("closed N={users} Z={think_s}: throughput (MVA)"), x, x_want, tol);
        assert_close(&format!("closed N={users} Z={think_s}: response time (MVA)"), r, r_want, tol);
        // The response-time law R = N / X - Z is an operational law: it holds run by run.
        let one = common::run(&config);
        let law = users as f64 / one.throughput_rps - think_s;
        assert_close(&format!("closed N={users} Z={think_s}: R = N/X - Z"), one.e2e_s.mean, law, 0.01);
    }
}
