import {
  estimate,
  findGpu,
  formatEstimate,
  GPUS,
  type GpuSpec,
  type SimulationResult,
} from '@forge/ptx-sim';
import { UsageError } from './errors.js';

/** The GPU --gpu names, or undefined when it is not given; an unknown name is a usage error. */
export function gpuOption(text: string | undefined): GpuSpec | undefined {
  if (text === undefined) return undefined;
  const spec = findGpu(text);
  if (spec === undefined)
    throw new UsageError(`--gpu: unknown GPU '${text}' (known: ${Object.keys(GPUS).join(', ')})`);
  return spec;
}

/** The cost-model estimate of a simulation on `gpu`: the --json object and the text line. */
export function estimateFigures(
  result: SimulationResult,
  gpu: GpuSpec,
): { readonly json: Record<string, unknown>; readonly line: string } {
  const figures = estimate(result.counters, result, gpu);
  return {
    json: {
      gpu: figures.gpu,
      issueSeconds: figures.issueSeconds,
      memorySeconds: figures.memorySeconds,
      seconds: figures.seconds,
      bandwidthFraction: figures.bandwidthFraction,
      bound: figures.bound,
    },
    line: formatEstimate(figures),
  };
}
