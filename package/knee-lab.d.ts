// Types for the <knee-lab> element (js/knee-lab.js). Defaults, presets, workloads and ranges are
// not restated here: they are in `SCHEMA` (the simulator's own schema, loaded with the module).

/** A lab's settings: what its controls show. Attribute `max-num-seqs` sets `maxNumSeqs`, and so on. */
export interface KneeLabState {
  /** Offered load, as a fraction of the replica's measured capacity. */
  load: number;
  mode: 'open' | 'closed';
  /** A workload name from `SCHEMA.workloads` (for example `chat` or `rag`). */
  workload: string;
  /** A GPU preset name from `SCHEMA.presets`. */
  preset: string;
  maxNumSeqs: number;
  chunkedPrefill: boolean;
  maxNumBatchedTokens: number;
  sloTtftMs: number;
  sloTpotMs: number;
  thinkTimeS: number;
  /** The open loop's gamma shape (`vllm bench serve --burstiness`): 1 is Poisson. */
  burstiness: number;
  kvCacheTokens: number;
  /** Requests per simulated run. */
  requests: number;
  seed: number;
  kneeRule: 'attainment' | 'p99';
  latencyScale: 'linear' | 'log';
}

/** The latest readouts by name (see `METRIC_LABELS`), in the simulator's units: seconds, req/s, fractions. */
export type KneeLabReadouts = Record<string, number>;

export interface KneeLabUpdate {
  readouts: KneeLabReadouts;
  state: KneeLabState;
  sweepDone: boolean;
}

/** The simulator's config (the CLI's JSON schema) for a lab's state. */
export type KneeLabConfig = Record<string, unknown>;

export declare class KneeLab extends HTMLElement {
  static readonly observedAttributes: string[];
  /** Resolves once the simulator is loaded and the first point is drawn; rejects if it cannot load. */
  readonly ready: Promise<void>;
  /**
   * A copy of the settings; assign a partial object to change some of them. An unknown key or a
   * value of the wrong kind throws a TypeError whose `path` names the setting; a value the
   * simulator refuses is shown on the lab and fires `kneelab-error`.
   */
  get state(): KneeLabState;
  set state(partial: Partial<KneeLabState>);
  readonly readouts: KneeLabReadouts;
  /** Whether the current mode's sweep (capacity and every load point) is complete. */
  readonly sweepDone: boolean;
  /** The current mode's sweep (points, knee, saturation), or null before it has started. */
  readonly sweep: unknown;
  /** Measured latencies in ms: slider input to readout, a setting change to every chart, and tracing the player's run. */
  readonly timings: { input: number[]; param: number[]; player: number[] };
  /** The `replica` panel's player; null until that panel first comes near the screen (its module loads then). */
  readonly player: KneeLabPlayer | null;
  /**
   * Both load modes at the slider's load, and an open loop at the closed loop's throughput, or
   * null at no load; computed on the third module once the lab's point has run (its sweep may
   * still be going).
   */
  compareLoops(): Promise<unknown>;
  /** The current run as vLLM's /metrics text (Prometheus format), '' at no load; on the third module. */
  metricsText(): Promise<string>;
  /**
   * That text and how a dashboard reads it: the gauges, and histogram_quantile(0.99, ...) of TTFT,
   * TPOT and ITL from the buckets it lists (`value`, inside `(lower, upper]`); a null dashboard at
   * no load.
   */
  metricsReading(): Promise<{ text: string; dashboard: KneeLabDashboard | null }>;
  /**
   * The simulator's config for the current state. Its `load` carries the mode only: add
   * `offered_load` (the state's `load`) before handing it to the third module's `simulate`.
   */
  config(): KneeLabConfig;
  /** Resolves when no sweep or point is pending. */
  idle(): Promise<void>;
}

/** A histogram quantile as Prometheus computes it, and the bucket it fell in. */
export interface KneeLabQuantile {
  value: number;
  lower: number;
  upper: number | null;
}

/** A /metrics scrape read as a dashboard reads it, by vLLM's metric names. */
export interface KneeLabDashboard {
  /** `vllm:num_requests_running`, `vllm:num_requests_waiting`, `vllm:kv_cache_usage_perc`, `vllm:num_preemptions_total`. */
  values: Record<string, number>;
  /** histogram_quantile(0.99, ...) of `vllm:time_to_first_token_seconds`, `vllm:request_time_per_output_token_seconds` and `vllm:inter_token_latency_seconds`. */
  p99: Record<string, KneeLabQuantile | null>;
}

