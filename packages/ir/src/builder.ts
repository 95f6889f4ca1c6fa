import type { Axis, Expr, MmaShape, Reduction, ShuffleMode, Stmt, VarExpr } from './body.js';
import { BuilderScopeError, ForgeError, InternalError } from './errors.js';
import { builtin, eq, fluent, local, lt, min, operand, sub, type Operand } from './expressions.js';
import type { Local, Value } from './expression-methods.js';
import type { KernelSpec, SharedDecl, StageSpec } from './spec.js';
import type { ElementType, ScalarType } from './types.js';
import { validateSpec } from './validate.js';
import { scratchAsBuffer } from './dispatch.js';
import { ownField } from './json-shape.js';
import { isReservedWord } from './identifiers.js';
import type {
  Declared,
  DeclaredBy,
  IndexType,
  KernelDeclarations,
  Lookup,
  LoopRange,
  MemoryHandle,
  MemoryHandles,
  StageDeclaration,
  VectorTypes,
} from './builder-types.js';

// The builder's types, declared beside it.
export type * from './builder-types.js';

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

/** A block being filled: its statements so far and where it sits. */
interface OpenBlock {
  readonly statements: Stmt[];
  readonly scope: BlockScope;
}

/** What the builders of one body share: its open blocks, innermost last, and the names taken. */
interface BodyState {
  readonly open: OpenBlock[];
  readonly names: Set<string>;
}

/**
 * Appends statements to a body. There is one insertion point: whichever of a body's builders is
 * called, the statement goes to the innermost block open (an `if` or `for` whose callback is
 * running), so a kernel may use one builder throughout; nested callbacks also get the block's own.
 * A block's builder used after its callback returned throws BuilderScopeError. Names given to
 * `let`, `for`, `loadVector`, `shuffle`, `reduce` and `mma` are hints: one already declared in the
 * body (or naming a buffer, param, shared array or knob), or a reserved word of PTX or WGSL, becomes
 * `name_1`, `name_2`, ….
 */
export class BodyBuilder<M extends Declared = Declared> {
  // Appended only through the checked methods below; readers get a read-only view.
  readonly #statements: Stmt[] = [];

