import { createBLAKE3 } from 'hash-wasm';
import { memoizeSealed } from './sealed.js';

// One hasher, created once at load; hash-wasm's API is async only at creation.
const hasher = await createBLAKE3();

/** BLAKE3 of `data` (strings are hashed as UTF-8) as lowercase hex. */
export function blake3Hex(data: string | Uint8Array): string {
  hasher.init();
  hasher.update(data);
  return hasher.digest('hex');
}

/** JSON with object keys sorted and no whitespace: equal data gives equal text in any process. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`canonicalJson: ${typeof value} is not JSON`);
    return text;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const entries = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${entries.join(',')}}`;
}

/** The hash engines use to recognize a kernel: BLAKE3 of the spec's canonical JSON. */
export const semanticHash: (spec: unknown) => string = memoizeSealed((spec) =>
  blake3Hex(canonicalJson(spec)),
);
