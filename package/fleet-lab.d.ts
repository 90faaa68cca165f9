// The <fleet-lab> element: replicas behind a router and an autoscaler over a compressed day.
// Its settings are config paths of the CLI's `kneelab fleet` JSON; their names, choices and
// ranges are the fleet module's (`fleetSchema()` of pkg/kneelab_later.js), not restated here.

/** A played day's totals (what the scoreboard shows). */
export interface FleetTotals {
  /** The share of requests that met both SLOs. */
  attainment: number;
  goodput_rps: number;
  gpu_hours: number;
  /** Dollars per 1,000 requests that met both SLOs (Infinity when none did). */
  cost_per_1k_good_usd: number;
  [name: string]: number;
}

/** Settings by config path (`'autoscaler.signal'`); `undefined` drops a path set before. */
export type FleetSettings = Record<string, string | number | boolean | undefined>;

export declare class FleetLabElement extends HTMLElement {
  static readonly observedAttributes: string[];
  /** Resolves once the fleet module is loaded and the controls are built. */
  ready?: Promise<void>;
  /**
   * The controls' settings by config path. Assigning sets some (a signal brings its thresholds);
   * what the simulator refuses is named at once, with a `kneelab-error` event.
   */
  get settings(): FleetSettings;
  set settings(values: FleetSettings);
  /** The config the controls describe, in the CLI's fleet JSON. */
  config(): Record<string, unknown>;
  /** The last good run's totals, or null before one. */
  readonly totals: FleetTotals | null;
  /** The pinned run's totals, or null. */
  readonly pinned: FleetTotals | null;
  /**
   * Plays the day; resolves to its totals, or null if a newer play or a crash replaced it.
   * Rejects with the simulator's Error (its `path` names the setting) if the config is refused.
   */
  play(): Promise<FleetTotals | null>;
  /** Keeps the current scoreboard beside the next run's. */
  pin(): void;
}

declare global {
  interface HTMLElementTagNameMap {
    'fleet-lab': FleetLabElement;
  }
  interface HTMLElementEventMap {
    /** After each played day (bubbling, composed): its totals and the config it ran. */
    'fleet-run': CustomEvent<{ totals: FleetTotals; config: Record<string, unknown> }>;
  }
}
