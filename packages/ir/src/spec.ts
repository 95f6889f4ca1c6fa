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

/**
 * A target kind: the name a backend goes by (`ptx`, `wgsl`), which keys a knob's bounds. The IR
 * knows no list of them, so a new backend needs no edit here or in any kernel.
 */
export const TARGET_KIND_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;
/** TARGET_KIND_PATTERN in words, for messages. */
export const TARGET_KIND_RULE =
  "a lowercase letter, then up to 31 lowercase letters, digits or '_'";

/** Inclusive bounds of a schedule knob on one target kind. */
export interface KnobBounds {
  readonly min: number;
  readonly max: number;
  /** The value must be a multiple of this. */
  readonly multipleOf?: number;
  readonly powerOfTwo?: boolean;
}

/**
 * A knob's bounds per target kind (`{ ptx: {...}, wgsl: {...} }`), each optional: a kind without
 * bounds takes any value the basic rule (an integer in [1, 2^20]) and the backend's limits allow.
 * There are no target-independent bounds: what holds everywhere is that basic rule, what the body
 * needs (a warp multiple for warp ops) or a backend's limit; tuning ranges are per backend.
 * Bounds only say which schedules a target accepts, so `semanticHash` leaves them out.
 */
export type ScheduleBounds = Readonly<Partial<Record<string, KnobBounds>>>;

/** A tunable of the kernel (workgroup size, rows per workgroup…), a u32 fixed at emission. */
export interface ScheduleKnob {
  readonly name: string;
  readonly description: string;
  readonly default: number;
  /** Absent means `{}`: no target kind narrows the basic rule. */
  readonly bounds?: ScheduleBounds;
}

/**
 * How an engine launches the kernel. Both are size expressions: numbers, `+ - * /`, parentheses,
 * `ceil_div(a, b)`, `min(a, b)`, `max(a, b)`; the workgroup size over schedule knobs only, the grid
 * over u32 params and schedule knobs.
 */
export interface LaunchSpec {
  readonly workgroupSize: string;
  readonly grid: readonly [string, string, string];
  /**
   * PTX only: the most registers a thread may take (`.maxnreg`), a size expression over schedule
   * knobs that must come to a value in MAX_REGISTERS_RANGE, so more workgroups fit an SM where a
   * kernel waits on memory; WGSL has no such control. Absent: ptxas takes what it wants, up to 255.
   */
  readonly maxRegisters?: string;
}

/** The `launch.maxRegisters` values: ptxas's lower limit for `.maxnreg`, and its 255 a thread. */
export const MAX_REGISTERS_RANGE = { min: 24, max: 255 } as const;

/**
 * A read_write storage buffer the engine allocates for each launch of a multi-dispatch op (partial
 * results one dispatch hands to the next). Bound like a buffer (its group/binding unique among
 * buffers and scratch; in PTX a `.param .u64` after the buffers); `length` is a size expression
 * over u32 params and schedule knobs. Its contents are undefined when the launch starts: a
 * dispatch must write an element before any dispatch reads it.
 */
export interface ScratchDecl {
  readonly group: number;
  readonly binding: number;
  readonly name: string;
  readonly element: ElementType;
  readonly length: string;
}

/**
 * A further dispatch of the kernel, run after the first (the spec's own entry point) and the stages
 * before it, over the same buffers, scratch, params and schedule; its shared arrays are its own.
 */
export interface StageSpec {
  readonly entryPoint: string;
  readonly shared: readonly SharedDecl[];
  readonly launch: LaunchSpec;
  readonly body: readonly Stmt[];
}

/**
 * A kernel: plain JSON-round-trippable data; its canonical JSON, less the knobs' bounds, is what
 * `semanticHash` covers. Without `scratch` and `stages` it is one dispatch; with `stages` it is a
 * sequence of dispatches (see kernelDispatches).
 */
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
  /** Buffers the engine allocates per launch; absent means none. */
  readonly scratch?: readonly ScratchDecl[];
  /** Dispatches run in order after the first; absent means the kernel is one dispatch. */
  readonly stages?: readonly StageSpec[];
}

/** Chosen values of a kernel's schedule knobs. */
export type Schedule = Readonly<Record<string, number>>;

/**
 * Where a kernel is emitted to, as the IR sees it: a target kind and the backend's own fields
 * (`arch` for PTX, `features` for WGSL), which the backend defines and checks. Part of every cache key.
 */
export interface Target {
  readonly kind: string;
}
