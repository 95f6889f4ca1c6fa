import {
  ValidationError,
  type ElementArray,
  type ElementType,
  type LaunchBinding,
  type LaunchInfo,
  type ValidationIssue,
} from '@forge/ir';

/** What runWgsl is given: one typed array per buffer binding, one number per scalar param. */
export interface WgslInputs {
  /** By the spec's buffer name; f16 buffers hold IEEE half bits in a Uint16Array. */
  readonly buffers: Readonly<Record<string, ElementArray>>;
  /** By the spec's param name. */
  readonly params: Readonly<Record<string, number>>;
}

const ARRAY_NAMES: Readonly<Record<ElementType, string>> = {
  f32: 'Float32Array',
  u32: 'Uint32Array',
  i32: 'Int32Array',
  f16: 'Uint16Array',
};

function matchesElement(element: ElementType, array: ElementArray): boolean {
  switch (element) {
    case 'f32':
      return array instanceof Float32Array;
    case 'u32':
      return array instanceof Uint32Array;
    case 'i32':
      return array instanceof Int32Array;
    case 'f16':
      return array instanceof Uint16Array;
  }
}

/** The buffer bindings of a launch (spec buffers, not the params struct). */
export function bufferBindings(launch: LaunchInfo): LaunchBinding[] {
  return (launch.bindings ?? []).filter((binding) => binding.kind === 'buffer');
}

/**
 * Checks that every buffer binding has a typed array of its element type, every scalar param a
 * number in its type's range, and nothing else is given; throws a ValidationError (paths
 * `buffers.<name>`, `params.<name>`) listing every problem.
 */
export function checkInputs(launch: LaunchInfo, inputs: WgslInputs): void {
  const issues: ValidationIssue[] = [];
  const buffers = bufferBindings(launch);
  for (const binding of buffers) {
    const path = `buffers.${binding.name}`;
    const array = inputs.buffers[binding.name];
    if (array === undefined) issues.push({ path, message: 'is missing' });
    else if (binding.element !== undefined && !matchesElement(binding.element, array)) {
      issues.push({
        path,
        message: `is a ${array.constructor.name}; ${binding.element} elements need a ${ARRAY_NAMES[binding.element]}`,
      });
    }
  }
  for (const name of Object.keys(inputs.buffers)) {
    if (!buffers.some((binding) => binding.name === name))
      issues.push({ path: `buffers.${name}`, message: 'is not a buffer of this kernel' });
  }
  const scalars = launch.parameters.filter((parameter) => parameter.kind === 'scalar');
  for (const parameter of scalars) {
    const path = `params.${parameter.name}`;
    const value = inputs.params[parameter.name];
    if (value === undefined) issues.push({ path, message: 'is missing' });
    else {
      const problem = paramProblem(parameter.type, value);
      if (problem !== undefined) issues.push({ path, message: problem });
    }
  }
  for (const name of Object.keys(inputs.params)) {
    if (!scalars.some((parameter) => parameter.name === name))
      issues.push({ path: `params.${name}`, message: 'is not a parameter of this kernel' });
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

function paramProblem(type: string, value: number): string | undefined {
  if (!Number.isFinite(value)) return `must be a finite number, got ${value}`;
  if (type === 'u32' && !(Number.isInteger(value) && value >= 0 && value <= 0xffff_ffff))
    return `must be an integer in [0, 4294967295] (u32), got ${value}`;
  if (type === 'i32' && !(Number.isInteger(value) && value >= -0x8000_0000 && value <= 0x7fff_ffff))
    return `must be an integer in [-2147483648, 2147483647] (i32), got ${value}`;
  return undefined;
}

/** The uniform params struct's bytes: each scalar at its offset, little-endian, size padded to 16. */
export function packParams(
  launch: LaunchInfo,
  params: Readonly<Record<string, number>>,
): Uint8Array {
  const bytes = new Uint8Array(roundUp(Math.max(launch.parameterBytes, 16), 16));
  const view = new DataView(bytes.buffer);
  for (const parameter of launch.parameters) {
    if (parameter.kind !== 'scalar') continue;
    const value = params[parameter.name] ?? 0;
    if (parameter.type === 'f32') view.setFloat32(parameter.offset, value, true);
    else if (parameter.type === 'i32') view.setInt32(parameter.offset, value, true);
    else if (parameter.type === 'u32') view.setUint32(parameter.offset, value, true);
  }
  return bytes;
}

/** The bytes of a typed array, as a view (no copy). */
export function bytesOf(array: ElementArray): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

export function roundUp(value: number, multiple: number): number {
  return Math.ceil(value / multiple) * multiple;
}
