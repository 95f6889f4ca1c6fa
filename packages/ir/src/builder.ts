import type { Axis, Expr, Reduction, ShuffleMode, Stmt, VarExpr } from './body.js';
import { BuilderScopeError, ForgeError } from './errors.js';
import { builtin } from './expressions.js';
import type { KernelSpec } from './spec.js';
import type { ScalarType } from './types.js';
import { validateSpec } from './validate.js';

/** Everything of a KernelSpec except its body. */
export type KernelDeclarations = Omit<KernelSpec, 'body'>;

/**
 * Bounds of a BodyBuilder `for` loop: from `start` while below `end`, adding `step` (positive). All
 * three share the index type, i32 when `start` is i32 and u32 otherwise.
 */
export interface LoopRange {
  readonly start: Expr;
  readonly end: Expr;
  readonly step: Expr;
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
export class BodyBuilder {
  // Appended only through the checked methods below; readers get a read-only view.
  readonly #statements: Stmt[] = [];

  /** A copy of the statements appended so far, in order (pushing to it changes nothing). */
  get statements(): readonly Stmt[] {
    return [...this.#statements];
  }
  // Set by the enclosing builder for a nested block; messages name the block by it.
  private scope: BlockScope = { label: 'the kernel body', path: 'body' };
  // The nested builder whose callback is running: appending here then would misplace the statement.
  private open: BodyBuilder | undefined;
  // Set once the callback (or defineKernel) that owns this builder has returned.
  private finished = false;

  constructor(private readonly declarations: KernelDeclarations) {}

  /** Reads the scalar param `name`; throws ForgeError if the declarations have none. */
  param(name: string): Expr {
    const param = this.declarations.params.find((candidate) => candidate.name === name);
    if (param === undefined) throw new ForgeError(`builder: no param named '${name}'`);
    return { op: 'param', type: param.type, name };
  }

  /**
   * Reads the schedule knob `name`, a u32 fixed when the kernel is emitted; throws ForgeError if it
   * is not declared.
   */
  schedule(name: string): Expr {
    if (!this.declarations.schedule.some((knob) => knob.name === name)) {
      throw new ForgeError(`builder: no schedule knob named '${name}'`);
    }
    return { op: 'schedule', type: 'u32', name };
  }

  /** This thread's index within its workgroup. */
  localId(): Expr {
    return builtin('local_id');
  }
  /** This workgroup's index along `axis` of the grid. */
  workgroupId(axis: Axis = 'x'): Expr {
    return builtin('workgroup_id', axis);
  }
  /** The grid's workgroup count along `axis`. */
  numWorkgroups(axis: Axis = 'x'): Expr {
    return builtin('num_workgroups', axis);
  }
  /** Threads per workgroup, as launched. */
  workgroupSize(): Expr {
    return builtin('workgroup_size');
  }
  /** This thread's lane in its warp: local id % 32. */
  laneId(): Expr {
    return builtin('lane_id');
  }
  /** This thread's warp in its workgroup: local id / 32. */
  warpId(): Expr {
    return builtin('warp_id');
  }

  /**
   * Reads element `index` (u32) of a buffer or shared array, typed as its element; throws
   * ForgeError for an undeclared name.
   */
  load(memory: string, index: Expr): Expr {
    return { op: 'load', type: this.elementOf(memory), memory, args: [index] };
  }

  /** Declares `names[k]` = memory[index + k] in one aligned access; index % names.length must be 0. */
  loadVector(memory: string, index: Expr, names: readonly string[]): VarExpr[] {
    this.assertAppendable('loadVector');
    const type = this.elementOf(memory);
    this.#statements.push({ op: 'load_vector', names, type, memory, index });
    return names.map((name) => ({ op: 'var', type, name }));
  }

  /**
   * Declares a mutable local set to `value` (of `type`, by default the value's) and returns it;
   * local names are unique in the whole body.
   */
  let(name: string, value: Expr, type: ScalarType = value.type): VarExpr {
    this.assertAppendable('let');
    this.#statements.push({ op: 'let', name, type, value });
    return { op: 'var', type, name };
  }

  /** Overwrites a local declared with `let`. */
  assign(variable: VarExpr, value: Expr): void {
    this.assertAppendable('assign');
    this.#statements.push({ op: 'assign', name: variable.name, value });
  }

  /** Writes `value` to element `index` of a `read_write` buffer or a shared array. */
  store(memory: string, index: Expr, value: Expr): void {
    this.assertAppendable('store');
    this.#statements.push({ op: 'store', memory, index, value });
  }

  /** Branches per thread; `then` and `otherwise` fill their blocks through nested builders. */
  if(
    condition: Expr,
    then: (block: BodyBuilder) => void,
    otherwise?: (block: BodyBuilder) => void,
  ): void {
    this.assertAppendable('if');
    const path = `${this.scope.path}[${this.#statements.length}]`;
    const thenBlock = this.block({ label: 'the `then` block of `if`', path: `${path}.then` }, then);
    const elseBlock =
      otherwise === undefined
        ? []
        : this.block({ label: 'the `else` block of `if`', path: `${path}.else` }, otherwise);
    this.#statements.push({ op: 'if', condition, then: thenBlock, else: elseBlock });
  }

  /**
   * Loops `name` from `range.start` while below `range.end`, adding `range.step`; `body` gets the
   * index as a read-only local.
   */
  for(name: string, range: LoopRange, body: (block: BodyBuilder, index: VarExpr) => void): void {
    this.assertAppendable('for');
    const type = range.start.type === 'i32' ? 'i32' : 'u32';
    const index: VarExpr = { op: 'var', type, name };
    const scope = {
      label: `the body of \`for ${name}\``,
      path: `${this.scope.path}[${this.#statements.length}].body`,
    };
    const block = this.block(scope, (nested) => body(nested, index));
    this.#statements.push({
      op: 'for',
      name,
      type,
      start: range.start,
      end: range.end,
      step: range.step,
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
  shuffle(mode: ShuffleMode, name: string, value: Expr, lane: Expr): VarExpr {
    this.assertAppendable('shuffle');
    this.#statements.push({ op: 'shuffle', mode, name, type: value.type, value, lane });
    return { op: 'var', type: value.type, name };
  }

  /**
   * Declares `name` as the reduction of `value` over the warp, the same in every lane, and returns
   * it; all 32 lanes must execute it.
   */
  reduce(reduction: Reduction, name: string, value: Expr): VarExpr {
    this.assertAppendable('reduce');
    this.#statements.push({ op: 'reduce', reduction, name, type: value.type, value });
    return { op: 'var', type: value.type, name };
  }

  /** Marks the builder finished: appending to it afterwards throws BuilderScopeError. */
  finish(): void {
    this.finished = true;
  }

  private block(scope: BlockScope, fill: (block: BodyBuilder) => void): Stmt[] {
    const nested = new BodyBuilder(this.declarations);
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
      const owner = this.scope.path === 'body' ? 'defineKernel' : 'its callback';
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

  private elementOf(memory: string): ScalarType {
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

/** Builds a kernel's body and returns the validated, deep-frozen spec; a mistake throws ValidationError. */
export function defineKernel(
  declarations: KernelDeclarations,
  build: (body: BodyBuilder) => void,
): KernelSpec {
  const builder = new BodyBuilder(declarations);
  try {
    build(builder);
  } finally {
    builder.finish();
  }
  const spec: KernelSpec = { ...declarations, body: builder.statements };
  // The snapshot is frozen, so its validation and hash are computed once however many targets emit it.
  return validateSpec(spec);
}
