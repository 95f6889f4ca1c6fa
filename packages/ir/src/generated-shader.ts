import { blake3Hex, canonicalJson, semanticHash } from './hash.js';
import {
  bindSizeExpression,
  evaluateSizeExpression,
  formatSizeExpression,
  parseSizeExpression,
} from './size-expression.js';
import { ownField } from './json-shape.js';
import { scheduleSnapshot } from './schedule.js';
import { takeSnapshot } from './snapshot.js';
import type { BufferAccess, KernelSpec, Schedule, Target } from './spec.js';
import { validateSpec } from './validate.js';
import { ELEMENT_BYTES, type ElementType } from './types.js';
import { isMultiDispatch, launchScratch, type LaunchScratch } from './dispatch.js';

/** One kernel parameter as the engine passes it, in order. */
export interface LaunchParameter {
  /** The spec's name of the buffer or param. */
  readonly name: string;
  /** `scratch`: a buffer the engine allocates itself (see LaunchInfo.scratch). */
  readonly kind: 'buffer' | 'scalar' | 'scratch';
  /** The parameter's name in the emitted source (PTX `.param` name or WGSL struct member). */
  readonly sourceName: string;
  /** Type in the source: `u64` (a buffer's global address), `u32`, `i32`, `f32`. */
  readonly type: 'u64' | 'u32' | 'i32' | 'f32';
  /** Byte offset in the parameter block, its size and alignment. */
  readonly offset: number;
  readonly size: number;
  readonly align: number;
  /** For buffers: element type and access. */
  readonly element?: ElementType;
  readonly access?: BufferAccess;
}

/** A WGSL resource binding: a spec buffer, or the uniform struct holding the scalar params. */
export interface LaunchBinding {
  readonly group: number;
  readonly binding: number;
  /** The spec's buffer name, or `params` for the uniform struct. */
  readonly name: string;
  /** `scratch`: a buffer the engine allocates itself (see LaunchInfo.scratch). */
  readonly kind: 'buffer' | 'params' | 'scratch';
  /** The variable's name in the WGSL source. */
  readonly sourceName: string;
  readonly access: BufferAccess;
  readonly element?: ElementType;
}

/** One dispatch of a multi-dispatch launch. */
export interface LaunchDispatch {
  readonly entryPoint: string;
  readonly workgroupSize: readonly [number, number, number];
  /** Size expressions over the params. */
  readonly grid: readonly [string, string, string];
  /** Static shared (workgroup) memory of this entry point in bytes. */
  readonly sharedBytes: number;
}

/**
 * How to launch a generated kernel; every number an engine needs, machine-readable. A multi-dispatch
 * kernel also lists `dispatches` (to run in order, the first being the top-level fields) and the
 * `scratch` buffers to allocate before the first; every entry point takes the same parameters or
 * bindings.
 */
export interface LaunchInfo {
  readonly entryPoint: string;
  readonly workgroupSize: readonly [number, number, number];
  /** Size expressions over the params (see evaluateSizeExpression). */
  readonly grid: readonly [string, string, string];
  /** Static shared (workgroup) memory in bytes. */
  readonly sharedBytes: number;
  readonly parameters: readonly LaunchParameter[];
  /** Total bytes of the parameter block (PTX `.param` space, or WGSL's uniform struct padded to 16). */
  readonly parameterBytes: number;
  /** WGSL only: every resource binding, buffers then the params struct. */
  readonly bindings?: readonly LaunchBinding[];
  /** WGSL only: device features the source enables (`shader-f16`, `subgroups`). */
  readonly requiredFeatures?: readonly string[];
  /** Multi-dispatch kernels only: every dispatch in order, the first included. */
  readonly dispatches?: readonly LaunchDispatch[];
  /** Multi-dispatch kernels only: the scratch buffers, allocated per launch. */
  readonly scratch?: readonly LaunchScratch[];
}

/**
 * What a backend returns: the source plus everything needed to cache and launch it. `T` is the
 * backend's target type (`PtxTarget`, `WgslTarget`); the IR knows only its `kind`.
 */
