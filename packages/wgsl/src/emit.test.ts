import { describe, expect, it } from 'vitest';
import {
  UnsupportedError,
  ValidationError,
  blake3Hex,
  defineKernel,
  ir,
  type KernelSpec,
} from '@forge/ir';
import { affineF32, rmsnorm } from '@forge/ir/kernels';
import { emitWgsl } from './emit.js';
import { wgslLiteral } from './ops/types.js';
import { parseWgslFeatures, wgslTarget } from './targets.js';

describe('emitWgsl', () => {
  it('is deterministic and hashes what it returns', () => {
    const first = emitWgsl(rmsnorm.spec, {}, wgslTarget(['subgroups', 'f16']));
    const second = emitWgsl(
      JSON.parse(JSON.stringify(rmsnorm.spec)),
      {},
      wgslTarget(['f16', 'subgroups', 'f16']),
    );
    expect(second).toEqual(first);
    expect(first.sourceHash).toBe(blake3Hex(first.source));
    expect(first.target).toEqual({ kind: 'wgsl', features: ['f16', 'subgroups'] });
  });

  it('lays out the params as one uniform struct after the buffers', () => {
    const { launch, source } = emitWgsl(rmsnorm.spec, {}, wgslTarget());
    expect(launch.bindings).toEqual([
      {
        group: 0,
        binding: 0,
        name: 'x',
        kind: 'buffer',
        sourceName: 'buf_x',
        access: 'read',
        element: 'f32',
      },
      {
        group: 0,
        binding: 1,
        name: 'w',
        kind: 'buffer',
        sourceName: 'buf_w',
        access: 'read',
        element: 'f32',
      },
      {
        group: 0,
        binding: 2,
        name: 'y',
        kind: 'buffer',
        sourceName: 'buf_y',
        access: 'read_write',
        element: 'f32',
      },
      {
        group: 0,
        binding: 3,
        name: 'params',
        kind: 'params',
        sourceName: 'forge_params',
        access: 'uniform',
      },
    ]);
    expect(
      launch.parameters.map((parameter) => [parameter.name, parameter.type, parameter.offset]),
    ).toEqual([
      ['n_embd', 'u32', 0],
      ['rows', 'u32', 4],
      ['eps', 'f32', 8],
    ]);
    expect(launch.parameterBytes).toBe(16);
    expect(source).toContain('struct ForgeParams {\n  n_embd: u32,\n  rows: u32,\n  eps: f32,\n}');
    expect(source).toContain('@group(0) @binding(3) var<uniform> forge_params: ForgeParams;');
    // 8 warp partials plus the 256-word warp exchange scratch
    expect(launch.sharedBytes).toBe(32 + 4 * 256);
  });

  it('uses subgroup shuffles only with the subgroups feature and enables only what the kernel uses', () => {
    const plain = emitWgsl(rmsnorm.spec, {}, wgslTarget()).source;
    const rich = emitWgsl(rmsnorm.spec, {}, wgslTarget(['f16', 'subgroups']));
    expect(plain).not.toMatch(/subgroup|enable/);
    expect(rich.source).toMatch(/^enable subgroups;$/m);
    expect(rich.source).not.toMatch(/enable f16/);
    expect(rich.source).toMatch(/subgroupShuffleXor\(v_warp_sum, 16u\)/);
    expect(rich.launch.requiredFeatures).toEqual(['subgroups']);
    expect(
      emitWgsl(affineF32.spec, {}, wgslTarget(['f16', 'subgroups'])).launch.requiredFeatures,
    ).toEqual([]);
  });

  it('binds schedule knobs into grid expressions and the workgroup size', () => {
    const { launch, source } = emitWgsl(affineF32.spec, { workgroupSize: 64 }, wgslTarget());
    expect(launch.grid).toEqual(['min(ceil_div(n, 64), 65535)', '1', '1']);
    expect(source).toContain('@compute @workgroup_size(64)');
  });
});

const halfKernel = (): KernelSpec =>
  defineKernel(
    {
      id: 'half-scale',
      semanticVersion: 1,
      entryPoint: 'half_scale',
      description: 'y[i] = x[i] * 2 in f16',
      buffers: [
        { group: 0, binding: 0, name: 'x', element: 'f16', access: 'read' },
        { group: 0, binding: 1, name: 'y', element: 'f16', access: 'read_write' },
      ],
      params: [],
      shared: [],
      schedule: [
        {
          name: 'size',
          description: 'threads',
          default: 64,
          bounds: { ptx: { min: 32, max: 1024 }, wgsl: { min: 1, max: 256 } },
        },
      ],
      launch: { workgroupSize: 'size', grid: ['1', '1', '1'] },
    },
    (b) => b.store('y', b.localId(), ir.mul(b.load('x', b.localId()), ir.f16(2))),
  );

