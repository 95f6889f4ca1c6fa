// One decode step as data: the buffers a model needs and the catalog kernel launches that turn a
// token at a position into logits and the argmax token. Runners only execute this list.
import {
  ELEMENT_BYTES,
  ForgeError,
  evaluateSizeExpression,
  type ElementType,
  type KernelSpec,
  type Schedule,
} from '@forge/ir';
import { getKernel, type Shape } from '@forge/ir/kernels';
import { ModelError, type LlamaModel, type TensorType } from './model.js';
import { GET_ROWS_KERNELS, MATVEC_KERNELS, SWIGLU_KERNELS } from './tensor-roles.js';

export { GET_ROWS_KERNELS, MATVEC_KERNELS, SWIGLU_KERNELS };

/** How the KV cache stores k and v: IEEE halves (`kv-store`, `sdpa-decode`) or f32. */
export type KvCache = 'f16' | 'f32';

/** What a buffer of the plan holds, which decides how a runner fills it. */
export type BufferRole =
  /** A model tensor, uploaded once (`tensor` names it). */
  | 'weight'
  /** The rope angle table, computed once from the hyperparameters. */
  | 'rope-table'
  /** The KV cache of a layer: zeros at first, one row written a step. */
  | 'cache'
  /** The step's input token id, written before each step. */
  | 'token'
  /** Values one launch writes and later ones read within a step. */
  | 'activation';

/** One buffer of the plan: the runners allocate it once and keep it for every step. */
export interface PlanBuffer {
  readonly name: string;
  readonly element: ElementType;
  /** Elements. */
  readonly length: number;
  readonly role: BufferRole;
  /** For role 'weight': the GGUF tensor whose bytes it holds (as u32 words unless f32). */
  readonly tensor?: string;
  /**
   * For a weight its kernel takes repacked (q6k-soa-gemv: structure-of-arrays rows): that kernel
   * and shape, whose `weights.fromNative` turns the tensor's GGUF bytes into the buffer's.
   */
  readonly layout?: { readonly kernel: string; readonly shape: Shape };
}

/** One kernel launch: a catalog kernel, its shape, schedule and which plan buffer each of its buffers is. */
export interface PlanLaunch {
  /** What the launch computes, by the GGUF name of its tensor or its role (`blk.0.attn_q`, `logits`). */
  readonly label: string;
  /** The catalog kernel id. */
  readonly kernel: string;
  /** The kernel's shape; fields in `positionOffsets` are set each step. */
  readonly shape: Shape;
  /** Shape fields that follow the step's position: field = position + offset (rope's pos, sdpa's n_kv). */
  readonly positionOffsets: Readonly<Record<string, number>>;
  /** Params other than the shape's own (rmsnorm's eps from the model). */
  readonly paramOverrides: Readonly<Record<string, number>>;
  readonly schedule: Schedule;
  /**
   * Kernel buffer name → plan buffer name; a scratch buffer is named too where launches share it
   * (see `firstDispatch`), else the runner allocates it.
   */
  readonly buffers: Readonly<Record<string, string>>;
  /**
   * The kernel's first dispatch to run: 0, or 1 where the launch before it ran the same first
   * dispatch on the same x into the same scratch (x quantized once for q, k and v, and for gate
   * and up), so only its later dispatches run.
   */
  readonly firstDispatch: number;
}

/** A whole decode step: allocate `buffers`, then per step write `token` and run `launches` in order. */
export interface DecodePlan {
  readonly model: string;
  readonly kv: KvCache;
  /** Positions the KV cache holds; a step's position is below it. */
  readonly maxCtx: number;
  readonly buffers: readonly PlanBuffer[];
  readonly launches: readonly PlanLaunch[];
  /** Plan buffers the caller reads: the token in, logits, the argmax token and its logit out. */
  readonly io: {
    readonly token: string;
    readonly logits: string;
    readonly nextToken: string;
    readonly nextLogit: string;
  };
}

/** Options of buildDecodePlan. */
export interface DecodePlanOptions {
  readonly kv: KvCache;
  /** Positions to cache; the model's context length, at most DEFAULT_MAX_CONTEXT, when omitted. */
  readonly maxCtx?: number;
}

/**
 * Positions the KV cache holds when none are asked for: a file's `context_length` is a claim (2^24
 * in a 116 KB file would size a 1.4 GB cache), so the default is the smaller of it and this.
 */
export const DEFAULT_MAX_CONTEXT = 4096;

/** Bytes of all the plan's buffers, and of its KV cache alone. */
export function planBytes(plan: DecodePlan): { total: number; cache: number } {
  let total = 0;
  let cache = 0;
  for (const buffer of plan.buffers) {
    const bytes = buffer.length * ELEMENT_BYTES[buffer.element];
    total += bytes;
    if (buffer.role === 'cache') cache += bytes;
  }
  return { total, cache };
}

/** Largest power of two at most `limit` that divides `value`. */
function powerOfTwoDividing(value: number, limit: number): number {
  let result = 1;
  while (result * 2 <= limit && value % (result * 2) === 0) result *= 2;
  return result;
}

