import { ValidationError } from './errors.js';
import { ownField } from './json-shape.js';
import { memoizeSealed } from './sealed.js';
import {
  bindSizeExpression,
  formatSizeExpression,
  parseSizeExpression,
} from './size-expression.js';
import type { BufferDecl, KernelSpec, Schedule, ScratchDecl } from './spec.js';
import { ELEMENT_BYTES, type ElementType } from './types.js';
import { validateSpec } from './validate.js';

/**
 * Whether a spec has scratch buffers or stages, so that it launches as a sequence. Here and in every
 * reader of a spec's optional fields (`scratch`, `stages`, a knob's `bounds`), only own fields
 * count: what a polluted Object.prototype holds is no part of any spec.
 */
export function isMultiDispatch(spec: KernelSpec): boolean {
  return (
    (ownField(spec, 'scratch')?.length ?? 0) > 0 || (ownField(spec, 'stages')?.length ?? 0) > 0
  );
}

/**
 * Throws a ValidationError at `firstDispatch` unless it is one of a launch's `count` dispatches (an
 * engine starting a multi-dispatch kernel part way, on scratch an earlier launch left).
 */
export function checkFirstDispatch(firstDispatch: number, count: number): void {
  if (!Number.isInteger(firstDispatch) || firstDispatch < 0 || firstDispatch >= count)
    throw new ValidationError([
      { path: 'firstDispatch', message: `${firstDispatch} is not a dispatch (0 to ${count - 1})` },
    ]);
}

/** A scratch buffer as the single-dispatch view binds it: a read_write buffer. */
export function scratchAsBuffer(scratch: ScratchDecl): BufferDecl {
  const { group, binding, name, element } = scratch;
  return { group, binding, name, element, access: 'read_write' };
}

/**
 * Each dispatch of a spec as a single-dispatch KernelSpec, in launch order: the spec's own entry
 * point first, then its stages. Each view has the spec's id, buffers followed by the scratch
 * buffers (as `read_write` buffers), params and schedule, and the dispatch's entry point, shared
 * arrays, launch and body; backends emit and engines run each view as they would any kernel. A
 * spec without scratch and stages is its own only view.
 */
export const kernelDispatches: (spec: KernelSpec) => readonly KernelSpec[] = (spec) =>
  dispatchesOf(validateSpec(spec)) as readonly KernelSpec[];

const dispatchesOf = memoizeSealed((value): readonly KernelSpec[] => {
  const spec = value as KernelSpec;
  if (!isMultiDispatch(spec)) return [spec];
  const { scratch: _scratch, stages: _stages, ...single } = spec;
  const scratch = ownField(spec, 'scratch') ?? [];
  const stages = ownField(spec, 'stages') ?? [];
  const buffers = [...spec.buffers, ...scratch.map(scratchAsBuffer)];
  const first: KernelSpec = { ...single, buffers };
  return [validateSpec(first), ...stages.map((stage) => validateSpec({ ...first, ...stage }))];
});

/** A scratch buffer in launch metadata: what an engine allocates before the first dispatch. */
export interface LaunchScratch {
  readonly name: string;
  readonly group: number;
  readonly binding: number;
  readonly element: ElementType;
  /** Elements, a size expression over the params (schedule knobs bound). */
  readonly length: string;
  /** Bytes, a size expression over the params (schedule knobs bound). */
  readonly bytes: string;
}

/** The scratch buffers of a spec with their lengths and byte sizes bound to a schedule. */
export function launchScratch(specInput: KernelSpec, schedule: Schedule): LaunchScratch[] {
  const spec = validateSpec(specInput);
  return (ownField(spec, 'scratch') ?? []).map((scratch) => {
    const bind = (text: string): string =>
      formatSizeExpression(bindSizeExpression(parseSizeExpression(text), schedule));
    const length = bind(scratch.length);
    return {
      name: scratch.name,
      group: scratch.group,
      binding: scratch.binding,
      element: scratch.element,
      length,
      bytes: bind(`${ELEMENT_BYTES[scratch.element]} * (${length})`),
    };
  });
}
