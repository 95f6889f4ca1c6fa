// Edits of a GGUF file's parts, each one thing a real model file could get wrong, for the tests of
// the model reader and `forge decode`.
import { encodeTensor, type GgufFile, type GgufTensorType, type GgufValue } from './gguf-writer.js';
import { tinyLlamaWeights } from './tiny-llama.js';

/** The file with metadata `key` set to `value` (or removed when undefined). */
export const withMetadata =
  (key: string, value: GgufValue | undefined) =>
  (file: GgufFile): GgufFile => ({
    ...file,
    metadata: [
      ...file.metadata.filter(([name]) => name !== key),
      ...(value === undefined ? [] : [[key, value] as const]),
    ],
  });

/** The file without tensor `name`. */
export const withoutTensor =
  (name: string) =>
  (file: GgufFile): GgufFile => ({
    ...file,
    tensors: file.tensors.filter((tensor) => tensor.name !== name),
  });

/** The file with tensor `name` stored as `type` (from the same float weights). */
export const withTensorType =
  (name: string, type: GgufTensorType) =>
  (file: GgufFile): GgufFile => {
    const weight = tinyLlamaWeights().find((candidate) => candidate.name === name);
    if (weight === undefined) throw new Error(`no weight ${name}`);
    const encoded = encodeTensor(name, type, weight.ne, weight.values);
    return {
      ...file,
      tensors: file.tensors.map((tensor) => (tensor.name === name ? encoded : tensor)),
    };
  };

/** The file with tensor `name` stored as f32 from its float weights after `edit` (NaN logits…). */
export const withEditedWeights =
  (name: string, edit: (values: Float32Array, ne: readonly number[]) => void) =>
  (file: GgufFile): GgufFile => {
    const weight = tinyLlamaWeights().find((candidate) => candidate.name === name);
    if (weight === undefined) throw new Error(`no weight ${name}`);
    edit(weight.values, weight.ne);
    const encoded = encodeTensor(name, 'f32', weight.ne, weight.values);
    return {
      ...file,
      tensors: file.tensors.map((tensor) => (tensor.name === name ? encoded : tensor)),
    };
  };

/** The file with tensor `name` given another ne (and zero bytes to match). */
export const withTensorShape =
  (name: string, ne: readonly number[]) =>
  (file: GgufFile): GgufFile => ({
    ...file,
    tensors: file.tensors.map((tensor) =>
      tensor.name === name
        ? { ...tensor, ne, data: new Uint8Array(4 * ne.reduce((a, b) => a * b, 1)) }
        : tensor,
    ),
  });

/** GGUF bytes with tensor `name`'s type id rewritten (a type the writer cannot encode, like bf16). */
export function retypeTensorId(bytes: Uint8Array, name: string, typeId: number): Uint8Array {
  const copy = bytes.slice();
  const needle = new TextEncoder().encode(name);
  // A tensor info is: u64 name length, the name, u32 n_dims, u64 ne × n_dims, u32 type, u64 offset.
  for (let at = 8; at + needle.length < copy.length; at++) {
    const view = new DataView(copy.buffer);
    if (view.getUint32(at - 8, true) !== needle.length) continue;
    if (!needle.every((byte, i) => copy[at + i] === byte)) continue;
    const dims = view.getUint32(at + needle.length, true);
    view.setUint32(at + needle.length + 4 + 8 * dims, typeId, true);
    return copy;
  }
  throw new Error(`tensor ${name} not found`);
}
