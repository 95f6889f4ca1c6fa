import { typeBytes, type Operand, type PtxType, type SourceLocation } from '../ast.js';
import { PtxSyntaxError } from '../errors.js';
import type { Bits } from '../semantics/types.js';
import { SHARED_WINDOW } from './memory.js';
import type { RegisterInfo, RegisterTable } from './registers.js';
import {
  DEFINED,
  UNDEFINED,
  WARP,
  report,
  undefinedBecause,
  type ExecutionContext,
} from './state.js';

export type Reader = (context: ExecutionContext, lane: number) => Bits;
/** Writes a lane's value; `defined` false marks it as computed from an undefined value. */
export type Writer = (
  context: ExecutionContext,
  lane: number,
  value: Bits,
  defined?: boolean,
) => void;
/** Whether an operand's value is defined for a lane (immediates and special registers always are). */
export type Definedness = (context: ExecutionContext, lane: number) => boolean;

export type { RegisterInfo } from './registers.js';

/** Where each named variable lives: shared/local/param offsets, global addresses. */
export interface SymbolTable {
  /** Declared registers by name; the first `get` of one gives it a slot (RegisterTable). */
  readonly registers: Pick<RegisterTable, 'get' | 'size' | 'values'>;
  readonly shared: ReadonlyMap<string, number>;
  readonly local: ReadonlyMap<string, number>;
  readonly params: ReadonlyMap<string, number>;
  readonly globals: ReadonlyMap<string, number>;
  /** Bytes of one element of each variable's declared type, which scales `var[index]`. */
  readonly elementBytes: ReadonlyMap<string, number>;
}

const f32View = new DataView(new ArrayBuffer(8));

/** Converts bits to the representation of a `bytes`-wide type: number up to 4 bytes, bigint for 8. */
export function fitBits(value: Bits, bytes: number): Bits {
  if (bytes <= 4) {
    const mask = bytes === 4 ? 0xffffffff : (1 << (bytes * 8)) - 1;
    return typeof value === 'bigint'
      ? Number(value & BigInt(mask))
      : bytes === 4
        ? value >>> 0
        : value & mask;
  }
  return BigInt.asUintN(64, typeof value === 'bigint' ? value : BigInt(Math.trunc(value)));
}

const isFloat = (type: PtxType): boolean => type === 'f32' || type === 'f64';

function immediateBits(operand: Operand, type: PtxType, location: SourceLocation): Bits {
  const bytes = type === 'pred' ? 1 : typeBytes(type);
  if (operand.kind === 'integer') {
    if (isFloat(type)) return floatBits(Number(operand.value), type);
    return bytes <= 4
      ? Number(BigInt.asUintN(bytes * 8, operand.value))
      : BigInt.asUintN(64, operand.value);
  }
  if (operand.kind === 'float') {
    if (operand.width === 32) {
      if (type === 'f64') {
        f32View.setUint32(0, Number(operand.bits));
        return floatBits(f32View.getFloat32(0), 'f64');
      }
      return fitBits(Number(operand.bits), bytes);
    }
    f32View.setBigUint64(0, operand.bits);
    const value = f32View.getFloat64(0);
    if (type === 'f32') return floatBits(value, 'f32');
    if (type === 'f64' || bytes === 8) return operand.bits;
    throw new PtxSyntaxError(
      location.line,
      location.text,
      `a 64-bit float immediate cannot be a .${type} operand`,
    );
  }
  throw new PtxSyntaxError(location.line, location.text, `operand is not an immediate`);
}

function floatBits(value: number, type: 'f32' | 'f64' | PtxType): Bits {
  if (type === 'f64') {
    f32View.setFloat64(0, value);
    return f32View.getBigUint64(0);
  }
  f32View.setFloat32(0, value);
  return f32View.getUint32(0);
}

const SPECIAL = /^%(tid|ntid|ctaid|nctaid)\.([xyz])$/;

const lanemask =
  (select: (lane: number, other: number) => boolean): Reader =>
  (_context, lane) => {
    let mask = 0;
    for (let other = 0; other < WARP; other++) if (select(lane, other)) mask |= 1 << other;
    return mask >>> 0;
  };