/** The simulator's schema: defaults, option lists, presets, workloads, readouts, ranges. */
export declare const SCHEMA: Readonly<Record<string, unknown>>;
export declare const PRESETS: Readonly<Record<string, { name: string; label: string; model: string; source: string } & Record<string, unknown>>>;
export declare const WORKLOADS: Readonly<Record<string, { label: string; sloTtftMs: number; sloTpotMs: number }>>;
export declare const MAX_MODEL_LEN: number;
export declare const SEQS: readonly number[];
export declare const BUDGETS: readonly number[];
export declare const KV_CACHE_TOKENS: readonly number[];
export declare const BURSTINESS: readonly { shape: number; label: string }[];
export declare const METRIC_LABELS: Readonly<Record<string, string>>;
export declare const DEFAULT_STATE: Readonly<KneeLabState>;
export declare const KNEE_RULES: Readonly<Record<string, string>>;
export declare const LOAD_PCT: Readonly<{ min: number; max: number; step: number }>;
export declare function kvLabel(tokens: number): string;
/** One setting of a lab (`SCHEMA.settings`): its Config path, attribute alias, state key and kind. */
export interface KneeLabSetting {
  /** The Config field it sets (`engine.max_num_seqs`); absent for a view setting. */
  readonly path?: string;
  /** The short attribute name (`max-num-seqs`). */
  readonly attribute: string;
  readonly key: keyof KneeLabState;
  readonly kind: 'number' | 'choice' | 'flag';
  /** A choice's values. */
  readonly choices?: readonly string[];
  /** The id of the control that shows its errors. */
  readonly control?: string;
  /** Config fields derived from it, whose errors belong to its control. */
  readonly derived?: readonly string[];
  /** Reads an attribute's text: a value, or throws an Error naming `name`. */
  parse(name: string, text: string): KneeLabState[keyof KneeLabState];
}
/** Every setting: attributes, URL parameters and the lesson's links are keyed through this table. */
export declare const SETTINGS: readonly KneeLabSetting[];
/** URL-style `[name, text]` pairs, by Config path or alias, as a partial state (text a setting cannot read is left out). */
export declare function readSettings(pairs: Iterable<[string, string]>): Partial<KneeLabState>;
/** A state as `[Config path, text]` pairs (the alias for a setting without one). */
export declare function settingsOf(state: Partial<KneeLabState>): [string, string][];
/** Which limit binds, in words, from a lab's readouts; null until they are known. */
export declare function describeLimits(readouts: KneeLabReadouts): string | null;

declare global {
  interface HTMLElementTagNameMap {
    'knee-lab': KneeLab;
  }
  interface HTMLElementEventMap {
    /** The reader changed a control (bubbles, composed); `detail` is the new state. */
    'kneelab-change': CustomEvent<KneeLabState>;
    /** After every redraw (bubbles, composed). */
    'kneelab-update': CustomEvent<KneeLabUpdate>;
    /** The `replica` panel traced the current run (bubbles, composed). */
    'kneelab-player': CustomEvent<{ steps: number }>;
    /**
     * A setting was refused (bubbles, composed): an attribute that could not be read (`path` is
     * its name) or a value the simulator refuses (`path` is its Config path). The lab shows it too.
     */
    'kneelab-error': CustomEvent<{ path: string; message: string }>;
  }
}

/** The replica player of a lab's `replica` panel: the run the readouts come from, step by step. */
export interface KneeLabPlayer {
  readonly loaded: boolean;
  readonly playing: boolean;
  /** When the run ends, and its engine iterations. */
  readonly endS: number;
  readonly totalSteps: number;
  play(): void;
  /** `byReader`: stay paused until Play. */
  pause(byReader: boolean): void;
  /** One iteration forward (1) or back (-1). */
  step(delta: number): void;
  seekTime(seconds: number, phase?: number): void;
  jump(kind: 'preemption' | 'longest'): void;
  /** The shown iteration as the engine traced it. */
  stepData(): unknown;
  /** The queue over the whole run: peak, peak_s, last, empty_steps, steps, emptied_after_peak. */
  queue(): unknown;
}
