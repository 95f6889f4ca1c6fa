import type { Instruction, Operand } from '../../ast.js';
import { PtxSyntaxError } from '../../errors.js';
import { ldmatrix, mmaSync, type MmaShape } from '../../semantics/index.js';
import { load } from '../access.js';
import { compileReader, compileWriter, type Reader, type Writer } from '../operands.js';
import type { InstructionCompiler } from '../program.js';
import { WARP, report, type ExecutionContext } from '../state.js';

function vector(
  operand: Operand | undefined,
  length: number,
  instruction: Instruction,
): readonly Operand[] {
  const { location } = instruction;
  if (operand?.kind !== 'vector' || operand.elements.length !== length) {
    throw new PtxSyntaxError(
      location.line,
      location.text,
      `expected a vector of ${length} registers`,
    );
  }
  return operand.elements;
}

/** Warp-wide tensor ops need every lane of a full warp, all at this instruction. */
function allLanesArrived(
  context: ExecutionContext,
  instruction: Instruction,
  lanes: readonly number[],
): boolean {
  if (lanes.length === WARP) return true;
  if (context.simulation.sanitize) {
    report(
      context,
      'shuffle-mask',
      `${instruction.opcode}.sync.aligned needs all 32 lanes of the warp; ${lanes.length} arrived`,
      instruction.location,
      lanes[0] ?? 0,
    );
  }
  return false;
}

const MMA_FORMS: Record<
  string,
  {
    shape: MmaShape;
    a: number;
    b: number;
    dtype: 'f32' | 'f16';
    ctype: 'f32' | 'f16';
    abtype: 'f16' | 'bf16';
  }
> = {};
for (const shape of ['m16n8k16', 'm16n8k8'] as const) {
  for (const abtype of ['f16', 'bf16'] as const) {
    for (const dtype of ['f32', 'f16'] as const) {
      for (const ctype of ['f32', 'f16'] as const) {
        if (abtype === 'bf16' && (dtype !== 'f32' || ctype !== 'f32')) continue;
        const key = ['sync', 'aligned', shape, 'row', 'col', dtype, abtype, abtype, ctype].join(
          '.',
        );
        MMA_FORMS[key] = {
          shape,
          a: shape === 'm16n8k16' ? 4 : 2,
          b: shape === 'm16n8k16' ? 2 : 1,
          dtype,
          ctype,
          abtype,
        };
      }
    }
  }
}

/** mma.sync.aligned.{m16n8k16,m16n8k8}.row.col with f16/bf16 inputs and f32/f16 accumulators. */
const compileMma: InstructionCompiler = (instruction, { symbols }) => {
  if (instruction.opcode !== 'mma') return undefined;
  const { location } = instruction;
  const form = MMA_FORMS[instruction.modifiers.join('.')];
  if (form === undefined)
    throw new PtxSyntaxError(
      location.line,
      location.text,
      `unsupported mma form .${instruction.modifiers.join('.')} (supported: ${Object.keys(MMA_FORMS).join(', ')})`,
    );
  const accumulators = (type: 'f32' | 'f16'): number => (type === 'f32' ? 4 : 2);
  const [d, a, b, c] = instruction.operands;
  const writers: Writer[] = vector(d, accumulators(form.dtype), instruction).map((operand) =>
    compileWriter(operand, symbols, location),
  );
  const readers = (operand: Operand | undefined, length: number): Reader[] =>
    vector(operand, length, instruction).map((element) =>
      compileReader(element, 'b32', symbols, location),
    );
  const readA = readers(a, form.a);
  const readB = readers(b, form.b);
  const readC = readers(c, accumulators(form.ctype));
  return {
    family: 'mma',
    collective: true,
    execute(context, lanes) {
      if (!allLanesArrived(context, instruction, lanes)) return;
      const gather = (read: readonly Reader[]): number[][] =>
        Array.from({ length: WARP }, (_, lane) =>
          read.map((reader) => Number(reader(context, lane))),
        );
      const result = mmaSync(form.shape, gather(readA), gather(readB), gather(readC), {
        dtype: form.dtype,
        ctype: form.ctype,
        abtype: form.abtype,
      });
      for (let lane = 0; lane < WARP; lane++)
        writers.forEach((write, index) => write(context, lane, result[lane]?.[index] ?? 0));
    },
  };
};

/** ldmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16: lanes give row addresses. */
const compileLdmatrix: InstructionCompiler = (instruction, { symbols }) => {
  if (instruction.opcode !== 'ldmatrix') return undefined;
  const { location, modifiers } = instruction;
  const count = Number(
    modifiers.find((modifier) => /^x[124]$/.test(modifier))?.slice(1) ?? Number.NaN,
  ) as 1 | 2 | 4;
  const trans = modifiers.includes('trans');
  const known = new Set([
    'sync',
    'aligned',
    'm8n8',
    `x${count}`,
    'trans',
    'shared',
    'shared::cta',
    'b16',
  ]);
  if (
    !modifiers.includes('m8n8') ||
    Number.isNaN(count) ||
    modifiers.some((modifier) => !known.has(modifier))
  ) {
    throw new PtxSyntaxError(
      location.line,
      location.text,
      'only ldmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16 is supported',
    );
  }
  const writers = vector(instruction.operands[0], count, instruction).map((operand) =>
    compileWriter(operand, symbols, location),
  );
  const addressOperand = instruction.operands[1];
  if (addressOperand?.kind !== 'address' || addressOperand.base?.kind !== 'register') {
    throw new PtxSyntaxError(
      location.line,
      location.text,
      'ldmatrix needs a [register+offset] address',
    );
  }
  const offset = Number(addressOperand.offset);
  const base = symbols.registers.get(addressOperand.base.name);
  const readBase = compileReader(
    { kind: 'register', name: addressOperand.base.name },
    base?.type === 'b64' || base?.type === 'u64' ? 'u64' : 'u32',
    symbols,
    location,
  );
  return {
    family: 'ldmatrix',
    collective: true,
    execute(context, lanes) {
      if (!allLanesArrived(context, instruction, lanes)) return;
      let provider = 0;
      const rows = ldmatrix(
        'm8n8',
        count,
        trans,
        (lane) => {
          provider = lane;
          return Number(readBase(context, lane)) + offset;
        },
        (address) =>
          Number(
            load(context, provider, {
              space: 'shared',
              address: Number(address),
              size: 2,
              location,
            }),
          ),
      );
      for (let lane = 0; lane < WARP; lane++)
        writers.forEach((write, index) => write(context, lane, rows[lane]?.[index] ?? 0));
    },
  };
};

export const TENSOR_COMPILERS: readonly InstructionCompiler[] = [compileMma, compileLdmatrix];
