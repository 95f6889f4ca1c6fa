// Issue #16 point 2: kernels using subgroups are correct at subgroup sizes 4, 8, 16, 32, 64 and 128.
// Size 4 here: every kernel whose WGSL uses subgroup operations, run on lavapipe with subgroups of 4
// (SwiftShader's size), set by LP_NATIVE_VECTOR_WIDTH=128 in a child process before Vulkan loads,
// one shared execution case each (the one with the shortest WGSL), against its float64 reference.
// Size 8 is lavapipe's own: src/execution.test.ts runs every case at it (and checks the adapter's
// size), so a child at LP_NATIVE_VECTOR_WIDTH=256 would only repeat a subset of that suite, for
// three and a half minutes of compiling. Chromium runs the golden cases at 4 on SwiftShader. 512
// (16 lanes) also passes but compiles for minutes with the shader cache off; from 1024 on, lavapipe
// reports a subgroup_size of width/32 but runs 16 lanes. 16 to 128 run on the WGSL interpreter in
// subgroup-sizes-interpreted.test.ts.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const child = fileURLToPath(new URL('subgroup-size-child.mjs', import.meta.url));
const run = promisify(execFile);

interface ChildReport {
  readonly subgroupMinSize: number;
  readonly subgroupMaxSize: number;
  readonly results: readonly { name: string; nmse: number | null; tolerance: number }[];
}

describe('subgroup kernels at every subgroup size lavapipe runs', () => {
  it.each([[4, 128]])(
    'subgroups of %i lanes (LP_NATIVE_VECTOR_WIDTH=%i)',
    async (size, width) => {
      const { stdout } = await run(process.execPath, [child, 'first'], {
        // Mesa's shader cache does not key on the width: a build for other lanes would be reused.
        env: {
          ...process.env,
          LP_NATIVE_VECTOR_WIDTH: String(width),
          MESA_SHADER_CACHE_DISABLE: 'true',
        },
        maxBuffer: 1 << 24,
      });
      const report = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as ChildReport;
      expect([report.subgroupMinSize, report.subgroupMaxSize]).toEqual([size, size]);
      // rmsnorm and add-rmsnorm, the mat-vecs, decode attention, argmax, the tensor-core Q4_K mat-vec.
      expect(report.results.length).toBeGreaterThanOrEqual(11);
      for (const { name, nmse, tolerance } of report.results) {
        expect(nmse, name).not.toBeNull();
        expect(nmse ?? Infinity, name).toBeLessThanOrEqual(tolerance);
      }
    },
    // lavapipe compiles a case of every subgroup kernel with its cache off: about 80 s in a local
    // CI run, and over 250 s once on a CI machine ~3x slower.
    1_800_000,
  );
});
