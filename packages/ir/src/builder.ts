import type { Axis, Expr, MmaShape, Reduction, ShuffleMode, Stmt, VarExpr } from './body.js';
import { BuilderScopeError, ForgeError } from './errors.js';
import { builtin, operand, type Operand } from './expressions.js';
import type { KernelSpec, LaunchSpec, ScratchDecl, SharedDecl, StageSpec } from './spec.js';
import type { ElementType, ParamType, ScalarType } from './types.js';
import { validateSpec } from './validate.js';
import { scratchAsBuffer } from './dispatch.js';
import { ownField } from './json-shape.js';

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
 * Bounds of a BodyBuilder `for` loop: from `start` while below `end`, adding `step` (positive, 1 by
 * default). All three share the index type, i32 when an expression among them is i32 and u32
 * otherwise; plain numbers become consts of it.
 */
export interface LoopRange<T extends ScalarType = ScalarType> {
  readonly start: Expr<T> | number;
  readonly end: Expr<T> | number;
  readonly step?: Expr<T> | number;
}

/**
 * The IR name a `let` record key stands for: camelCase words joined by underscores, so `rowBytes`
 * names `row_bytes`, `xTail0` `x_tail0` and `scaleCurrentA` `scale_current_a` (digits and
 * underscores stay as written).
 */