/** Special registers other than %tid/%ntid/%ctaid/%nctaid; built once, as they keep no state. */
const SPECIAL_READERS: Record<string, Reader> = {
  '%laneid': (_context, lane) => lane,
  '%warpid': (context) => context.warp.index,
  '%nwarpid': (context) => context.cta.warps.length,
  '%smid': () => 0,
  '%nsmid': () => 1,
  '%gridid': () => 0,
  '%clock': (context) => context.simulation.clock >>> 0,
  '%clock64': (context) => BigInt(context.simulation.clock),
  '%lanemask_eq': lanemask((lane, other) => other === lane),
  '%lanemask_lt': lanemask((lane, other) => other < lane),
  '%lanemask_le': lanemask((lane, other) => other <= lane),
  '%lanemask_gt': lanemask((lane, other) => other > lane),
  '%lanemask_ge': lanemask((lane, other) => other >= lane),
};

/** A reader for a special register (`%tid.x`, `%laneid`, …), or undefined if `name` is not one. */
function specialReader(name: string): Reader | undefined {
  const match = SPECIAL.exec(name);
  if (match !== null) {
    const axis = { x: 0, y: 1, z: 2 }[match[2] as 'x' | 'y' | 'z'];
    switch (match[1]) {
      case 'tid':
        return (context, lane) => {
          const linear = context.warp.index * WARP + lane;
          const [x, y] = context.simulation.block;
          return [linear % x, Math.floor(linear / x) % y, Math.floor(linear / (x * y))][
            axis
          ] as number;
        };
      case 'ntid':
        return (context) => context.simulation.block[axis] as number;
      case 'ctaid':
        return (context) => context.cta.id[axis] as number;
      default:
        return (context) => context.simulation.grid[axis] as number;
    }
  }
  return SPECIAL_READERS[name];
}

/** The address a symbol stands for when used as a value (`mov.u32 %r, shared_x`). */
export function symbolAddress(
  symbols: SymbolTable,
  name: string,
  location: SourceLocation,
): number {
  const shared = symbols.shared.get(name);
  if (shared !== undefined) return shared;
  const global = symbols.globals.get(name);
  if (global !== undefined) return global;
  const local = symbols.local.get(name);
  if (local !== undefined) return local;
  const param = symbols.params.get(name);
  if (param !== undefined) return param;
  throw new PtxSyntaxError(location.line, location.text, `unknown symbol '${name}'`);
}

/**
 * The address of `variable[register + index]` (or `variable[index]`): ptxas scales the index by
 * the size of the variable's element type.
 */
export function compileElementAddress(
  variable: string,
  element: { readonly register?: string; readonly index: bigint },
  symbols: SymbolTable,
  location: SourceLocation,
): Reader {
  const size = symbols.elementBytes.get(variable) ?? 1;
  const first = symbolAddress(symbols, variable, location) + Number(element.index) * size;
  if (element.register === undefined) return () => first;
  const register = symbols.registers.get(element.register);
  const wide = register !== undefined && typeBytes(register.type) === 8;
  const index = compileReader(
    { kind: 'register', name: element.register },
    wide ? 'u64' : 'u32',
    symbols,
    location,
  );
  return (context, lane) => first + Number(index(context, lane)) * size;
}

/**
 * Readers and writers that depend only on a register and a width, not on the instruction, made
 * once per compiled entry (its SymbolTable) and shared by every instruction that names them: a
 * long body would otherwise hold a closure per operand.
 */
const shared = new WeakMap<SymbolTable, Map<string, Reader | Writer | Definedness>>();

function once<T extends Reader | Writer | Definedness>(
  symbols: SymbolTable,
  key: string,
  make: () => T,
): T {
  let table = shared.get(symbols);
  if (table === undefined) shared.set(symbols, (table = new Map()));
  const found = table.get(key);
  if (found !== undefined) return found as T;
  const made = make();
  table.set(key, made);
  return made;
}

/** Reads a register as `bytes` wide from its store: `values` up to 32 bits, `wide` above. */
function registerValue(
  symbols: SymbolTable,
  register: RegisterInfo,
  slot: number,
  bytes: number,
): Reader {
  return once(symbols, `value ${slot} ${bytes}`, () => makeRegisterValue(register, slot, bytes));
}

