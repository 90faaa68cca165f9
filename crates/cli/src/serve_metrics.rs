//! `kneelab serve-metrics CONFIG`: the simulated replica run in real time (or sped up), its
//! `/metrics` served over HTTP as vLLM serves it, for Prometheus, Grafana or an autoscaler to
//! scrape a replica whose knee is known.
//!
//! The engine stays deterministic: the wall clock only says how far to advance it (simulated
//! time = wall time since start x `--speed`), and it is advanced no further than that, so the
//! work done is bounded by the time served rather than by the engine's work cap.

use std::io;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use kneelab_sim::exposition;
use kneelab_sim::scenario::MAX_REQUESTS;
use kneelab_sim::{Capacity, Config, CostModelKind, Load, LoadMode, Options, Scenario, Simulation};
use tiny_http::{Header, Method, Request, Response, Server};

use crate::error::{CliError, warn};
use crate::input;
use crate::wall::WallClock;

/// The fastest `--speed`: a thousand simulated seconds per second already runs a day of
/// traffic in under a minute and a half.
pub const MAX_SPEED: f64 = 1000.0;

/// How often the engine is advanced when nobody scrapes, so a scrape finds it nearly caught up
/// and the end of the run is said when it comes.
const TICK: Duration = Duration::from_millis(100);

/// The content type of Prometheus's text format, as vLLM's `/metrics` sends it.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

const AFTER_HELP: &str = "\
Examples:
  kneelab serve-metrics examples/chat.json                  vLLM's port, 8000: http://127.0.0.1:8000/metrics
  kneelab serve-metrics examples/rag.json --port 0 --speed 10
                                                            a free port (printed), ten simulated seconds a second
  kneelab serve-metrics examples/day.json --speed 60        a compressed day (load.traffic) in a minute
  kneelab serve-metrics examples/rag.json --host 0.0.0.0 --model my-llama
                                                            scraped from other machines, under another model_name
  curl -s localhost:8000/metrics | grep request_success     what Prometheus reads

Serves GET /metrics (Prometheus text format 0.0.4 with vLLM's metric names, types, buckets and
labels engine=\"0\", model_name) and GET /health (200, empty). At each scrape the simulation is
advanced to (wall time since start) x --speed simulated seconds; counters and histograms cover
every request finished by then, gauges are as of then. The config's load runs as it says (an open
load's load.traffic curve, such as examples/day.json's compressed day, included): its run.requests
becomes 1000000 (a burst without max_concurrency keeps its own) and there is no
warm-up, so the counters start at 0 as a fresh server's do. When the run ends (every request
done, or a work cap such as a million requests waiting) the final values keep being served.
The replica holds about 90 bytes per finished request (about 90 MB at a million).
One line on stderr says where it serves; it serves until killed.";

/// Run the config's replica in real time and serve its vLLM `/metrics` over HTTP.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct ServeMetricsArgs {
    /// The config: a JSON file, or - to read it from stdin.
    #[arg(value_name = "CONFIG")]
    config: PathBuf,
    /// Port to listen on (vLLM's default is 8000); 0 picks a free one, printed on stderr.
    #[arg(long, value_name = "PORT", default_value_t = 8000)]
    port: u16,
    /// Address to listen on; 0.0.0.0 for every interface.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    host: String,
    /// Simulated seconds per real second: 1 is real time, 60 a minute of traffic a second
    /// (above 0, at most 1000).
    #[arg(long, value_name = "X", default_value_t = 1.0, allow_negative_numbers = true)]
    speed: f64,
    /// The `model_name` label; by default the preset's model
    /// (meta-llama/Meta-Llama-3-8B-Instruct), else kneelab/<cost model>.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Seed of every random stream, overriding the config's `seed`.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Advance the replica only at whole ticks of this many wall seconds, so that every scrape
    /// within a tick reads the same values: two scrapers (a Prometheus and a probe) a few
    /// milliseconds apart then see one state. By default it advances at every scrape.
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    tick: Option<f64>,
}

