// The contract every backend implements, and the one driver that runs it: validate the spec, check
// the target, resolve the schedule, run the backend's passes over each dispatch (binding the
// schedule among them), render the module, hash. PTX and WGSL differ only in what they declare.
import { bindConstants } from './bind-constants.js';
import type { Stmt } from './body.js';
import { kernelDispatches } from './dispatch.js';
import { generatedShader, type GeneratedShader, type LaunchInfo } from './generated-shader.js';
import { semanticHash } from './hash.js';
import { evaluateSizeExpression } from './size-expression.js';
import { resolveSchedule, type TargetLimits } from './schedule.js';
import type { KernelSpec, Schedule, Target } from './spec.js';
import { validateSpec } from './validate.js';

/** The pass that binds the schedule: knobs, workgroup size and shared lengths become constants. */
export const BIND_SCHEDULE = 'bind-schedule';

/** What a pass sees besides the body: the dispatch's single-dispatch view, schedule and target. */
export interface PassContext<T extends Target> {
  readonly view: KernelSpec;
  readonly schedule: Schedule;
  readonly target: T;
  /** The dispatch's workgroup size under the schedule. */
  readonly workgroupSize: number;
}

/** An IR-to-IR rewrite of one dispatch's body, or the binding of the schedule. */
export type BackendPass<T extends Target> =
  typeof BIND_SCHEDULE | ((body: readonly Stmt[], context: PassContext<T>) => Stmt[]);

/** One dispatch after the backend's passes: what its entry renderer prints. */
export interface LoweredDispatch {
  /** The dispatch as a single-dispatch spec (kernelDispatches). */
  readonly view: KernelSpec;
  readonly workgroupSize: number;
  readonly body: Stmt[];
}

/** A kernel ready to print: the validated spec, its resolved schedule, the target, its dispatches. */
export interface LoweredModule<T extends Target> {
  readonly spec: KernelSpec;
  readonly schedule: Schedule;
  readonly target: T;
  readonly dispatches: readonly LoweredDispatch[];
  /** The spec's semanticHash, for the header. */
  readonly semanticHash: string;
}

/** What lowers a kernel for a backend: its limits, its target check, its passes in order. */
export interface Lowering<T extends Target> {
  /** Hardware limits every schedule must respect beyond the knobs' bounds for `limits.kind`. */
  readonly limits: TargetLimits;
  /** The target as given, checked and snapshotted; throws a ForgeError naming the bad field. */
  checkTarget(target: T): T;
  /** Rejects a valid spec the backend cannot take (a name it generates, …); after checkTarget. */
  checkSpec?(spec: KernelSpec): void;
  /** Run in order over each dispatch's body; BIND_SCHEDULE among them. */
  readonly passes: readonly BackendPass<T>[];
}

/** A backend: its lowering, and its module renderer. */
export interface Backend<T extends Target> extends Lowering<T> {
  /** `name@version`: part of every cache key. */
  readonly name: string;
  /** Prints the module (each backend's entry renderer runs per dispatch inside it) and its launch. */
  render(module: LoweredModule<T>): { readonly source: string; readonly launch: LaunchInfo };
}

/** Each dispatch of `spec` through `passes`: the bodies a backend's renderer prints. */
export function lowerDispatches<T extends Target>(
  passes: readonly BackendPass<T>[],
  spec: KernelSpec,
  schedule: Schedule,
  target: T,
): LoweredDispatch[] {
  return kernelDispatches(spec).map((view) => {
    const workgroupSize = evaluateSizeExpression(view.launch.workgroupSize, schedule);
    const context: PassContext<T> = { view, schedule, target, workgroupSize };
    const body = passes.reduce<Stmt[]>(
      (current, pass) =>
        pass === BIND_SCHEDULE
          ? bindConstants(current, schedule, workgroupSize, view.shared)
          : pass(current, context),
      [...view.body],
    );
    return { view, workgroupSize, body };
  });
}

/**
 * The kernel `lowering` prints: the spec validated, the target checked, then the spec for the
 * target, the schedule `overrides` give resolved, each dispatch through the passes. Spec and
 * target are read once, into snapshots; bad input throws as `emit` says.
 */
export function lowerModule<T extends Target>(
  lowering: Lowering<T>,
  specInput: unknown,
  overrides: Readonly<Record<string, number>>,
  targetInput: T,
): LoweredModule<T> {
  const spec = validateSpec(specInput);
  const target = lowering.checkTarget(targetInput);
  lowering.checkSpec?.(spec);
  const schedule = resolveSchedule(spec, lowering.limits, overrides);
  const dispatches = lowerDispatches(lowering.passes, spec, schedule, target);
  return { spec, schedule, target, dispatches, semanticHash: semanticHash(spec) };
}

/**
 * Renders `specInput` with `backend` for `targetInput` at the schedule `overrides` give: bad input
 * throws a ValidationError (or the backend's ForgeError), an op the target cannot express an
 * UnsupportedError. Spec and target are read once, into snapshots. Same input, same bytes.
 */
export function emit<T extends Target>(
  backend: Backend<T>,
  specInput: unknown,
  overrides: Readonly<Record<string, number>>,
  targetInput: T,
): GeneratedShader<T> {
  const module = lowerModule(backend, specInput, overrides, targetInput);
  const { source, launch } = backend.render(module);
  return generatedShader(module.spec, {
    backend: backend.name,
    target: module.target,
    schedule: module.schedule,
    source,
    launch,
    semanticHash: module.semanticHash,
  });
}
