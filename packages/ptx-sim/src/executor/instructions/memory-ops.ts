import {
  isPtxType,
  typeBytes,
  type Instruction,
  type Operand,
  type PtxType,
  type SourceLocation,
} from '../../ast.js';
import { PtxSyntaxError } from '../../errors.js';
import type { Bits } from '../../semantics/types.js';
import { countAtomicSectors, countSectors, load, store, type Space } from '../access.js';
import { SHARED_WINDOW, isAligned } from '../memory.js';
import {
  compileElementAddress,
  compileReader,
  compileWriter,
  symbolAddress,
  type Reader,
  type SymbolTable,
} from '../operands.js';
import { IGNORED_MODIFIERS, type InstructionCompiler } from '../program.js';
import { report, type ExecutionContext } from '../state.js';

const SPACES: readonly Space[] = ['global', 'shared', 'local', 'param', 'const'];
interface MemoryForm {
  readonly space: Space;
  readonly type: PtxType;
  readonly vector: number;
  readonly rest: readonly string[];
}

/** Splits modifiers into state space, vector width, element type and the opcode-specific rest. */
function memoryForm(instruction: Instruction, allowed: readonly string[] = []): MemoryForm {
  const { location } = instruction;
  let space: Space = 'generic';
  let type: PtxType | undefined;
  let vector = 1;
  const rest: string[] = [];
  for (const modifier of instruction.modifiers) {
    const bare = modifier.replace(/::cta$/, '');
    if ((SPACES as readonly string[]).includes(bare)) space = bare as Space;
    else if (modifier === 'v2' || modifier === 'v4') vector = Number(modifier.slice(1));
    else if (isPtxType(modifier) && modifier !== 'pred') type = modifier;
    else if (allowed.includes(modifier)) rest.push(modifier);
    else if (!IGNORED_MODIFIERS.has(modifier))
      throw new PtxSyntaxError(
        location.line,
        location.text,
        `unsupported modifier .${modifier} on ${instruction.opcode}`,
      );
  }
  if (type === undefined)
    throw new PtxSyntaxError(location.line, location.text, `${instruction.opcode} needs a type`);
  return { space, type, vector, rest };
}

/** Compiles `[base+offset]` into a per-lane address; symbols resolve in the access's state space. */
export function compileAddress(
  operand: Operand | undefined,
  symbols: SymbolTable,
  instruction: Instruction,
): Reader {
  const { location } = instruction;
  if (operand?.kind !== 'address')
    throw new PtxSyntaxError(location.line, location.text, 'expected an address operand [..]');
  const offset = Number(operand.offset);
  const base = operand.base;
  if (base === undefined) return () => offset;
  if (base.kind === 'symbol') {
    const address = symbolAddress(symbols, base.name, location) + offset;
    if (operand.element === undefined) return () => address;
    return compileElementAddress(base.name, operand.element, symbols, location);
  }
  const register = symbols.registers.get(base.name);
  const wide = register !== undefined && typeBytes(register.type) === 8;
  const read = compileReader(
    { kind: 'register', name: base.name },
    wide ? 'u64' : 'u32',
    symbols,
    location,
  );
  return (context, lane) => Number(read(context, lane)) + offset;
}

function elementsOf(operand: Operand | undefined): readonly Operand[] {
  if (operand === undefined) return [];
  return operand.kind === 'vector' ? operand.elements : [operand];
}

export function checkAlignment(
  context: ExecutionContext,
  lane: number,
  address: number,
  bytes: number,
  instruction: Instruction,
  space: Space,
): boolean {
  if (isAligned(address, bytes) || !context.simulation.sanitize) return true;
  report(
    context,
    'misaligned',
    `${bytes}-byte ${space} access at address 0x${address.toString(16)} is not ${bytes}-byte aligned`,
    instruction.location,
    lane,
  );
  return false;
}

