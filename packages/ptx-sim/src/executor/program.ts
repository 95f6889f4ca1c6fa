import type { Instruction, SourceLocation } from '../ast.js';
import type { AluOp, Bits } from '../semantics/types.js';
import type { ExecutionContext } from './state.js';
import type { IssueClass } from './issue-class.js';
import type { SymbolTable } from './operands.js';

/**
 * A compiled instruction. The scheduler calls `execute` with the lanes of one warp that sit at
 * this instruction and whose guard holds; it advances those lanes' pcs unless `execute` set them
 * (branches) or parked them (barriers). Guarded-off lanes just move on.
 */
export interface Executable {
  readonly location: SourceLocation;
  readonly family: string;
  /** The execution unit it occupies, for the timing model. */
  readonly issueClass: IssueClass;
  /** Register slot and polarity of the `@p` guard. */
  readonly guard?: { readonly slot: number; readonly negated: boolean; readonly name: string };
  /** Warp-collective instructions see guarded-off lanes too, so they can check their member masks. */
  readonly collective?: boolean;
  /** Whether `execute` may set pcs or lane states (branches, exits, barriers); others never do. */
  readonly changesFlow?: boolean;
  /** What a cp.async group instruction does to its thread's copies, for the timing model. */
  readonly asyncGroup?: AsyncGroupEffect | undefined;
  execute(context: ExecutionContext, lanes: readonly number[], skipped: readonly number[]): void;
}

export interface CompileContext {
  readonly symbols: SymbolTable;
  /** Label name to instruction index. */
  readonly labels: ReadonlyMap<string, number>;
  /**
   * ALU decodings by spelling (modifiers array, the parser's one per spelling; then opcode and
   * operand shape), shared by every instruction spelled the same in one entry (with the scratch
   * array its sources are read into), so a long body holds each decoding once.
   */
  readonly aluOps: Map<
    readonly string[],
    Map<string, { readonly op: AluOp; readonly sources: Bits[] } | undefined>
  >;
}

/**
 * cp.async.commit_group commits (the copies since the last commit form a group), wait_group N
 * waits until at most `pending` = N groups are in flight, wait_all does both with 0.
 */
export interface AsyncGroupEffect {
  readonly commit: boolean;
  readonly pending: number | undefined;
}

/** Compiles one instruction of a family; returns undefined when the opcode is not this family's. */
export type InstructionCompiler = (
  instruction: Instruction,
  context: CompileContext,
) => Omit<Executable, 'guard' | 'location' | 'issueClass'> | undefined;

/** Modifiers that only tune caching or ordering and do not change what a single thread computes. */
export const IGNORED_MODIFIERS = new Set([
  'ca', 'cg', 'cs', 'lu', 'cv', 'wb', 'wt', 'nc', 'volatile', 'relaxed', 'acquire', 'release', 'acq_rel', 'weak',
  'cta', 'gpu', 'sys', 'cluster', 'uni', 'aligned', 'L1::evict_last', 'L1::evict_first', 'L1::no_allocate', 'L2::64B', 'L2::128B', 'L2::256B',
]); // prettier-ignore