  /** A copy of the statements appended so far, in order (pushing to it changes nothing). */
  get statements(): readonly Stmt[] {
    return [...this.#statements];
  }
  // Messages name the block by it; set by the enclosing builder for a nested block.
  private scope: BlockScope;
  // Shared with every builder of the same body (a nested block's builder takes its parent's).
  #body: BodyState;
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
    const open = [{ statements: this.#statements, scope: this.scope }];
    this.#body = { open, names: new Set(declaredNames(declarations)) };
  }

  /**
   * A handle for every buffer, scratch buffer and shared array of the body, typed by name:
   * `const { x, y } = b.memory; y.store(i, x.at(i))`.
   */
  get memory(): MemoryHandles<M> {
    // Typed by name through MemoryHandles; inside, every element type is any ScalarType.
    const untyped: BodyBuilder = this as unknown as BodyBuilder;
    const handles: Record<string, MemoryHandle<ScalarType>> = {};
    for (const { name } of [...this.declarations.buffers, ...this.declarations.shared])
      handles[name] = {
        name,
        at: (index) => untyped.load(name, index),
        store: (index, value) => untyped.store(name, index, value as Expr | number),
      };
    return handles as unknown as MemoryHandles<M>;
  }

  /** Reads the scalar param `name`, typed as declared; throws ForgeError if the declarations have none. */
  param<N extends keyof M['params'] & string>(name: N): Value<Lookup<M['params'], N>> {
    const param = this.declarations.params.find((candidate) => candidate.name === name);
    if (param === undefined) throw new ForgeError(`builder: no param named '${name}'`);
    const read: Expr = { op: 'param', type: param.type, name };
    return fluent(read) as Value<Lookup<M['params'], N>>;
  }

  /**
   * Reads the schedule knob `name`, a u32 fixed when the kernel is emitted; throws ForgeError if it
   * is not declared.
   */
  schedule(name: string): Value<'u32'> {
    if (!this.declarations.schedule.some((knob) => knob.name === name)) {
      throw new ForgeError(`builder: no schedule knob named '${name}'`);
    }
    return fluent<'u32'>({ op: 'schedule', type: 'u32', name });
  }

  /** This thread's index within its workgroup. */
  localId(): Value<'u32'> {
    return builtin('local_id');
  }
  /** This workgroup's index along `axis` of the grid. */
  workgroupId(axis: Axis = 'x'): Value<'u32'> {
    return builtin('workgroup_id', axis);
  }
  /** The grid's workgroup count along `axis`. */
  numWorkgroups(axis: Axis = 'x'): Value<'u32'> {
    return builtin('num_workgroups', axis);
  }
  /** Threads per workgroup, as launched. */
  workgroupSize(): Value<'u32'> {
    return builtin('workgroup_size');
  }
  /** This thread's lane in its warp: local id % 32. */
  laneId(): Value<'u32'> {
    return builtin('lane_id');
  }
  /** This thread's warp in its workgroup: local id / 32. */
  warpId(): Value<'u32'> {
    return builtin('warp_id');
  }

  /**
   * Reads element `index` (u32) of a buffer or shared array, typed as its element; throws
   * ForgeError for an undeclared name.
   */
  load<N extends keyof M['memory'] & string, I extends ScalarType>(
    memory: N,
    index: Operand<'u32', I>,
  ): Value<Lookup<M['memory'], N>> {
    const type = this.elementOf(memory);
    const read: Expr = { op: 'load', type, memory, args: [operand('u32', index)] };
    return fluent(read) as Value<Lookup<M['memory'], N>>;
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
  ): { -readonly [K in keyof Names]: Local<Lookup<M['memory'], N>> } {
    const target = this.#target('loadVector');
    const type = this.elementOf(memory) as Lookup<M['memory'], N>;
    const declared = names.map((name) => this.#name(name));
    const read = operand('u32', index);
    target.statements.push({ op: 'load_vector', names: declared, type, memory, index: read });
    return declared.map((name) => local(type, name)) as {
      -readonly [K in keyof Names]: Local<Lookup<M['memory'], N>>;
    };
  }

  /**
   * Declares mutable locals and returns them: `let({ rowBytes: value })` declares `row_bytes` (see
   * localName) and returns `{ rowBytes }`, several keys in order; `let('row_bytes', value)` names
   * one (of `type`, by default the value's). A name already declared gets a suffix (`_1`, `_2`…).
   */
  let<T extends ScalarType>(name: string, value: Expr<T>): Local<T>;
  let<T extends ScalarType>(name: string, value: Expr | number, type: T): Local<T>;
  let<R extends Readonly<Record<string, Expr>>>(locals: R): { [K in keyof R]: Local<R[K]['type']> };
  let(
    nameOrLocals: string | Readonly<Record<string, Expr>>,
    value?: Expr | number,
    type?: ScalarType,
  ): Local | Record<string, Local> {
    if (typeof nameOrLocals !== 'string') {
      const locals: Record<string, Local> = {};
      for (const [key, local] of Object.entries(nameOrLocals))
        locals[key] = this.let(localName(key), local);
      return locals;
    }
    const target = this.#target('let');
    const declared = type ?? (value as Expr).type;
    const name = this.#name(nameOrLocals);
    target.statements.push({
      op: 'let',
      name,
      type: declared,
      value: operand(declared, value as Expr | number),
    });
    return local(declared, name);
  }

  /** Overwrites a local declared with `let`. */
  assign<T extends ScalarType, V extends ScalarType>(
    variable: VarExpr<T>,
    value: Operand<T, V>,
  ): void {
    this.#target('assign').statements.push({
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
    const target = this.#target('store');
    const element = this.elementOf(memory);
    target.statements.push({
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
    const target = this.#target('storeVector');
    const element = this.elementOf(memory);
    target.statements.push({
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
    const target = this.#target('if');
    const path = `${target.scope.path}[${target.statements.length}]`;
    const thenBlock = this.#block(
      { label: 'the `then` block of `if`', path: `${path}.then` },
      then,
    );
    const elseBlock =
      otherwise === undefined
        ? []
        : this.#block({ label: 'the `else` block of `if`', path: `${path}.else` }, otherwise);
    target.statements.push({
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
    hint: string,
    range: LoopRange<T>,
    body: (block: BodyBuilder<M>, index: Local<IndexType<T>>) => void,
  ): void {
    const target = this.#target('for');
    const { start, end, step = 1 } = range;
    const typed = [start, end, step].find((bound) => typeof bound !== 'number');
    const type = typed?.type === 'i32' ? 'i32' : 'u32';
    const name = this.#name(hint);
    const index = local(type as IndexType<T>, name);
    const scope = {
      label: `the body of \`for ${name}\``,
      path: `${target.scope.path}[${target.statements.length}].body`,
    };
    const block = this.#block(scope, (nested) => body(nested, index));
    target.statements.push({
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
    this.#target('barrier').statements.push({ op: 'barrier' });
  }

  /**
   * Declares `name` as `value` read from another lane of the warp (see ShuffleStmt) and returns it;
   * all 32 lanes must execute it.
   */
  shuffle<T extends ScalarType, L extends ScalarType>(
    mode: ShuffleMode,
    hint: string,
    value: Expr<T>,
    lane: Operand<'u32', L>,
  ): Local<T> {
    const target = this.#target('shuffle');
    const type = value.type as T;
    const name = this.#name(hint);
    target.statements.push({ op: 'shuffle', mode, name, type, value, lane: operand('u32', lane) });
    return local(type, name);
  }

  /**
   * Declares `name` as the reduction of `value` over the warp, the same in every lane, and returns
   * it; all 32 lanes must execute it.
   */
  reduce<T extends ScalarType>(reduction: Reduction, hint: string, value: Expr<T>): Local<T> {
    const target = this.#target('reduce');
    const type = value.type as T;
    const name = this.#name(hint);
    target.statements.push({ op: 'reduce', reduction, name, type, value });
    return local(type, name);
  }

  /**
   * Builds a variant of the code for each value of schedule knob `knob`: `build(value)` under
   * `if (knob == value)`, chained, the last value taking the final `else` (list every value the
   * knob's bounds allow). One spec and one hash hold them all; binding a schedule folds the tests
   * and keeps the one variant. A variant's locals live in its block: put what uses them inside.
   */
  specialize<const V extends readonly number[]>(
    knob: string,
    values: V,
    build: (value: V[number]) => void,
  ): void {
    this.#target('specialize');
    const setting = this.schedule(knob);
    const variant = (index: number): void => {
      const value = values[index];
      if (value === undefined) throw new ForgeError(`builder: specialize '${knob}' has no values`);
      if (index === values.length - 1) return build(value);
      this.if(
        eq(setting, value),
        () => build(value),
        () => variant(index + 1),
      );
    };
    variant(0);
  }

  /**
   * The reduction of `value` over the workgroup, the same in every thread: each warp reduces it,
   * lane 0 stores the warp's result to `scratch[warp]`, one barrier, then every warp reduces the
   * `warps` partials itself (so no second barrier; lanes past them add 0, or take partial 0 for
   * min and max). `scratch` is a shared array of at least `warps` elements of T, `warps` the
   * workgroup's warp count; workgroup-uniform control flow only. Declares `warp_sum`, `part` and
   * `total` (`warp_min`/`warp_max`, `part`, `least`/`most`) as hints.
   */
  blockReduce<T extends ScalarType, W extends ScalarType>(
    reduction: Reduction,
    value: Expr<T>,
    scratch: keyof M['memory'] & string,
    warps: Operand<'u32', W>,
  ): Local<T> {
    const [warpName, totalName] = BLOCK_REDUCE_NAMES[reduction];
    // Built untyped: the scratch array's element type is checked when the spec is validated.
    const b: BodyBuilder = this as unknown as BodyBuilder;
    const input: Expr = value;
    const lane = b.laneId();
    const warpResult = b.reduce(reduction, warpName, input);
    b.if(eq(lane, 0), () => b.store(scratch, b.warpId(), warpResult));
    b.barrier();
    const count = operand('u32', warps);
    if (reduction !== 'add') {
      const part = b.let('part', b.load(scratch, min(lane, sub(count, 1))));
      return b.reduce(reduction, totalName, part) as Local<T>;
    }
    const part = b.let('part', operand(input.type, 0));
    b.if(lt(lane, count), () => b.assign(part, b.load(scratch, lane)));
    return b.reduce(reduction, totalName, part) as Local<T>;
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
  ): [Local<'f32'>, Local<'f32'>, Local<'f32'>, Local<'f32'>] {
    const target = this.#target('mma');
    const declared = names.map((name) => this.#name(name));
    target.statements.push({
      op: 'mma',
      shape,
      names: declared,
      a: fragments.a.map((value) => operand('u32', value)),
      b: fragments.b.map((value) => operand('u32', value)),
      c: fragments.c.map((value) => operand('f32', value)),
    });
    return declared.map((name) => local('f32', name)) as [
      Local<'f32'>,
      Local<'f32'>,
      Local<'f32'>,
      Local<'f32'>,
    ];
  }

  /** Marks the builder finished: appending to it afterwards throws BuilderScopeError. */
  finish(): void {
    this.finished = true;
  }

  #block(scope: BlockScope, fill: (block: BodyBuilder<M>) => void): Stmt[] {
    const nested = new BodyBuilder<M>(this.declarations);
    nested.scope = scope;
    nested.#body = this.#body;
    this.#body.open.push({ statements: nested.#statements, scope });
    try {
      fill(nested);
    } finally {
      // Also on a throw, so that a caller catching the error finds the enclosing block open again.
      this.#body.open.pop();
      nested.finish();
    }
    return nested.#statements;
  }

  /** The block a statement goes to: the innermost open one, whichever builder was called. */
  #target(method: string): OpenBlock {
    if (this.finished) {
      const owner = /^(body|stages\[\d+\]\.body)$/.test(this.scope.path)
        ? 'defineKernel'
        : 'its callback';
      throw new BuilderScopeError(
        this.scope.path,
        `builder: \`${method}\` on the builder of ${describe(this.scope)} after ${owner} ` +
          "returned: a block's builder appends only while its callback runs",
      );
    }
    const innermost = this.#body.open.at(-1);
    if (innermost === undefined) throw new InternalError('builder', 'a body with no open block');
    return innermost;
  }

  /** `hint`, or `hint_1`, `hint_2`… where the body already declares it. */
  #name(hint: string): string {
    const names = this.#body.names;
    let name = hint;
    // A reserved word of PTX or WGSL (`from`, `meta`) is no name either, so it takes a suffix too.
    for (let suffix = 1; names.has(name) || isReservedWord(name); suffix++)
      name = `${hint}_${suffix}`;
    names.add(name);
    return name;
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

/** blockReduce's name hints for a warp's result and the workgroup's, by reduction. */
const BLOCK_REDUCE_NAMES: Readonly<Record<Reduction, readonly [string, string]>> = {
  add: ['warp_sum', 'total'],
  min: ['warp_min', 'least'],
  max: ['warp_max', 'most'],
};

/** The names a body's locals may not take: its buffers, scratch, params, shared arrays, knobs. */
function declaredNames(declarations: KernelDeclarations): string[] {
  return [
    ...declarations.buffers,
    ...declarations.params,
    ...declarations.shared,
    ...declarations.schedule,
    ...(declarations.scratch ?? []),
  ].map((declared) => declared.name);
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
