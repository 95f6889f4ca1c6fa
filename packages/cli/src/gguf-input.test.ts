// `forge run --gguf`: the reader against the oracle's real GGUF file, and the command's errors.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { dequantize } from '@forge/ir/gguf';
import { getKernel, normalizedMse } from '@forge/ir/kernels';

// The gemv kernels quantize x to 16 bits a value: within 1e-6 NMSE of the exact product.
const GEMV_TOLERANCE = getKernel('q8_0-gemv').tolerance;
import { readGgufTensor } from './gguf-input.js';
import { runCli } from './main.js';

const ORACLE = fileURLToPath(new URL('../../../fixtures/ggml/', import.meta.url));
const GGUF = join(ORACLE, 'forge-oracle.gguf');
const work = mkdtempSync(join(tmpdir(), 'forge-cli-gguf-'));

const floats = (path: string): Float32Array => {
  const bytes = readFileSync(path);
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
};

async function forge(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    cwd: work,
  });
  return { code, stdout, stderr };
}

/**
 * A one-tensor GGUF v3 file (no metadata, default alignment 32) holding `data` as ggml type
 * `typeId` with dimensions `ne`: a fixture writer, since the oracle file has no Q8_0 tensor.
 */
function writeGguf(path: string, name: string, typeId: number, ne: number[], data: Uint8Array) {
  const nameBytes = new TextEncoder().encode(name);
  const infoBytes = 4 + 4 + 8 + 8 + 8 + nameBytes.length + 4 + 8 * ne.length + 4 + 8;
  const dataOffset = Math.ceil(infoBytes / 32) * 32;
  const file = new Uint8Array(dataOffset + data.length);
  const view = new DataView(file.buffer);
  let at = 0;
  const u32 = (value: number) => (view.setUint32(at, value, true), (at += 4));
  const u64 = (value: number) => (view.setBigUint64(at, BigInt(value), true), (at += 8));
  file.set(new TextEncoder().encode('GGUF'), 0);
  at = 4;
  u32(3);
  u64(1);
  u64(0);
  u64(nameBytes.length);
  file.set(nameBytes, at);
  at += nameBytes.length;
  u32(ne.length);
  for (const size of ne) u64(size);
  u32(typeId);
  u64(0);
  file.set(data, dataOffset);
  writeFileSync(path, file);
}

describe('readGgufTensor', () => {
  it("returns the Q4_K tensor's raw blocks, which dequantize to ggml's floats", async () => {
    const tensor = await readGgufTensor(GGUF, 'blk.0.ffn_down.weight', 'q4_K', 'test');
    expect([tensor.type, tensor.ne, tensor.rows, tensor.cols]).toEqual([
      'q4_K',
      [256, 32],
      32,
      256,
    ]);
    expect(tensor.bytes.length).toBe(32 * 144);
    expect(dequantize('q4_K', tensor.bytes, 32, 256)).toEqual(
      floats(join(ORACLE, 'gguf.blk.0.ffn_down.weight.deq.f32')),
    );
  });

  it("returns the Q6_K tensor's raw blocks, which dequantize to ggml's floats", async () => {
    const tensor = await readGgufTensor(GGUF, 'output.weight', 'q6_K', 'test');
    expect([tensor.ne, tensor.bytes.length]).toEqual([[256, 16], 16 * 210]);
    expect(dequantize('q6_K', tensor.bytes, 16, 256)).toEqual(
      floats(join(ORACLE, 'gguf.output.weight.deq.f32')),
    );
  });
});

