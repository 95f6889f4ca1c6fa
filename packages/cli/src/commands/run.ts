import {
  ELEMENT_BYTES,
  formatSchedule,
  parseScheduleAssignments,
  type ElementArray,
} from '@forge/ir';
import {
  compareWithReference,
  getKernel,
  isInputBuffer,
  makeCaseInputs,
  type CatalogKernel,
} from '@forge/ir/kernels';
import { parseCommandArgs } from '../args.js';
import { ENGINES } from '../engines.js';
import { EXIT_CHECK_FAILED, EXIT_OK, UsageError } from '../errors.js';
import {
  fillGgufWeights,
  ggufOptions,
  ggufReport,
  ggufShape,
  loadGgufInput,
} from '../gguf-input.js';
import { readInputFile } from '../input-file.js';
import type { CliIo } from '../io.js';
import { gpuOption, sampleOption } from '../gpu-option.js';
import { planOutputs, writeOutputs } from '../output.js';
import { TARGET_OPTIONS, targetFromArgs } from './emit.js';

export const RUN_USAGE =
  'forge run <kernel-id> --target interp|wgsl|ptx-sim [--arch sm_XX] [--features f16,subgroups] [--schedule k=v]... [--shape name=value]... [--seed N] [--gpu A100|H100|H200 [--sample-blocks K] [--graph] (ptx-sim)] [--gguf FILE --tensor NAME] [--input name=@file.bin]... [--output name=file.bin]... [--json]';

function pairs(values: readonly string[], option: string, pattern: RegExp): [string, string][] {
  return values.map((value) => {
    const match = pattern.exec(value);
    if (match === null || match[1] === undefined || match[2] === undefined)
      throw new UsageError(
        `${option}: '${value}' is not in the form ${option === '--input' ? 'name=@file' : 'name=value'}`,
      );
    return [match[1], match[2]];
  });
}

function shapeFromArgs(kernel: CatalogKernel, values: readonly string[]): Record<string, number> {
  const shape: Record<string, number> = { ...kernel.defaultShape };
  const given = new Set<string>();
  // A kernel with a checkShape names the fields it needs at least 1 in (sdpa-decode's window may
  // be 0: none); the others take sizes from 1.
  const least = kernel.checkShape === undefined ? 1 : 0;
  for (const [name, value] of pairs(values, '--shape', /^([A-Za-z_]\w*)=(\d{1,10})$/)) {
    if (given.has(name)) throw new UsageError(`--shape: '${name}' is given twice`);
    given.add(name);
    if (!kernel.shapeNames.includes(name))
      throw new UsageError(
        `--shape: unknown shape '${name}' for ${kernel.spec.id} (known: ${kernel.shapeNames.join(', ')})`,
      );
    const size = Number(value);
    if (size < least || size > 2 ** 28)
      throw new UsageError(`--shape: ${name}=${value} is outside [${least}, ${2 ** 28}]`);
    shape[name] = size;
  }
  return shape;
}

/** Most bytes a run's buffers may take together (inputs, outputs and their copies aside): 1 GiB. */
export const MAX_RUN_BYTES = 2 ** 30;

/** Refuses a shape whose buffers would not fit in MAX_RUN_BYTES, before anything is allocated. */
function checkBufferBytes(kernel: CatalogKernel, shape: Readonly<Record<string, number>>): void {
  const lengths = kernel.bufferLengths(shape);
  const bytes = kernel.spec.buffers.reduce(
    (total, buffer) => total + (lengths[buffer.name] ?? 0) * ELEMENT_BYTES[buffer.element],
    0,
  );
  if (bytes > MAX_RUN_BYTES) {
    const shapeText = Object.entries(shape)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ');
    throw new UsageError(
      `--shape: ${kernel.spec.id} at ${shapeText} needs ${bytes} bytes of buffers, over the ${MAX_RUN_BYTES} (1 GiB) a run may take`,
    );
  }
}

