// The parsed form of a PTX module. Plain data: the parser builds it, the executor reads it.

/** PTX fundamental types as written after a dot (`u32`, `f16x2`, `pred`). */
export type PtxType =
  | 'pred'
  | 'b8' | 'b16' | 'b32' | 'b64' | 'b128'
  | 'u8' | 'u16' | 'u32' | 'u64'
  | 's8' | 's16' | 's32' | 's64'
  | 'f16' | 'f16x2' | 'bf16' | 'bf16x2' | 'f32' | 'f64'; // prettier-ignore

/** Every PtxType, as the parser accepts them after a dot. */
export const PTX_TYPES: readonly PtxType[] = [
  'pred', 'b8', 'b16', 'b32', 'b64', 'b128', 'u8', 'u16', 'u32', 'u64',
  's8', 's16', 's32', 's64', 'f16', 'f16x2', 'bf16', 'bf16x2', 'f32', 'f64',
]; // prettier-ignore

const TYPE_NAMES: ReadonlySet<string> = new Set(PTX_TYPES);
/** Whether `word` (without its dot) names a PTX fundamental type. */
export const isPtxType = (word: string): word is PtxType => TYPE_NAMES.has(word);

/**
 * Where a PTX variable or access lives: registers, kernel parameters, global, shared (per CTA),
 * local (per thread) or constant memory.
 */
export type StateSpace = 'reg' | 'param' | 'global' | 'shared' | 'local' | 'const';

/** A `.loc` position in the compiled source: `.file` index, line and column. */
export interface SourcePosition {
  readonly file: number;
  readonly line: number;
  readonly column: number;
}

/** Where a line of the source came from, for every message the simulator prints. */
export interface SourceLocation {
  /** 1-based line number in the PTX text. */
  readonly line: number;
  /** The line's text, trimmed. */
  readonly text: string;
  /** The `.loc` in effect (nvcc -lineinfo), with the call site it was inlined at. */
  readonly source?: { readonly at: SourcePosition; readonly inlinedAt?: SourcePosition };
}

/**
 * One operand of an instruction, as written: a register, an immediate, an address, a vector, a
 * symbol, a sink or a destination pair.
 */
export type Operand =
  /** `%r1`, `%f<…>` members, or a special register `%tid.x` (name includes the component). */
  | { readonly kind: 'register'; readonly name: string }
  /** Integer immediate (decimal, hex `0x…`, octal, binary; negative allowed) as an exact bigint. */
  | { readonly kind: 'integer'; readonly value: bigint }
  /** Float immediate: `0fXXXXXXXX` (f32 bits) or `0dXXXXXXXXXXXXXXXX` (f64 bits), or a decimal float. */
  | { readonly kind: 'float'; readonly bits: bigint; readonly width: 32 | 64 }
  /**
   * `[base+offset]`: base is a register or a symbol (variable or param name), or absent for `[imm]`.
   * `var[index]` (array notation) has `element`: ptxas reads it as var + (index register + index)
   * x the element size of var's declared type (measured: `f32 a[3]` is `[a+12]`).
   */
  | {
      readonly kind: 'address';
      readonly base?: { readonly kind: 'register' | 'symbol'; readonly name: string };
      readonly offset: bigint;
      readonly element?: { readonly register?: string; readonly index: bigint };
    }
  /** `{a, b, c, d}`; elements are registers, immediates, or `_` (a sink) as `{ kind: 'sink' }`. */
  | { readonly kind: 'vector'; readonly elements: readonly Operand[] }
  /** A label or a variable name used as a value (`mov.u32 %r1, shared_x;`, `bra $L1;`). */
  | { readonly kind: 'symbol'; readonly name: string }
  /** `_`: a discarded result. */
  | { readonly kind: 'sink' }
  /** `%r10|%p2`: a destination paired with a predicate output (shfl.sync, others). */
  | { readonly kind: 'pair'; readonly first: Operand; readonly second: Operand };

/**
 * One PTX instruction as written: its optional guard predicate, opcode, dot-modifiers and operands.
 */