describe('forge run --gguf', () => {
  it.each([
    ['blk.0.ffn_down.weight', 'q4_K'],
    ['output.weight', 'q6_K'],
    ['blk.0.attn_norm.weight', 'f32'],
  ])('refuses %s (%s) for q8_0-gemv, naming both types', async (tensor, type) => {
    const result = await forge('run', 'q8_0-gemv', '--gguf', GGUF, '--tensor', tensor);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `forge run: --tensor ${tensor} is ${type}, but q8_0-gemv takes q8_0\n`,
    );
  });

  it('lists the tensors when the name is unknown', async () => {
    const result = await forge('run', 'q8_0-gemv', '--gguf', GGUF, '--tensor', 'nope');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `forge run: --tensor: ${GGUF} has no tensor 'nope' (tensors: blk.0.ffn_down.weight, output.weight, blk.0.attn_norm.weight)\n`,
    );
  });

  it('reports a missing file, a file that is not GGUF, and a half-given option in one line', async () => {
    const missing = await forge('run', 'q8_0-gemv', '--gguf', 'missing.gguf', '--tensor', 'w');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      `forge run: --gguf: ${join(work, 'missing.gguf')}: not a readable GGUF file (ENOENT)\n`,
    );
    const notGguf = await forge(
      'run',
      'q8_0-gemv',
      '--gguf',
      join(ORACLE, 'README.md'),
      '--tensor',
      'w',
    );
    expect(notGguf.code).toBe(2);
    expect(notGguf.stderr).toMatch(
      /^forge run: --gguf: .*README\.md: not a GGUF file \(it does not start with the magic "GGUF"\)\n$/,
    );
    const half = await forge('run', 'q8_0-gemv', '--gguf', GGUF);
    expect([half.code, half.stderr]).toEqual([2, 'forge run: --gguf FILE needs --tensor NAME\n']);
  });

  it('refuses a hostile file in one line before reading its tensors: lying counts, cut data, infos past the header', async () => {
    const bytes = new Uint8Array(readFileSync(GGUF));
    const view = (copy: Uint8Array) => new DataView(copy.buffer);
    const lying = bytes.slice(0, 24);
    view(lying).setBigUint64(8, 2n ** 60n, true);
    const cut = bytes.slice(0, bytes.length - 100);
    const cases: [string, Uint8Array, RegExp][] = [
      [
        'lying.gguf',
        lying,
        /: tensor count 1152921504606846976 needs at least \d+ bytes; 8 are left in the file$/,
      ],
      [
        'cut.gguf',
        cut,
        /: blk\.0\.attn_norm\.weight: truncated: its f32 ne \[\d+\] needs bytes \d+\.\.\d+, the file has \d+$/,
      ],
    ];
    for (const [name, data, message] of cases) {
      writeFileSync(join(work, name), data);
      const result = await forge('run', 'q8_0-gemv', '--gguf', name, '--tensor', 'output.weight');
      expect(result.code, name).toBe(2);
      expect(result.stderr.trimEnd(), name).toMatch(message);
      expect(result.stderr.split('\n'), name).toHaveLength(2);
    }
    writeGguf(join(work, 'twice.gguf'), 'w', 8, [32, 1], new Uint8Array(34));
    const twice = new Uint8Array(readFileSync(join(work, 'twice.gguf')));
    // One tensor info claimed twice (count 2): the second reads the first's bytes again as a name.
    view(twice).setBigUint64(8, 2n, true);
    writeFileSync(join(work, 'twice.gguf'), twice);
    const result = await forge('run', 'q8_0-gemv', '--gguf', 'twice.gguf', '--tensor', 'w');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^forge run: --gguf: .*twice\.gguf: .+\n$/);
  });

  it('refuses a kernel without quantized weights', async () => {
    const result = await forge('run', 'rmsnorm', '--gguf', GGUF, '--tensor', 'output.weight');
    expect([result.code, result.stderr]).toEqual([
      2,
      'forge run: --gguf: rmsnorm takes no quantized weights\n',
    ]);
  });

  const q8 = join(work, 'q8.gguf');
  writeGguf(q8, 'blk.0.w', 8, [512, 64], readFileSync(join(ORACLE, 'Q8_0_64x512.w.bin')));

  it.each(['interp', 'wgsl', 'ptx-sim'])(
    'runs a Q8_0 tensor on %s with n_in, n_out from its ne',
    async (target) => {
      const result = await forge(
        'run',
        'q8_0-gemv',
        '--target',
        target,
        '--gguf',
        q8,
        '--tensor',
        'blk.0.w',
        '--seed',
        '7',
        '--json',
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const report = JSON.parse(result.stdout) as {
        shape: object;
        gguf: object;
        pass: boolean;
        nmse: number;
      };
      expect(report.shape).toEqual({ n_in: 512, n_out: 64 });
      expect(report.gguf).toEqual({ file: q8, tensor: 'blk.0.w', type: 'q8_0', ne: [512, 64] });
      expect(report.pass).toBe(true);
      expect(report.nmse).toBeLessThanOrEqual(GEMV_TOLERANCE);
    },
  );

  it('prints the tensor in the text report and refuses a conflicting --shape', async () => {
    const text = await forge(
      'run',
      'q8_0-gemv',
      '--gguf',
      q8,
      '--tensor',
      'blk.0.w',
      '--output',
      'w=w.bin',
    );
    expect(text.code).toBe(0);
    // The kernel ran on the file's blocks, not on seeded weights.
    expect(readFileSync(join(work, 'w.bin'))).toEqual(
      readFileSync(join(ORACLE, 'Q8_0_64x512.w.bin')),
    );
    expect(text.stdout).toContain(`tensor blk.0.w (q8_0, ne [512, 64]) from ${q8}\n`);
    const conflict = await forge(
      'run',
      'q8_0-gemv',
      '--gguf',
      q8,
      '--tensor',
      'blk.0.w',
      '--shape',
      'n_out=32',
    );
    expect([conflict.code, conflict.stderr]).toEqual([
      2,
      'forge run: --shape n_out=32 conflicts with --tensor blk.0.w, whose ne [512, 64] gives n_out=64\n',
    ]);
  });

  it.each(['interp', 'wgsl', 'ptx-sim'])(
    "runs q4k-gemv on %s on the file's Q4_K tensor, matching ggml's dequantized matrix",
    async (target) => {
      const [x, y] = [`x-${target}.f32`, `y-${target}.f32`];
      const result = await forge(
        'run',
        'q4k-gemv',
        '--target',
        target,
        '--gguf',
        GGUF,
        '--tensor',
        'blk.0.ffn_down.weight',
        '--seed',
        '3',
        '--output',
        `x=${x}`,
        '--output',
        `y=${y}`,
        '--json',
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const report = JSON.parse(result.stdout) as { shape: object; pass: boolean; nmse: number };
      expect(report.shape).toEqual({ n_in: 256, n_out: 32 });
      expect(report.pass).toBe(true);
      expect(report.nmse).toBeLessThanOrEqual(GEMV_TOLERANCE);
      // Independently of the kernel's reference: ggml's own dequantized floats times the seeded x.
      const weights = floats(join(ORACLE, 'gguf.blk.0.ffn_down.weight.deq.f32'));
      const xs = floats(join(work, x));
      const expected = Float64Array.from({ length: 32 }, (_, row) =>
        xs.reduce((dot, value, col) => dot + value * (weights[row * 256 + col] ?? 0), 0),
      );
      expect(normalizedMse(floats(join(work, y)), expected)).toBeLessThanOrEqual(GEMV_TOLERANCE);
    },
  );

  it('refuses the Q6_K tensor for q4k-gemv, naming both types', async () => {
    const result = await forge('run', 'q4k-gemv', '--gguf', GGUF, '--tensor', 'output.weight');
    expect([result.code, result.stderr]).toEqual([
      2,
      'forge run: --tensor output.weight is q6_K, but q4k-gemv takes q4_K\n',
    ]);
  });
});
