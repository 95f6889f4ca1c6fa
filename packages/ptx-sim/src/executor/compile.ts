import {
  typeBytes,
  type EntryFunction,
  type Instruction,
  type Operand,
  type PtxModule,
  type Statement,
  type VariableDeclaration,
} from '../ast.js';
import { PtxLimitError, PtxSyntaxError, SimulationInputError } from '../errors.js';
import { SIMULATOR_LIMITS, overLimit, type SimulatorLimit } from '../limits.js';
import { compileAsyncCopy } from './instructions/async-copy.js';
import { CONTROL_COMPILERS } from './instructions/control.js';
import { MEMORY_COMPILERS } from './instructions/memory-ops.js';
import { TENSOR_COMPILERS } from './instructions/tensor-ops.js';
import { WARP_COMPILERS } from './instructions/warp-ops.js';
import { compileAlu } from './instructions/alu.js';
import { issueClassOf } from './issue-class.js';
import type { SymbolTable } from './operands.js';
import { RegisterTable } from './registers.js';
import type { CompileContext, Executable, InstructionCompiler } from './program.js';
import { WARP } from './state.js';

/** Families tried in order; the first that recognizes an opcode compiles it. */
const COMPILERS: readonly InstructionCompiler[] = [
  ...CONTROL_COMPILERS,
  ...MEMORY_COMPILERS,
  compileAsyncCopy,
  ...WARP_COMPILERS,
  ...TENSOR_COMPILERS,
  compileAlu,
];

export interface Program {
  readonly entry: EntryFunction;
  readonly instructions: readonly Executable[];
  /** The parsed instructions `instructions` were compiled from, index for index. */
  readonly source: readonly Instruction[];
  readonly registerCount: number;
  readonly symbols: SymbolTable;
  readonly sharedBytes: number;
  readonly localBytes: number;
  /** Kernel parameters with their byte offsets in the parameter block. */
  readonly params: readonly {
    readonly declaration: VariableDeclaration;
    readonly offset: number;
    readonly size: number;
  }[];
  readonly paramBytes: number;
}

const variableBytes = (variable: VariableDeclaration): number =>
  typeBytes(variable.type) * (variable.length ?? 1);

/**
 * Lays out variables one after another, each at its alignment; returns offsets and the total.
 * Past `limit` bytes it stops with a PtxLimitError at the variable that crosses it.
 */
function layout(
  variables: readonly VariableDeclaration[],
  limit: SimulatorLimit & ('staticSharedBytes' | 'localBytesPerThread' | 'paramBytes'),
  what: string,
): { offsets: Map<string, number>; end: number } {
  const offsets = new Map<string, number>();
  let end = 0;
  for (const variable of variables) {
    end = Math.ceil(end / variable.align) * variable.align;
    offsets.set(variable.name, end);
    end += variableBytes(variable);
    if (end > SIMULATOR_LIMITS[limit]) {
      const { line, text } = variable.location;
      throw new PtxLimitError(
        line,
        text,
        `${what} take ${end} bytes with '${variable.name}', ${overLimit(limit, ' bytes')}`,
        limit,
      );
    }
  }
  return { offsets, end };
}

/** Names of the variables an entry's instructions use, as values, addresses or array bases. */
function referencedSymbols(body: readonly Statement[]): Set<string> {
  const names = new Set<string>();
  const visit = (operand: Operand): void => {
    if (operand.kind === 'symbol') names.add(operand.name);
    else if (operand.kind === 'address' && operand.base?.kind === 'symbol')
      names.add(operand.base.name);
    else if (operand.kind === 'vector') operand.elements.forEach(visit);
    else if (operand.kind === 'pair') {
      visit(operand.first);
      visit(operand.second);
    }
  };
  for (const statement of body)
    if (statement.kind === 'instruction') statement.operands.forEach(visit);
  return names;
}

/** A module-scope .global/.const variable's bytes, initializer applied. */
export function initialBytes(variable: VariableDeclaration): Uint8Array {
  const bytes = new Uint8Array(Math.max(variableBytes(variable), 1));
  const size = typeBytes(variable.type);
  const view = new DataView(bytes.buffer);
  (variable.initializer ?? []).forEach((value, index) => {
    for (let byte = 0; byte < size; byte++)
      view.setUint8(
        index * size + byte,
        Number((BigInt.asUintN(size * 8, value) >> BigInt(8 * byte)) & 0xffn),
      );
  });
  return bytes;
}

/**
 * Compiles an entry for execution: registers get slots, variables get addresses, every
 * instruction is decoded once. Anything not implemented is a PtxSyntaxError naming its line.
 * `dynamicSharedBytes` sizes the entry's `.extern .shared` arrays.
 */