export interface GeneratedShader<T extends Target = Target> {
  readonly kernelId: string;
  readonly semanticHash: string;
  readonly sourceHash: string;
  readonly cacheKey: string;
  readonly target: T;
  readonly schedule: Schedule;
  readonly source: string;
  readonly launch: LaunchInfo;
}

/** The target-independent part of LaunchInfo: workgroup size, bound grid expressions, static shared bytes. */
export function launchGeometry(
  specInput: KernelSpec,
  scheduleInput: Schedule,
): Pick<LaunchInfo, 'entryPoint' | 'workgroupSize' | 'grid' | 'sharedBytes'> {
  const spec = validateSpec(specInput);
  const schedule = scheduleSnapshot(scheduleInput, 'schedule');
  const grid = spec.launch.grid.map((axis) =>
    formatSizeExpression(bindSizeExpression(parseSizeExpression(axis), schedule)),
  ) as unknown as readonly [string, string, string];
  const sharedBytes = spec.shared.reduce(
    (total, array) =>
      total + evaluateSizeExpression(array.length, schedule) * ELEMENT_BYTES[array.element],
    0,
  );
  return {
    entryPoint: spec.entryPoint,
    workgroupSize: [evaluateSizeExpression(spec.launch.workgroupSize, schedule), 1, 1],
    grid,
    sharedBytes,
  };
}

/**
 * The launch metadata of a whole spec from that of each of its dispatches (see kernelDispatches):
 * the first dispatch's, with scratch parameters and bindings marked `scratch`, every dispatch's
 * geometry and the scratch buffers. A single-dispatch spec's launch is returned as it is.
 */
export function sequenceLaunch(
  specInput: KernelSpec,
  schedule: Schedule,
  launches: readonly LaunchInfo[],
): LaunchInfo {
  const spec = validateSpec(specInput);
  const [first] = launches;
  if (first === undefined) throw new RangeError('sequenceLaunch: no dispatches');
  if (!isMultiDispatch(spec)) return first;
  const scratch = new Set((ownField(spec, 'scratch') ?? []).map((buffer) => buffer.name));
  const parameters = first.parameters.map((parameter) =>
    parameter.kind === 'buffer' && scratch.has(parameter.name)
      ? { ...parameter, kind: 'scratch' as const }
      : parameter,
  );
  const bindings = first.bindings?.map((binding) =>
    binding.kind === 'buffer' && scratch.has(binding.name)
      ? { ...binding, kind: 'scratch' as const }
      : binding,
  );
  return {
    ...first,
    parameters,
    ...(bindings === undefined ? {} : { bindings }),
    dispatches: launches.map(({ entryPoint, workgroupSize, grid, sharedBytes }) => ({
      entryPoint,
      workgroupSize,
      grid,
      sharedBytes,
    })),
    scratch: launchScratch(spec, schedule),
  };
}

/**
 * Completes a backend's output with its hashes. The cache key covers everything that changes the
 * bytes: semantic hash, target (arch, ISA version, features), schedule and backend name@version.
 */
export function generatedShader<T extends Target>(
  specInput: KernelSpec,
  parts: {
    backend: string;
    target: T;
    schedule: Schedule;
    source: string;
    launch: LaunchInfo;
    /** The spec's semanticHash when the backend already computed it for the source header. */
    semanticHash?: string;
  },
): GeneratedShader<T> {
  const { backend, source, launch } = parts;
  // The key is computed from snapshots, so it describes exactly what is returned with it.
  const target = takeSnapshot(parts.target, 'target') as T;
  const schedule = scheduleSnapshot(parts.schedule, 'schedule');
  const spec = validateSpec(specInput);
  const hash = parts.semanticHash ?? semanticHash(spec);
  return {
    kernelId: spec.id,
    semanticHash: hash,
    sourceHash: blake3Hex(source),
    cacheKey: blake3Hex(canonicalJson({ backend, semanticHash: hash, target, schedule })),
    target,
    schedule,
    source,
    launch,
  };
}