export function localName(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** Where a builder's block sits: a phrase for messages and the block's JSON path. */
interface BlockScope {
  readonly label: string;
  readonly path: string;
}

/**
 * Appends statements to a block; nested blocks get their own builder through callbacks. While a
 * callback runs, only its builder may append: the enclosing ones throw BuilderScopeError, as does a
 * nested builder used after its callback returned.
 */
export class BodyBuilder<M extends Declared = Declared> {
  // Appended only through the checked methods below; readers get a read-only view.
  readonly #statements: Stmt[] = [];

  /** A copy of the statements appended so far, in order (pushing to it changes nothing). */
  get statements(): readonly Stmt[] {
    return [...this.#statements];
  }
  // Set by the enclosing builder for a nested block; messages name the block by it.
  private scope: BlockScope;
  // The nested builder whose callback is running: appending here then would misplace the statement.
  private open: BodyBuilder<M> | undefined;
  // Set once the callback (or defineKernel) that owns this builder has returned.
  private finished = false;

  constructor(
    private readonly declarations: KernelDeclarations,
    /** The body's JSON path: `body`, or `stages[i].body` for a stage. */
    path = 'body',
  ) {
    this.scope = {
      label: path === 'body' ? 'the kernel body' : `the body of ${path.replace(/\.body$/, '')}`,
      path,
    };
  }

  /** Reads the scalar param `name`, typed as declared; throws ForgeError if the declarations have none. */
  param<N extends keyof M['params'] & string>(name: N): Expr<Lookup<M['params'], N>> {
    const param = this.declarations.params.find((candidate) => candidate.name === name);
    if (param === undefined) throw new ForgeError(`builder: no param named '${name}'`);
    const read: Expr = { op: 'param', type: param.type, name };
    return read as Expr<Lookup<M['params'], N>>;
  }

  /**
   * Reads the schedule knob `name`, a u32 fixed when the kernel is emitted; throws ForgeError if it
   * is not declared.
   */
  schedule(name: string): Expr<'u32'> {
    if (!this.declarations.schedule.some((knob) => knob.name === name)) {
      throw new ForgeError(`builder: no schedule knob named '${name}'`);
    }
    return { op: 'schedule', type: 'u32', name };
  }

  /** This thread's index within its workgroup. */
  localId(): Expr<'u32'> {
    return builtin('local_id');
  }
  /** This workgroup's index along `axis` of the grid. */
  workgroupId(axis: Axis = 'x'): Expr<'u32'> {
    return builtin('workgroup_id', axis);
  }
  /** The grid's workgroup count along `axis`. */
  numWorkgroups(axis: Axis = 'x'): Expr<'u32'> {
    return builtin('num_workgroups', axis);
  }
  /** Threads per workgroup, as launched. */
  workgroupSize(): Expr<'u32'> {
    return builtin('workgroup_size');
  }
  /** This thread's lane in its warp: local id % 32. */
  laneId(): Expr<'u32'> {
    return builtin('lane_id');
  }
  /** This thread's warp in its workgroup: local id / 32. */
  warpId(): Expr<'u32'> {
    return builtin('warp_id');
  }

  /**
   * Reads element `index` (u32) of a buffer or shared array, typed as its element; throws
   * ForgeError for an undeclared name.
   */
  load<N extends keyof M['memory'] & string, I extends ScalarType>(
    memory: N,
    index: Operand<'u32', I>,
  ): Expr<Lookup<M['memory'], N>> {
    const type = this.elementOf(memory);
    const read: Expr = { op: 'load', type, memory, args: [operand('u32', index)] };
    return read as Expr<Lookup<M['memory'], N>>;
  }

  /**
   * Declares `names[k]` = memory[index + k] in one aligned access (index % names.length must be 0)
   * and returns them, a tuple as long as `names`.
   */
  loadVector<
    N extends keyof M['memory'] & string,
    I extends ScalarType,
    const Names extends readonly string[],
  >(
    memory: N,
    index: Operand<'u32', I>,
    names: Names,
  ): { -readonly [K in keyof Names]: VarExpr<Lookup<M['memory'], N>> } {
    this.assertAppendable('loadVector');
    const type = this.elementOf(memory) as Lookup<M['memory'], N>;
    this.#statements.push({ op: 'load_vector', names, type, memory, index: operand('u32', index) });
    return names.map((name) => ({ op: 'var', type, name })) as {
      -readonly [K in keyof Names]: VarExpr<Lookup<M['memory'], N>>;
    };
  }

  /**
   * Declares mutable locals and returns them: `let({ rowBytes: value })` declares `row_bytes` (see
   * localName) and returns `{ rowBytes }`, several keys in order; `let('row_bytes', value)` names
   * one explicitly (of `type`, by default the value's). Local names are unique in the whole body.
   */
  let<T extends ScalarType>(name: string, value: Expr<T>): VarExpr<T>;
  let<T extends ScalarType>(name: string, value: Expr | number, type: T): VarExpr<T>;
  let<R extends Readonly<Record<string, Expr>>>(
    locals: R,
  ): { [K in keyof R]: VarExpr<R[K]['type']> };
  let(
    nameOrLocals: string | Readonly<Record<string, Expr>>,
    value?: Expr | number,
    type?: ScalarType,
  ): VarExpr | Record<string, VarExpr> {
    if (typeof nameOrLocals !== 'string') {
      const locals: Record<string, VarExpr> = {};
      for (const [key, local] of Object.entries(nameOrLocals))
        locals[key] = this.let(localName(key), local);
      return locals;
    }
    this.assertAppendable('let');
    const declared = type ?? (value as Expr).type;
    this.#statements.push({
      op: 'let',
      name: nameOrLocals,
      type: declared,
      value: operand(declared, value as Expr | number),
    });
    return { op: 'var', type: declared, name: nameOrLocals };
  }

  /** Overwrites a local declared with `let`. */
  assign<T extends ScalarType, V extends ScalarType>(
    variable: VarExpr<T>,
    value: Operand<T, V>,
  ): void {
    this.assertAppendable('assign');
    this.#statements.push({
      op: 'assign',
      name: variable.name,
      value: operand(variable.type, value),
    });
  }

  /**
   * Writes `value` to element `index` of a `read_write` buffer or a shared array; a plain number
   * becomes a const of the element type.
   */
  store<N extends keyof M['memory'] & string, I extends ScalarType, V extends ScalarType>(
    memory: N,
    index: Operand<'u32', I>,
    value: Operand<Lookup<M['memory'], N>, V>,
  ): void {
    this.assertAppendable('store');
    const element = this.elementOf(memory);
    this.#statements.push({
      op: 'store',
      memory,
      index: operand('u32', index),
      value: operand(element, value),
    });
  }

  /**
   * Writes `values[k]` to memory[index + k] in one aligned access (index % values.length must be
   * 0) of a `read_write` buffer or a shared array; plain numbers become consts of the element type.
   */
  storeVector<
    N extends keyof M['memory'] & string,
    I extends ScalarType,
    const V extends VectorTypes,
  >(
    memory: N,
    index: Operand<'u32', I>,
    values: { readonly [K in keyof V]: Operand<Lookup<M['memory'], N>, V[K]> },
  ): void {
    this.assertAppendable('storeVector');
    const element = this.elementOf(memory);
    this.#statements.push({
      op: 'store_vector',
      memory,
      index: operand('u32', index),
      values: (values as readonly (Expr | number)[]).map((value) => operand(element, value)),
    });
  }

  /** Branches per thread; `then` and `otherwise` fill their blocks through nested builders. */
  if<C extends ScalarType>(
    condition: Operand<'bool', C>,
    then: (block: BodyBuilder<M>) => void,
    otherwise?: (block: BodyBuilder<M>) => void,
  ): void {
    this.assertAppendable('if');
    const path = `${this.scope.path}[${this.#statements.length}]`;
    const thenBlock = this.block({ label: 'the `then` block of `if`', path: `${path}.then` }, then);
    const elseBlock =
      otherwise === undefined
        ? []
        : this.block({ label: 'the `else` block of `if`', path: `${path}.else` }, otherwise);
    this.#statements.push({
      op: 'if',
      condition: operand('bool', condition),
      then: thenBlock,
      else: elseBlock,
    });
  }

  /**
   * Loops `name` from `range.start` while below `range.end`, adding `range.step` (1 by default);
   * `body` gets the index as a read-only local.
   */
  for<T extends ScalarType>(
    name: string,
    range: LoopRange<T>,
    body: (block: BodyBuilder<M>, index: VarExpr<IndexType<T>>) => void,
  ): void {
    this.assertAppendable('for');
    const { start, end, step = 1 } = range;
    const typed = [start, end, step].find((bound) => typeof bound !== 'number');
    const type = typed?.type === 'i32' ? 'i32' : 'u32';
    const index = { op: 'var', type, name } as VarExpr<IndexType<T>>;
    const scope = {
      label: `the body of \`for ${name}\``,
      path: `${this.scope.path}[${this.#statements.length}].body`,
    };
    const block = this.block(scope, (nested) => body(nested, index));
    this.#statements.push({
      op: 'for',
      name,
      type,
      start: operand(type, start),
      end: operand(type, end),
      step: operand(type, step),
      body: block,
    });
  }

  /**
   * A workgroup barrier that also orders shared memory; every thread must reach it, so it belongs
   * in workgroup-uniform control flow only.
   */
  barrier(): void {
    this.assertAppendable('barrier');
    this.#statements.push({ op: 'barrier' });
  }

  /**
   * Declares `name` as `value` read from another lane of the warp (see ShuffleStmt) and returns it;
   * all 32 lanes must execute it.
   */
  shuffle<T extends ScalarType, L extends ScalarType>(
    mode: ShuffleMode,
    name: string,
    value: Expr<T>,
    lane: Operand<'u32', L>,
  ): VarExpr<T> {
    this.assertAppendable('shuffle');
    const type = value.type as T;
    this.#statements.push({ op: 'shuffle', mode, name, type, value, lane: operand('u32', lane) });
    return { op: 'var', type, name };
  }

  /**
   * Declares `name` as the reduction of `value` over the warp, the same in every lane, and returns
   * it; all 32 lanes must execute it.
   */
  reduce<T extends ScalarType>(reduction: Reduction, name: string, value: Expr<T>): VarExpr<T> {
    this.assertAppendable('reduce');
    const type = value.type as T;
    this.#statements.push({ op: 'reduce', reduction, name, type, value });
    return { op: 'var', type, name };
  }

  /**
   * Declares `names` as this lane's 4 f32 elements of D = A·B + C over the warp (see MmaStmt for
   * the fragment layout) and returns them; all 32 lanes must execute it. `a` and `b` are u32 words
   * of two f16 each, `c` f32; plain numbers become consts.
   */
  mma(
    shape: MmaShape,
    names: readonly [string, string, string, string],
    fragments: {
      readonly a: readonly [Operand<'u32'>, Operand<'u32'>, Operand<'u32'>, Operand<'u32'>];
      readonly b: readonly [Operand<'u32'>, Operand<'u32'>];
      readonly c: readonly [Operand<'f32'>, Operand<'f32'>, Operand<'f32'>, Operand<'f32'>];
    },
  ): [VarExpr<'f32'>, VarExpr<'f32'>, VarExpr<'f32'>, VarExpr<'f32'>] {
    this.assertAppendable('mma');
    this.#statements.push({
      op: 'mma',
      shape,
      names,
      a: fragments.a.map((value) => operand('u32', value)),
      b: fragments.b.map((value) => operand('u32', value)),
      c: fragments.c.map((value) => operand('f32', value)),
    });
    return names.map((name) => ({ op: 'var', type: 'f32', name })) as [
      VarExpr<'f32'>,
      VarExpr<'f32'>,
      VarExpr<'f32'>,
      VarExpr<'f32'>,
    ];
  }

  /** Marks the builder finished: appending to it afterwards throws BuilderScopeError. */
  finish(): void {
    this.finished = true;
  }

  private block(scope: BlockScope, fill: (block: BodyBuilder<M>) => void): Stmt[] {
    const nested = new BodyBuilder<M>(this.declarations);
    nested.scope = scope;
    this.open = nested;
    try {
      fill(nested);
    } finally {
      // Also on a throw, so that a caller catching the error finds this builder usable again.
      this.open = undefined;
      nested.finish();
    }
    return nested.#statements;
  }

  private assertAppendable(method: string): void {
    const own = `builder: \`${method}\` on the builder of ${describe(this.scope)}`;
    if (this.finished) {
      const owner = /^(body|stages\[\d+\]\.body)$/.test(this.scope.path)
        ? 'defineKernel'
        : 'its callback';
      throw new BuilderScopeError(
        this.scope.path,
        undefined,
        `${own} after ${owner} returned: a block's builder appends only while its callback runs`,
      );
    }
    if (this.open === undefined) return;
    // The innermost open block is the one whose builder the caller meant to use.
    let inner = this.open;
    while (inner.open !== undefined) inner = inner.open;
    throw new BuilderScopeError(
      this.scope.path,
      inner.scope.path,
      `${own} while its nested block, ${describe(inner.scope)}, is open: ` +
        "the statement would land before that block; use the builder that block's callback was given",
    );
  }

  private elementOf(memory: string): ElementType {
    const found =
      this.declarations.buffers.find((buffer) => buffer.name === memory) ??
      this.declarations.shared.find((array) => array.name === memory);
    if (found === undefined)
      throw new ForgeError(`builder: no buffer or shared array named '${memory}'`);
    return found.element;
  }
}

