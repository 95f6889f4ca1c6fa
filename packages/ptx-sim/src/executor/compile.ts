import {
  typeBytes,
  type EntryFunction,
  type Instruction,
  type PtxModule,
  type VariableDeclaration,
} from '../ast.js';
import { PtxSyntaxError } from '../errors.js';
import { CONTROL_COMPILERS } from './instructions/control.js';
import { MEMORY_COMPILERS } from './instructions/memory-ops.js';
import { TENSOR_COMPILERS } from './instructions/tensor-ops.js';
import { WARP_COMPILERS } from './instructions/warp-ops.js';
import { compileAlu } from './instructions/alu.js';
import { issueClassOf } from './issue-class.js';
import type { RegisterInfo, SymbolTable } from './operands.js';
import type { Executable, InstructionCompiler } from './program.js';
import { WARP } from './state.js';

/** Families tried in order; the first that recognizes an opcode compiles it. */
const COMPILERS: readonly InstructionCompiler[] = [
  ...CONTROL_COMPILERS,
  ...MEMORY_COMPILERS,
  ...WARP_COMPILERS,
  ...TENSOR_COMPILERS,
  compileAlu,
];

export interface Program {
  readonly entry: EntryFunction;
  readonly instructions: readonly Executable[];
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

/** Lays out variables one after another, each at its alignment; returns offsets and the total. */
function layout(
  variables: readonly VariableDeclaration[],
  start = 0,
): { offsets: Map<string, number>; end: number } {
  const offsets = new Map<string, number>();
  let end = start;
  for (const variable of variables) {
    end = Math.ceil(end / variable.align) * variable.align;
    offsets.set(variable.name, end);
    end += variableBytes(variable);
  }
  return { offsets, end };
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
  const registers = new Map<string, RegisterInfo>();
  for (const declaration of entry.registers) {
    const names =
      declaration.count === undefined
        ? [declaration.name]
        : Array.from({ length: declaration.count }, (_, index) => `${declaration.name}${index}`);
    for (const name of names)
      registers.set(name, { index: registers.size, type: declaration.type });
  }
  const sharedVariables = [...module.variables, ...entry.variables].filter(
    (variable) => variable.space === 'shared',
  );
  const shared = layout(sharedVariables.filter((variable) => variable.dynamic !== true));
  // Dynamic shared memory (`.extern .shared x[]`) follows the static variables, all at one offset.
  const dynamic = sharedVariables.filter((variable) => variable.dynamic === true);
  const dynamicAlign = Math.max(16, ...dynamic.map((variable) => variable.align));
  const dynamicStart = Math.ceil(shared.end / dynamicAlign) * dynamicAlign;
  for (const variable of dynamic) shared.offsets.set(variable.name, dynamicStart);
  const sharedBytes = dynamic.length === 0 ? shared.end : dynamicStart + dynamicSharedBytes;
  const local = layout(entry.variables.filter((variable) => variable.space === 'local'));
  const params = layout(entry.params);
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
      const compiled = compiler(instruction, { symbols, labels });
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
