// One object for every repeat of the same opcode spelling, register, symbol or literal: a module
// of a million instructions names a few hundred of each, so the module holds them once.
import type { Operand } from '../ast.js';

/** Past this many entries a table stops growing (hostile text of all-distinct names). */
const MAX_ENTRIES = 2 ** 20;

function cached<K, V>(table: Map<K, V>, key: K, make: () => V): V {
  const found = table.get(key);
  if (found !== undefined) return found;
  const value = make();
  if (table.size < MAX_ENTRIES) table.set(key, value);
  return value;
}

export interface OpcodeSpelling {
  readonly opcode: string;
  readonly modifiers: readonly string[];
}

/** Shared, frozen parts of the module being parsed; never mutated once made. */
export class Interner {
  private readonly opcodes = new Map<string, OpcodeSpelling>();
  private readonly registers = new Map<string, Operand>();
  private readonly symbols = new Map<string, Operand>();
  private readonly literals = new Map<string, Operand>();

  /** `ld.global.f32` as `{ opcode: 'ld', modifiers: ['global', 'f32'] }`. */
  opcode(text: string): OpcodeSpelling {
    return cached(this.opcodes, text, () => {
      const [opcode = '', ...modifiers] = text.split('.');
      return Object.freeze({ opcode, modifiers: Object.freeze(modifiers) });
    });
  }

  register(name: string): Operand {
    return cached(this.registers, name, () => Object.freeze({ kind: 'register', name }));
  }

  symbol(name: string): Operand {
    return cached(this.symbols, name, () => Object.freeze({ kind: 'symbol', name }));
  }

  /** An immediate operand by its spelling (`-` included), made by `make` the first time. */
  literal(spelling: string, make: () => Operand): Operand {
    return cached(this.literals, spelling, () => Object.freeze(make()));
  }
}
