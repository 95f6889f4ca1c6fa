import { interpret, resolveSchedule, type ElementArray, type Schedule } from '@forge/ir';
import { type CatalogKernel } from '@forge/ir/kernels';
import { PTX_LIMITS } from '@forge/ptx';
import { mergeSimulationResults, simulateShaderDispatches } from '@forge/ptx/simulate';
import type { GpuSpec } from '@forge/ptx-sim';
import { describeCounters, simulationFigures } from './commands/sim.js';
import { emitFor } from './emitters.js';
import { estimateFigures, ptxasRegisters } from './gpu-option.js';
import type { GoldenTarget } from './golden/entries.js';

export interface EngineRequest {
  readonly kernel: CatalogKernel;
  readonly schedule: Schedule;
  readonly target: GoldenTarget | undefined;
  readonly buffers: Record<string, ElementArray>;
  readonly params: Readonly<Record<string, number>>;
  /** The GPU whose estimate the simulator adds (ptx-sim only). */
  readonly gpu?: GpuSpec | undefined;
  /** Simulate only this many workgroups and scale (ptx-sim with `gpu` only). */
  readonly sampleBlocks?: number | undefined;
  /** Launch the dispatches as a CUDA graph replay in the estimate (ptx-sim with `gpu` only). */
  readonly graph?: boolean | undefined;
}

export interface EngineResult {
  readonly milliseconds: number;
  /** Sanitizer findings, one line each; any finding fails the run. */
  readonly findings?: readonly string[];
  /** Engine-specific figures for --json (the simulator's counters). */
  readonly figures?: Record<string, unknown>;
  /** The same figures as text lines. */
  readonly summary?: string;
  /** The timing model's estimate on the requested GPU, for --json. */
  readonly estimate?: Record<string, unknown>;
  /** Only some workgroups ran, so the outputs are incomplete and cannot be checked. */
  readonly sampled?: boolean;
}

/** Runs a kernel in place on `buffers`. */
export type Engine = (request: EngineRequest) => Promise<EngineResult>;

/** Execution engines by `--target` name: the IR interpreter, WebGPU through Dawn, the PTX simulator. */
export const ENGINES: Readonly<Record<string, Engine>> = {
  interp: async ({ kernel, schedule, buffers, params }) => {
    const resolved = resolveSchedule(kernel.spec, PTX_LIMITS, schedule);
    const start = performance.now();
    interpret(kernel.spec, { schedule: resolved, params, buffers });
    return { milliseconds: performance.now() - start };
  },
  wgsl: async ({ kernel, schedule, target, buffers, params }) => {
    const shader = emitFor(kernel.spec, schedule, target ?? { kind: 'wgsl', features: [] });
    // Loaded on demand: emitting or listing never starts Dawn.
    const { openWebGpu, runWgsl } = await import('@forge/wgsl/runner');
    const context = await openWebGpu({ features: [...(shader.launch.requiredFeatures ?? [])] });
    try {
      return { milliseconds: (await runWgsl(context, shader, { buffers, params })).milliseconds };
    } finally {
      context.destroy();
    }
  },
  'ptx-sim': async ({ kernel, schedule, target, buffers, params, gpu, sampleBlocks, graph }) => {
    const shader = emitFor(kernel.spec, schedule, target ?? { kind: 'ptx', arch: 'sm_80' });
    const entries = (shader.launch.dispatches ?? [shader.launch]).map((part) => part.entryPoint);
    // ptxas's register count for the GPU's arch sets each dispatch's occupancy.
    const timing =
      gpu === undefined
        ? undefined
        : { gpu, registers: ptxasRegisters(shader.source, gpu, entries) };
    // Every dispatch samples its own grid and is timed on it.
    const dispatches = simulateShaderDispatches(shader, buffers, params, {
      ...(sampleBlocks === undefined ? {} : { sampleBlocks }),
      ...(timing === undefined ? {} : { timing }),
    });
    const result = mergeSimulationResults(dispatches);
    const figures = simulationFigures(result);
    const estimated =
      gpu === undefined ? undefined : estimateFigures(dispatches, gpu, graph === true);
    return {
      milliseconds: result.milliseconds,
      findings: figures['findings'] as string[],
      figures,
      summary: describeCounters(result) + (estimated === undefined ? '' : `\n${estimated.line}`),
      ...(estimated === undefined ? {} : { estimate: estimated.json }),
      ...(dispatches.some((part) => part.sample !== undefined) ? { sampled: true } : {}),
    };
  },
};