export interface Instruction {
  readonly kind: 'instruction';
  /** `@p` / `@!p` guard. */
  readonly guard?: { readonly register: string; readonly negated: boolean };
  /** The opcode without modifiers: `ld`, `shfl`, `mma`. */
  readonly opcode: string;
  /** Everything after the opcode's dots, in order: `['sync', 'bfly', 'b32']`. */
  readonly modifiers: readonly string[];
  readonly operands: readonly Operand[];
  readonly location: SourceLocation;
}

/** A branch target (`$L1:`) in an entry's body. */
export interface Label {
  readonly kind: 'label';
  readonly name: string;
  readonly location: SourceLocation;
}

/** What an entry's body is made of, in source order: instructions and labels. */
export type Statement = Instruction | Label;

/** `.reg .b32 %r<49>;` declares %r0..%r48; `.reg .f32 %x;` declares one. */
export interface RegisterDeclaration {
  readonly type: PtxType;
  /** The base name (`%r`) and, for a range, the count. */
  readonly name: string;
  readonly count?: number;
  readonly location: SourceLocation;
}

/** A variable in a state space: `.shared .align 4 .b8 buf[128];`, `.param .u64 p;`. */
export interface VariableDeclaration {
  readonly space: StateSpace;
  readonly type: PtxType;
  readonly name: string;
  /** Alignment in bytes from `.align N`, else the type's size. */
  readonly align: number;
  /** Element count for arrays (`[128]`); undefined for scalars. */
  readonly length?: number;
  /**
   * `.extern .shared .b8 buf[];`: dynamic shared memory, sized at launch (simulate's
   * `dynamicSharedBytes`); every such variable starts at the same offset, after the static ones.
   */
  readonly dynamic?: true;
  /** `.global`/`.const` `= {1, 2}` as raw bits of the element type; a missing tail is zero. */
  readonly initializer?: readonly bigint[];
  readonly location: SourceLocation;
}

/**
 * A kernel (`.entry`) of a module: its parameters, register and variable declarations and body.
 * `simulate` runs one by name.
 */
export interface EntryFunction {
  readonly name: string;
  /** `.visible .entry` vs `.entry` (both runnable); `.func` bodies are rejected for now. */
  readonly visible: boolean;
  readonly params: readonly VariableDeclaration[];
  readonly registers: readonly RegisterDeclaration[];
  /** `.shared` / `.local` declared inside the body. */
  readonly variables: readonly VariableDeclaration[];
  /** `.reqntid` / `.maxntid` when given. */
  readonly requiredThreads?: readonly number[];
  readonly maxThreads?: readonly number[];
  readonly body: readonly Statement[];
  readonly location: SourceLocation;
  /**
   * Set by `parsePtx(text, { lazyEntries: true })` when the body holds a construct the simulator
   * lacks: the body is left empty and simulate reports this only if the entry is launched.
   */
  readonly unsupported?: { readonly line: number; readonly text: string; readonly reason: string };
}

/** How parsePtx treats a module. */
export interface ParseOptions {
  /**
   * Parse errors inside an entry's body are kept on the entry (`unsupported`) instead of thrown,
   * so a large module whose other entries use constructs the simulator lacks can still run one;
   * `.func` definitions are skipped. Default false: the first error is thrown.
   */
  readonly lazyEntries?: boolean;
}

/**
 * A parsed PTX module, what parsePtx returns and simulate runs; plain data, so it can be inspected
 * or built by hand.
 */
export interface PtxModule {
  readonly version: string;
  readonly target: string;
  readonly addressSize: 32 | 64;
  /** Module-scope `.shared` / `.global` / `.const` variables. */
  readonly variables: readonly VariableDeclaration[];
  readonly entries: readonly EntryFunction[];
  /** `.file` names by index, for the `.loc` positions of instructions. */
  readonly files?: ReadonlyMap<number, string>;
}

/** Bytes of one value of a type (`b128` is 16, `pred` is 1). */
export function typeBytes(type: PtxType): number {
  switch (type) {
    case 'pred':
    case 'b8':
    case 'u8':
    case 's8':
      return 1;
    case 'b16':
    case 'u16':
    case 's16':
    case 'f16':
    case 'bf16':
      return 2;
    case 'b32':
    case 'u32':
    case 's32':
    case 'f32':
    case 'f16x2':
    case 'bf16x2':
      return 4;
    case 'b64':
    case 'u64':
    case 's64':
    case 'f64':
      return 8;
    case 'b128':
      return 16;
  }
}
