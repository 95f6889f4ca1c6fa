import { ForgeError, evaluateSizeExpression, type GeneratedShader } from '@forge/ir';
import { bytesOf, checkInputs, roundUp, type WgslInputs } from '../runner/inputs.js';
import { launchGrid } from '../runner/run.js';
import { ExpressionCompiler } from './expressions.test-support.js';
import { WgslCompileError, valueType } from './types.test-support.js';
import { EntryCompiler } from './statements.test-support.js';
import { Memory, type Machine } from './memory.test-support.js';
import { parseWgsl, typeText, type ModuleNode, type TypeNode } from './parse.test-support.js';
import { wrap, type Value, type ValueType } from './values.test-support.js';

// Runs a generated WGSL shader on the CPU the way runWgsl runs it on WebGPU (same inputs, outputs
// copied back into the caller's arrays), for any subgroup size: the sizes no adapter here gives.

export interface CpuRunOptions {
  /** Lanes per subgroup: a power of two from 4 to 128, as WebGPU allows. */
  readonly subgroupSize: number;
  /** Whether `fma` rounds once (the default) or rounds the product first, as WGSL also allows. */
  readonly fusedFma?: boolean;
}

export interface CpuRunResult {
  /** Workgroups run, over every dispatch. */
  readonly workgroups: number;
  /** subgroupShuffleXor values read across lanes, over every dispatch. */
  readonly shuffles: number;
}

// Parsed once a shader: a sweep runs each at several subgroup sizes, and nothing changes the tree.
// Weak, so a shader's tree goes when the shader does; the source is compared in case of a copy.
const parsed = new WeakMap<GeneratedShader, { source: string; module: ModuleNode }>();

function parsedModule(shader: GeneratedShader): ModuleNode {
  const known = parsed.get(shader);
  if (known !== undefined && known.source === shader.source) return known.module;
  const module = parseWgsl(shader.source);
  parsed.set(shader, { source: shader.source, module });
  return module;
}

function elementOf(type: TypeNode, name: string): ValueType {
  const [element] = type.args;
  if (type.name !== 'array' || typeof element !== 'object')
    throw new WgslCompileError(`${name}: unsupported type ${typeText(type)}`);
  const value = valueType(element);
  if (value.scalar === 'f16' || value.scalar === 'bool')
    throw new WgslCompileError(`${name}: arrays of ${value.scalar} are not supported`);
  return value;
}

/**
 * Interprets `shader` over `inputs` with subgroups of `options.subgroupSize` lanes, dispatch by
 * dispatch, workgroup by workgroup. Throws a WgslExecutionError for an access out of bounds, a
 * data race on workgroup memory, or a barrier or subgroup operation outside uniform control flow.
 */
export function runWgslOnCpu(
  shader: GeneratedShader,
  inputs: WgslInputs,
  options: CpuRunOptions,
): CpuRunResult {
  const { subgroupSize } = options;
  if (!Number.isInteger(Math.log2(subgroupSize)) || subgroupSize < 4 || subgroupSize > 128)
    throw new ForgeError(`subgroupSize must be a power of two from 4 to 128, got ${subgroupSize}`);
  const { launch } = shader;
  checkInputs(launch, inputs);
  const module = parsedModule(shader);
  const sizes = { ...inputs.params, ...shader.schedule };
  const bindings = launch.bindings ?? [];
  const byVariable = new Map(
    module.globals
      .filter((global) => global.binding !== undefined)
      .map((global) => [global.name, global]),
  );

  const storage = new Map<string, { bytes: ArrayBuffer; target?: Uint8Array }>();
  const uniforms = new Map<string, Map<string, { type: ValueType; value: Value }>>();
  for (const binding of bindings) {
    const global = byVariable.get(binding.sourceName);
    if (global === undefined)
      throw new WgslCompileError(`no module variable ${binding.sourceName}`);
    if (binding.kind === 'params') {
      const members = module.structs.get(global.type.name) ?? [];
      uniforms.set(
        global.name,
        new Map(
          members.map(({ name, type }) => {
            const member = valueType(type);
            return [name, { type: member, value: wrap(member.scalar, inputs.params[name] ?? 0) }];
          }),
        ),
      );
      continue;
    }
    if (binding.kind === 'scratch') {
      const scratch = launch.scratch?.find((entry) => entry.name === binding.name);
      const length = scratch === undefined ? 0 : evaluateSizeExpression(scratch.bytes, sizes);
      // 0xff bytes, as runWgsl fills them: NaN where a read comes before any write.
      storage.set(global.name, { bytes: new Uint8Array(roundUp(length, 4)).fill(0xff).buffer });
      continue;
    }
    const array = inputs.buffers[binding.name];
    if (array === undefined) continue;
    const source = bytesOf(array);
    const bytes = new Uint8Array(roundUp(source.byteLength, 4));
    bytes.set(source);
    storage.set(global.name, {
      bytes: bytes.buffer,
      ...(binding.access === 'read_write' ? { target: source } : {}),
    });
  }

  let workgroups = 0;
  let shuffles = 0;
  for (const dispatch of launch.dispatches ?? [launch]) {
    const node = module.functions.get(dispatch.entryPoint);
    const workgroupSize = node?.workgroupSize ?? 0;
    const machine: Machine = {
      workgroupSize,
      subgroupSize,
      fusedFma: options.fusedFma ?? true,
      workgroupId: [0, 0, 0],
      numWorkgroups: launchGrid(shader, inputs.params, dispatch),
      epoch: 1,
      shuffles: 0,
      active: new Uint8Array(workgroupSize),
      subgroupActive: new Uint8Array(workgroupSize),
    };
    const memories = new Map<string, Memory>();
    // Workgroup arrays, zeroed for each workgroup.
    const shared: Memory[] = [];
    for (const global of module.globals) {
      if (global.space !== 'workgroup' && global.space !== 'storage') continue;
      const element = elementOf(global.type, global.name);
      if (global.space === 'workgroup') {
        const [, length] = global.type.args;
        const bytes = new ArrayBuffer(
          4 * element.width * (typeof length === 'number' ? length : 0),
        );
        const memory = new Memory(global.name, element, bytes, machine);
        memories.set(global.name, memory);
        shared.push(memory);
      } else if (global.space === 'storage') {
        const buffer = storage.get(global.name);
        if (buffer !== undefined)
          memories.set(global.name, new Memory(global.name, element, buffer.bytes));
      }
    }
    const compiler = new EntryCompiler(
      module,
      machine,
      ExpressionCompiler.globals(memories, uniforms),
    );
    const { run } = compiler.entry(dispatch.entryPoint);
    const [countX = 1, countY = 1, countZ = 1] = machine.numWorkgroups;
    for (let z = 0; z < countZ; z++)
      for (let y = 0; y < countY; y++)
        for (let x = 0; x < countX; x++) {
          machine.workgroupId = [x, y, z];
          machine.epoch = 1;
          for (const memory of shared) memory.reset();
          run();
          workgroups += 1;
        }
    shuffles += machine.shuffles;
  }
  for (const { bytes, target } of storage.values())
    target?.set(new Uint8Array(bytes).subarray(0, target.byteLength));
  return { workgroups, shuffles };
}
