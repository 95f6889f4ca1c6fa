import type { Axis, Expr, Reduction, ShuffleMode, Stmt, VarExpr } from './body.js';
import { ForgeError } from './errors.js';
import { builtin } from './expressions.js';
import type { KernelSpec } from './spec.js';
import type { ScalarType } from './types.js';
import { seal } from './sealed.js';
import { validateSpec } from './validate.js';

/** Everything of a KernelSpec except its body. */
export type KernelDeclarations = Omit<KernelSpec, 'body'>;

export interface LoopRange {
  readonly start: Expr;
  readonly end: Expr;
  readonly step: Expr;
}

/** Appends statements to a block; nested blocks get their own builder through callbacks. */
export class BodyBuilder {
  readonly statements: Stmt[] = [];

  constructor(private readonly declarations: KernelDeclarations) {}

  param(name: string): Expr {
    const param = this.declarations.params.find((candidate) => candidate.name === name);
    if (param === undefined) throw new ForgeError(`builder: no param named '${name}'`);
    return { op: 'param', type: param.type, name };
  }

  schedule(name: string): Expr {
    if (!this.declarations.schedule.some((knob) => knob.name === name)) {
      throw new ForgeError(`builder: no schedule knob named '${name}'`);
    }
    return { op: 'schedule', type: 'u32', name };
  }

  localId(): Expr {
    return builtin('local_id');
  }
  workgroupId(axis: Axis = 'x'): Expr {
    return builtin('workgroup_id', axis);
  }
  numWorkgroups(axis: Axis = 'x'): Expr {
    return builtin('num_workgroups', axis);
  }
  workgroupSize(): Expr {
    return builtin('workgroup_size');
  }
  laneId(): Expr {
    return builtin('lane_id');
  }
  warpId(): Expr {
    return builtin('warp_id');
  }

  load(memory: string, index: Expr): Expr {
    return { op: 'load', type: this.elementOf(memory), memory, args: [index] };
  }

  /** Declares `names[k]` = memory[index + k] in one aligned access; index % names.length must be 0. */
  loadVector(memory: string, index: Expr, names: readonly string[]): VarExpr[] {
    const type = this.elementOf(memory);
    this.statements.push({ op: 'load_vector', names, type, memory, index });
    return names.map((name) => ({ op: 'var', type, name }));
  }

  let(name: string, value: Expr, type: ScalarType = value.type): VarExpr {
    this.statements.push({ op: 'let', name, type, value });
    return { op: 'var', type, name };
  }

  assign(variable: VarExpr, value: Expr): void {
    this.statements.push({ op: 'assign', name: variable.name, value });
  }

  store(memory: string, index: Expr, value: Expr): void {
    this.statements.push({ op: 'store', memory, index, value });
  }

  if(
    condition: Expr,
    then: (block: BodyBuilder) => void,
    otherwise?: (block: BodyBuilder) => void,
  ): void {
    this.statements.push({
      op: 'if',
      condition,
      then: this.block(then),
      else: otherwise === undefined ? [] : this.block(otherwise),
    });
  }

  for(name: string, range: LoopRange, body: (block: BodyBuilder, index: VarExpr) => void): void {
    const type = range.start.type === 'i32' ? 'i32' : 'u32';
    const index: VarExpr = { op: 'var', type, name };
    this.statements.push({
      op: 'for',
      name,
      type,
      start: range.start,
      end: range.end,
      step: range.step,
      body: this.block((block) => body(block, index)),
    });
  }

  barrier(): void {
    this.statements.push({ op: 'barrier' });
  }

  shuffle(mode: ShuffleMode, name: string, value: Expr, lane: Expr): VarExpr {
    this.statements.push({ op: 'shuffle', mode, name, type: value.type, value, lane });
    return { op: 'var', type: value.type, name };
  }

  reduce(reduction: Reduction, name: string, value: Expr): VarExpr {
    this.statements.push({ op: 'reduce', reduction, name, type: value.type, value });
    return { op: 'var', type: value.type, name };
  }

  private block(fill: (block: BodyBuilder) => void): Stmt[] {
    const nested = new BodyBuilder(this.declarations);
    fill(nested);
    return nested.statements;
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

/** Builds a kernel's body and returns the validated, deep-frozen spec; a mistake throws ValidationError. */
export function defineKernel(
  declarations: KernelDeclarations,
  build: (body: BodyBuilder) => void,
): KernelSpec {
  const builder = new BodyBuilder(declarations);
  build(builder);
  const spec: KernelSpec = { ...declarations, body: builder.statements };
  validateSpec(spec);
  // Frozen, so its validation and hash are computed once however many targets emit it.
  return seal(spec);
}
