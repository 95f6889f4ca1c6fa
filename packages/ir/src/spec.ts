import type { Stmt } from './body.js';
import type { ElementType, ParamType } from './types.js';

/**
 * How a kernel uses a buffer. Only `read_write` buffers may be stored to; `read` and `uniform` ones
 * must not change while the kernel runs (PTX reads them through the non-coherent cache, WGSL binds
 * both as read-only storage).
 */
export type BufferAccess = 'read' | 'read_write' | 'uniform';
/** Every BufferAccess. */
export const BUFFER_ACCESSES: readonly BufferAccess[] = ['read', 'read_write', 'uniform'];

/**
 * A global buffer of `element` values. `group` (0-3) and `binding` place it for WGSL and must be
 * unique; PTX takes buffers as 64-bit addresses, in declaration order, ahead of the scalar params.
 */
export interface BufferDecl {
  readonly group: number;
  readonly binding: number;
  readonly name: string;
  readonly element: ElementType;
  readonly access: BufferAccess;
}

/**
 * A scalar launch parameter. Its name is how bodies and size expressions refer to it; u32 params
 * may appear in the launch grid.
 */
export interface ParamDecl {
  readonly name: string;
  readonly type: ParamType;
}

/** A workgroup array; `length` is a size expression over schedule knobs (`"workgroup_size / 32"`). */
export interface SharedDecl {
  readonly name: string;
  readonly element: ElementType;
  readonly length: string;
}

/** The backends Forge renders to; schedule knob bounds are given for each. */
export const TARGET_KINDS = ['ptx', 'wgsl'] as const;
/** A backend; see TARGET_KINDS. */
export type TargetKind = (typeof TARGET_KINDS)[number];

/** Inclusive bounds of a schedule knob on one target kind. */
export interface KnobBounds {
  readonly min: number;
  readonly max: number;
  /** The value must be a multiple of this. */
  readonly multipleOf?: number;
  readonly powerOfTwo?: boolean;
}

/** A tunable of the kernel (workgroup size, rows per workgroup…), a u32 fixed at emission. */
export interface ScheduleKnob {
  readonly name: string;
  readonly description: string;
  readonly default: number;
  readonly bounds: Readonly<Record<TargetKind, KnobBounds>>;
}

/**
 * How an engine launches the kernel. Both are size expressions: numbers, `+ - * /`, parentheses,
 * `ceil_div(a, b)`, `min(a, b)`, `max(a, b)`; the workgroup size over schedule knobs only, the grid
 * over u32 params and schedule knobs.
 */
export interface LaunchSpec {
  readonly workgroupSize: string;
  readonly grid: readonly [string, string, string];
}

/** A kernel: plain JSON-round-trippable data; its canonical JSON is what `semanticHash` covers. */
export interface KernelSpec {
  readonly id: string;
  /** Bumped whenever what the kernel computes changes. */
  readonly semanticVersion: number;
  readonly entryPoint: string;
  readonly description: string;
  readonly buffers: readonly BufferDecl[];
  readonly params: readonly ParamDecl[];
  readonly shared: readonly SharedDecl[];
  readonly schedule: readonly ScheduleKnob[];
  readonly launch: LaunchSpec;
  readonly body: readonly Stmt[];
}

/** Chosen values of a kernel's schedule knobs. */
export type Schedule = Readonly<Record<string, number>>;

/** The NVIDIA architectures the PTX backend targets (Turing sm_75 to Hopper sm_90). */
export const PTX_ARCHS = ['sm_75', 'sm_80', 'sm_86', 'sm_89', 'sm_90'] as const;
/** A supported NVIDIA architecture; see PTX_ARCHS. */
export type PtxArch = (typeof PTX_ARCHS)[number];

/**
 * Optional WGSL features: `f16` (the `shader-f16` device feature, needed for any f16 in a spec) and
 * `subgroups` (lets warp operations use subgroup shuffles where the hardware subgroup allows).
 */
export const WGSL_FEATURES = ['f16', 'subgroups'] as const;
/** An optional WGSL feature; see WGSL_FEATURES. */
export type WgslFeature = (typeof WGSL_FEATURES)[number];

/**
 * A PTX target; `ptxTarget(arch)` in @forge/ptx builds it with the lowest ISA version the arch
 * needs. Part of every cache key.
 */
export interface PtxTarget {
  readonly kind: 'ptx';
  readonly arch: PtxArch;
  /** PTX ISA version, `"7.0"`. */
  readonly ptxVersion: string;
}

/**
 * A WGSL target: the device features the emitted shader may use (in WGSL_FEATURES order, no
 * duplicates, as `wgslTarget` in @forge/wgsl builds it). Part of every cache key.
 */
export interface WgslTarget {
  readonly kind: 'wgsl';
  readonly features: readonly WgslFeature[];
}

/** Where a kernel is emitted to: PTX for one architecture, or WGSL with a feature set. */
export type Target = PtxTarget | WgslTarget;