/// Serves until killed; returns only with an error (bad input, the port taken, a config the
/// engine rejects partway through).
pub fn run(args: &ServeMetricsArgs) -> Result<String, CliError> {
    check_speed(args.speed)?;
    if let Some(tick) = args.tick
        && !(tick.is_finite() && (0.01..=3600.0).contains(&tick))
    {
        return Err(CliError::input(format!("--tick: must be from 0.01 to 3600 wall seconds, got {tick}")));
    }
    if args.model.as_ref().is_some_and(|name| name.trim().is_empty()) {
        return Err(CliError::input("--model: must not be empty"));
    }
    let mut loaded = input::load(&args.config)?;
    if let Some(seed) = args.seed {
        loaded.config.seed = seed;
    }
    let model = args.model.clone().unwrap_or_else(|| default_model(&loaded.config));
    steady(&mut loaded.config);
    // The capacity is measured only when the load is a fraction of it.
    let prepared = match loaded.config.load.offered_load {
        Some(_) => kneelab_sim::prepare(&loaded.config).map(|(scenario, capacity)| (scenario, Some(capacity))),
        None => Scenario::new(&loaded.config).map(|scenario| (scenario, None)),
    };
    let (scenario, capacity) = prepared.map_err(|e| CliError::config(&loaded.source, &e))?;
    let listener = bind(&args.host, args.port)?;
    let addr = listener.local_addr().map_err(|e| CliError::input(format!("--port {}: {e}", args.port)))?;
    let server = Server::from_listener(listener, None)
        .map_err(|e| CliError::input(format!("--port {}: cannot serve on {addr}: {e}", args.port)))?;
    eprintln!(
        "kneelab: serving http://{addr}/metrics for {}: model_name {model:?}, {}, speed {}x (simulated seconds per second)",
        loaded.source,
        describe_load(&scenario, capacity.as_ref()),
        args.speed
    );
    let options = Options { max_work: u64::MAX, ..Options::default() };
    let mut replica = Replica { sim: Simulation::new(&scenario, options), speed: args.speed, ended: false };
    let clock = WallClock::start();
    loop {
        let request = match server.recv_timeout(TICK) {
            Ok(request) => request,
            Err(e) => {
                warn(&format!("cannot accept a connection: {e}"));
                None
            }
        };
        let wall_s = clock.elapsed_s();
        let wall_s = args.tick.map_or(wall_s, |tick| (wall_s / tick).floor() * tick);
        replica.advance(wall_s, &loaded.source, scenario.requests)?;
        if let Some(request) = request {
            respond(request, &replica.sim, &model);
        }
    }
}

/// The simulation and how fast it runs against the wall clock.
struct Replica {
    sim: Simulation,
    speed: f64,
    /// Whether the end of the run has been said.
    ended: bool,
}

impl Replica {
    /// Advances the simulation to `wall_s` x speed; says once, on stderr, that the run ended.
    fn advance(&mut self, wall_s: f64, source: &str, requests: u64) -> Result<(), CliError> {
        self.sim.advance_to(wall_s * self.speed);
        if self.ended || !self.sim.is_finished() {
            return Ok(());
        }
        self.ended = true;
        if let Some(e) = self.sim.error() {
            return Err(CliError::config(source, e));
        }
        let (t, done) = (self.sim.now_s(), self.sim.completed());
        if self.sim.is_truncated() {
            warn(&format!(
                "{source}: the simulated run stopped at {t:.0} s, {done} requests done: a work cap (a million requests in \
                 the system: is the load above capacity?) ended it; /metrics keeps serving its final values"
            ));
        } else {
            eprintln!(
                "kneelab: the simulated run is over: all {requests} requests finished by {t:.0} s; /metrics keeps \
                 serving its final values"
            );
        }
        Ok(())
    }
}

/// Answers one request: `/metrics`, `/health`, or 404. A client that hung up is not an error.
fn respond(request: Request, sim: &Simulation, model: &str) {
    let path = request.url().split('?').next().unwrap_or("").to_string();
    let readable = matches!(request.method(), Method::Get | Method::Head);
    let _ = match path.as_str() {
        "/metrics" if readable => {
            let text = exposition::live_text(sim, model);
            request.respond(Response::from_string(text).with_header(header("Content-Type", CONTENT_TYPE)))
        }
        "/health" if readable => request.respond(Response::empty(200)),
        "/metrics" | "/health" => request.respond(
            Response::from_string(format!("method not allowed: {path} takes GET\n"))
                .with_status_code(405)
                .with_header(header("Allow", "GET, HEAD")),
        ),
        _ => request.respond(
            Response::from_string(format!("not found: {path}; the metrics are at /metrics\n")).with_status_code(404),
        ),
    };
}

fn header(field: &str, value: &str) -> Header {
    Header::from_bytes(field.as_bytes(), value.as_bytes()).expect("a valid ASCII header")
}

fn check_speed(speed: f64) -> Result<(), CliError> {
    if speed.is_finite() && speed > 0.0 && speed <= MAX_SPEED {
        Ok(())
    } else {
        Err(CliError::input(format!(
            "--speed: must be above 0 and at most {MAX_SPEED} (simulated seconds per real second), got {speed}"
        )))
    }
}

