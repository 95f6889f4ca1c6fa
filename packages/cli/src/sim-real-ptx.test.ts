import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forgeInProcess } from './in-process.test-support.js';

const work = mkdtempSync(join(tmpdir(), 'forge-sim-real-'));

// One runnable entry using dynamic shared memory, next to one the simulator cannot parse.
writeFileSync(
  join(work, 'module.ptx'),
  [
    '.version 8.0',
    '.target sm_80',
    '.address_size 64',
    '.extern .shared .align 16 .b8 dyn[];',
    '.visible .entry broken()',
    '{',
    '  .reg .b32 %r<2>;',
    '  { .param .b32 p; st.param.b32 [p], %r1; }',
    '  ret;',
    '}',
    '.visible .entry reverse(.param .u64 out)',
    '{',
    '  .reg .b32 %r<5>;',
    '  .reg .b64 %rd<4>;',
    '  mov.u32 %r1, %tid.x;',
    '  shl.b32 %r2, %r1, 2;',
    '  st.shared.u32 dyn[%r2], %r1;',
    '  bar.sync 0;',
    '  sub.u32 %r3, 124, %r2;',
    '  ld.shared.u32 %r4, dyn[%r3];',
    '  ld.param.u64 %rd1, [out];',
    '  cvta.to.global.u64 %rd2, %rd1;',
    '  mul.wide.u32 %rd3, %r2, 1;',
    '  add.s64 %rd2, %rd2, %rd3;',
    '  st.global.u32 [%rd2], %r4;',
    '  ret;',
    '}',
  ].join('\n'),
);

const sim = (...extra: string[]) =>
  forgeInProcess(work, 'sim', 'module.ptx', '--grid', '1', '--block', '32', ...extra);

describe('forge sim on real-engine PTX', () => {
  it('runs one entry of a module whose other entry it cannot parse, with --dynamic-shared', async () => {
    const result = await sim(
      '--entry',
      'reverse',
      '--arg',
      'out=zeros:128',
      '--dynamic-shared',
      '128',
      '--dump',
      'out=reversed.bin',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^0 finding\(s\)$/m);
    const bytes = readFileSync(join(work, 'reversed.bin'));
    for (let tid = 0; tid < 32; tid++) expect(bytes.readUInt32LE(tid * 4)).toBe(31 - tid);
  });

  it('without --dynamic-shared the extern array has 0 bytes: out-of-bounds findings, exit 1', async () => {
    const result = await sim('--entry', 'reverse', '--arg', 'out=zeros:128');
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/out-of-bounds at line 17: 4-byte shared write at offset 0 of 0/);
  });

  it('names the entry, line and construct when the unparsable entry is launched', async () => {
    const result = await sim('--entry', 'broken');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "forge sim: line 8: entry 'broken' cannot run: .param inside a body (call sequences) is not supported: { .param .b32 p; st.param.b32 [p], %r1; }\n",
    );
  });

  it.each(['-1', '1.5', 'lots', '232449'])(
    'rejects --dynamic-shared %s in one line',
    async (bytes) => {
      const result = await sim(
        '--entry',
        'reverse',
        '--arg',
        'out=zeros:128',
        `--dynamic-shared=${bytes}`,
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        `forge sim: --dynamic-shared: '${bytes}' is not an integer in [0, 232448]\n`,
      );
    },
  );
});