describe('WGSL legality', () => {
  it('needs the f16 feature for f16 values, naming the op', () => {
    try {
      emitWgsl(halfKernel(), {}, wgslTarget());
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(UnsupportedError);
      expect((error as UnsupportedError).target).toBe('wgsl');
      expect((error as UnsupportedError).op).toBe('load');
      expect((error as Error).message).toMatch(/--features f16/);
    }
    const shader = emitWgsl(halfKernel(), {}, wgslTarget(['f16']));
    expect(shader.source).toMatch(/^enable f16;$/m);
    expect(shader.source).toContain('buf_y[local_index] = (buf_x[local_index] * 2.0h);');
    expect(shader.launch.requiredFeatures).toEqual(['shader-f16']);
    // a kernel without params has no uniform struct
    expect(shader.launch.bindings?.map((binding) => binding.kind)).toEqual(['buffer', 'buffer']);
  });

  it('refuses warp operations in warp-uniform but workgroup-divergent control flow', () => {
    const spec = defineKernel(
      {
        id: 'warp-branch',
        semanticVersion: 1,
        entryPoint: 'warp_branch',
        description: 'reduce in the first warp only',
        buffers: [{ group: 0, binding: 0, name: 'y', element: 'f32', access: 'read_write' }],
        params: [],
        shared: [],
        schedule: [
          {
            name: 'size',
            description: 'threads',
            default: 64,
            bounds: { ptx: { min: 64, max: 64 }, wgsl: { min: 64, max: 64 } },
          },
        ],
        launch: { workgroupSize: 'size', grid: ['1', '1', '1'] },
      },
      (b) =>
        b.if(ir.eq(b.warpId(), ir.u32(0)), (first) => {
          const total = first.reduce('add', 'total', ir.f32(1));
          first.store('y', first.localId(), total);
        }),
    );
    expect(() => emitWgsl(spec, {}, wgslTarget(['subgroups']))).toThrow(UnsupportedError);
    expect(() => emitWgsl(spec, {}, wgslTarget(['subgroups']))).toThrow(
      /body\[0\]\.then\[0\]: WGSL emulates 32-lane warps/,
    );
    expect(() => emitWgsl(spec, {}, wgslTarget(['subgroups']))).toThrow(
      /does not support op 'reduce'/,
    );
  });

  it('names the op and path of a divergent warp operation in a later dispatch, too', () => {
    const spec = defineKernel(
      {
        id: 'warp-branch-stage',
        semanticVersion: 1,
        entryPoint: 'warp_branch_stage',
        description: 'a plain first dispatch, then a reduce in the first warp only',
        buffers: [{ group: 0, binding: 0, name: 'y', element: 'f32', access: 'read_write' }],
        params: [],
        shared: [],
        schedule: [],
        launch: { workgroupSize: '64', grid: ['1', '1', '1'] },
        stages: [
          {
            entryPoint: 'warp_branch_stage_reduce',
            shared: [],
            launch: { workgroupSize: '64', grid: ['1', '1', '1'] },
            body: (b) =>
              b.if(ir.eq(b.warpId(), ir.u32(0)), (first) => {
                first.store('y', first.localId(), first.reduce('add', 'total', ir.f32(1)));
              }),
          },
        ],
      },
      (b) => b.store('y', b.localId(), ir.f32(0)),
    );
    // Was a TypeError: the message looked the path up in the first dispatch's body.
    expect(() => emitWgsl(spec, {}, wgslTarget(['subgroups']))).toThrow(
      /does not support op 'reduce': stages\[0\]\.body\[0\]\.then\[0\]: WGSL emulates/,
    );
  });

  it('rejects schedules outside the WGSL bounds and unknown features', () => {
    expect(() => emitWgsl(halfKernel(), { size: 512 }, wgslTarget(['f16']))).toThrow(
      /^schedule\.size: 512 is outside \[1, 256\] for wgsl/,
    );
    expect(() => parseWgslFeatures('f16,fp64')).toThrow(ValidationError);
    expect(parseWgslFeatures(' subgroups , f16 ')).toEqual({
      kind: 'wgsl',
      features: ['f16', 'subgroups'],
    });
  });

  it('rejects an entry point that collides with generated names', () => {
    const spec = { ...halfKernel(), entryPoint: 'forge_main' };
    expect(() => emitWgsl(spec, {}, wgslTarget(['f16']))).toThrow(
      /^entryPoint: "forge_main" collides with names the backends generate/,
    );
  });
});

describe('wgslLiteral', () => {
  it('prints exact literals of every type', () => {
    expect(wgslLiteral('f32', 0)).toBe('0.0f');
    expect(wgslLiteral('f32', -0)).toBe('(-0.0f)');
    expect(wgslLiteral('f32', 0.1)).toBe('0.10000000149011612f');
    expect(wgslLiteral('f32', -1.5)).toBe('(-1.5f)');
    expect(wgslLiteral('f32', 1e-6)).toBe(`${Math.fround(1e-6)}f`);
    expect(wgslLiteral('f32', 3e38)).toMatch(/^3\.\d+e\+38f$/);
    expect(wgslLiteral('f16', 2)).toBe('2.0h');
    expect(wgslLiteral('u32', 4294967295)).toBe('4294967295u');
    expect(wgslLiteral('i32', -5)).toBe('(-5i)');
    expect(wgslLiteral('i32', -(2 ** 31))).toBe('(-2147483647i - 1i)');
    expect(wgslLiteral('bool', true)).toBe('true');
  });
});
