import { ValidationError, type LaunchInfo } from '@forge/ir';
import { describe, expect, it } from 'vitest';
import { checkInputs, packParams } from './inputs.js';

const LAUNCH: LaunchInfo = {
  entryPoint: 'main',
  workgroupSize: [64, 1, 1],
  grid: ['ceil_div(n, 64)', '1', '1'],
  sharedBytes: 0,
  parameters: [
    { name: 'n', kind: 'scalar', sourceName: 'n', type: 'u32', offset: 0, size: 4, align: 4 },
    {
      name: 'scale',
      kind: 'scalar',
      sourceName: 'scale',
      type: 'f32',
      offset: 4,
      size: 4,
      align: 4,
    },
    {
      name: 'shift',
      kind: 'scalar',
      sourceName: 'shift',
      type: 'i32',
      offset: 8,
      size: 4,
      align: 4,
    },
  ],
  parameterBytes: 16,
  bindings: [
    {
      group: 0,
      binding: 0,
      name: 'x',
      kind: 'buffer',
      sourceName: 'x',
      access: 'read',
      element: 'f32',
    },
    {
      group: 0,
      binding: 1,
      name: 'h',
      kind: 'buffer',
      sourceName: 'h',
      access: 'read_write',
      element: 'f16',
    },
    {
      group: 0,
      binding: 2,
      name: 'params',
      kind: 'params',
      sourceName: 'params',
      access: 'uniform',
    },
  ],
  requiredFeatures: [],
};

describe('packParams', () => {
  it('writes each scalar little-endian at its offset in a 16-byte-padded struct', () => {
    const bytes = packParams(LAUNCH, { n: 0x01020304, scale: 1.5, shift: -2 });
    expect(bytes.byteLength).toBe(16);
    const view = new DataView(bytes.buffer);
    expect([...bytes.subarray(0, 4)]).toEqual([4, 3, 2, 1]);
    expect(view.getFloat32(4, true)).toBe(1.5);
    expect(view.getInt32(8, true)).toBe(-2);
    expect(view.getUint32(12, true)).toBe(0);
  });

  it('rounds an unpadded size up to 16 bytes and never returns an empty struct', () => {
    expect(
      packParams({ ...LAUNCH, parameterBytes: 20 }, { n: 1, scale: 1, shift: 1 }).byteLength,
    ).toBe(32);
    expect(packParams({ ...LAUNCH, parameters: [], parameterBytes: 0 }, {}).byteLength).toBe(16);
  });

  it('writes u32 values above 2^31 unsigned', () => {
    const bytes = packParams(LAUNCH, { n: 0xffff_fffe, scale: 0, shift: 0 });
    expect(new DataView(bytes.buffer).getUint32(0, true)).toBe(0xffff_fffe);
  });
});

describe('checkInputs', () => {
  const good = {
    buffers: { x: new Float32Array(4), h: new Uint16Array(3) },
    params: { n: 4, scale: 1, shift: -1 },
  };

  it('accepts matching typed arrays and params', () => {
    expect(() => checkInputs(LAUNCH, good)).not.toThrow();
  });

  it('names every wrong, missing or unknown buffer and param by its path', () => {
    const error = (() => {
      try {
        checkInputs(LAUNCH, {
          buffers: { x: new Uint32Array(4), extra: new Float32Array(1) },
          params: { n: -1, scale: Number.NaN, shift: 1.5, typo: 3 },
        });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ValidationError);
    if (!(error instanceof ValidationError)) return;
    expect(error.issues).toEqual([
      { path: 'buffers.x', message: 'is a Uint32Array; f32 elements need a Float32Array' },
      { path: 'buffers.h', message: 'is missing' },
      { path: 'buffers.extra', message: 'is not a buffer of this kernel' },
      { path: 'params.n', message: 'must be an integer in [0, 4294967295] (u32), got -1' },
      { path: 'params.scale', message: 'must be a finite number, got NaN' },
      {
        path: 'params.shift',
        message: 'must be an integer in [-2147483648, 2147483647] (i32), got 1.5',
      },
      { path: 'params.typo', message: 'is not a parameter of this kernel' },
    ]);
    expect(error.message).toBe(
      'buffers.x: is a Uint32Array; f32 elements need a Float32Array (and 6 more)',
    );
  });

  it('wants f16 buffers as Uint16Array bits', () => {
    expect(() =>
      checkInputs(LAUNCH, { ...good, buffers: { ...good.buffers, h: new Float32Array(3) } }),
    ).toThrow('buffers.h: is a Float32Array; f16 elements need a Uint16Array');
  });
});
