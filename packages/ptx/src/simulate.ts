/**
 * `@forge/ptx/simulate`: runs a shader `emitPtx` generated on the CPU PTX simulator
 * (`@forge/ptx-sim`), binding its launch metadata (parameters, grid, block) to buffers and sizes.
 * A separate entry so that emitting PTX never loads the simulator.
 *
 * @module @forge/ptx/simulate
 */
import { evaluateSizeExpression, type GeneratedShader } from '@forge/ir';
import {
  parsePtx,
  simulate,
  type KernelArgument,
  type SimulateOptions,
  type SimulationResult,
} from '@forge/ptx-sim';

/** Simulator settings for `simulateShader`; the launch itself comes from the shader. */
export interface SimulateShaderOptions extends Omit<
  SimulateOptions,
  'entry' | 'grid' | 'block' | 'args'
> {
  /**
   * PTX to run in place of `shader.source`, e.g. a golden file, with the shader's launch metadata.
   */
  readonly source?: string;
}

/**
 * Runs `shader` once on the simulator. Each buffer parameter is bound to `buffers[name]`, which the
 * kernel reads and writes in place (so outputs land there); every other parameter takes
 * `params[name]` (0 when absent). The grid is the shader's grid expressions evaluated over `params`
 * and the shader's schedule; the block is its workgroup size. Returns the simulator's findings,
 * counters and time: check that `findings` is empty.
 */
export function simulateShader(
  shader: GeneratedShader,
  buffers: Readonly<Record<string, ArrayBufferView>>,
  params: Readonly<Record<string, number>>,
  options: SimulateShaderOptions = {},
): SimulationResult {
  const { source = shader.source, ...settings } = options;
  const { launch } = shader;
  const args: Record<string, KernelArgument> = {};
  for (const parameter of launch.parameters) {
    const buffer = parameter.kind === 'buffer' ? buffers[parameter.name] : undefined;
    args[parameter.sourceName] =
      buffer === undefined
        ? { kind: 'scalar', value: params[parameter.name] ?? 0 }
        : {
            kind: 'buffer',
            bytes: new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength),
          };
  }
  const sizes = { ...params, ...shader.schedule };
  const [x, y, z] = launch.grid.map((axis) => evaluateSizeExpression(axis, sizes));
  return simulate(parsePtx(source), {
    ...settings,
    entry: launch.entryPoint,
    grid: [x ?? 1, y ?? 1, z ?? 1],
    block: launch.workgroupSize,
    args,
  });
}
