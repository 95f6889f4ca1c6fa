import {
  estimateSequence,
  findGpu,
  formatEstimate,
  GPUS,
  type GpuSpec,
  sampleMismatch,
  scaleSample,
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

/** --sample-blocks K: at least 2 (the first block and the last); only with --gpu. */
export function sampleOption(
  text: string | undefined,
  gpu: GpuSpec | undefined,
): number | undefined {
  if (text === undefined) return undefined;
  if (gpu === undefined)
    throw new UsageError('--sample-blocks: a sampled run only feeds an estimate; add --gpu NAME');
  return countOption('--sample-blocks', text, 2, 2 ** 31 - 1);
}

/**
 * The cost-model estimate of a simulated launch on `gpu`, from each dispatch's result in order (one
 * for a single-dispatch kernel): the --json object and the text line. Dispatches are estimated on
 * their own grids and summed (estimateSequence). A sampled dispatch is scaled to its whole grid,
 * and refused if its blocks did not do identical work.
 */
export function estimateFigures(
  dispatches: readonly SimulationResult[],
  gpu: GpuSpec,
): { readonly json: Record<string, unknown>; readonly line: string } {
  let sampled = 0;
  let blocks = 0;
  for (const { sample, grid } of dispatches) {
    const mismatch = sample === undefined ? undefined : sampleMismatch(sample);
    if (mismatch !== undefined)
      throw new UsageError(`--sample-blocks: ${mismatch}; simulate the whole grid`);
    const count = grid[0] * grid[1] * grid[2];
    blocks += count;
    sampled += sample?.blocks ?? count;
  }
  const isSampled = dispatches.some((result) => result.sample !== undefined);
  const figures = estimateSequence(
    dispatches.map((result) => ({ ...result, counters: scaleSample(result) })),
    gpu,
  );
  return {
    json: {
      gpu: figures.gpu,
      issueSeconds: figures.issueSeconds,
      memorySeconds: figures.memorySeconds,
      seconds: figures.seconds,
      bandwidthFraction: figures.bandwidthFraction,
      bound: figures.bound,
      ...(dispatches.length < 2
        ? {}
        : {
            dispatches: figures.dispatches.map((part) => ({
              seconds: part.seconds,
              bandwidthFraction: part.bandwidthFraction,
              bound: part.bound,
            })),
          }),
      ...(isSampled ? { sampledWorkgroups: sampled, workgroups: blocks } : {}),
    },
    line:
      formatEstimate(figures) +
      (isSampled ? `, estimated from ${sampled} of ${blocks} workgroups` : ''),
  };
}
