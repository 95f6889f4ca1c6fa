import {
  interpret,
  resolveSchedule,
  type CatalogKernel,
  type ElementArray,
  type Schedule,
} from '@forge/ir';
import type { GoldenTarget } from './golden/entries.js';
import { emitFor } from './emitters.js';

export interface EngineRequest {
  readonly kernel: CatalogKernel;
  readonly schedule: Schedule;
  readonly target: GoldenTarget | undefined;
  readonly buffers: Record<string, ElementArray>;
  readonly params: Readonly<Record<string, number>>;
}

/** Runs a kernel in place on `buffers`; returns the execution time in milliseconds. */
export type Engine = (request: EngineRequest) => Promise<number>;

/** Execution engines by `--target` name: the IR interpreter, and WebGPU through Dawn. */
export const ENGINES: Readonly<Record<string, Engine>> = {
  interp: async ({ kernel, schedule, buffers, params }) => {
    const resolved = resolveSchedule(kernel.spec, 'ptx', schedule);
    const start = performance.now();
    interpret(kernel.spec, { schedule: resolved, params, buffers });
    return performance.now() - start;
  },
  wgsl: async ({ kernel, schedule, target, buffers, params }) => {
    const shader = emitFor(kernel.spec, schedule, target ?? { kind: 'wgsl', features: [] });
    // Loaded on demand: emitting or listing never starts Dawn.
    const { openWebGpu, runWgsl } = await import('@forge/wgsl/runner');
    const context = await openWebGpu({ features: [...(shader.launch.requiredFeatures ?? [])] });
    try {
      return (await runWgsl(context, shader, { buffers, params })).milliseconds;
    } finally {
      context.destroy();
    }
  },
};
