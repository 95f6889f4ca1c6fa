import type { Stmt } from './body.js';
import type { ElementType, ParamType } from './types.js';

export type BufferAccess = 'read' | 'read_write' | 'uniform';
export const BUFFER_ACCESSES: readonly BufferAccess[] = ['read', 'read_write', 'uniform'];

export interface BufferDecl {
  readonly group: number;
  readonly binding: number;
  readonly name: string;
  readonly element: ElementType;
  readonly access: BufferAccess;
}

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

export const TARGET_KINDS = ['ptx', 'wgsl'] as const;
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

export const PTX_ARCHS = ['sm_75', 'sm_80', 'sm_86', 'sm_89', 'sm_90'] as const;
export type PtxArch = (typeof PTX_ARCHS)[number];

export const WGSL_FEATURES = ['f16', 'subgroups'] as const;
export type WgslFeature = (typeof WGSL_FEATURES)[number];

export interface PtxTarget {
  readonly kind: 'ptx';
  readonly arch: PtxArch;
  /** PTX ISA version, `"7.0"`. */
  readonly ptxVersion: string;
}

export interface WgslTarget {
  readonly kind: 'wgsl';
  readonly features: readonly WgslFeature[];
}

export type Target = PtxTarget | WgslTarget;
