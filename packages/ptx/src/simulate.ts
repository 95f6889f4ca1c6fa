/**
 * `@forge/ptx/simulate`: runs a shader `emitPtx` generated on the CPU PTX simulator
 * (`@forge/ptx-sim`), binding its launch metadata (parameters, grid, block) to buffers and sizes.
 * A separate entry so that emitting PTX never loads the simulator.
 *
 * @module @forge/ptx/simulate
 */
import { checkFirstDispatch, evaluateSizeExpression, type GeneratedShader } from '@forge/ir';
import {
  DEFAULT_L2_BYTES,
  L2Cache,
  parsePtx,
  simulate,
  type Counters,
  type KernelArgument,
  type SimulateOptions,
  type SimulationResult,
} from '@forge/ptx-sim';

/** Simulator settings for `simulateShader`; the launch itself comes from the shader. */
export interface SimulateShaderOptions extends Omit<
  SimulateOptions,
  'entry' | 'grid' | 'block' | 'args' | 'l2'
> {
  /**
   * PTX to run in place of `shader.source`, e.g. a golden file, with the shader's launch metadata.
   */
  readonly source?: string;
  /**
   * The first dispatch to run (0 when omitted); the ones before it are skipped, their scratch
   * results already in `buffers` (a launch reusing another's quantized x).
   */
  readonly firstDispatch?: number;
}

/**
 * Runs `shader` once on the simulator. Each buffer parameter is bound to `buffers[name]`, which the
 * kernel reads and writes in place (so outputs land there); every other parameter takes
 * `params[name]` (0 when absent). The grid is the shader's grid expressions evaluated over `params`
 * and the shader's schedule; the block is its workgroup size. A multi-dispatch shader runs every
 * dispatch in order (see simulateShaderDispatches) and returns their findings, counters and time
 * summed, with the first dispatch's grid and block (time a multi-dispatch launch with the
 * per-dispatch results' estimates instead: `estimateSequence`). Check that
 * `findings` is empty.
 */
export function simulateShader(
  shader: GeneratedShader,
  buffers: Readonly<Record<string, ArrayBufferView>>,
  params: Readonly<Record<string, number>>,
  options: SimulateShaderOptions = {},
): SimulationResult {
  const results = simulateShaderDispatches(shader, buffers, params, options);
  if (results.length === 0) throw new RangeError(`${shader.kernelId}: launch has no dispatches`);
  return mergeSimulationResults(results);
}

/**
 * Runs every dispatch of `shader` in order on the simulator, as simulateShader binds them, and
 * returns each one's result. Scratch buffers (`launch.scratch`) are taken from `buffers` when given
 * there, else allocated at their size over `params` and filled with 0xff bytes (NaN for floats),
 * so a read before any write shows.
 */
export function simulateShaderDispatches(
  shader: GeneratedShader,
  buffers: Readonly<Record<string, ArrayBufferView>>,
  params: Readonly<Record<string, number>>,
  options: SimulateShaderOptions = {},
): SimulationResult[] {
  const { source = shader.source, firstDispatch = 0, ...settings } = options;
  const { launch } = shader;
  const sizes = { ...params, ...shader.schedule };
  const bound: Record<string, ArrayBufferView> = { ...buffers };
  for (const scratch of launch.scratch ?? []) {
    bound[scratch.name] ??= new Uint8Array(evaluateSizeExpression(scratch.bytes, sizes)).fill(0xff);
  }
  const args: Record<string, KernelArgument> = {};
  for (const parameter of launch.parameters) {
    const buffer = parameter.kind === 'scalar' ? undefined : bound[parameter.name];
    args[parameter.sourceName] =
      buffer === undefined
        ? { kind: 'scalar', value: params[parameter.name] ?? 0 }
        : {
            kind: 'buffer',
            bytes: new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength),
          };
  }
  const module = parsePtx(source);
  const all = launch.dispatches ?? [launch];
  checkFirstDispatch(firstDispatch, all.length);
  const dispatches = all.slice(firstDispatch);
  // One L2 for the launch: a dispatch reads what the one before it wrote (x's scratch) from L2.
  const l2 = new L2Cache(settings.l2Bytes ?? DEFAULT_L2_BYTES);
  return dispatches.map((dispatch) => {
    const [x, y, z] = dispatch.grid.map((axis) => evaluateSizeExpression(axis, sizes));
    return simulate(module, {
      ...settings,
      entry: dispatch.entryPoint,
      grid: [x ?? 1, y ?? 1, z ?? 1],
      block: dispatch.workgroupSize,
      args,
      l2,
    });
  });
}

const TRAFFIC_FIELDS = [
  'bytesRead',
  'bytesWritten',
  'requestedBytes',
  'sectorBytes',
  'dramBytesRead',
  'dramBytesWritten',
] as const;

/**
 * One result for a sequence of dispatches' results (simulateShaderDispatches'): findings in order,
 * counters and time summed, the first dispatch's grid and block, and no `sample` (one dispatch's
 * sample cannot describe the sum). Timing needs each dispatch's own run: give `estimateSequence`
 * the results' estimates.
 */
export function mergeSimulationResults(results: readonly SimulationResult[]): SimulationResult {
  const [first, ...rest] = results;
  if (first === undefined) throw new RangeError('mergeSimulationResults: no results');
  if (rest.length === 0) return first;
  const counters: Counters = structuredClone(first.counters);
  let milliseconds = first.milliseconds;
  const findings = [...first.findings];
  for (const result of rest) {
    milliseconds += result.milliseconds;
    findings.push(...result.findings);
    const add = (into: Record<string, number>, from: Readonly<Record<string, number>>): void => {
      for (const [key, value] of Object.entries(from)) into[key] = (into[key] ?? 0) + value;
    };
    add(counters.warpInstructions, result.counters.warpInstructions);
    add(counters.warpInstructionsByClass, result.counters.warpInstructionsByClass);
    counters.threadInstructions += result.counters.threadInstructions;
    for (const [name, traffic] of Object.entries(result.counters.buffers)) {
      const into = counters.buffers[name];
      if (into === undefined) counters.buffers[name] = { ...traffic };
      else for (const field of TRAFFIC_FIELDS) into[field] += traffic[field];
    }
  }
  const { sample: _sample, ...launch } = first;
  return { ...launch, findings, counters, milliseconds };
}