/// The config's load, run steadily: as many requests as a run may have (a burst without a
/// concurrency cap sends them all at once, so it keeps its own), none left out as warm-up.
fn steady(config: &mut Config) {
    if !(config.load.mode == LoadMode::Burst && config.load.max_concurrency.is_none()) {
        config.run.requests = MAX_REQUESTS;
    }
    config.run.warmup_requests = Some(0);
}

/// The `model_name` a preset's replica serves under, else one naming the cost model.
fn default_model(config: &Config) -> String {
    match (&config.cost.preset, config.cost.model) {
        (Some(_), _) => kneelab_sim::schema::MODEL.to_string(),
        (None, CostModelKind::Roofline) => "kneelab/roofline".to_string(),
        (None, CostModelKind::Linear) => "kneelab/linear".to_string(),
    }
}

/// The load in words: the rate (or users), and the fraction of capacity when the config gave one.
fn describe_load(scenario: &Scenario, capacity: Option<&Capacity>) -> String {
    let of_capacity = match (scenario.offered_load, capacity) {
        (Some(x), Some(c)) => format!(" = {x} of capacity {:.2} rps", c.rps),
        _ => String::new(),
    };
    match scenario.load {
        Load::Open { rate_rps, burstiness } => {
            let gaps =
                if burstiness == 1.0 { "Poisson".to_string() } else { format!("gamma gaps, burstiness {burstiness}") };
            let over_time = scenario.traffic.map_or(String::new(), |t| format!(", times {} over time", t.describe()));
            format!("open load {rate_rps:.3} rps{of_capacity} ({gaps}{over_time})")
        }
        Load::Closed { users, think_s, .. } => {
            format!("closed load: {users} users thinking {think_s} s{of_capacity}")
        }
        Load::Burst { concurrency: Some(c) } => format!("burst load: {c} requests in flight, each replaced when done"),
        Load::Burst { concurrency: None } => {
            format!("burst load: {} requests at once, then the drain", scenario.requests)
        }
        Load::Routed => "routed: each request handed over by a router".to_string(),
    }
}

/// Listens on `host:port`; a failure is one line naming the flag to change.
fn bind(host: &str, port: u16) -> Result<TcpListener, CliError> {
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| CliError::input(format!("--host {host}: not an address to listen on: {e}")))?
        .collect();
    let mut last = None;
    for addr in &addrs {
        match TcpListener::bind(addr) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some((*addr, e)),
        }
    }
    let Some((addr, e)) = last else {
        return Err(CliError::input(format!("--host {host}: resolves to no address")));
    };
    Err(match e.kind() {
        io::ErrorKind::AddrInUse => CliError::input(format!(
            "--port {port}: {addr} is already in use; pick another --port, or --port 0 for a free one"
        )),
        io::ErrorKind::PermissionDenied => CliError::input(format!(
            "--port {port}: not allowed to listen on {addr} (ports below 1024 need privileges); pick another --port"
        )),
        io::ErrorKind::AddrNotAvailable => {
            CliError::input(format!("--host {host}: {addr} is not an address of this machine"))
        }
        _ => CliError::input(format!("--port {port}: cannot listen on {addr}: {e}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_rows() {
        for (speed, ok) in [
            (1.0, true),
            (0.01, true),
            (MAX_SPEED, true),
            (0.0, false),
            (-1.0, false),
            (1000.5, false),
            (f64::NAN, false),
            (f64::INFINITY, false),
        ] {
            let got = check_speed(speed);
            assert_eq!(got.is_ok(), ok, "{speed}");
            if let Err(e) = got {
                assert!(e.to_string().starts_with("--speed: "), "{e}");
            }
        }
    }

    #[test]
    fn a_steady_config_runs_long_and_measures_from_the_start() {
        let mut config = Config::default();
        steady(&mut config);
        assert_eq!((config.run.requests, config.run.warmup_requests), (MAX_REQUESTS, Some(0)));
        let mut burst = Config { load: kneelab_sim::LoadConfig::burst(None), ..Config::default() };
        steady(&mut burst);
        assert_eq!(burst.run.requests, Config::default().run.requests, "an unlimited burst keeps its size");
        config.validate().unwrap();
        burst.validate().unwrap();
    }

    #[test]
    fn the_default_model_name() {
        let preset = Config { cost: kneelab_sim::CostConfig::roofline("llama-3-8b-a100"), ..Config::default() };
        assert_eq!(default_model(&preset), "meta-llama/Meta-Llama-3-8B-Instruct");
        let linear = Config { cost: kneelab_sim::CostConfig::linear(10.0, 0.0, 0.0), ..Config::default() };
        assert_eq!(default_model(&linear), "kneelab/linear");
    }
}