function describe(scope: BlockScope): string {
  return `${scope.label} (${scope.path})`;
}

/**
 * Builds a kernel's body and returns the validated, deep-frozen spec; a mistake throws
 * ValidationError. The builder types params and memory by the declarations' literal names.
 */
export function defineKernel<const D extends KernelDeclarations>(
  declarations: D & { readonly stages?: readonly (StageDeclaration | StageSpec)[] },
  build: (body: BodyBuilder<DeclaredBy<D>>) => void,
): KernelSpec {
  const { stages: _stages, ...rest } = declarations as KernelDeclarations & {
    readonly stages?: readonly (StageDeclaration | StageSpec)[];
  };
  // Own fields only: a polluted Object.prototype adds no stages or scratch buffers.
  const stages = ownField(declarations, 'stages');
  const scratch = ownField(rest, 'scratch') ?? [];
  const buildBody = <M extends Declared>(
    shared: readonly SharedDecl[],
    path: string,
    fill: (body: BodyBuilder<M>) => void,
  ): readonly Stmt[] => {
    // Scratch buffers are memory to the builder; a stage sees its own shared arrays only.
    const { scratch: _scratch, ...own } = rest;
    const builder = new BodyBuilder<M>(
      { ...own, shared, buffers: [...own.buffers, ...scratch.map(scratchAsBuffer)] },
      path,
    );
    try {
      fill(builder);
    } finally {
      builder.finish();
    }
    return builder.statements;
  };
  const body = buildBody(rest.shared, 'body', build);
  const built = stages?.map((stage, index) => ({
    entryPoint: stage.entryPoint,
    shared: stage.shared,
    launch: stage.launch,
    body:
      typeof stage.body === 'function'
        ? buildBody(stage.shared, `stages[${index}].body`, stage.body)
        : stage.body,
  }));
  const spec: KernelSpec = { ...rest, body, ...(built === undefined ? {} : { stages: built }) };
  // The snapshot is frozen, so its validation and hash are computed once however many targets emit it.
  return validateSpec(spec);
}
