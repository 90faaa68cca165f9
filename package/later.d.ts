// kneelab/later: the package's third module (pkg/kneelab_later.js), the engine's own entry points
// with the CLI's JSON shapes (`kneelab run`, `kneelab sweep`, `kneelab size`). Load its wasm with
// `await init()` first (bundled: `await init({ module_or_path: new URL('…/kneelab_later_bg.wasm') })`).
// Each throws an Error whose `path` names the field of bad input.

/** A config as the CLI's JSON takes it (see the project README for its fields). */
export type Config = Record<string, unknown>;

/** An engine error: `path` is the config path it names ('' when it names none). */
export interface KneelabError extends Error {
  path: string;
}

/** Loads the module's wasm; resolves once its functions can be called. */
export default function init(
  options?: { module_or_path?: string | URL | Request | Response | BufferSource | WebAssembly.Module },
): Promise<unknown>;

/** Runs one config (`kneelab run`): its Summary (throughput, TTFT/TPOT/E2E stats, goodput, ...). */
export function simulate(config: Config): Record<string, unknown>;

/** Sweeps the offered load (`kneelab sweep`): points, knee and saturation; `loads` defaults to 0.05, 0.1, ..., 1.2. */
export function sweep(config: Config, loads?: number[]): Record<string, unknown>;

/**
 * Little's Law sizing (`kneelab size`): `{ max_num_seqs, batch_s, peak_qps, knee_qps?,
 * saturation_qps? }`, the W being the time in the batch.
 */
export function size(input: {
  max_num_seqs: number;
  batch_s: number;
  peak_qps: number;
  knee_qps?: number;
  saturation_qps?: number;
}): Record<string, unknown>;

/** The engine's version, as `kneelab --version` prints it. */
export function version(): string;