function makeRegisterValue(register: RegisterInfo, slot: number, bytes: number): Reader {
  if (register.type === 'pred' || typeBytes(register.type) <= 4) {
    if (bytes === 4) return (context, lane) => (context.warp.values[slot + lane] as number) >>> 0;
    return (context, lane) => fitBits(context.warp.values[slot + lane] as number, bytes);
  }
  // A register wider than 32 bits holds a bigint in [0, 2^64) already, which a wide read keeps.
  if (bytes > 4) return (context, lane) => context.warp.wide[slot + lane] as bigint;
  return (context, lane) => fitBits(context.warp.wide[slot + lane] as bigint, bytes);
}

/** The value of an immediate or symbol operand read as `type`; undefined for other operands. */
export function constantValue(
  operand: Operand,
  type: PtxType,
  symbols: SymbolTable,
  location: SourceLocation,
): Bits | undefined {
  if (operand.kind === 'integer' || operand.kind === 'float')
    return immediateBits(operand, type, location);
  if (operand.kind !== 'symbol') return undefined;
  const bytes = type === 'pred' ? 1 : typeBytes(type);
  const address = symbolAddress(symbols, operand.name, location);
  return fitBits(bytes === 8 ? BigInt(address) : address, bytes);
}

/**
 * The first slot of a declared 32-bit register (not a predicate, not a special register), whose
 * value is a number in [0, 2^32) in `values`; -1 for any other operand. For inline fast paths.
 */
export function word32Slot(operand: Operand, symbols: SymbolTable): number {
  if (operand.kind !== 'register' || specialReader(operand.name) !== undefined) return -1;
  const register = symbols.registers.get(operand.name);
  return register !== undefined && register.type !== 'pred' && typeBytes(register.type) === 4
    ? register.index * WARP
    : -1;
}

/**
 * Compiles a source operand read as `type` into a per-lane reader. An undefined register value is
 * a finding (the value is used: an address, a stored value, …) unless `propagates` says the
 * instruction only moves or computes with it, and tracks its definedness with compileDefinedness.
 */
export function compileReader(
  operand: Operand,
  type: PtxType,
  symbols: SymbolTable,
  location: SourceLocation,
  propagates = false,
): Reader {
  const bytes = type === 'pred' ? 1 : typeBytes(type);
  switch (operand.kind) {
    case 'register': {
      const special = specialReader(operand.name);
      if (special !== undefined)
        return once(symbols, `special ${operand.name} ${bytes}`, (): Reader => {
          return (context, lane) => fitBits(special(context, lane), bytes);
        });
      const register = symbols.registers.get(operand.name);
      if (register === undefined)
        throw new PtxSyntaxError(
          location.line,
          location.text,
          `undeclared register ${operand.name}`,
        );
      const slot = register.index * WARP;
      const value = registerValue(symbols, register, slot, bytes);
      if (propagates) return value;
      return (context, lane) => {
        const state = context.warp.shadow[slot + lane] as number;
        if (state !== DEFINED && context.simulation.sanitize) {
          report(
            context,
            'uninitialized-register',
            `read of ${undefinedBecause(operand.name, state)}`,
            location,
            lane,
          );
        }
        return value(context, lane);
      };
    }
    case 'integer':
    case 'float':
    case 'symbol': {
      const value = constantValue(operand, type, symbols, location) as Bits;
      return () => value;
    }
    case 'address': {
      // `mov.u32 %r, a[1]` moves the address of a[1] (PTX ISA, arrays as operands).
      if (operand.base?.kind !== 'symbol' || operand.element === undefined) break;
      const address = compileElementAddress(operand.base.name, operand.element, symbols, location);
      return (context, lane) => {
        const value = address(context, lane);
        return fitBits(bytes === 8 ? BigInt(value) : value, bytes);
      };
    }
    default:
      break;
  }
  throw new PtxSyntaxError(
    location.line,
    location.text,
    `a ${operand.kind} operand cannot be read as .${type}`,
  );
}

/** The first shadow slot (lane 0) of a register operand, or -1 for anything always defined. */
export function registerSlot(operand: Operand, symbols: SymbolTable): number {
  const register = operand.kind === 'register' ? symbols.registers.get(operand.name) : undefined;
  return register === undefined ? -1 : register.index * WARP;
}

