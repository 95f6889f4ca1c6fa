import {
  QUANT_FORMATS,
  QUANT_TYPES,
  REPACK_TYPES,
  dequantize,
  isRepackType,
  parseQuantType,
  quantize,
  repack,
  repackedLayout,
  unpack,
  type QuantFormat,
} from '@forge/ir/gguf';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, UsageError } from '../errors.js';
import { escapeControl } from '../error-line.js';
import { readInputFile } from '../input-file.js';
import type { CliIo } from '../io.js';
import { planOutput, writeOutputs } from '../output.js';

export const QUANT_USAGE =
  'forge quant quantize|dequantize|repack|unpack --type q4_K|q6_K|q8_0|q4_0 --rows R --cols C --in FILE --out FILE';

const ACTIONS = ['quantize', 'dequantize', 'repack', 'unpack'] as const;
type Action = (typeof ACTIONS)[number];

function positiveInteger(option: string, text: string | undefined): number {
  if (text === undefined) throw new UsageError(`${option} is required; usage: ${QUANT_USAGE}`);
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1)
    throw new UsageError(`${option}: '${text}' is not a positive integer`);
  return Number(text);
}

function requiredPath(option: string, text: string | undefined): string {
  if (text === undefined || text === '')
    throw new UsageError(`${option} is required; usage: ${QUANT_USAGE}`);
  return text;
}

/** Bytes the input must have and what they hold, for the size check's message. */
function inputSize(
  action: Action,
  format: QuantFormat,
  rows: number,
  cols: number,
): [number, string] {
  const values = `${rows} rows × ${cols} cols`;
  const native = rows * (cols / format.blockSize) * format.blockBytes;
  if (action === 'quantize') return [rows * cols * 4, `${values} of little-endian f32`];
  if (action === 'unpack')
    return [
      repackedLayout(format.type, rows, cols).totalBytes,
      `${values} of repacked ${format.type}`,
    ];
  return [native, `${values} of ${format.type} blocks`];
}

function toFloats(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
  return out;
}

function fromFloats(values: Float32Array): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) view.setFloat32(4 * i, values[i] ?? 0, true);
  return out;
}

/** Converts between f32 matrices, native GGUF blocks and the repacked K-quant layouts. */
export function quantCommand(args: readonly string[], io: CliIo): number {
  const parsed = parseCommandArgs(
    args,
    {
      type: { type: 'string' },
      rows: { type: 'string' },
      cols: { type: 'string' },
      in: { type: 'string' },
      out: { type: 'string' },
    },
    QUANT_USAGE,
  );
  const [actionName, ...extra] = parsed.positionals;
  if (actionName === undefined || extra.length > 0)
    throw new UsageError(`expected one action; usage: ${QUANT_USAGE}`);
  const action = ACTIONS.find((name) => name === actionName);
  if (action === undefined)
    throw new UsageError(`unknown action '${actionName}' (known: ${ACTIONS.join(', ')})`);
  const typeText = parsed.string('type');
  if (typeText === undefined) throw new UsageError(`--type is required; usage: ${QUANT_USAGE}`);
  const type = parseQuantType(typeText);
  if (type === undefined)
    throw new UsageError(`--type: unknown type '${typeText}' (known: ${QUANT_TYPES.join(', ')})`);
  if ((action === 'repack' || action === 'unpack') && !isRepackType(type))
    throw new UsageError(
      `--type: ${action} supports ${REPACK_TYPES.join(' and ')} only, not ${type} (its native rows are already the kernel's layout)`,
    );
  const format = QUANT_FORMATS[type];
  const rows = positiveInteger('--rows', parsed.string('rows'));
  const cols = positiveInteger('--cols', parsed.string('cols'));
  if (cols % format.blockSize !== 0)
    throw new UsageError(
      `--cols: ${cols} is not a multiple of ${format.blockSize}, the ${type} block size`,
    );
  const inPath = requiredPath('--in', parsed.string('in'));
  const outPath = requiredPath('--out', parsed.string('out'));
  const out = planOutput('--out', outPath, io.cwd);
  const [expected, holds] = inputSize(action, format, rows, cols);
  // Read up to the size --rows and --cols need and one byte more, and only a regular file
  // (never /dev/zero or a FIFO).
  const input = readInputFile('--in', inPath, io.cwd, {
    maxBytes: expected,
    exact: true,
    rule: `expected ${expected} (${holds})`,
  });
  const output =
    action === 'quantize'
      ? quantize(type, toFloats(input), rows, cols)
      : action === 'dequantize'
        ? fromFloats(dequantize(type, input, rows, cols))
        : action === 'repack'
          ? repack(type, input, rows, cols)
          : unpack(type, input, rows, cols);
  writeOutputs([{ output: out, data: output }]);
  io.stdout(
    `${action} ${type} ${rows}×${cols}: ${input.length} → ${output.length} bytes in ${escapeControl(outPath)}\n`,
  );
  return EXIT_OK;
}
