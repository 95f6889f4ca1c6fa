// The plan under construction: buffers by name and launches in order, each launch checked against
// its kernel's own sizes, and the quantized x a launch can reuse instead of its first dispatch.
import { ForgeError, evaluateSizeExpression, type KernelSpec, type Schedule } from '@forge/ir';
import { getKernel, type Shape } from '@forge/ir/kernels';
import { ModelError, type LlamaModel, type TensorType } from './model.js';
import type { BufferRole, LaunchPositions, PlanBuffer, PlanLaunch } from './plan.js';
import { SWIGLU_KERNELS } from './tensor-roles.js';

/** Builds a plan incrementally, checking each launch's buffers against the kernel's own sizes. */
/** A launch's fields past its kernel, shape, buffers and schedule: see PlanLaunch. */
interface LaunchExtras {
  readonly positionOffsets?: Record<string, number>;
  readonly params?: Record<string, number>;
  readonly positions?: LaunchPositions;
}

export class PlanBuilder {
  readonly buffers = new Map<string, PlanBuffer>();
  readonly launches: PlanLaunch[] = [];
  /** The first dispatch of the last launch, as sharedScratch compares it (undefined: none to share). */
  private previousFirstDispatch: string | undefined;
  /** x and n_in whose quantized words and factors a norm wrote beside it (add-rmsnorm-quantize). */
  private quantizedBy: { readonly x: string; readonly nIn: number } | undefined;
  constructor(
    readonly model: LlamaModel,
    /** Positions the cache holds: shapes are checked at the last one. */
    readonly maxCtx: number,
  ) {}

  kernelFor(table: Readonly<Partial<Record<TensorType, string>>>, tensor: string, what: string) {
    const type = this.model.tensors.get(tensor)?.type;
    const kernel = type === undefined ? undefined : table[type];
    if (type === undefined) throw new ModelError(this.model.file, tensor, 'missing from the file');
    if (kernel === undefined)
      throw new ModelError(
        this.model.file,
        tensor,
        `type ${type} has no Forge ${what} kernel (types with one: ${Object.keys(table).join(', ')})`,
      );
    return kernel;
  }

  /** The SwiGLU kernel taking both tensors in one launch, when they share a type that has one. */
  swigluKernel(gate: string, up: string): string | undefined {
    const type = this.model.tensors.get(gate)?.type;
    if (type === undefined || this.model.tensors.get(up)?.type !== type) return undefined;
    return SWIGLU_KERNELS[type];
  }

  /**
   * A launch that writes `x` (a norm's y, attention's out) and, beside it, x quantized as the
   * row-streaming mat-vecs quantize x (n_in values): the mat-vecs reading x next skip their first
   * dispatch.
   */
  quantizing(
    label: string,
    kernelId: string,
    shape: Shape,
    buffers: Record<string, string>,
    quantized: { readonly x: string; readonly nIn: number },
    extras: LaunchExtras = {},
    schedule: Schedule = {},
  ): void {
    const names = { x_quant: `${quantized.x}.x_quant`, x_factors: `${quantized.x}.x_factors` };
    const kernel = getKernel(kernelId);
    const lengths = kernel.bufferLengths(shape);
    // A mat-vec without sums of 8 may have made the factors shorter: they grow to the full layout.
    for (const declared of kernel.spec.buffers)
      if (declared.name === 'x_quant' || declared.name === 'x_factors')
        this.activationAtLeast(names[declared.name], declared.element, lengths[declared.name] ?? 0);
    this.launch(label, kernelId, shape, { ...buffers, ...names }, extras, schedule);
    this.quantizedBy = quantized;
  }

  /** Activation buffer `name` as `length` f32 elements of `of` from `offset`: see PlanBuffer.view. */
  view(name: string, of: string, offset: number, length: number): void {
    const view = { of, offset };
    this.buffers.set(name, { name, element: 'f32', length, role: 'activation', view });
  }

  /** Weight buffer `name`: the rows of `tensors` one after another, as `kernelId` takes n_out rows. */
  joinedWeight(name: string, kernelId: string, nIn: number, tensors: readonly string[]): number {
    const rows = tensors.map((tensor) => ({
      name: tensor,
      rows: this.model.tensors.get(tensor)?.ne[1] ?? 0,
    }));
    const nOut = rows.reduce((total, part) => total + part.rows, 0);
    const kernel = getKernel(kernelId);
    const declared = kernel.spec.buffers.find((buffer) => buffer.name === 'w');
    const length = kernel.bufferLengths({ n_in: nIn, n_out: nOut })['w'] ?? 0;
    const element = declared?.element ?? 'u32';
    this.buffers.set(name, { name, element, length, role: 'weight', tensors: rows });
    return nOut;
  }

  /** Activation buffer `name`, created or grown to at least `length` elements. */
  activationAtLeast(name: string, element: PlanBuffer['element'], length: number): void {
    const existing = this.buffers.get(name);
    if (existing === undefined || existing.length < length)
      this.buffers.set(name, { name, element, length, role: 'activation' });
  }