const compileLoadStore: InstructionCompiler = (instruction, { symbols }) => {
  const { opcode, location } = instruction;
  if (opcode !== 'ld' && opcode !== 'st' && opcode !== 'ldu') return undefined;
  const form = memoryForm(instruction);
  const size = typeBytes(form.type);
  const total = size * form.vector;
  const isLoad = opcode !== 'st';
  const addressOperand = isLoad ? instruction.operands[1] : instruction.operands[0];
  const address = compileAddress(addressOperand, symbols, instruction);
  const elements = elementsOf(isLoad ? instruction.operands[0] : instruction.operands[1]);
  if (elements.length !== form.vector)
    throw new PtxSyntaxError(
      location.line,
      location.text,
      `.v${form.vector} needs ${form.vector} registers`,
    );
  const writers = isLoad
    ? elements.map((element) => compileWriter(element, symbols, location, form.type))
    : [];
  const readers = isLoad
    ? []
    : elements.map((element) => compileReader(element, form.type, symbols, location));
  const global = form.space === 'global' || form.space === 'generic';
  // One request, its address set per element: load and store do not keep it.
  const request: { space: Space; address: number; size: number; location: SourceLocation } = {
    space: form.space,
    address: 0,
    size,
    location,
  };
  return {
    family: opcode,
    execute(context, lanes) {
      const accesses: { address: number; size: number }[] = [];
      for (const lane of lanes) {
        const base = address(context, lane) as number;
        if (!checkAlignment(context, lane, base, total, instruction, form.space)) {
          // A faulting load still defines its registers, so one bug gives one finding.
          for (const write of writers) write(context, lane, 0);
          continue;
        }
        if (global && base < SHARED_WINDOW) accesses.push({ address: base, size: total });
        for (let element = 0; element < form.vector; element++) {
          request.address = base + element * size;
          if (isLoad)
            (writers[element] as (typeof writers)[number])(
              context,
              lane,
              load(context, lane, request),
            );
          else store(context, lane, request, (readers[element] as Reader)(context, lane));
        }
      }
      if (accesses.length > 0) countSectors(context, accesses, isLoad ? 'load' : 'store');
    },
  };
};

const ATOMIC_OPS = ['add', 'min', 'max', 'exch', 'cas', 'and', 'or', 'xor', 'inc', 'dec'];

function atomicResult(op: string, type: PtxType, old: Bits, operand: Bits): Bits {
  const view = new DataView(new ArrayBuffer(8));
  if (type === 'f32') {
    view.setUint32(0, Number(old));
    const a = view.getFloat32(0);
    view.setUint32(0, Number(operand));
    const b = view.getFloat32(0);
    view.setFloat32(0, op === 'add' ? a + b : op === 'min' ? Math.min(a, b) : Math.max(a, b));
    return view.getUint32(0);
  }
  const wide = typeBytes(type) === 8;
  const bits = wide ? 64 : 32;
  const signed = type.startsWith('s');
  const asInt = (value: Bits): bigint =>
    signed ? BigInt.asIntN(bits, BigInt(value)) : BigInt.asUintN(bits, BigInt(value));
  const a = asInt(old);
  const b = asInt(operand);
  let result: bigint;
  switch (op) {
    case 'add': result = a + b; break;
    case 'min': result = a < b ? a : b; break;
    case 'max': result = a > b ? a : b; break;
    case 'exch': result = b; break;
    case 'and': result = a & b; break;
    case 'or': result = a | b; break;
    case 'xor': result = a ^ b; break;
    case 'inc': result = a >= b ? 0n : a + 1n; break;
    default: result = a === 0n || a > b ? b : a - 1n; // dec
  } // prettier-ignore
  const unsigned = BigInt.asUintN(bits, result);
  return wide ? unsigned : Number(unsigned);
}

