// One decode step as data: the buffers a model needs and the catalog kernel launches that turn a
// token at a position into logits and the argmax token. Runners only execute this list.
import { ELEMENT_BYTES, type ElementType, type Schedule } from '@forge/ir';
import { getKernel, type Shape } from '@forge/ir/kernels';
import { ModelError, type LlamaModel } from './model.js';
import { PlanBuilder } from './plan-builder.js';
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
   * For role 'weight' instead of `tensor`: tensors of one type whose rows it holds one after
   * another (q, k and v projections run as one mat-vec), each with its row count.
   */
  readonly tensors?: readonly { readonly name: string; readonly rows: number }[];
  /**
   * A view: the buffer's `length` elements are those of plan buffer `of` from element `offset` (a
   * multiple of 64, 256 bytes, WebGPU's binding offset alignment). Runners allocate `of` alone.
   */
  readonly view?: { readonly of: string; readonly offset: number };
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
   * The steps it runs at, `from` ≤ position < `below` (a bound absent: open); absent, every step.
   * Decode attention has a launch for short ranges and one for long ones (see runsAt).
   */
  readonly positions?: LaunchPositions;
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

/** The positions a launch runs at: `from` ≤ position < `below`. */
export interface LaunchPositions {
  readonly from?: number;
  readonly below?: number;
}

/** Whether `launch` runs at the step at `position`. */
export function runsAt(launch: PlanLaunch, position: number): boolean {
  const { from = 0, below = Number.POSITIVE_INFINITY } = launch.positions ?? {};
  return position >= from && position < below;
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
  /**
   * The position from which decode attention takes its long-range schedule
   * (ATTENTION_LONG_FROM when omitted); the steps before it take the short-range one.
   */
  readonly attentionLongFrom?: number;
}

/**
 * Where decode attention switches schedules (n_kv = position + 1). H200 timing model, Llama-3-8B's
 * 32/8 heads of 128, main + combine, 4 warps with 2 heads and 32 splits against 4 heads and 64
 * splits: n_kv 256 3.86 / 5.23 µs, 1024 4.41 / 5.49, 2048 5.88 / 6.55, 4096 8.78 / 8.75, 8192
 * 14.57 / 12.63, 32768 49.33 / 35.79.
 */
export const ATTENTION_LONG_FROM = 4096;

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
    if (buffer.view !== undefined) continue;
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
  const longFrom = options.attentionLongFrom ?? ATTENTION_LONG_FROM;
  if (!Number.isSafeInteger(longFrom) || longFrom < 1)
    throw new ModelError(
      model.file,
      'attentionLongFrom',
      `${longFrom} is not a positive whole number`,
    );
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
  // Positions split so each split has ≥ 32. Short ranges (below longFrom) take up to 2 heads of a
  // GQA group a workgroup: twice the workgroups, each with fewer registers; long ones 4 heads, which
  // share each K/V load among more of them, and up to 64 splits.
  const splitsUpTo = (most: number) =>
    Math.max(1, Math.min(most, 2 ** Math.floor(Math.log2(Math.max(1, maxCtx / 32)))));
  const short: Schedule = { warps: 4, heads: powerOfTwoDividing(group, 2), splits: splitsUpTo(32) };
  const long: Schedule = { warps: 4, heads: powerOfTwoDividing(group, 4), splits: splitsUpTo(64) };
  const attentionSchedules: { positions?: LaunchPositions; schedule: Schedule; part: string }[] =
    longFrom >= maxCtx
      ? [{ schedule: short, part: '' }]
      : [
          { positions: { below: longFrom }, schedule: short, part: '.short' },
          { positions: { from: longFrom }, schedule: long, part: '.long' },
        ];
  const ropeShape = {
    n_head: p.nHead,
    n_kv_head: p.nKvHead,
    head_dim: p.headDim,
    pos: 0,
    max_ctx: maxCtx,
    neox: p.ropeMode === 'neox' ? 1 : 0,
  };
  const kvSuffix = options.kv === 'f16' ? '' : '-f32';

  // q, k and v are views of one buffer (where each starts 256 bytes aligned, as WebGPU binds), so
  // projections of one type can run as one mat-vec writing all of them.
  const joinable = qDim % 64 === 0 && kvDim % 64 === 0;
  if (joinable) {
    plan.activationAtLeast('qkv', 'f32', qDim + 2 * kvDim);
    plan.view('qk', 'qkv', 0, qDim + kvDim);
    plan.view('q', 'qkv', 0, qDim);
    plan.view('k', 'qkv', qDim, kvDim);
    plan.view('v', 'qkv', qDim + kvDim, kvDim);
  }
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
    // q and the k and v after it of the same type and kernel run as one mat-vec over their rows
    // one after another (native layouts only, whose rows concatenate), writing those views at once.
    const kernels = attention.map((tensor) => plan.kernelFor(MATVEC_KERNELS, tensor, 'mat-vec'));
    const types = attention.map((tensor) => model.tensors.get(tensor)?.type);
    const [kernel = '', type] = [kernels[0], types[0]];
    const native = getKernel(kernel).weights?.fromNative === undefined;
    const joins = (index: number) =>
      joinable && native && kernels[index] === kernel && types[index] === type;
    const joined = !joins(1) ? 0 : joins(2) ? 3 : 2;
    const names = ['q', 'k', 'v'];
    if (joined > 0) {
      const y = names.slice(0, joined).join('');
      const weight = `${blk}.attn_${y}.weight`;
      const nOut = plan.joinedWeight(weight, kernel, p.nEmbd, attention.slice(0, joined));
      const buffers = { w: weight, x: 'xn', y };
      plan.launch(`${blk}.attn_${y}`, kernel, { n_in: p.nEmbd, n_out: nOut }, buffers);
    }
    names.slice(joined).forEach((name, index) => {
      const tensor = attention[joined + index] ?? '';
      matvec(`${blk}.attn_${name}`, tensor, 'xn', name, p.nEmbd, name === 'q' ? qDim : kvDim);
    });
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
    for (const { positions, schedule, part } of attentionSchedules) {
      const extras = { positionOffsets: { n_kv: 1 }, ...(positions === undefined ? {} : { positions }) }; // prettier-ignore
      // Where the output projection quantizes its x, the combine writes it quantized beside out.
      if (options.kv === 'f16' && quantizesX(`${blk}.attn_output.weight`))
        plan.quantizing(
          `${blk}.attention${part}`,
          'sdpa-decode-quantize',
          attentionShape,
          attentionBuffers,
          { x: 'attn', nIn: qDim },
          extras,
          schedule,
        );
      else
        plan.launch(
          `${blk}.attention${part}`,
          `sdpa-decode${kvSuffix}`,
          attentionShape,
          attentionBuffers,
          extras,
          schedule,
        );
    }
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
