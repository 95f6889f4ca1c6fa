// What each plan buffer holds before the first step: a tensor's bytes, the rope table, or zeros.
import { allocateElements, f16FromBits, type ElementArray } from '@forge/ir';
import { QUANT_FORMATS, packWords } from '@forge/ir/gguf';
import { getKernel, ropeTable } from '@forge/ir/kernels';
import type { ModelTensor, LlamaModel } from './model.js';
import type { DecodePlan, PlanBuffer } from './plan.js';

/**
 * The first contents of `buffer`: a weight's bytes (f32 values, or little-endian u32 words
 * zero-padded to the kernel's length; repacked where its kernel reads another layout), the rope
 * table over the plan's positions, or zeros.
 */
export function initialContents(
  model: LlamaModel,
  plan: DecodePlan,
  buffer: PlanBuffer,
): ElementArray {
  const array = allocateElements(buffer.element, buffer.length);
  if (buffer.role === 'rope-table') {
    const { headDim, ropeBase } = model.hparams;
    array.set(ropeTable(plan.maxCtx, headDim, ropeBase).subarray(0, array.length));
  }
  const tensor = buffer.tensor === undefined ? undefined : model.tensors.get(buffer.tensor);
  const joined = buffer.tensors?.map((part) => model.tensors.get(part.name)?.bytes);
  if (tensor !== undefined || joined !== undefined) {
    // GGUF rows as they are, or repacked into the layout the buffer's kernel reads; a joined
    // weight's tensors' rows one after another.
    const { layout } = buffer;
    const repack = layout === undefined ? undefined : getKernel(layout.kernel).weights?.fromNative;
    const native = tensor?.bytes ?? concatenate(joined ?? []);
    const bytes = repack === undefined ? native : repack(native, layout?.shape ?? {});
    const source =
      array instanceof Float32Array
        ? new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length))
        : packWords(bytes);
    array.set(source.subarray(0, array.length));
  }
  return array;
}

/** A tensor's values as f32, row-major with ne[0] contiguous: what its kernels compute with. */
export function dequantizeTensor(tensor: ModelTensor): Float32Array {
  const count = tensor.ne.reduce((product, size) => product * size, 1);
  const { bytes, type } = tensor;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const values = new Float32Array(count);
  if (type === 'f32') {
    for (let i = 0; i < count; i++) values[i] = view.getFloat32(4 * i, true);
    return values;
  }
  if (type === 'f16') {
    for (let i = 0; i < count; i++) values[i] = f16FromBits(view.getUint16(2 * i, true));
    return values;
  }
  const format = QUANT_FORMATS[type];
  for (let block = 0; block < count / format.blockSize; block++)
    format.dequantizeBlock(bytes, block * format.blockBytes, values, block * format.blockSize);
  return values;
}

/** `parts` one after another (a missing one, which the plan never names, as none). */
function concatenate(parts: readonly (Uint8Array | undefined)[]): Uint8Array {
  const bytes = new Uint8Array(parts.reduce((total, part) => total + (part?.length ?? 0), 0));
  let offset = 0;
  for (const part of parts) {
    bytes.set(part ?? new Uint8Array(), offset);
    offset += part?.length ?? 0;
  }
  return bytes;
}
