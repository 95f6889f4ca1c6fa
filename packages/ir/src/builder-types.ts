// The types the builder declares and takes: declarations, what they declare by name, and the
// typed handles and loop bounds of its methods.
import type { Expr } from './body.js';
import type { BodyBuilder } from './builder.js';
import type { Operand } from './expressions.js';
import type { Value } from './expression-methods.js';
import type { KernelSpec, LaunchSpec, ScratchDecl, SharedDecl } from './spec.js';
import type { ElementType, ParamType, ScalarType } from './types.js';

/** Everything of a KernelSpec except its body and stages (whose bodies are built too). */
export type KernelDeclarations = Omit<KernelSpec, 'body' | 'stages'>;

/**
 * A stage as defineKernel takes it: its body built by a callback, as the main body is (a built
 * StageSpec is taken as it is). Its builder checks names when the spec is validated, not in types.
 */
export interface StageDeclaration<M extends Declared = Declared> {
  readonly entryPoint: string;
  readonly shared: readonly SharedDecl[];
  readonly launch: LaunchSpec;
  /** Fills the stage's body, as defineKernel's `build` fills the first dispatch's. */
  readonly body: (body: BodyBuilder<M>) => void;
}

/**
 * The element type of each buffer and shared array and the type of each param, by name, as a
 * builder's methods type their results; see DeclaredBy.
 */
export interface Declared {
  readonly memory: { readonly [name: string]: ElementType };
  readonly params: { readonly [name: string]: ParamType };
}

/** What declarations `D` declare, typed by name when D's names are literal (inferred by defineKernel). */
export type DeclaredBy<D extends Pick<KernelDeclarations, 'buffers' | 'params' | 'shared'>> = {
  readonly memory: MemoryMap<D['buffers'][number] | D['shared'][number] | ScratchOf<D>>;
  readonly params: { readonly [P in D['params'][number] as P['name']]: P['type'] };
};

/** Element types by name of some buffers, scratch buffers and shared arrays. */
export type MemoryMap<B extends { readonly name: string; readonly element: ElementType }> = {
  readonly [X in B as X['name']]: X['element'];
};

/** The scratch buffers `D` declares, or never. */
export type ScratchOf<D> = D extends { readonly scratch: readonly (infer S extends ScratchDecl)[] }
  ? S
  : never;

/** `Map[N]`, or any ScalarType when the map's names are not known (plain KernelDeclarations). */
export type Lookup<Map, N extends PropertyKey> = string extends keyof Map
  ? ScalarType
  : N extends keyof Map
    ? Map[N] & ScalarType
    : never;

/** The operand types of a `storeVector`'s 2 or 4 values, inferred per value. */
export type VectorTypes =
  readonly [ScalarType, ScalarType] | readonly [ScalarType, ScalarType, ScalarType, ScalarType];

/** A loop index's type: the bounds' type when it is u32 or i32, else (untyped bounds) any. */
export type IndexType<T extends ScalarType> = [T] extends ['i32']
  ? 'i32'
  : [T] extends ['u32']
    ? 'u32'
    : ScalarType;

/**
 * A buffer, scratch buffer or shared array by name, its reads and writes typed by its element:
 * `b.memory.x.at(i)` is `b.load('x', i)`, `y.store(i, v)` is `b.store('y', i, v)`.
 */
export interface MemoryHandle<T extends ScalarType> {
  /** The memory's name, as statements and loads give it. */
  readonly name: string;
  /** Reads element `index`. */
  at<I extends ScalarType>(index: Operand<'u32', I>): Value<T>;
  /** Writes `value` to element `index` (a plain number becomes a const of the element type). */
  store<I extends ScalarType, V extends ScalarType>(
    index: Operand<'u32', I>,
    value: Operand<T, V>,
  ): void;
}

/** A handle for each memory a kernel declares, by name (see BodyBuilder.memory). */
export type MemoryHandles<M extends Declared> = {
  readonly [N in keyof M['memory'] & string]: MemoryHandle<Lookup<M['memory'], N>>;
};

/**
 * Bounds of a BodyBuilder `for` loop: from `start` while below `end`, adding `step` (positive, 1 by
 * default). All three share the index type, i32 when an expression among them is i32 and u32
 * otherwise; plain numbers become consts of it.
 */
export interface LoopRange<T extends ScalarType = ScalarType> {
  readonly start: Expr<T> | number;
  readonly end: Expr<T> | number;
  readonly step?: Expr<T> | number;
}
