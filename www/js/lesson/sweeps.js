// Whole sweeps from the wasm module, for tables and worked examples that compare configurations
// the main lab is not showing. Cached by config. A sweep takes about 0.1 s, so it runs through
// a `SweepJob` in slices of about 12 ms, one per task: input is handled in between.

import { SCHEMA, WORKLOADS } from '../knee-lab.js';
import { inSlices } from '../schedule.js';

/** The knee lab's load grid, the schema's. */
export const LOADS = SCHEMA.loads;

/** The course's baseline engine: the schema's cap, chunked prefill and token budget. */
export const BASE_ENGINE = {
  max_num_seqs: SCHEMA.engine.max_num_seqs,
  chunked_prefill: SCHEMA.engine.chunked_prefill,
  max_num_batched_tokens: SCHEMA.engine.max_num_batched_tokens,
};

/**
 * A `workload` (chat | rag) replica on `preset` with the course's baseline engine and the
 * workload's SLOs, built on the main lab's own config (run length, KV cache, seed).
 */
export function workloadConfig(lab, workload, preset = SCHEMA.defaults.preset) {
  const config = structuredClone(lab.config());
  const w = WORKLOADS[workload];
  config.engine = { ...config.engine, ...BASE_ENGINE };
  config.cost = { model: 'roofline', preset };
  config.workload = { preset: workload };
  config.load = { mode: 'open' };
  config.slo = { ttft_ms: w.sloTtftMs, tpot_ms: w.sloTpotMs };
  return config;
}

const cache = new Map();

/** The sweep of `config` over LOADS (open loop), computed once per config. */
export function sweepCached(wasm, config) {
  const key = JSON.stringify(config);
  if (!cache.has(key)) cache.set(key, runSweep(wasm, config));
  return cache.get(key);
}

async function runSweep(wasm, config) {
  const job = new wasm.SweepJob(config, LOADS);
  try {
    await stepped(job);
    return job.result();
  } finally {
    job.free();
  }
}

/** Calls `job.step()` (a `SweepJob`'s, a `ReplicaView`'s, a `Paste`'s) until it returns false, 12 ms of calls a task. */
export function stepped(job) {
  return new Promise((resolve, reject) => {
    const after = (more) => more || resolve();
    inSlices(() => job.step(), { sliceMs: 12, current: () => true, after, fail: reject });
  });
}
