import { beforeAll, describe, expect, it } from 'vitest';
import {
  BuilderScopeError,
  ValidationError,
  type BodyBuilder,
  checkSpec,
  defineKernel,
  interpret,
  ir,
  isMultiDispatch,
  kernelDispatches,
  launchScratch,
  printKernel,
  ready,
  resolveSchedule,
  semanticHash,
  type KernelSpec,
} from '@forge/ir';
import { getKernel } from '@forge/ir/kernels';
import { TWO_STAGE_SUM } from '../two-stage-sum.js';

type JsonObject = { [key: string]: unknown };

/** A JSON copy of the toy kernel with `change` applied to it. */
function variant(
  change: (spec: JsonObject & { stages: JsonObject[]; scratch: JsonObject[] }) => void,
) {
  const copy = JSON.parse(JSON.stringify(TWO_STAGE_SUM)) as JsonObject & {
    stages: JsonObject[];
    scratch: JsonObject[];
  };
  change(copy);
  return copy;
}

function issues(value: unknown): string[] {
  return checkSpec(value).map((issue) => `${issue.path}: ${issue.message}`);
}

function xs(n: number): Float32Array {
  return Float32Array.from({ length: n }, (_, index) => (index % 7) - 3 + index / 8);
}

describe('multi-dispatch kernels', () => {
  beforeAll(ready);

  it('view each dispatch as a single-dispatch kernel with scratch bound after the buffers', () => {
    expect(isMultiDispatch(TWO_STAGE_SUM)).toBe(true);
    expect(isMultiDispatch(getKernel('affine-f32').spec)).toBe(false);
    const views = kernelDispatches(TWO_STAGE_SUM);
    expect(views.map((view) => view.entryPoint)).toEqual(['partial_sums', 'combine']);
    for (const view of views) {
      expect(view.buffers.map((buffer) => `${buffer.name}:${buffer.access}`)).toEqual([
        'x:read',
        'y:read_write',
        'partials:read_write',
      ]);
      expect(view.stages).toBeUndefined();
      expect(view.scratch).toBeUndefined();
    }
    expect(views[1]?.shared).toEqual([{ name: 'sums', element: 'f32', length: '32' }]);
    expect(kernelDispatches(getKernel('affine-f32').spec)).toEqual([getKernel('affine-f32').spec]);
    expect(launchScratch(TWO_STAGE_SUM, { chunk: 64 })).toEqual([
      {
        name: 'partials',
        group: 0,
        binding: 2,
        element: 'f32',
        length: 'ceil_div(n, 64)',
        bytes: '4 * ceil_div(n, 64)',
      },
    ]);
  });

  it.each([1, 63, 64, 65, 1000])('interprets both dispatches in order (n = %i)', (n) => {
    const x = xs(n);
    const y = new Float32Array(1);
    const partials = new Float32Array(Math.ceil(n / 64));
    const result = interpret(TWO_STAGE_SUM, {
      params: { n },
      buffers: { x, y },
      scratch: { partials },
    });
    const expected = x.reduce((sum, value) => sum + value, 0);
    expect(y[0]).toBeCloseTo(expected, 3);
    for (let w = 0; w < partials.length; w++) {
      const chunk = x.subarray(64 * w, 64 * w + 64).reduce((sum, value) => sum + value, 0);
      expect(partials[w]).toBeCloseTo(chunk, 4);
    }
    expect(result.workgroups).toBe(partials.length + 1);
    expect(result.threads).toBe(64 * partials.length + 32);
  });

  it('fills scratch with poison, so a dispatch reading before any write sees NaN', () => {
    const spec = variant((copy) => {
      copy['body'] = []; // the first dispatch no longer writes the partials
    });
    const y = new Float32Array(1);
    interpret(spec as unknown as KernelSpec, { params: { n: 100 }, buffers: { x: xs(100), y } });
    expect(y[0]).toBeNaN();
  });

  it('starts at firstDispatch, on the scratch an earlier launch left', () => {
    const y = new Float32Array(1);
    const partials = Float32Array.of(1, 2, 4);
    const result = interpret(TWO_STAGE_SUM, {
      params: { n: 150 },
      buffers: { x: xs(150), y },
      scratch: { partials },
      firstDispatch: 1,
    });
    // Only the combine ran, over the partials it was given.
    expect(y[0]).toBe(7);
    expect(result.workgroups).toBe(1);
    for (const firstDispatch of [2, -1, 0.5])
      expect(() =>
        interpret(TWO_STAGE_SUM, { params: { n: 8 }, buffers: { x: xs(8), y }, firstDispatch }),
      ).toThrow(`firstDispatch: ${firstDispatch} is not a dispatch (0 to 1)`);
    // The first dispatch alone, as a single-dispatch kernel (checked before it runs).
    const first = { ...TWO_STAGE_SUM, stages: undefined, scratch: undefined };
    const options = { params: { n: 8 }, buffers: { x: xs(8), y }, firstDispatch: 1 };
    expect(() => interpret(first as unknown as KernelSpec, options)).toThrow(
      'a single-dispatch kernel has only dispatch 0',
    );
  });

  it('rejects a grid override for a sequence of dispatches', () => {
    expect(() =>
      interpret(TWO_STAGE_SUM, {
        params: { n: 8 },
        buffers: { x: xs(8), y: new Float32Array(1) },
        grid: [1, 1, 1],
      }),
    ).toThrow(ValidationError);
  });

  it('hashes and prints the stages and scratch', () => {
    const parsed: unknown = JSON.parse(JSON.stringify(TWO_STAGE_SUM));
    expect(semanticHash(parsed)).toBe(semanticHash(TWO_STAGE_SUM));
    const other = variant((copy) => {
      (copy.stages[0]?.['launch'] as { grid: string[] }).grid = ['2', '1', '1'];
    });
    expect(semanticHash(other)).not.toBe(semanticHash(TWO_STAGE_SUM));
    const text = printKernel(TWO_STAGE_SUM);
    expect(text).toContain('  scratch partials: f32[ceil_div(n, chunk)] @0:2\n');
    expect(text).toContain(
      'then combine\n  workgroup 32, grid (1, 1, 1)\n  shared sums: f32[32]\n',
    );
    expect(text).toContain('  if (local_id == 0u32) {\n    y[0u32] = total\n');
  });

  it('builds stage bodies with their own shared arrays and the scratch buffers', () => {
    expect(TWO_STAGE_SUM.stages?.[0]?.body.length).toBeGreaterThan(4);
    // A stage's builder does not see the first dispatch's shared arrays.
    expect(() =>
      defineKernel(
        {
          ...getKernel('affine-f32').spec,
          id: 'staged',
          shared: [{ name: 'tile', element: 'f32', length: '4' }],
          stages: [
            {
              entryPoint: 'second',
              shared: [],
              launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
              body: (b) => b.store('tile', 0, ir.f32(1)),
            },
          ],
        },
        () => {},
      ),
    ).toThrow("no buffer or shared array named 'tile'");
  });

  it("throws BuilderScopeError at a stage's path for its builder used after its callback", () => {
    let kept: BodyBuilder | undefined;
    defineKernel(
      {
        ...getKernel('affine-f32').spec,
        id: 'kept',
        stages: [
          {
            entryPoint: 'second',
            shared: [],
            launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
            body: (b) => {
              kept = b;
            },
          },
        ],
      },
      () => {},
    );
    expect(() => kept?.barrier()).toThrow(BuilderScopeError);
    expect(() => kept?.barrier()).toThrow(/stages\[0\]\.body.*after defineKernel returned/);
  });

  it('names the path of every new validation error', () => {
    const cases: [JsonObject, string][] = [
      [
        variant((c) => (c.scratch[0]!['binding'] = 1)),
        'scratch[0].binding: group 0 binding 1 is used twice',
      ],
      [
        variant((c) => (c.scratch[0]!['name'] = 'x')),
        "scratch[0].name: 'x' is already declared at buffers[0].name",
      ],
      [
        variant((c) => (c.scratch[0]!['length'] = 'm * 2')),
        'scratch[0].length: refers to unknown name(s) m',
      ],
      [variant((c) => (c.scratch[0]!['element'] = 'f64')), 'scratch[0].element'],
      [variant((c) => (c.scratch[0]!['access'] = 'read')), 'scratch[0].access: unknown field'],
      [
        variant((c) => (c.stages[0]!['entryPoint'] = 'partial_sums')),
        "stages[0].entryPoint: 'partial_sums' is already the entry point at entryPoint",
      ],
      [variant((c) => (c.stages[0]!['entryPoint'] = '1st')), 'stages[0].entryPoint'],
      [variant((c) => delete c.stages[0]!['launch']), 'stages[0].launch: is required'],
      [variant((c) => (c.stages[0]!['extra'] = 1)), 'stages[0].extra: unknown field'],
      [
        variant((c) => ((c.stages[0]!['shared'] as JsonObject[])[0]!['name'] = 'n')),
        "stages[0].shared[0].name: 'n' is already declared at params[0].name",
      ],
      [
        variant((c) => ((c.stages[0]!['launch'] as { grid: string[] }).grid[0] = 'rows')),
        'stages[0].launch.grid[0]: refers to unknown name(s) rows',
      ],
      [
        variant((c) => ((c.stages[0]!['launch'] as { workgroupSize: string }).workgroupSize = 'n')),
        'stages[0].launch.workgroupSize: refers to unknown name(s) n',
      ],
      [variant((c) => (c['stages'] = {} as unknown as JsonObject[])), 'stages: must be an array'],
      [variant((c) => (c['scratch'] = [{}])), 'scratch[0].name'],
    ];
    for (const [value, expected] of cases) expect(issues(value).join('\n')).toContain(expected);
  });

  it('checks each stage body at its own path, without the first dispatch shared arrays', () => {
    const stageBody = (body: unknown[]) =>
      variant((c) => {
        c.stages[0]!['body'] = body;
      });
    const storeTile = {
      op: 'store',
      memory: 'tile',
      index: { op: 'const', type: 'u32', value: 0 },
      value: { op: 'const', type: 'f32', value: 1 },
    };
    expect(issues(stageBody([storeTile])).join('\n')).toMatch(/^stages\[0\]\.body\[0\]/);
    // The first dispatch's `sums` (64 long) is not the stage's (32 long): index 40 faults there only.
    const storeSums = {
      ...storeTile,
      memory: 'sums',
      index: { op: 'const', type: 'u32', value: 40 },
    };
    expect(issues(stageBody([storeSums])).join('\n')).toMatch(/^stages\[0\]\.body\[0\]/);
    // Scratch is read_write memory of every dispatch.
    expect(issues(stageBody([{ ...storeTile, memory: 'partials' }]))).toEqual([]);
  });

  it('checks each stage launch against the target limits at its path', () => {
    const big = variant((c) => {
      (c.stages[0]!['launch'] as { workgroupSize: string }).workgroupSize = '2048';
      (c.stages[0]!['shared'] as JsonObject[])[0]!['length'] = '100000';
    });
    const limits = { kind: 'ptx', maxWorkgroupSize: 1024, maxSharedBytes: 49152 };
    let error: unknown;
    try {
      resolveSchedule(big as unknown as KernelSpec, limits);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    const paths = (error as ValidationError).issues.map((issue) => issue.path);
    expect(paths).toEqual(['stages[0].launch.workgroupSize', 'stages[0].shared']);
    const ragged = variant((c) => {
      (c.stages[0]!['launch'] as { workgroupSize: string }).workgroupSize = '48';
    });
    expect(() => resolveSchedule(ragged as unknown as KernelSpec, 'ptx')).toThrow(
      /stages\[0\]\.launch\.workgroupSize: 48 is not a multiple of the 32-lane warp/,
    );
    const zero = variant((c) => (c.scratch[0]!['length'] = 'n * (chunk - 65)'));
    expect(() => resolveSchedule(zero as unknown as KernelSpec, 'ptx')).toThrow(
      /scratch\[0\]\.length/,
    );
  });

  it('counts scratch buffers against the storage buffer limit', () => {
    const many = variant((c) => {
      c.scratch = Array.from({ length: 7 }, (_, index) => ({
        group: 1,
        binding: index,
        name: `s${index}`,
        element: 'u32',
        length: '4',
      }));
    });
    expect(issues(many).join('\n')).toContain('9 storage buffers (7 of them scratch) exceed');
  });
});
