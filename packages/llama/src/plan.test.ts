import { describe, expect, it } from 'vitest';
import { getKernel } from '@forge/ir/kernels';
import { TINY_LLAMA_CONFIG, withTensorType, withoutTensor } from '@forge/test-fixtures';
import {
  DEFAULT_MAX_CONTEXT,
  DecodeInputError,
  HOST_DECODE_MAX_BYTES,
  buildDecodePlan,
  openDecoder,
  openHostDecoder,
  planBytes,
  paramsAt,
  readLlamaModel,
  runsAt,
  shapeAt,
} from './index.js';
import { fixturePath, writeEditedModel } from './model-files.test-support.js';

const kernelOf = (plan: ReturnType<typeof buildDecodePlan>, label: string) =>
  plan.launches.find((launch) => launch.label === label)?.kernel;

describe('buildDecodePlan', () => {
  it('chooses each matmul and the embedding lookup by tensor type', async () => {
    const plan = buildDecodePlan(await readLlamaModel(fixturePath('q')), { kv: 'f16' });
    expect(kernelOf(plan, 'token_embd')).toBe('get-rows-q8_0');
    // q and k share Q4_K in layer 0: one mat-vec over both tensors' rows (v is Q6_K, apart).
    expect(kernelOf(plan, 'blk.0.attn_qk')).toBe('q4k-gemv');
    expect(kernelOf(plan, 'blk.0.attn_v')).toBe('q6k-soa-gemv');
    expect(kernelOf(plan, 'blk.1.attn_k')).toBe('q8_0-gemv');
    expect(kernelOf(plan, 'blk.1.attn_v')).toBe('f16-gemv');
    expect(kernelOf(plan, 'blk.1.ffn_down')).toBe('q6k-soa-gemv');
    expect(kernelOf(plan, 'output')).toBe('q6k-soa-gemv');
    // Q6_K weights are repacked at load into the layout q6k-soa-gemv reads; others stay as stored.
    const buffer = (name: string) => plan.buffers.find((candidate) => candidate.name === name);
    expect(buffer('output.weight')?.layout?.kernel).toBe('q6k-soa-gemv');
    expect(buffer('blk.0.attn_qk.weight')).toMatchObject({
      role: 'weight',
      tensors: [
        { name: 'blk.0.attn_q.weight', rows: 256 },
        { name: 'blk.0.attn_k.weight', rows: 128 },
      ],
    });
    expect(buffer('blk.0.attn_qk.weight')?.layout).toBeUndefined();
    expect(kernelOf(plan, 'blk.0.rope_kv_store')).toBe('rope-kv-store');
    expect(kernelOf(plan, 'blk.0.attention')).toBe('sdpa-decode-quantize');
    const f32 = buildDecodePlan(await readLlamaModel(fixturePath('f32')), { kv: 'f32' });
    expect(new Set(f32.launches.map((launch) => launch.kernel))).toEqual(
      new Set([
        'get-rows-f32',
        'rmsnorm',
        'f32-gemv',
        'rope-kv-store-f32',
        'sdpa-decode-f32',
        'add-rmsnorm',
        'silu-mul',
        'argmax',
      ]),
    );
  });

  it('quantizes x once for the mat-vecs that read it: in the norm before them, else in the first', async () => {
    const plan = buildDecodePlan(await readLlamaModel(fixturePath('q')), { kv: 'f16' });
    const launch = (label: string) => plan.launches.find((entry) => entry.label === label);
    const shared = (label: string) => {
      const found = launch(label);
      return [found?.kernel, found?.firstDispatch, found?.buffers['x_quant'], found?.buffers['x_factors']];
    }; // prettier-ignore
    // The first norm has no residual to add: q and k quantize x; v, by the same code, skips it.
    expect(shared('blk.0.attn_norm')).toEqual(['rmsnorm', 0, undefined, undefined]);
    expect(shared('blk.0.attn_qk')).toEqual(['q4k-gemv', 0, 'xn.x_quant', 'xn.x_factors']);
    expect(shared('blk.0.attn_v')).toEqual(['q6k-soa-gemv', 1, 'xn.x_quant', 'xn.x_factors']);
    // Every later norm writes x quantized beside it, so every mat-vec after it skips its first
    // dispatch, q8_0-gemv (scales alone, at the same words) too.
    for (const norm of ['blk.0.ffn_norm', 'blk.1.attn_norm', 'blk.1.ffn_norm', 'output_norm'])
      expect(shared(norm)).toEqual(['add-rmsnorm-quantize', 0, 'xn.x_quant', 'xn.x_factors']);
    expect(shared('blk.0.ffn_gate_up')?.slice(1)).toEqual([1, 'xn.x_quant', 'xn.x_factors']);
    expect(shared('blk.1.attn_q')?.[1]).toBe(1);
    expect(shared('blk.1.attn_k')?.slice(0, 2)).toEqual(['q8_0-gemv', 1]);
    expect(shared('output')?.slice(0, 2)).toEqual(['q6k-soa-gemv', 1]);
    // The f16 mat-vec reads y; down's x is act, which no norm wrote.
    expect(shared('blk.1.attn_v')).toEqual(['f16-gemv', 0, undefined, undefined]);
    expect(shared('blk.0.ffn_down')).toEqual(['q6k-soa-gemv', 0, 'act.x_quant', 'act.x_factors']);
    // Attention's combine quantizes out for the output projection, which skips its first dispatch.
    for (const layer of [0, 1]) {
      const [attention, projection] = [`blk.${layer}.attention`, `blk.${layer}.attn_output`];
      expect(shared(attention)).toEqual(['sdpa-decode-quantize', 0, 'attn.x_quant', 'attn.x_factors']); // prettier-ignore
      expect(shared(projection).slice(1)).toEqual([1, 'attn.x_quant', 'attn.x_factors']);
    }
    expect(plan.launches.filter((entry) => entry.firstDispatch === 1)).toHaveLength(8);
    // An f32 cache keeps sdpa-decode-f32 and the projection's own quantizing dispatch.
    const f32Cache = buildDecodePlan(await readLlamaModel(fixturePath('q')), { kv: 'f32' });
    const projection = f32Cache.launches.find((entry) => entry.label === 'blk.0.attn_output');
    expect(kernelOf(f32Cache, 'blk.0.attention')).toBe('sdpa-decode-f32');
    expect(projection?.firstDispatch).toBe(0);
    // Sized for the longest factors (n_in / 32 scales and 4 sums a group at n_embd 256).
    const buffer = plan.buffers.find((candidate) => candidate.name === 'xn.x_factors');
    expect(buffer).toMatchObject({ element: 'f32', length: (256 / 32) * 5, role: 'activation' });
    // A model whose mat-vecs never quantize x keeps the plain add-rmsnorm.
    const f32 = buildDecodePlan(await readLlamaModel(fixturePath('f32')), { kv: 'f16' });
    expect(f32.launches.some((entry) => entry.kernel === 'add-rmsnorm-quantize')).toBe(false);
  });

  it('runs gate, up and silu in one launch where gate and up are both Q4_K, apart otherwise', async () => {
    const path = fixturePath('q');
    const plan = buildDecodePlan(await readLlamaModel(path), { kv: 'f16' });
    const ffn = (entries: typeof plan.launches, layer: number) =>
      entries
        .filter((launch) => launch.label.startsWith(`blk.${layer}.ffn_`))
        .map(({ label, kernel, buffers }) => [label, kernel, buffers['w_up'], buffers['y']]);
    expect(ffn(plan.launches, 0)).toEqual([
      ['blk.0.ffn_norm', 'add-rmsnorm-quantize', undefined, 'xn'],
      ['blk.0.ffn_gate_up', 'q4k-swiglu-gemv', 'blk.0.ffn_up.weight', 'act'],
      ['blk.0.ffn_down', 'q6k-soa-gemv', undefined, 'ffn_out'],
    ]);
    expect(plan.launches.some((launch) => launch.kernel === 'silu-mul')).toBe(false);
    // Layer 1's up as Q8_0: its gate and up no longer share a kernel, so they run apart.
    const mixed = await readLlamaModel(
      writeEditedModel('q', withTensorType('blk.1.ffn_up.weight', 'q8_0')),
    );
    const apart = buildDecodePlan(mixed, { kv: 'f16' }).launches;
    expect(ffn(apart, 0).map(([, kernel]) => kernel)).toContain('q4k-swiglu-gemv');
    expect(ffn(apart, 1).map(([label, kernel]) => `${label} ${kernel}`)).toEqual([
      'blk.1.ffn_norm add-rmsnorm-quantize',
      'blk.1.ffn_gate q4k-gemv',
      'blk.1.ffn_up q8_0-gemv',
      'blk.1.ffn_act silu-mul',
      'blk.1.ffn_down q6k-soa-gemv',
    ]);
  });

  it('lists every launch in order: embedding, 10 a layer, output norm, output, argmax', async () => {
    const plan = buildDecodePlan(await readLlamaModel(fixturePath('f32')), { kv: 'f16' });
    expect(plan.launches).toHaveLength(1 + 10 * TINY_LLAMA_CONFIG.nLayer + 3);
    // Each residual add runs in the launch of the norm after it.
    const norms = plan.launches
      .filter((launch) => launch.label.endsWith('norm'))
      .map(({ label, kernel, buffers }) => [
        label,
        kernel,
        buffers['a'],
        buffers['b'],
        buffers['s'],
      ]);
    expect(norms).toEqual([
      ['blk.0.attn_norm', 'rmsnorm', undefined, undefined, undefined],
      ['blk.0.ffn_norm', 'add-rmsnorm', 'x', 'attn_out', 'h'],
      ['blk.1.attn_norm', 'add-rmsnorm', 'h', 'ffn_out', 'x'],
      ['blk.1.ffn_norm', 'add-rmsnorm', 'x', 'attn_out', 'h'],
      ['output_norm', 'add-rmsnorm', 'h', 'ffn_out', 'x'],
    ]);
    expect(plan.launches.some((launch) => launch.kernel === 'add')).toBe(false);
    expect(plan.launches.slice(0, 4).map((launch) => launch.label)).toEqual([
      'token_embd',
      'blk.0.attn_norm',
      'blk.0.attn_qkv',
      'blk.0.rope_kv_store',
    ]);
    expect(plan.launches.at(-1)?.label).toBe('argmax');
    // Every launch's buffers are plan buffers of the kernel's own sizes at the last position.
    const buffers = new Map(plan.buffers.map((buffer) => [buffer.name, buffer]));
    for (const launch of plan.launches) {
      const kernel = getKernel(launch.kernel);
      const lengths = kernel.bufferLengths(shapeAt(launch, plan.maxCtx - 1));
      for (const declared of kernel.spec.buffers) {
        const buffer = buffers.get(launch.buffers[declared.name] ?? '');
        expect(buffer?.length, `${launch.label} ${declared.name}`).toBe(lengths[declared.name]);
        expect(buffer?.element).toBe(declared.element);
      }
    }
    expect(buffers.get('blk.1.k_cache')?.length).toBe((64 * 2 * 64) / 2);
  });

  it('takes the position-following fields and the model eps as params', async () => {
    const plan = buildDecodePlan(await readLlamaModel(fixturePath('f32')), {
      kv: 'f16',
      maxCtx: 32,
    });
    const launch = (label: string) => plan.launches.find((entry) => entry.label === label)!;
    expect(paramsAt(launch('blk.0.rope_kv_store'), 7)).toMatchObject({
      pos: 7,
      max_ctx: 32,
      neox: 0,
    });
    expect(paramsAt(launch('blk.0.attention'), 7)).toMatchObject({
      n_kv: 8,
      max_ctx: 32,
      window: 0,
    });
    expect(paramsAt(launch('blk.0.attn_norm'), 7)['eps']).toBe(Math.fround(1e-5));
    expect(plan.buffers.find((buffer) => buffer.name === 'rope_table')?.length).toBe(32 * 64);
  });

  it('runs q with the k and v of its type as one mat-vec, writing views of one buffer', async () => {
    const plan = buildDecodePlan(await readLlamaModel(fixturePath('f32')), { kv: 'f16' });
    const joined = plan.launches.find((launch) => launch.label === 'blk.1.attn_qkv');
    expect(joined).toMatchObject({
      kernel: 'f32-gemv',
      shape: { n_in: 256, n_out: 512 },
      buffers: { w: 'blk.1.attn_qkv.weight', x: 'xn', y: 'qkv' },
    });
    expect(plan.launches.some((launch) => /attn_[qkv]$/.test(launch.label))).toBe(false);
    const buffer = (name: string) => plan.buffers.find((candidate) => candidate.name === name);
    expect(buffer('qkv')).toMatchObject({ length: 512, role: 'activation' });
    expect(buffer('qkv')?.view).toBeUndefined();
    for (const [name, offset, length] of [
      ['q', 0, 256],
      ['k', 256, 128],
      ['v', 384, 128],
      ['qk', 0, 384],
    ] as const)
      expect(buffer(name)).toMatchObject({ length, view: { of: 'qkv', offset } });
    // Views take no bytes of their own.
    const owned = plan.buffers.filter((entry) => entry.view === undefined);
    expect(planBytes(plan).total).toBe(owned.reduce((sum, entry) => sum + entry.length * 4, 0));
    // Layer 1 of the quantized model has three types: three mat-vecs.
    const q = buildDecodePlan(await readLlamaModel(fixturePath('q')), { kv: 'f16' });
    const labels = q.launches.map((launch) => launch.label);
    expect(labels.filter((label) => /^blk\.1\.attn_[qkv]+$/.test(label))).toEqual([
      'blk.1.attn_q',
      'blk.1.attn_k',
      'blk.1.attn_v',
    ]);
  });

  it('falls back to token_embd for a model without output.weight', async () => {
    const model = await readLlamaModel(writeEditedModel('q', withoutTensor('output.weight')));
    const plan = buildDecodePlan(model, { kv: 'f16' });
    const output = plan.launches.find((launch) => launch.label === 'output');
    expect(output?.kernel).toBe('q8_0-gemv');
    expect(output?.buffers['w']).toBe('token_embd.weight');
  });

  it('names a tensor whose type no kernel takes (a model built by hand; files are refused on reading)', async () => {
    const model = await readLlamaModel(fixturePath('q'));
    const tensors = new Map(model.tensors);
    const gate = tensors.get('blk.1.ffn_gate.weight');
    if (gate !== undefined) tensors.set(gate.name, { ...gate, type: 'q4_0' });
    expect(() => buildDecodePlan({ ...model, tensors }, { kv: 'f16' })).toThrow(
      /blk\.1\.ffn_gate\.weight: type q4_0 has no Forge mat-vec kernel \(types with one: f32, f16, q8_0, q4_K, q6_K\)/,
    );
    await expect(
      readLlamaModel(writeEditedModel('q', withTensorType('blk.1.ffn_gate.weight', 'q4_0'))),
    ).rejects.toThrow(/blk\.1\.ffn_gate\.weight: type q4_0 has no Forge mat-vec kernel/);
  });

  it("caches min(context_length, DEFAULT_MAX_CONTEXT) positions unless asked: a file's claim sizes nothing", async () => {
    const model = await readLlamaModel(fixturePath('f32'));
    const huge = { ...model, hparams: { ...model.hparams, contextLength: 2 ** 24 } };
    const plan = buildDecodePlan(huge, { kv: 'f16' });
    expect(plan.maxCtx).toBe(DEFAULT_MAX_CONTEXT);
    const { cache, total } = planBytes(plan);
    const p = model.hparams;
    // k and v per layer, f16 pairs in u32 words.
    expect(cache).toBe(2 * p.nLayer * DEFAULT_MAX_CONTEXT * p.nKvHead * p.headDim * 2);
    expect(total).toBeGreaterThan(cache);
    expect(buildDecodePlan(model, { kv: 'f16' }).maxCtx).toBe(
      Math.min(p.contextLength, DEFAULT_MAX_CONTEXT),
    );
    expect(buildDecodePlan(huge, { kv: 'f16', maxCtx: 8192 }).maxCtx).toBe(8192);
  });

  it('runs attention on a short-range schedule below attentionLongFrom and a long-range one from it on', async () => {
    const model = await readLlamaModel(fixturePath('q'));
    const attention = (plan: ReturnType<typeof buildDecodePlan>) =>
      plan.launches.filter((launch) => launch.label.startsWith('blk.0.attention'));
    const split = buildDecodePlan(model, { kv: 'f16', attentionLongFrom: 8 });
    const [short, long] = attention(split);
    expect(attention(split)).toHaveLength(2);
    // Up to 2 heads a workgroup on short ranges; up to 4 (the fixture's group is 2) and up to 64
    // splits on long ones.
    expect(short).toMatchObject({
      label: 'blk.0.attention.short',
      kernel: 'sdpa-decode-quantize',
      positions: { below: 8 },
      schedule: { warps: 4, heads: 2 },
    });
    expect(long).toMatchObject({ label: 'blk.0.attention.long', positions: { from: 8 } });
    const splits = Math.min(64, 2 ** Math.floor(Math.log2(split.maxCtx / 32)));
    expect(long?.schedule).toEqual({ warps: 4, heads: 2, splits });
    // Exactly one of them runs at each step.
    for (const position of [0, 7, 8, 63])
      expect(attention(split).filter((launch) => runsAt(launch, position))).toHaveLength(1);
    expect(short !== undefined && runsAt(short, 7) && !runsAt(short, 8)).toBe(true);
    // A cache shorter than the switch holds short ranges only: one launch, every step.
    const [only, ...rest] = attention(buildDecodePlan(model, { kv: 'f16' }));
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ label: 'blk.0.attention', schedule: { warps: 4, heads: 2 } });
    expect(only?.positions).toBeUndefined();
    for (const bad of [0, 2.5, Number.NaN])
      expect(() => buildDecodePlan(model, { kv: 'f16', attentionLongFrom: bad })).toThrow(
        new RegExp(`attentionLongFrom: ${bad} is not a positive whole number`),
      );
  });

  it("refuses a plan past the CPU engines' memory limit in one line giving the bytes, before allocating", async () => {
    const model = await readLlamaModel(fixturePath('f32'));
    const plan = buildDecodePlan(model, { kv: 'f32', maxCtx: 2 ** 20 });
    const { total, cache } = planBytes(plan);
    expect(() => openHostDecoder(model, plan, 'interp', { maxBytes: total - 1 })).toThrow(
      new RegExp(
        `^the plan's buffers need ${total} bytes, ${cache} of them the KV cache of 1048576 positions, over the ${total - 1}-byte limit of the interp engine; a smaller context \\(--ctx\\) needs less$`,
      ),
    );
    expect(HOST_DECODE_MAX_BYTES).toBe(4 * 2 ** 30);
  });

  it('names a shape a kernel cannot take, and a bad kv or maxCtx', async () => {
    const model = await readLlamaModel(fixturePath('f32'));
    // head_dim 64 is fine; a cache of 2^26 positions overflows sdpa-decode's 32-bit offsets.
    expect(() => buildDecodePlan(model, { kv: 'f32', maxCtx: 2 ** 26 })).toThrow(
      /blk\.0\..*max_ctx/,
    );
    expect(() => buildDecodePlan(model, { kv: 'f8' as 'f16' })).toThrow(/kv: 'f8'/);
    expect(() => buildDecodePlan(model, { kv: 'f16', maxCtx: 0 })).toThrow(/maxCtx/);
  });
});

describe('a decoder', () => {
  it('refuses a token outside the vocabulary and a position past the cache', async () => {
    const decoder = await openDecoder(await readLlamaModel(fixturePath('f32')), {
      target: 'interp',
      kv: 'f16',
      maxCtx: 2,
    });
    await expect(decoder.step(256, 0)).rejects.toThrow(DecodeInputError);
    await expect(decoder.step(1, 1)).rejects.toThrow(/position: 1 is not from 0 to 0/);
    await decoder.step(1, 0);
    await decoder.step(2, 1);
    await expect(decoder.step(3, 2)).rejects.toThrow(/past the cache's 2 positions/);
    decoder.close();
  });
});