  launch(
    label: string,
    kernelId: string,
    shape: Shape,
    buffers: Readonly<Record<string, string>>,
    extras: LaunchExtras = {},
    schedule: Schedule = {},
  ): void {
    const kernel = getKernel(kernelId);
    const positionOffsets = extras.positionOffsets ?? {};
    // Checked at the last position, where the position-dependent fields are largest.
    const last = { ...shape };
    for (const [field, offset] of Object.entries(positionOffsets))
      last[field] = this.maxCtx - 1 + offset;
    try {
      kernel.checkShape?.(last);
    } catch (error) {
      if (!(error instanceof ForgeError)) throw error;
      throw new ModelError(this.model.file, label, `${kernelId} cannot take it: ${error.message}`);
    }
    const lengths = kernel.bufferLengths(last);
    for (const declared of kernel.spec.buffers) {
      const name = buffers[declared.name];
      const length = lengths[declared.name];
      if (name === undefined || length === undefined)
        throw new ForgeError(`${label}: ${kernelId}'s buffer ${declared.name} is not bound`);
      const existing = this.buffers.get(name);
      if (existing === undefined) {
        const tensor = this.model.tensors.has(name) ? { tensor: name } : {};
        // A kernel that reads its weights repacked says how (the buffer holds its layout).
        const repacked =
          this.model.tensors.has(name) &&
          kernel.weights?.buffer === declared.name &&
          kernel.weights.fromNative !== undefined;
        this.buffers.set(name, {
          name,
          element: declared.element,
          length,
          role: this.roleOf(name),
          ...tensor,
          ...(repacked ? { layout: { kernel: kernelId, shape: last } } : {}),
        });
      } else if (existing.element !== declared.element || existing.length !== length) {
        throw new ForgeError(
          `${label}: ${kernelId}'s ${declared.name} takes ${length} ${declared.element}, but ${name} holds ${existing.length} ${existing.element}`,
        );
      }
    }
    const shared = this.sharedScratch(kernel.spec, shape, buffers, schedule);
    // A launch binding the quantized x other than as a mat-vec's x (writing it) ends its validity.
    if (this.quantizedBy !== undefined && Object.values(buffers).includes(this.quantizedBy.x))
      if (buffers['x'] !== this.quantizedBy.x) this.quantizedBy = undefined;
    this.launches.push({
      label,
      kernel: kernelId,
      shape,
      positionOffsets,
      paramOverrides: extras.params ?? {},
      schedule,
      ...(extras.positions === undefined ? {} : { positions: extras.positions }),
      buffers: { ...buffers, ...shared?.buffers },
      firstDispatch: shared?.firstDispatch ?? 0,
    });
  }

  /**
   * A row-streaming mat-vec's first dispatch only quantizes x into scratch: its scratch becomes
   * plan buffers named after x, and a launch right after one whose first dispatch is the same code
   * on the same x and n_in reads them and skips its own.
   */
  private sharedScratch(
    spec: KernelSpec,
    shape: Shape,
    buffers: Readonly<Record<string, string>>,
    schedule: Schedule,
  ): { buffers: Record<string, string>; firstDispatch: number } | undefined {
    const x = buffers['x'];
    // Its scratch x_quant marks the row-streaming mat-vec, whose first dispatch writes scratch only.
    const quantizes = spec.scratch?.some((scratch) => scratch.name === 'x_quant') === true;
    const key =
      x === undefined || !quantizes
        ? undefined
        : JSON.stringify([spec.body, spec.launch, spec.scratch, spec.params, shape['n_in'], x]);
    const normQuantized =
      this.quantizedBy !== undefined &&
      this.quantizedBy.x === x &&
      this.quantizedBy.nIn === shape['n_in'];
    const reuse = key !== undefined && (key === this.previousFirstDispatch || normQuantized);
    this.previousFirstDispatch = key;
    if (x === undefined || key === undefined) return undefined;
    const sizes: Record<string, number> = { ...getKernel(spec.id).params(shape) };
    for (const knob of spec.schedule) sizes[knob.name] = schedule[knob.name] ?? knob.default;
    const names: Record<string, string> = {};
    for (const scratch of spec.scratch ?? []) {
      const name = `${x}.${scratch.name}`;
      const length = evaluateSizeExpression(scratch.length, sizes);
      // Kernels with and without x's sums of 8 keep the same words; the longer factors win.
      this.activationAtLeast(name, scratch.element, length);
      names[scratch.name] = name;
    }
    return { buffers: names, firstDispatch: reuse ? 1 : 0 };
  }

  private roleOf(name: string): BufferRole {
    if (this.model.tensors.has(name)) return 'weight';
    if (name === 'rope_table') return 'rope-table';
    if (name.endsWith('_cache')) return 'cache';
    if (name === 'token') return 'token';
    return 'activation';
  }
}