/** atom / red: read-modify-write, serialized in lane order; excluded from race detection. */
const compileAtomic: InstructionCompiler = (instruction, { symbols }) => {
  const { opcode, location } = instruction;
  if (opcode !== 'atom' && opcode !== 'red') return undefined;
  const form = memoryForm(instruction, ATOMIC_OPS);
  const op = form.rest[0];
  if (op === undefined)
    throw new PtxSyntaxError(
      location.line,
      location.text,
      `${opcode} needs an operation (${ATOMIC_OPS.join(', ')})`,
    );
  if (form.type === 'f32' && !['add', 'min', 'max', 'exch'].includes(op))
    throw new PtxSyntaxError(location.line, location.text, `${opcode}.${op}.f32 is not supported`);
  const size = typeBytes(form.type);
  const hasDestination = opcode === 'atom';
  const operands = instruction.operands;
  const writer = hasDestination
    ? compileWriter(operands[0] ?? { kind: 'sink' }, symbols, location)
    : undefined;
  const first = hasDestination ? 1 : 0;
  const address = compileAddress(operands[first], symbols, instruction);
  const value = compileReader(
    operands[first + 1] ?? { kind: 'sink' },
    form.type,
    symbols,
    location,
  );
  const compare =
    op === 'cas'
      ? compileReader(operands[first + 2] ?? { kind: 'sink' }, form.type, symbols, location)
      : undefined;
  const space: Space = form.space;
  const global = space === 'global' || space === 'generic';
  return {
    family: opcode,
    execute(context, lanes) {
      const accesses: { address: number; size: number }[] = [];
      for (const lane of lanes) {
        const at = address(context, lane) as number;
        if (!checkAlignment(context, lane, at, size, instruction, space)) continue;
        if (global && at < SHARED_WINDOW) accesses.push({ address: at, size });
        const request = { space, address: at, size, location, atomic: true };
        const old = load(context, lane, request);
        const operand = value(context, lane);
        // cas compares with operand b and stores operand c on a match
        const stored =
          compare === undefined
            ? atomicResult(op, form.type, old, operand)
            : BigInt(old) === BigInt(operand)
              ? compare(context, lane)
              : old;
        store(context, lane, request, stored);
        writer?.(context, lane, old);
      }
      if (accesses.length > 0) countAtomicSectors(context, accesses);
    },
  };
};

/** cvta moves addresses between the generic space and a state space: shared sits in a window. */
const compileCvta: InstructionCompiler = (instruction, { symbols }) => {
  if (instruction.opcode !== 'cvta') return undefined;
  const { location, modifiers } = instruction;
  const toSpace = modifiers[0] === 'to';
  const space = toSpace ? modifiers[1] : modifiers[0];
  const type = (modifiers[modifiers.length - 1] ?? 'u64') as PtxType;
  if (
    !['global', 'shared', 'local', 'const', 'param'].includes(space ?? '') ||
    (type !== 'u64' && type !== 'u32')
  ) {
    throw new PtxSyntaxError(
      location.line,
      location.text,
      `unsupported cvta form .${modifiers.join('.')}`,
    );
  }
  const write = compileWriter(instruction.operands[0] ?? { kind: 'sink' }, symbols, location);
  const read = compileReader(instruction.operands[1] ?? { kind: 'sink' }, type, symbols, location);
  const window = space === 'shared' ? BigInt(SHARED_WINDOW) : 0n;
  return {
    family: 'cvta',
    execute(context, lanes) {
      for (const lane of lanes) {
        const value = BigInt(read(context, lane));
        write(context, lane, toSpace ? (value >= window ? value - window : value) : value + window);
      }
    },
  };
};

/** Hints and fences change nothing a single-threaded interleaving can observe. */
const compileHints: InstructionCompiler = (instruction) =>
  [
    'prefetch',
    'prefetchu',
    'membar',
    'fence',
    'nanosleep',
    'discard',
    'applypriority',
    'createpolicy',
  ].includes(instruction.opcode)
    ? { family: instruction.opcode, execute: () => undefined }
    : undefined;

export const MEMORY_COMPILERS: readonly InstructionCompiler[] = [
  compileLoadStore,
  compileAtomic,
  compileCvta,
  compileHints,
];
