/// <reference types="webgpu" preserve="true" />
// Runs a decode plan on WebGPU: weights uploaded once, every buffer resident, each launch's params,
// scratch and bind groups made once, and a step one submission of every dispatch in order.
import { ForgeError, evaluateSizeExpression, type GeneratedShader } from '@forge/ir';
import { getKernel } from '@forge/ir/kernels';
import { emitWgsl, wgslTarget } from '@forge/wgsl';
import type { WebGpuContext } from '@forge/wgsl/runner';
import { initialContents } from './contents.js';
import { checkStep, type Decoder, type StepResult } from './decoder.js';
import type { LlamaModel } from './model.js';
import { paramsAt, runsAt, type DecodePlan, type PlanLaunch } from './plan.js';

/** Options of the WebGPU runner. */
export interface WebGpuDecoderOptions {
  /** WGSL features to emit for and enable (`f16`, `subgroups`); none when omitted. */
  readonly features?: readonly string[];
}

/** How long one launch of a profiled step took, from its submission until the queue finished it. */
export interface LaunchTime {
  readonly label: string;
  readonly kernel: string;
  readonly milliseconds: number;
}

/** A step run one launch at a time, with each launch's time. */
export interface ProfiledStep extends StepResult {
  /** Every launch in plan order; empty for a step run as one submission. */
  readonly launches: readonly LaunchTime[];
}

/** A decoder on WebGPU: steps as one submission, or profiled launch by launch. */
export interface WebGpuDecoder extends Decoder {
  /** The adapter as one line: vendor, architecture, device, driver. */
  readonly adapter: string;
  /**
   * The same step as `step` (same results, same cache update), with each launch submitted and
   * awaited on its own, so its time is measured (WebGPU timestamp queries are optional).
   */
  profileStep(token: number, position: number): Promise<ProfiledStep>;
}

/** One launch, ready to encode: its pipelines (one per dispatch), bind groups and params buffer. */
interface PreparedLaunch {
  readonly launch: PlanLaunch;
  readonly shader: GeneratedShader;
  readonly pipelines: readonly GPUComputePipeline[];
  readonly bindGroups: readonly GPUBindGroup[];
  readonly params: GPUBuffer | undefined;
  /** Whether the params change with the position (rewritten before each step). */
  readonly positional: boolean;
}

const roundUp = (value: number, multiple: number) => Math.ceil(value / multiple) * multiple;

