import {
  estimate,
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
 * The cost-model estimate of a simulation on `gpu`: the --json object and the text line. A sampled
 * run is scaled to the whole grid, and refused if its blocks did not do identical work.
 */
export function estimateFigures(
  result: SimulationResult,
  gpu: GpuSpec,
): { readonly json: Record<string, unknown>; readonly line: string } {
  const { sample } = result;
  const mismatch = sample === undefined ? undefined : sampleMismatch(sample);
  if (mismatch !== undefined)
    throw new UsageError(`--sample-blocks: ${mismatch}; simulate the whole grid`);
  const figures = estimate(scaleSample(result), result, gpu);
  const blocks = result.grid[0] * result.grid[1] * result.grid[2];
  return {
    json: {
      gpu: figures.gpu,
      issueSeconds: figures.issueSeconds,
      memorySeconds: figures.memorySeconds,
      seconds: figures.seconds,
      bandwidthFraction: figures.bandwidthFraction,
      bound: figures.bound,
      ...(sample === undefined ? {} : { sampledWorkgroups: sample.blocks, workgroups: blocks }),
    },
    line:
      formatEstimate(figures) +
      (sample === undefined ? '' : `, estimated from ${sample.blocks} of ${blocks} workgroups`),
  };
}