/** Definedness of a source operand per lane; only registers can be undefined. */
export function compileDefinedness(operand: Operand, symbols: SymbolTable): Definedness {
  const register = operand.kind === 'register' ? symbols.registers.get(operand.name) : undefined;
  if (register === undefined) return ALWAYS_DEFINED;
  const slot = register.index * WARP;
  return once(symbols, `defined ${slot}`, (): Definedness => {
    return (context, lane) => context.warp.shadow[slot + lane] === DEFINED;
  });
}

const ALWAYS_DEFINED: Definedness = () => true;
const SINK_WRITER: Writer = () => undefined;

/** Bits of a signed integer type narrower than a register, whose value the register sign-extends. */
const SIGNED_BITS: Partial<Record<PtxType, number>> = { s8: 8, s16: 16, s32: 32 };

/** `value` read as a `bits`-bit two's complement integer, as a bigint (fitBits narrows it back). */
const signExtend = (value: Bits, bits: number): Bits =>
  BigInt.asIntN(bits, typeof value === 'bigint' ? value : BigInt(Math.trunc(value)));

/**
 * Writes a register. With the instruction's `type`, a signed integer result narrower than the
 * register is sign-extended to it, as the ISA's rule for wider destination operands says.
 */
export function compileWriter(
  operand: Operand,
  symbols: SymbolTable,
  location: SourceLocation,
  type?: PtxType,
): Writer {
  if (operand.kind === 'sink') return SINK_WRITER;
  if (operand.kind !== 'register')
    throw new PtxSyntaxError(
      location.line,
      location.text,
      `a ${operand.kind} operand cannot be a destination`,
    );
  const register = symbols.registers.get(operand.name);
  if (register === undefined)
    throw new PtxSyntaxError(location.line, location.text, `undeclared register ${operand.name}`);
  const slot = register.index * WARP;
  return once(symbols, `writer ${slot} ${type ?? ''}`, () => makeWriter(register, slot, type));
}

function makeWriter(register: RegisterInfo, slot: number, type: PtxType | undefined): Writer {
  const bytes = register.type === 'pred' ? 1 : typeBytes(register.type);
  const signedBits = type === undefined ? undefined : SIGNED_BITS[type];
  const wide = bytes > 4;
  if (signedBits !== undefined && register.type !== 'pred' && signedBits < bytes * 8) {
    return (context, lane, value, defined) => {
      const bits = fitBits(signExtend(value, signedBits), bytes);
      if (wide) context.warp.wide[slot + lane] = bits;
      else context.warp.values[slot + lane] = bits as number;
      context.warp.shadow[slot + lane] = defined === false ? UNDEFINED : DEFINED;
    };
  }
  if (register.type === 'pred')
    return (context, lane, value, defined) => {
      context.warp.values[slot + lane] = Number(value) & 1;
      context.warp.shadow[slot + lane] = defined === false ? UNDEFINED : DEFINED;
    };
  if (wide)
    return (context, lane, value, defined) => {
      context.warp.wide[slot + lane] = fitBits(value, 8);
      context.warp.shadow[slot + lane] = defined === false ? UNDEFINED : DEFINED;
    };
  return (context, lane, value, defined) => {
    context.warp.values[slot + lane] = fitBits(value, bytes) as number;
    context.warp.shadow[slot + lane] = defined === false ? UNDEFINED : DEFINED;
  };
}

/** Vector and pair operands flatten into their elements, in order. */
export function flatten(operands: readonly Operand[]): Operand[] {
  // A loop, not flatMap: this runs once per instruction of every entry compiled.
  const flat: Operand[] = [];
  for (const operand of operands) {
    if (operand.kind === 'vector') for (const element of operand.elements) flat.push(element);
    else if (operand.kind === 'pair') flat.push(operand.first, operand.second);
    else flat.push(operand);
  }
  return flat;
}

/** Generic address of a shared-window offset (what cvta.shared gives). */
export const sharedToGeneric = (offset: Bits): bigint => BigInt(offset) + BigInt(SHARED_WINDOW);