/** A decoder running `plan` on WebGPU through `context` (which it destroys on close). */
export async function openWebGpuDecoder(
  model: LlamaModel,
  plan: DecodePlan,
  context: WebGpuContext,
  options: WebGpuDecoderOptions = {},
): Promise<WebGpuDecoder> {
  const { compileWgsl, explicitLayout, launchGrid, packParams, WebGpuError, WebGpuLimitError } =
    await import('@forge/wgsl/runner');
  const { device } = context;
  const target = wgslTarget(options.features ?? []);
  const owned: GPUBuffer[] = [];
  const createBuffer = (size: number, usage: number, contents?: Uint8Array): GPUBuffer => {
    const buffer = device.createBuffer({
      size: roundUp(Math.max(size, 4), 16),
      usage,
      mappedAtCreation: contents !== undefined,
    });
    if (contents !== undefined) {
      new Uint8Array(buffer.getMappedRange()).set(contents);
      buffer.unmap();
    }
    owned.push(buffer);
    return buffer;
  };
  const bytesOf = (array: ArrayBufferView) =>
    new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

  // A tensor past the device's binding limit (a 7B f16 token_embd on a 128 MiB device) is named.
  const bindingLimit = device.limits.maxStorageBufferBindingSize;
  for (const buffer of plan.buffers)
    if (buffer.length * 4 > bindingLimit)
      throw new WebGpuLimitError(
        'maxStorageBufferBindingSize',
        buffer.length * 4,
        bindingLimit,
        buffer.role === 'cache'
          ? `bytes of ${buffer.name}, a KV cache of ${plan.maxCtx} positions (a smaller --ctx needs less),`
          : `bytes of ${buffer.name}`,
      );
  device.pushErrorScope('validation');
  device.pushErrorScope('out-of-memory');
  const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const resident = new Map(
    plan.buffers
      .filter((buffer) => buffer.view === undefined)
      .map((buffer) => [
        buffer.name,
        createBuffer(buffer.length * 4, storage, bytesOf(initialContents(model, plan, buffer))),
      ]),
  );
  const planBuffers = new Map(plan.buffers.map((buffer) => [buffer.name, buffer]));
  // A plan buffer as a binding: the whole GPU buffer, or a view's range of the one it views.
  const residentBinding = (name: string): GPUBufferBinding => {
    const entry = planBuffers.get(name);
    const view = entry?.view;
    const found = resident.get(view?.of ?? name);
    if (found === undefined) throw new ForgeError(`plan buffer ${name} was never allocated`);
    if (view === undefined) return { buffer: found };
    return { buffer: found, offset: view.offset * 4, size: (entry?.length ?? 0) * 4 };
  };
  // The step's token, logits and argmax: whole buffers, never views.
  const residentBuffer = (name: string): GPUBuffer => residentBinding(name).buffer;
  // Launches of one kernel and schedule share a module and pipelines; only their bindings differ.
  const modules = new Map<
    string,
    {
      shader: GeneratedShader;
      pipelines: GPUComputePipeline[];
      layout: ReturnType<typeof explicitLayout>;
    }
  >();
  const prepared: PreparedLaunch[] = [];
  const last = plan.maxCtx - 1;
  for (const launch of plan.launches) {
    const key = `${launch.kernel} ${JSON.stringify(launch.schedule)}`;
    let compiled = modules.get(key);
    if (compiled === undefined) {
      const shader = emitWgsl(getKernel(launch.kernel).spec, launch.schedule, target);
      const { module } = await compileWgsl(context, shader.source);
      const layout = explicitLayout(device, shader.launch.bindings ?? []);
      const pipelines = (shader.launch.dispatches ?? [shader.launch]).map((dispatch) =>
        device.createComputePipeline({
          layout: layout.pipelineLayout,
          compute: { module, entryPoint: dispatch.entryPoint },
        }),
      );
      compiled = { shader, pipelines, layout };
      modules.set(key, compiled);
    }
    const { shader, pipelines, layout } = compiled;
    const bindings = shader.launch.bindings ?? [];
    const lastParams = paramsAt(launch, last);
    const sizes = { ...lastParams, ...shader.schedule };
    let params: GPUBuffer | undefined;
    const resources = bindings.map((binding) => {
      if (binding.kind === 'params') {
        params = createBuffer(
          packParams(shader.launch, lastParams).byteLength,
          GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
          packParams(shader.launch, paramsAt(launch, 0)),
        );
        return { buffer: params };
      }
      // Scratch the plan shares (x quantized once for several mat-vecs) is a plan buffer.
      const shared = binding.kind === 'scratch' ? launch.buffers[binding.name] : undefined;
      if (shared !== undefined) return residentBinding(shared);
      if (binding.kind === 'scratch') {
        // Sized for the last position, the largest any step needs.
        const scratch = shader.launch.scratch?.find((entry) => entry.name === binding.name);
        const bytes = scratch === undefined ? 4 : evaluateSizeExpression(scratch.bytes, sizes);
        return { buffer: createBuffer(bytes, GPUBufferUsage.STORAGE) };
      }
      const planName = launch.buffers[binding.name];
      if (planName === undefined)
        throw new ForgeError(`${launch.label}: ${launch.kernel}'s ${binding.name} is not bound`);
      return residentBinding(planName);
    });
    const bindGroups = layout.groups.map((groupLayout, group) =>
      device.createBindGroup({
        layout: groupLayout,
        entries: bindings.flatMap((binding, index) =>
          binding.group === group
            ? [{ binding: binding.binding, resource: resources[index] as GPUBufferBinding }]
            : [],
        ),
      }),
    );
    const positional = Object.keys(launch.positionOffsets).length > 0;
    prepared.push({ launch, shader, pipelines, bindGroups, params, positional });
  }
  const logitsBytes =
    (plan.buffers.find((buffer) => buffer.name === plan.io.logits)?.length ?? 0) * 4;
  const staging = createBuffer(logitsBytes + 16, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
  const checkScopes = async (what: string) => {
    const outOfMemory = await device.popErrorScope();
    const invalid = await device.popErrorScope();
    const error = invalid ?? outOfMemory;
    if (error !== null)
      throw new WebGpuError(`${plan.model}: WebGPU rejected ${what}: ${error.message.trim()}`);
  };
  await checkScopes('the decoder set-up');

  // Writes a launch's params when they follow the position, binds it and dispatches its grid(s).
  const encodeLaunch = (pass: GPUComputePassEncoder, entry: PreparedLaunch, position: number) => {
    const { launch, shader, pipelines, bindGroups, params, positional } = entry;
    const values = paramsAt(launch, position);
    if (positional && params !== undefined)
      device.queue.writeBuffer(params, 0, packParams(shader.launch, values));
    bindGroups.forEach((bindGroup, group) => pass.setBindGroup(group, bindGroup));
    const dispatches = shader.launch.dispatches ?? [shader.launch];
    // Dispatches of one pass run in order, each seeing the storage writes of those before it.
    dispatches.forEach((dispatch, index) => {
      if (index < launch.firstDispatch) return;
      const [x, y, z] = launchGrid(shader, values, dispatch);
      pass.setPipeline(pipelines[index] as GPUComputePipeline);
      pass.dispatchWorkgroups(x, y, z);
    });
  };

  let cached = 0;
  let closed = false;
  async function run(token: number, position: number, timed: boolean): Promise<ProfiledStep> {
    if (closed) throw new ForgeError('the decoder is closed');
    checkStep(plan, model.hparams.nVocab, cached, token, position);
    device.pushErrorScope('validation');
    device.pushErrorScope('out-of-memory');
    const start = performance.now();
    device.queue.writeBuffer(residentBuffer(plan.io.token), 0, new Uint32Array([token]));
    const launches: LaunchTime[] = [];
    let encoder = device.createCommandEncoder();
    if (timed) {
      // One submission a launch, each awaited: slower, but the time of every kernel shows.
      for (const entry of prepared) {
        if (!runsAt(entry.launch, position)) continue;
        const pass = encoder.beginComputePass();
        encodeLaunch(pass, entry, position);
        pass.end();
        const before = performance.now();
        device.queue.submit([encoder.finish()]);
        await device.queue.onSubmittedWorkDone();
        const { label, kernel } = entry.launch;
        launches.push({ label, kernel, milliseconds: performance.now() - before });
        encoder = device.createCommandEncoder();
      }
    } else {
      const pass = encoder.beginComputePass();
      for (const entry of prepared)
        if (runsAt(entry.launch, position)) encodeLaunch(pass, entry, position);
      pass.end();
    }
    encoder.copyBufferToBuffer(residentBuffer(plan.io.logits), 0, staging, 0, logitsBytes);
    encoder.copyBufferToBuffer(residentBuffer(plan.io.nextToken), 0, staging, logitsBytes, 4);
    encoder.copyBufferToBuffer(residentBuffer(plan.io.nextLogit), 0, staging, logitsBytes + 4, 4);
    device.queue.submit([encoder.finish()]);
    await checkScopes(`the step at position ${position}`);
    await staging.mapAsync(GPUMapMode.READ);
    const mapped = staging.getMappedRange();
    const logits = new Float32Array(mapped.slice(0, logitsBytes));
    const next = new Uint32Array(mapped.slice(logitsBytes, logitsBytes + 4))[0] ?? 0;
    const logit = new Float32Array(mapped.slice(logitsBytes + 4, logitsBytes + 8))[0] ?? Number.NaN;
    staging.unmap();
    cached = position + 1;
    const milliseconds = performance.now() - start;
    return { position, logits, token: next, logit, milliseconds, launches };
  }

  return {
    plan,
    target: 'wgsl',
    adapter: context.description,
    step: (token, position) => run(token, position, false),
    profileStep: (token, position) => run(token, position, true),
    close() {
      if (closed) return;
      closed = true;
      for (const buffer of owned) buffer.destroy();
      context.destroy();
    },
  };
}
