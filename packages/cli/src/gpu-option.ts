import { assemblePtx, entryRegisters } from '@forge/ptx/ptxas';
import {
  estimateSequence,
  findGpu,
  formatEstimate,
  formatSequence,
  GPUS,
  type Estimate,
  type GpuSpec,
  sampleMismatch,
  type SimulationResult,
} from '@forge/ptx-sim';
import { UsageError } from './errors.js';
import { countOption } from './numbers.js';

/** The GPU --gpu names, or undefined when it is not given; an unknown name is a usage error. */
export function gpuOption(text: string | undefined): GpuSpec | undefined {
  if (text === undefined) return undefined;
  const spec = findGpu(text);
  if (spec === undefined)
    throw new UsageError(`--gpu: unknown GPU '${text}' (known: ${Object.keys(GPUS).join(', ')})`);
  return spec;
}

/** A count option that only feeds an estimate: refused without --gpu, saying what it feeds. */
function estimateCount(
  option: string,
  what: string,
  text: string | undefined,
  gpu: GpuSpec | undefined,
  [min, max]: readonly [number, number],
): number | undefined {
  if (text === undefined) return undefined;
  if (gpu === undefined)
    throw new UsageError(`${option}: ${what} only feeds an estimate; add --gpu NAME`);
  return countOption(option, text, min, max);
}

/** --sample-blocks K: at least 2 (the first block and the last); only with --gpu. */
export const sampleOption = (text: string | undefined, gpu: GpuSpec | undefined) =>
  estimateCount('--sample-blocks', 'a sampled run', text, gpu, [2, 2 ** 31 - 1]);

/** --registers N: the registers a thread uses, in place of ptxas's count; only with --gpu. */
export const registersOption = (text: string | undefined, gpu: GpuSpec | undefined) =>
  estimateCount('--registers', 'a register count', text, gpu, [1, 255]);

/**
 * Registers a thread of each named entry uses on `gpu`, as ptxas reports them for its arch: the
 * timing model's occupancy starts there.
 */
export function ptxasRegisters(
  source: string,
  gpu: GpuSpec,
  entries: readonly string[],
): Record<string, number> {
  const report = assemblePtx(source, gpu.arch);
  if (!report.ok) {
    const reason = report.diagnostics.split('\n')[0] ?? 'no diagnostics';
    throw new UsageError(
      `--gpu: ptxas -arch=${gpu.arch} rejected the PTX, so its register count is unknown (${reason}); give --registers N`,
    );
  }
  return Object.fromEntries(entries.map((name) => [name, entryRegisters(report, name)]));
}

/** The --json fields of one launch's estimate. */
function estimateJson(estimate: Estimate): Record<string, unknown> {
  const { occupancy: placed } = estimate;
  return {
    seconds: estimate.seconds,
    bandwidthFraction: estimate.bandwidthFraction,
    bound: estimate.bound,
    registers: estimate.registers,
    residentWarpsPerSm: placed.residentWarps,
    blocksPerSm: placed.blocksPerSm,
    occupancyLimit: placed.limitedBy,
    activeSms: placed.activeSms,
    idleSms: placed.idleSms,
    waves: placed.waves,
    bytesInFlightPerSm: estimate.bytesInFlightPerSm,
    dramRoundTripsPerWarp: estimate.dramRoundTripsPerWarp,
    sharedWavefronts: estimate.sharedWavefronts,
    sharedWavefrontsMinimum: estimate.sharedWavefrontsMinimum,
    dramBytes: estimate.dramBytes,
    limits: estimate.limits,
  };
}

/**
 * The timing model's estimate of a simulated launch on `gpu`, from each dispatch's timed result in
 * order (one for a single-dispatch kernel): the --json object and the text line. Dispatches run
 * one after another, each with its launch gap (a stream's, or a CUDA graph's with `graph`). A
 * sampled dispatch is refused if its blocks did not do identical work.
 */
export function estimateFigures(
  dispatches: readonly SimulationResult[],
  gpu: GpuSpec,
  graph = false,
): { readonly json: Record<string, unknown>; readonly line: string } {
  let sampled = 0;
  let blocks = 0;
  const estimates = dispatches.map(({ sample, grid, estimate }) => {
    const mismatch = sample === undefined ? undefined : sampleMismatch(sample);
    if (mismatch !== undefined)
      throw new UsageError(`--sample-blocks: ${mismatch}; simulate the whole grid`);
    if (estimate === undefined) throw new RangeError('estimateFigures: the run was not timed');
    const count = grid[0] * grid[1] * grid[2];
    blocks += count;
    sampled += sample?.blocks ?? count;
    return estimate;
  });
  const isSampled = dispatches.some((result) => result.sample !== undefined);
  const sequence = estimateSequence(estimates, gpu, { graph });
  const single = estimates.length === 1 ? estimates[0] : undefined;
  const dominant = estimates[sequence.dominant] as Estimate;
  const sum = (field: (estimate: Estimate) => number): number =>
    estimates.reduce((total, estimate) => total + field(estimate), 0);
  return {
    json: {
      gpu: gpu.name,
      ...estimateJson(dominant),
      seconds: sequence.seconds,
      bandwidthFraction: sequence.bandwidthFraction,
      bound: sequence.bound,
      sharedWavefronts: sum((estimate) => estimate.sharedWavefronts),
      sharedWavefrontsMinimum: sum((estimate) => estimate.sharedWavefrontsMinimum),
      dramBytes: sequence.dramBytes,
      launchSeconds: sequence.launchSeconds,
      graph,
      totalSeconds: sequence.totalSeconds,
      sampled: isSampled,
      ...(isSampled ? { sampledWorkgroups: sampled, workgroups: blocks } : {}),
      ...(single === undefined ? { dispatches: estimates.map(estimateJson) } : {}),
    },
    line:
      (single === undefined ? formatSequence(sequence) : formatEstimate(single)) +
      (isSampled ? `, estimated from ${sampled} of ${blocks} workgroups` : ''),
  };
}
