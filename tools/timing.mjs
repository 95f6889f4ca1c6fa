// Timed simulator runs for the benches: a shader's dispatches simulated with the timing model of a
// GPU, its occupancy from ptxas's register count for that GPU's arch (cached per source and arch).
import { assemblePtx, entryRegisters } from '../packages/ptx/dist/ptxas.js';
import { simulateShaderDispatches } from '../packages/ptx/dist/simulate.js';
import { estimateSequence, sampleMismatch } from '../packages/ptx-sim/dist/index.js';

const registerCache = new Map();

/** Registers per thread of each entry of `source` on `gpu`, as ptxas -arch=<gpu.arch> reports them. */
export function registersFor(source, gpu, entries) {
  const key = `${gpu.arch}\n${source}`;
  if (!registerCache.has(key)) {
    const report = assemblePtx(source, gpu.arch);
    if (!report.ok)
      throw new Error(`ptxas -arch=${gpu.arch} rejected the PTX: ${report.diagnostics}`);
    registerCache.set(key, report);
  }
  const report = registerCache.get(key);
  return Object.fromEntries(entries.map((name) => [name, entryRegisters(report, name)]));
}

/**
 * Simulates `shader` timed on `gpu` (4 sampled workgroups a dispatch unless `sampleBlocks` says
 * otherwise; the whole grid when a sample's blocks did unequal work) and returns its dispatches
 * and their chain's estimate (`graph`: launched as a CUDA graph) from `firstDispatch` on (the ones
 * before it still run, for the scratch and L2 they leave, but are not counted). Findings throw.
 */
export function timeShader(
  shader,
  buffers,
  params,
  gpu,
  { sampleBlocks = 4, graph = false, source, firstDispatch = 0 } = {},
) {
  const entries = (shader.launch.dispatches ?? [shader.launch]).map((part) => part.entryPoint);
  const timing = { gpu, registers: registersFor(source ?? shader.source, gpu, entries) };
  const run = (options) =>
    simulateShaderDispatches(shader, buffers, params, {
      ...options,
      timing,
      ...(source === undefined ? {} : { source }),
    });
  let dispatches = run(sampleBlocks === undefined ? {} : { sampleBlocks });
  if (dispatches.some(({ sample }) => sample !== undefined && sampleMismatch(sample) !== undefined))
    dispatches = run({});
  for (const { findings } of dispatches)
    if (findings.length > 0) throw new Error(`${shader.kernelId}: ${findings[0].message}`);
  return {
    dispatches,
    sequence: estimateSequence(
      dispatches.slice(firstDispatch).map((part) => part.estimate),
      gpu,
      { graph },
    ),
  };
}

/** `12.3 µs 45% DRAM-bound, 16 warps/SM, 12.0 KB in flight (peak 20.0), 2.0 round trips/warp`. */
export function describeTiming(estimate) {
  const warps = estimate.occupancy?.residentWarps;
  const inFlight = estimate.bytesInFlightPerSm;
  return [
    `${(estimate.seconds * 1e6).toFixed(2)} µs ${(estimate.bandwidthFraction * 100).toFixed(0)}% ${estimate.bound}-bound`,
    ...(warps === undefined ? [] : [`${warps} warps/SM`]),
    ...(inFlight === undefined
      ? []
      : [
          `${(inFlight.mean / 1024).toFixed(1)} KB in flight (peak ${(inFlight.peak / 1024).toFixed(1)})`,
        ]),
    ...(estimate.dramRoundTripsPerWarp === undefined
      ? []
      : [`${estimate.dramRoundTripsPerWarp.toFixed(1)} round trips/warp`]),
    ...(estimate.sharedWavefronts > 0
      ? [
          `shared ${Math.round(estimate.sharedWavefronts)}/${Math.round(estimate.sharedWavefrontsMinimum)} wavefronts`,
        ]
      : []),
  ].join(', ');
}