/** Builds a plan incrementally, checking each launch's buffers against the kernel's own sizes. */
class PlanBuilder {
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
    extras: { positionOffsets?: Record<string, number>; params?: Record<string, number> } = {},
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

  /** Activation buffer `name`, created or grown to at least `length` elements. */
  private activationAtLeast(name: string, element: PlanBuffer['element'], length: number): void {
    const existing = this.buffers.get(name);
    if (existing === undefined || existing.length < length)
      this.buffers.set(name, { name, element, length, role: 'activation' });
  }

  launch(
    label: string,
    kernelId: string,
    shape: Shape,
    buffers: Readonly<Record<string, string>>,
    extras: { positionOffsets?: Record<string, number>; params?: Record<string, number> } = {},
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

/**
 * The decode step of `model` as data. Each matmul's kernel follows its tensor's type
 * (MATVEC_KERNELS), token_embd's row lookup likewise (GET_ROWS_KERNELS); `output.weight` falls back
 * to `token_embd.weight` when absent. Throws a ModelError naming a tensor no kernel takes, or a
 * shape a kernel cannot run.
 */
export function buildDecodePlan(model: LlamaModel, options: DecodePlanOptions): DecodePlan {
  const p = model.hparams;
  if (options.kv !== 'f16' && options.kv !== 'f32')
    throw new ModelError(model.file, 'kv', `'${String(options.kv)}' is not f16 or f32`);
  const maxCtx = options.maxCtx ?? Math.min(p.contextLength, DEFAULT_MAX_CONTEXT);
  if (!Number.isSafeInteger(maxCtx) || maxCtx < 1)
    throw new ModelError(model.file, 'maxCtx', `${maxCtx} is not a positive whole number`);
  const plan = new PlanBuilder(model, maxCtx);
  const [qDim, kvDim] = [p.nHead * p.headDim, p.nKvHead * p.headDim];
  const eps = { params: { eps: p.rmsEps } };
  const matvec = (label: string, tensor: string, x: string, y: string, nIn: number, n: number) =>
    plan.launch(
      label,
      plan.kernelFor(MATVEC_KERNELS, tensor, 'mat-vec'),
      { n_in: nIn, n_out: n },
      {
        w: tensor,
        x,
        y,
      },
    );
  const group = p.nHead / p.nKvHead;
  // A workgroup carries up to 4 heads of a GQA group; positions split so each split has ≥ 32.
  const attentionSchedule: Schedule = {
    heads: powerOfTwoDividing(group, 4),
    splits: Math.max(1, Math.min(32, 2 ** Math.floor(Math.log2(Math.max(1, maxCtx / 32))))),
  };
  const ropeShape = {
    n_head: p.nHead,
    n_kv_head: p.nKvHead,
    head_dim: p.headDim,
    pos: 0,
    max_ctx: maxCtx,
    neox: p.ropeMode === 'neox' ? 1 : 0,
  };
  const kvSuffix = options.kv === 'f16' ? '' : '-f32';

  plan.launch(
    'token_embd',
    plan.kernelFor(GET_ROWS_KERNELS, 'token_embd.weight', 'embedding-row'),
    { n_vocab: p.nVocab, n_embd: p.nEmbd, n_rows: 1 },
    { table: 'token_embd.weight', ids: 'token', out: 'x' },
  );
  // The residual add before a norm runs in the norm's launch (add-rmsnorm): s = a + b, y = norm(s).
  let residual: { a: string; b: string; s: string } | undefined;
  // Whether the mat-vec of `tensor` quantizes its x first (a row-streaming one: its scratch x_quant).
  const quantizesX = (tensor: string) =>
    getKernel(plan.kernelFor(MATVEC_KERNELS, tensor, 'mat-vec')).spec.scratch?.some(
      (scratch) => scratch.name === 'x_quant',
    ) === true;
  const norm = (label: string, weight: string, x: string, readers: readonly string[]) => {
    const rows = { n_embd: p.nEmbd, rows: 1 };
    const buffers = { w: weight, y: 'xn' };
    if (residual === undefined) plan.launch(label, 'rmsnorm', rows, { x, ...buffers }, eps);
    // Where a mat-vec after it quantizes x, the norm writes x quantized beside y (n_embd whole
    // groups of 128), and the mat-vecs skip that dispatch.
    else if (p.nEmbd % 128 === 0 && readers.some(quantizesX))
      plan.quantizing(label, 'add-rmsnorm-quantize', rows, { ...residual, ...buffers }, { x: 'xn', nIn: p.nEmbd }, eps); // prettier-ignore
    else plan.launch(label, 'add-rmsnorm', rows, { ...residual, ...buffers }, eps);
    residual = undefined;
  };
  for (let layer = 0; layer < p.nLayer; layer++) {
    const blk = `blk.${layer}`;
    // x is the layer's input: the embedding row, or the last layer's h + ffn_out (written here).
    const attention = ['attn_q', 'attn_k', 'attn_v'].map((name) => `${blk}.${name}.weight`);
    norm(`${blk}.attn_norm`, `${blk}.attn_norm.weight`, 'x', attention);
    matvec(`${blk}.attn_q`, `${blk}.attn_q.weight`, 'xn', 'q', p.nEmbd, qDim);
    matvec(`${blk}.attn_k`, `${blk}.attn_k.weight`, 'xn', 'k', p.nEmbd, kvDim);
    matvec(`${blk}.attn_v`, `${blk}.attn_v.weight`, 'xn', 'v', p.nEmbd, kvDim);
    const caches = { k_cache: `${blk}.k_cache`, v_cache: `${blk}.v_cache` };
    // Rope and the cache store in one launch (sdpa-decode's head_dim, a multiple of 32, fits it).
    plan.launch(
      `${blk}.rope_kv_store`,
      `rope-kv-store${kvSuffix}`,
      ropeShape,
      { q: 'q', k: 'k', v: 'v', cos_sin: 'rope_table', ...caches },
      { positionOffsets: { pos: 0 } },
    );
    const attentionShape = {
      n_head: p.nHead,
      n_kv_head: p.nKvHead,
      head_dim: p.headDim,
      n_kv: 1,
      max_ctx: maxCtx,
      window: 0,
    };
    const attentionBuffers = { q: 'q', k: caches.k_cache, v: caches.v_cache, out: 'attn' };
    const attentionExtras = { positionOffsets: { n_kv: 1 } };
    // Where the output projection quantizes its x, the combine writes it quantized beside out.
    if (options.kv === 'f16' && quantizesX(`${blk}.attn_output.weight`))
      plan.quantizing(
        `${blk}.attention`,
        'sdpa-decode-quantize',
        attentionShape,
        attentionBuffers,
        { x: 'attn', nIn: qDim },
        attentionExtras,
        attentionSchedule,
      );
    else
      plan.launch(
        `${blk}.attention`,
        `sdpa-decode${kvSuffix}`,
        attentionShape,
        attentionBuffers,
        attentionExtras,
        attentionSchedule,
      );
    matvec(`${blk}.attn_output`, `${blk}.attn_output.weight`, 'attn', 'attn_out', qDim, p.nEmbd);
    // h = x + attn_out, with the FFN's norm.
    residual = { a: 'x', b: 'attn_out', s: 'h' };
    norm(`${blk}.ffn_norm`, `${blk}.ffn_norm.weight`, 'h', [
      `${blk}.ffn_gate.weight`,
      `${blk}.ffn_up.weight`,
    ]);
    const [gate, up] = [`${blk}.ffn_gate.weight`, `${blk}.ffn_up.weight`];
    const swiglu = plan.swigluKernel(gate, up);
    if (swiglu !== undefined)
      plan.launch(
        `${blk}.ffn_gate_up`,
        swiglu,
        { n_in: p.nEmbd, n_out: p.nFf },
        { w: gate, w_up: up, x: 'xn', y: 'act' },
      );
    else {
      matvec(`${blk}.ffn_gate`, gate, 'xn', 'gate', p.nEmbd, p.nFf);
      matvec(`${blk}.ffn_up`, up, 'xn', 'up', p.nEmbd, p.nFf);
      plan.launch(`${blk}.ffn_act`, 'silu-mul', { n: p.nFf }, { gate: 'gate', up: 'up', y: 'act' });
    }
    matvec(`${blk}.ffn_down`, `${blk}.ffn_down.weight`, 'act', 'ffn_out', p.nFf, p.nEmbd);
    // x = h + ffn_out, with the next norm (the next layer's, or the output's).
    residual = { a: 'h', b: 'ffn_out', s: 'x' };
  }
  const output = model.tensors.has('output.weight') ? 'output.weight' : 'token_embd.weight';
  norm('output_norm', 'output_norm.weight', 'x', [output]);
  matvec('output', output, 'xn', 'logits', p.nEmbd, p.nVocab);
  plan.launch(
    'argmax',
    'argmax',
    { n: p.nVocab },
    { x: 'logits', index: 'next_token', value: 'next_logit' },
  );
  return {
    model: model.name,
    kv: options.kv,
    maxCtx,
    buffers: [...plan.buffers.values()],
    launches: plan.launches,
    io: { token: 'token', logits: 'logits', nextToken: 'next_token', nextLogit: 'next_logit' },
  };
}

/** A launch's shape at `position`: its position-following fields set. */
export function shapeAt(launch: PlanLaunch, position: number): Shape {
  const shape: Record<string, number> = { ...launch.shape };
  for (const [field, offset] of Object.entries(launch.positionOffsets))
    shape[field] = position + offset;
  return shape;
}

/** Every param of a launch at `position`: the kernel's params for that shape, then the overrides. */
export function paramsAt(launch: PlanLaunch, position: number): Readonly<Record<string, number>> {
  return {
    ...getKernel(launch.kernel).params(shapeAt(launch, position)),
    ...launch.paramOverrides,
  };
}