export function compileEntry(
  module: PtxModule,
  entryName: string,
  globalAddress: (name: string) => number,
  dynamicSharedBytes = 0,
): Program {
  const entry = module.entries.find((candidate) => candidate.name === entryName);
  if (entry === undefined)
    throw new PtxSyntaxError(
      0,
      entryName,
      `no entry named '${entryName}' (entries: ${module.entries.map((candidate) => candidate.name).join(', ') || 'none'})`,
    );
  if (entry.unsupported !== undefined) {
    const { line, text, reason } = entry.unsupported;
    throw new PtxSyntaxError(line, text, `entry '${entry.name}' cannot run: ${reason}`);
  }
  const registers = new RegisterTable(entry.registers, entry.name);
  // As ptxas: the entry's own `.shared` variables count, and the module's that it uses.
  const used = referencedSymbols(entry.body);
  const sharedVariables = [
    ...module.variables.filter((variable) => used.has(variable.name)),
    ...entry.variables,
  ].filter((variable) => variable.space === 'shared');
  const shared = layout(
    sharedVariables.filter((variable) => variable.dynamic !== true),
    'staticSharedBytes',
    `entry '${entry.name}': static .shared variables`,
  );
  // Dynamic shared memory (`.extern .shared x[]`) follows the static variables, all at one offset.
  const dynamic = sharedVariables.filter((variable) => variable.dynamic === true);
  const dynamicAlign = dynamic.reduce((align, variable) => Math.max(align, variable.align), 16);
  const dynamicStart = Math.ceil(shared.end / dynamicAlign) * dynamicAlign;
  for (const variable of dynamic) shared.offsets.set(variable.name, dynamicStart);
  if (shared.end + dynamicSharedBytes > SIMULATOR_LIMITS.sharedBytesPerBlock)
    throw new SimulationInputError(
      `entry '${entry.name}' has ${shared.end} bytes of static shared memory; with ${dynamicSharedBytes} dynamic bytes that is ${overLimit('sharedBytesPerBlock', ' bytes')}: ask for fewer dynamic bytes (dynamicSharedBytes, forge sim --dynamic-shared)`,
    );
  const sharedBytes = dynamic.length === 0 ? shared.end : dynamicStart + dynamicSharedBytes;
  const local = layout(
    entry.variables.filter((variable) => variable.space === 'local'),
    'localBytesPerThread',
    `entry '${entry.name}': .local variables`,
  );
  const params = layout(entry.params, 'paramBytes', `entry '${entry.name}': parameters`);
  const globalVariables = module.variables.filter(
    (variable) => variable.space === 'global' || variable.space === 'const',
  );
  const globals = new Map(
    globalVariables.map((variable) => [variable.name, globalAddress(variable.name)]),
  );
  const symbols: SymbolTable = {
    registers,
    shared: shared.offsets,
    local: local.offsets,
    params: params.offsets,
    globals,
    elementBytes: new Map(
      [...module.variables, ...entry.variables, ...entry.params].map((variable) => [
        variable.name,
        typeBytes(variable.type),
      ]),
    ),
  };

  const labels = new Map<string, number>();
  const instructions: Instruction[] = [];
  for (const statement of entry.body) {
    if (statement.kind === 'label') labels.set(statement.name, instructions.length);
    else instructions.push(statement);
  }
  const context: CompileContext = { symbols, labels, aluOps: new Map() };
  const executables = instructions.map((instruction): Executable => {
    const { location } = instruction;
    let guard: Executable['guard'];
    if (instruction.guard !== undefined) {
      const register = registers.get(instruction.guard.register);
      if (register === undefined || register.type !== 'pred')
        throw new PtxSyntaxError(
          location.line,
          location.text,
          `guard ${instruction.guard.register} is not a declared predicate`,
        );
      guard = {
        slot: register.index * WARP,
        negated: instruction.guard.negated,
        name: instruction.guard.register,
      };
    }
    for (const compiler of COMPILERS) {
      const compiled = compiler(instruction, context);
      // Every executable has the same properties in the same order (one object shape), so the
      // scheduler's reads of them stay monomorphic.
      if (compiled !== undefined)
        return {
          family: compiled.family,
          location,
          issueClass: issueClassOf(instruction),
          guard,
          collective: compiled.collective === true,
          changesFlow: compiled.changesFlow === true,
          asyncGroup: compiled.asyncGroup,
          execute: compiled.execute,
        };
    }
    throw new PtxSyntaxError(
      location.line,
      location.text,
      `unsupported instruction '${[instruction.opcode, ...instruction.modifiers].join('.')}'`,
    );
  });
  return {
    entry,
    instructions: executables,
    source: instructions,
    registerCount: registers.size,
    symbols,
    sharedBytes,
    localBytes: local.end,
    params: entry.params.map((declaration) => ({
      declaration,
      offset: params.offsets.get(declaration.name) ?? 0,
      size: variableBytes(declaration),
    })),
    paramBytes: params.end,
  };
}
