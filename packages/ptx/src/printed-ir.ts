import {
  evaluateSizeExpression,
  launchScratch,
  lowerModule,
  printAssembledKernelLines,
  type KernelSpec,
  type LaunchInfo,
  type Lowering,
  type PrintedKernel,
  type Schedule,
  type SharedDecl,
  type Stmt,
  InternalError,
} from '@forge/ir';
import { PTX_PASSES } from './legalize/index.js';
import { ptxLaunchInfo } from './launch.js';
import { PTX_LIMITS, checkPtxTarget, type PtxTarget } from './targets.js';

/** One dispatch as PTX renders it: its single-dispatch view, launch and legalized body. */
export interface LoweredDispatch {
  readonly view: KernelSpec;
  readonly launch: LaunchInfo;
  /** The view's `launch.maxRegisters` with the schedule bound (`.maxnreg`), when it has one. */
  readonly maxRegisters: number | undefined;
  readonly body: readonly Stmt[];
}

/** The printed IR a PTX module's `.loc` lines refer to, and the name its `.file` gives it. */
export interface PtxIrFile {
  /** `<kernel id>.forge`, as in the module's `.file` directive. */
  readonly name: string;
  /** printKernel's text for the kernel as emitted; `.loc` line numbers count its lines from 1. */
  readonly text: string;
}

/** How PTX lowers a kernel: PTX_LIMITS, the arch check, PTX_PASSES (bound, then legalized). */
export const PTX_LOWERING: Lowering<PtxTarget> = {
  limits: PTX_LIMITS,
  checkTarget: checkPtxTarget,
  passes: PTX_PASSES,
};

/** Dispatches the shared driver lowered, with the launch and register cap PTX prints for each. */
export function withLaunches(
  dispatches: readonly { readonly view: KernelSpec; readonly body: readonly Stmt[] }[],
  schedule: Schedule,
): LoweredDispatch[] {
  return dispatches.map(({ view, body }) => {
    const cap = view.launch.maxRegisters;
    const maxRegisters = cap === undefined ? undefined : evaluateSizeExpression(cap, schedule);
    return { view, launch: ptxLaunchInfo(view, schedule), maxRegisters, body };
  });
}

/**
 * The kernel as the PTX renderer walks it, printed: knobs bound into the launch, shared and scratch
 * sizes, each body bound and legalized (reductions as shuffles, f16 widened…), so that every
 * statement the renderer meets is one printed line and `.loc` can name it.
 */
export function printLowered(
  spec: KernelSpec,
  schedule: Schedule,
  dispatches: readonly LoweredDispatch[],
): PrintedKernel {
  const bindShared = (arrays: readonly SharedDecl[]): SharedDecl[] =>
    arrays.map((array) => ({
      ...array,
      length: String(evaluateSizeExpression(array.length, schedule)),
    }));
  const lowered = (index: number): LoweredDispatch => {
    const dispatch = dispatches[index];
    if (dispatch === undefined)
      throw new InternalError('ptx', `line info: dispatch ${index} was not lowered`);
    return dispatch;
  };
  const launchOf = ({ launch, maxRegisters }: LoweredDispatch): KernelSpec['launch'] => ({
    workgroupSize: String(launch.workgroupSize[0]),
    grid: launch.grid,
    ...(maxRegisters === undefined ? {} : { maxRegisters: String(maxRegisters) }),
  });
  const scratch = launchScratch(spec, schedule);
  // Own fields only, as kernelDispatches reads them: a polluted prototype adds no stage.
  const stages = ownValue(spec, 'stages')?.map((stage, index) => ({
    ...stage,
    shared: bindShared(stage.shared),
    launch: launchOf(lowered(index + 1)),
    body: lowered(index + 1).body,
  }));
  const emitted: KernelSpec = {
    ...spec,
    shared: bindShared(spec.shared),
    launch: launchOf(lowered(0)),
    body: lowered(0).body,
    ...(ownValue(spec, 'scratch') === undefined
      ? {}
      : {
          scratch: (ownValue(spec, 'scratch') ?? []).map((buffer, index) => ({
            ...buffer,
            length: scratch[index]?.length ?? buffer.length,
          })),
        }),
    ...(stages === undefined ? {} : { stages }),
  };
  return printAssembledKernelLines(emitted);
}

const ownValue = <Key extends 'stages' | 'scratch'>(
  spec: KernelSpec,
  key: Key,
): KernelSpec[Key] | undefined => (Object.hasOwn(spec, key) ? spec[key] : undefined);

/** The `.file` name of a kernel's printed IR. */
export const ptxIrFileName = (spec: KernelSpec): string => `${spec.id}.forge`;

/**
 * The printed IR that `emitPtx(spec, scheduleOverrides, target)`'s `.loc` lines refer to: save
 * `text` as `name` beside the PTX, and `ptxas -lineinfo`, `nvdisasm -g` and Nsight Compute show
 * each SASS instruction's IR statement. It depends on the schedule and target, as the PTX does.
 */
export function printPtxIr(
  specInput: unknown,
  scheduleOverrides: Readonly<Record<string, number>>,
  targetInput: PtxTarget,
): PtxIrFile {
  const { spec, schedule, dispatches } = lowerModule(
    PTX_LOWERING,
    specInput,
    scheduleOverrides,
    targetInput,
  );
  const printed = printLowered(spec, schedule, withLaunches(dispatches, schedule));
  return { name: ptxIrFileName(spec), text: printed.text };
}
