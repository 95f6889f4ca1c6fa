import { createBLAKE3, type IHasher } from 'hash-wasm';
import { ForgeError } from './errors.js';
import { isRecord } from './json-shape.js';
import { memoizeSealed } from './sealed.js';
import { takeSnapshot } from './snapshot.js';

// hash-wasm instantiates WebAssembly, which is asynchronous; everything after that is synchronous.
// Creating it on the first `ready()` (not at load) keeps every package free of top-level await.
let hasher: IHasher | undefined;
let loading: Promise<void> | undefined;

/**
 * Prepares Forge's hashing (BLAKE3 via hash-wasm's WebAssembly). Await it once, before the first
 * `semanticHash`, `emitPtx`, `emitWgsl` or golden check; every later call returns the same promise,
 * and after it resolves all hashing and emission is synchronous.
 *
 * @example
 * ```ts
 * import { ready } from '@forge/ir';
 * import { emitPtx } from '@forge/ptx';
 * await ready();
 * const shader = emitPtx(spec, {}, { kind: 'ptx', arch: 'sm_80' });
 * ```
 */
export function ready(): Promise<void> {
  loading ??= createBLAKE3().then(
    (created) => {
      hasher = created;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** Hashing was asked for before `ready()` resolved. */
export class HashNotReadyError extends ForgeError {
  override readonly name = 'HashNotReadyError';
  constructor() {
    super(
      'BLAKE3 is not initialised: `await ready()` (exported by @forge/ir, @forge/ptx and @forge/wgsl) once before hashing or emitting',
    );
  }
}

/** BLAKE3 of `data` (strings are hashed as UTF-8) as lowercase hex; needs `await ready()` first. */
export function blake3Hex(data: string | Uint8Array): string {
  if (hasher === undefined) throw new HashNotReadyError();
  hasher.init();
  hasher.update(data);
  return hasher.digest('hex');
}

/**
 * JSON with object keys sorted and no whitespace: equal data gives equal text in any process, and
 * different data different text. So `-0` is written `-0` (JSON.stringify writes `0`, which would
 * merge it with 0 though backends print the two differently), and the non-finite numbers, which
 * are not JSON, as `NaN`, `Infinity` and `-Infinity` rather than JSON.stringify's `null`.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'number') {
    if (Object.is(value, -0)) return '-0';
    return Number.isFinite(value) ? JSON.stringify(value) : String(value);
  }
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

const hashSnapshot = memoizeSealed((snapshot) =>
  blake3Hex(canonicalJson(withoutScheduleBounds(snapshot))),
);

/**
 * The hash engines use to recognize a kernel: BLAKE3 of the canonical JSON of the spec's snapshot
 * (so a getter is read once, and data that is not JSON is a ValidationError), less each schedule
 * knob's `bounds`. Bounds only say which schedules a target accepts, while everything else, the
 * descriptions included, is what the kernel computes or is printed into every emitted header.
 */
export function semanticHash(spec: unknown): string {
  return hashSnapshot(takeSnapshot(spec));
}

/** `value` with `bounds` dropped from each knob of its `schedule` array, where it has one. */
function withoutScheduleBounds(value: unknown): unknown {
  // Own only: a schedule on a polluted Object.prototype is no part of the spec.
  if (!isRecord(value) || !Object.hasOwn(value, 'schedule') || !Array.isArray(value['schedule']))
    return value;
  const schedule = (value['schedule'] as readonly unknown[]).map((knob) => {
    if (!isRecord(knob)) return knob;
    const { bounds: _bounds, ...rest } = knob;
    return rest;
  });
  return { ...value, schedule };
}