/** Runs a catalog kernel on seeded (or given) inputs and compares it with the float64 reference. */
export async function runCommand(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs(
    args,
    {
      ...TARGET_OPTIONS,
      shape: { type: 'string', multiple: true },
      seed: { type: 'string' },
      input: { type: 'string', multiple: true },
      output: { type: 'string', multiple: true },
      json: { type: 'boolean' },
      gguf: { type: 'string' },
      tensor: { type: 'string' },
      gpu: { type: 'string' },
      'sample-blocks': { type: 'string' },
      graph: { type: 'boolean' },
    },
    RUN_USAGE,
  );
  const [id, ...extra] = parsed.positionals;
  if (id === undefined || extra.length > 0)
    throw new UsageError(`expected one catalog kernel id; usage: ${RUN_USAGE}`);
  const kernel = getKernel(id);
  const engineName = parsed.string('target') ?? 'interp';
  const engine = Object.hasOwn(ENGINES, engineName) ? ENGINES[engineName] : undefined;
  if (engine === undefined)
    throw new UsageError(
      `--target: '${engineName}' cannot run kernels (available: ${Object.keys(ENGINES).join(', ')})`,
    );
  const target =
    engineName === 'wgsl' || engineName === 'ptx-sim'
      ? targetFromArgs(parsed, engineName === 'wgsl' ? 'wgsl' : 'ptx')
      : undefined;
  const gpu = gpuOption(parsed.string('gpu'));
  if (gpu !== undefined && engineName !== 'ptx-sim')
    throw new UsageError(
      `--gpu: estimates time the simulator's instruction streams; add --target ptx-sim`,
    );
  const sampleBlocks = sampleOption(parsed.string('sample-blocks'), gpu);
  const graph = parsed.flag('graph');
  if (graph && gpu === undefined)
    throw new UsageError('--graph: launch gaps only feed an estimate; add --gpu NAME');
  if (sampleBlocks !== undefined && parsed.strings('output').length > 0)
    throw new UsageError('--sample-blocks: a sampled run leaves outputs incomplete; drop --output');
  const schedule = parseScheduleAssignments(parsed.strings('schedule'));
  const argShape = shapeFromArgs(kernel, parsed.strings('shape'));
  // A GGUF tensor fixes the weights and, through its ne, the shape n_in/n_out.
  const ggufArgs = ggufOptions(parsed.string('gguf'), parsed.string('tensor'));
  const tensor =
    ggufArgs === undefined
      ? undefined
      : await loadGgufInput(
          kernel,
          ggufArgs,
          io.cwd,
          parsed.strings('shape'),
          parsed.strings('input'),
        );
  const shape = tensor === undefined ? argShape : ggufShape(argShape, tensor);
  const seedText = parsed.string('seed') ?? '1';
  if (!/^\d{1,9}$/.test(seedText))
    throw new UsageError(`--seed: '${seedText}' is not a non-negative integer`);
  const seed = Number(seedText);
  kernel.checkShape?.(shape);
  checkBufferBytes(kernel, shape);
  const buffers = makeCaseInputs(kernel, {
    name: `${id} cli`,
    kernelId: id,
    schedule,
    shape,
    seed,
    magnitude: 1,
  });
  if (tensor !== undefined) fillGgufWeights(kernel, buffers, shape, tensor);
  const inputNames = new Set<string>();
  for (const [name, path] of pairs(parsed.strings('input'), '--input', /^([A-Za-z_]\w*)=@(.+)$/)) {
    // Own properties only: `constructor` or `__proto__` must not find Object's.
    const buffer = Object.hasOwn(buffers, name) ? buffers[name] : undefined;
    if (inputNames.has(name)) throw new UsageError(`--input: '${name}' is given twice`);
    inputNames.add(name);
    if (buffer === undefined || !isInputBuffer(kernel, name)) {
      throw new UsageError(
        `--input: '${name}' is not an input buffer of ${id} (inputs: ${Object.keys(buffers)
          .filter((key) => isInputBuffer(kernel, key))
          .join(', ')})`,
      );
    }
    // Quantized weights are raw blocks; the buffer holds them zero-padded to whole words.
    const element = kernel.spec.buffers.find((declaration) => declaration.name === name)?.element;
    const expected =
      kernel.weights?.buffer === name ? kernel.weights.bytes(shape) : buffer.byteLength;
    const detail =
      kernel.weights?.buffer === name
        ? kernel.weights.fromNative === undefined
          ? 'the raw quantized blocks, unpadded'
          : `the ${kernel.weights.type} rows repacked, as forge quant repack writes them`
        : (kernel.describeInput?.(name, shape) ?? `${buffer.length} ${element ?? ''} values`);
    // Only a regular file, read up to the size the shape needs and one byte more: never all of
    // /dev/zero, and a FIFO is refused rather than waited on.
    const bytes = readInputFile(`--input ${name}`, path, io.cwd, {
      maxBytes: expected,
      exact: true,
      rule: `${id} with this shape needs ${expected} (${detail})`,
    });
    const target = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    target.fill(0);
    target.set(bytes);
  }
  const outputs = pairs(parsed.strings('output'), '--output', /^([A-Za-z_]\w*)=(.+)$/);
  const outputNames = new Set<string>();
  for (const [name] of outputs) {
    if (!Object.hasOwn(buffers, name))
      throw new UsageError(
        `--output: '${name}' is not a buffer of ${id} (buffers: ${Object.keys(buffers).join(', ')})`,
      );
    if (outputNames.has(name)) throw new UsageError(`--output: '${name}' is given twice`);
    outputNames.add(name);
  }
  // Every output path is checked before the kernel runs; all are written together at the end.
  const planned = planOutputs(
    outputs.map(([name, path]) => ({ option: `--output ${name}`, given: path })),
    io.cwd,
  );
  const inputs = Object.fromEntries(
    Object.entries(buffers).map(([name, data]) => [name, data.slice()]),
  );
  const params = kernel.params(shape);
  const outcome = await engine({ kernel, schedule, target, buffers, params, gpu, sampleBlocks, graph }); // prettier-ignore
  const { milliseconds } = outcome;
  const findings = outcome.findings ?? [];
  // A sampled run computed only some workgroups' outputs: there is nothing whole to check.
  const check =
    outcome.sampled === true ? undefined : compareWithReference(kernel, inputs, params, buffers);
  writeOutputs(
    planned.map((output, index) => {
      const data = buffers[outputs[index]?.[0] ?? ''] as ElementArray;
      return { output, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
    }),
  );
  const pass = (check === undefined || check.nmse <= check.tolerance) && findings.length === 0;
  const targetText =
    target === undefined
      ? engineName
      : target.kind === 'wgsl'
        ? `wgsl (features ${target.features.join(',') || 'none'})`
        : `ptx-sim (${target.arch})`;
  const report = {
    kernelId: id,
    target: targetText,
    schedule: formatSchedule(schedule) || 'default',
    shape,
    seed,
    ...(tensor === undefined ? {} : { gguf: ggufReport(tensor) }),
    ...(check === undefined
      ? { checked: false }
      : {
          maxAbsError: check.maxAbsError,
          maxRelError: check.maxRelError,
          nmse: check.nmse,
          tolerance: check.tolerance,
        }),
    pass,
    milliseconds,
    ...(outcome.figures === undefined ? {} : { simulator: outcome.figures }),
    ...(outcome.estimate === undefined ? {} : { estimate: outcome.estimate }),
  };
  if (parsed.flag('json')) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else {
    const shapeText = Object.entries(shape)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ');
    io.stdout(
      `${id} on ${targetText}, schedule ${report.schedule}, shape ${shapeText}, seed ${seed}\n` +
        (tensor === undefined
          ? ''
          : `tensor ${tensor.name} (${tensor.type}, ne [${tensor.ne.join(', ')}]) from ${tensor.file}\n`) +
        (check === undefined
          ? `not checked against the reference: only sampled workgroups ran  ${pass ? 'PASS' : 'FAIL'} (findings only)\n`
          : `max abs error ${check.maxAbsError.toExponential(3)}  max rel error ${check.maxRelError.toExponential(3)}  NMSE ${check.nmse.toExponential(3)}  tolerance ${check.tolerance.toExponential(0)}  ${pass ? 'PASS' : 'FAIL'}\n`) +
        `run time ${milliseconds.toFixed(2)} ms\n` +
        (outcome.summary === undefined ? '' : `${outcome.summary}\n`) +
        findings.map((finding) => `${finding}\n`).join(''),
    );
  }
  return pass ? EXIT_OK : EXIT_CHECK_FAILED;
}
