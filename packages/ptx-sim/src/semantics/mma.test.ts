import { describe, expect, it } from 'vitest';
import { f16FromBits, f16ToBits, f32FromBits, f32ToBits } from './float-bits.js';
import { ldmatrix, mmaSync, type MmaShape } from './mma.js';
import { F16, roundToFormat } from './rounding.js';

// Deterministic pseudo-random numbers (xorshift) so failures reproduce.
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

const toF16 = (x: number): number => f16ToBits(roundToFormat(x, F16, 'rn'));
const pack = (low: number, high: number): number => ((high << 16) | low) >>> 0;

/** Fragments written straight from the ISA's tables (one lane at a time, as a thread would). */
function fragments(shape: MmaShape, a: number[][], b: number[][], c: number[][]) {
  const k = shape === 'm16n8k16' ? 16 : 8;
  const at = (m: number[][], row: number, col: number): number =>
    toF16((m[row] as number[])[col] as number);
  return Array.from({ length: 32 }, (_, lane) => {
    const g = lane >> 2;
    const t = lane % 4;
    const aRegs =
      k === 16
        ? [
            pack(at(a, g, 2 * t), at(a, g, 2 * t + 1)),
            pack(at(a, g + 8, 2 * t), at(a, g + 8, 2 * t + 1)),
            pack(at(a, g, 2 * t + 8), at(a, g, 2 * t + 9)),
            pack(at(a, g + 8, 2 * t + 8), at(a, g + 8, 2 * t + 9)),
          ]
        : [
            pack(at(a, g, 2 * t), at(a, g, 2 * t + 1)),
            pack(at(a, g + 8, 2 * t), at(a, g + 8, 2 * t + 1)),
          ];
    const bRegs =
      k === 16
        ? [
            pack(at(b, 2 * t, g), at(b, 2 * t + 1, g)),
            pack(at(b, 2 * t + 8, g), at(b, 2 * t + 9, g)),
          ]
        : [pack(at(b, 2 * t, g), at(b, 2 * t + 1, g))];
    const cRegs = [
      [g, 2 * t],
      [g, 2 * t + 1],
      [g + 8, 2 * t],
      [g + 8, 2 * t + 1],
    ].map(([row = 0, col = 0]) => f32ToBits(Math.fround((c[row] as number[])[col] as number)));
    return { aRegs, bRegs, cRegs };
  });
}

function matrix(rows: number, cols: number, next: () => number, scale: number): number[][] {
  return Array.from({ length: rows }, () =>
    Array.from({ length: cols }, () => f16FromBits(toF16((next() * 2 - 1) * scale))),
  );
}

/** D from fragments back to a 16×8 matrix. */
function unpackD(d: number[][]): number[][] {
  const result = Array.from({ length: 16 }, () => new Array<number>(8).fill(0));
  d.forEach((registers, lane) => {
    const g = lane >> 2;
    const t = lane % 4;
    registers.forEach((bits, i) => {
      (result[g + (i >= 2 ? 8 : 0)] as number[])[2 * t + (i & 1)] = f32FromBits(bits);
    });
  });
  return result;
}

describe('mmaSync', () => {
  for (const shape of ['m16n8k16', 'm16n8k8'] as const) {
    it(`${shape}: matches a float64 matrix product within f32 accumulation error`, () => {
      const k = shape === 'm16n8k16' ? 16 : 8;
      for (let trial = 0; trial < 20; trial++) {
        const next = random(trial + 1);
        const a = matrix(16, k, next, 4);
        const b = matrix(k, 8, next, 4);
        const c = matrix(16, 8, next, 8);
        const lanes = fragments(shape, a, b, c);
        const d = unpackD(
          mmaSync(
            shape,
            lanes.map((lane) => lane.aRegs),
            lanes.map((lane) => lane.bRegs),
            lanes.map((lane) => lane.cRegs),
          ),
        );
        for (let row = 0; row < 16; row++) {
          for (let col = 0; col < 8; col++) {
            let exact = (c[row] as number[])[col] as number;
            let magnitude = Math.abs(exact);
            for (let kk = 0; kk < k; kk++) {
              const product =
                ((a[row] as number[])[kk] as number) * ((b[kk] as number[])[col] as number);
              exact += product;
              magnitude += Math.abs(product);
            }
            const got = (d[row] as number[])[col] as number;
            expect(Math.abs(got - exact)).toBeLessThanOrEqual((k + 1) * 2 ** -24 * magnitude);
          }
        }
      }
    });
  }

  it('is exact on small integers and supports f16 accumulators', () => {
    const a = Array.from({ length: 16 }, (_, row) =>
      Array.from({ length: 16 }, (_, col) => ((row + col) % 5) - 2),
    );
    const b = Array.from({ length: 16 }, (_, row) =>
      Array.from({ length: 8 }, (_, col) => ((row * col) % 3) - 1),
    );
    const c = Array.from({ length: 16 }, (_, row) =>
      Array.from({ length: 8 }, (_, col) => row - col),
    );
    const lanes = fragments('m16n8k16', a, b, c);
    const aFragments = lanes.map((lane) => lane.aRegs);
    const bFragments = lanes.map((lane) => lane.bRegs);
    const d = unpackD(
      mmaSync(
        'm16n8k16',
        aFragments,
        bFragments,
        lanes.map((lane) => lane.cRegs),
      ),
    );
    const expected = c.map((row, i) =>
      row.map(
        (value, j) => value + a[i]!.reduce((sum, x, kk) => sum + x * (b[kk] as number[])[j]!, 0),
      ),
    );
    expect(d).toEqual(expected);
    // The same with C and D as two .f16x2 registers (c0,c1 then c2,c3).
    const cHalves = lanes.map((lane) => {
      const values = lane.cRegs.map((bits) => toF16(f32FromBits(bits)));
      return [pack(values[0]!, values[1]!), pack(values[2]!, values[3]!)];
    });
    const dHalves = mmaSync('m16n8k16', aFragments, bFragments, cHalves, {
      ctype: 'f16',
      dtype: 'f16',
    });
    const widened = dHalves.map((registers) =>
      registers
        .flatMap((bits) => [f16FromBits(bits & 0xffff), f16FromBits(bits >>> 16)])
        .map(f32ToBits),
    );
    expect(unpackD(widened)).toEqual(expected);
  });

  it('propagates NaN and infinity', () => {
    const a = Array.from({ length: 16 }, () => new Array<number>(8).fill(1));
    const b = Array.from({ length: 8 }, () => new Array<number>(8).fill(1));
    const c = Array.from({ length: 16 }, () => new Array<number>(8).fill(0));
    (a[0] as number[])[0] = Infinity;
    (a[1] as number[])[0] = Infinity;
    (b[1] as number[])[0] = -1;
    (b[0] as number[])[1] = 0;
    const lanes = fragments('m16n8k8', a, b, c);
    lanes[4]!.aRegs[0] = pack(0x7e00, toF16(1));
    const d = unpackD(
      mmaSync(
        'm16n8k8',
        lanes.map((l) => l.aRegs),
        lanes.map((l) => l.bRegs),
        lanes.map((l) => l.cRegs),
      ),
    );
    expect(d[0]![0]).toBe(Infinity);
    expect(Number.isNaN(d[0]![1])).toBe(true);
    expect(Number.isNaN(d[1]![0])).toBe(true);
  });
});

describe('ldmatrix', () => {
  // Element (r, c) of matrix m holds 0x1000·m + 0x10·r + c; rows live at scattered addresses.
  const rowAddress = (matrix: number, row: number): number =>
    0x4000 + 0x400 * matrix + 0x60 * ((row * 3) % 8);
  const memory = new Map<number, number>();
  for (let m = 0; m < 4; m++) {
    for (let r = 0; r < 8; r++)
      for (let c = 0; c < 8; c++) memory.set(rowAddress(m, r) + 2 * c, 0x1000 * m + 0x10 * r + c);
  }
  const read16 = (address: number | bigint): number => memory.get(Number(address)) ?? 0xdead;
  const element = (m: number, r: number, c: number): number => 0x1000 * m + 0x10 * r + c;

  for (const count of [1, 2, 4] as const) {
    for (const trans of [false, true]) {
      it(`.x${count}${trans ? '.trans' : ''}: each lane gets two consecutive elements of its row`, () => {
        const asked = new Set<number>();
        const result = ldmatrix(
          'm8n8',
          count,
          trans,
          (lane) => {
            asked.add(lane);
            return rowAddress(lane >> 3, lane % 8);
          },
          read16,
        );
        expect([...asked].sort((x, y) => x - y)).toEqual(
          Array.from({ length: 8 * count }, (_, lane) => lane),
        );
        for (let lane = 0; lane < 32; lane++) {
          const r = lane >> 2;
          const c = 2 * (lane % 4);
          expect(result[lane]).toEqual(
            Array.from({ length: count }, (_, m) =>
              trans
                ? pack(element(m, c, r), element(m, c + 1, r))
                : pack(element(m, r, c), element(m, r, c + 1)),
            ),
          );
        }
      });
    }
  }

  it('feeds mma: ldmatrix.x4 of A and .x2.trans of B give the fragments mma expects', () => {
    const next = random(99);
    const a = matrix(16, 16, next, 2);
    const b = matrix(16, 8, next, 2);
    // A row-major at 0x0 (32 bytes a row), B row-major at 0x1000 (16 bytes a row).
    const shared = new Map<number, number>();
    a.forEach((row, r) => row.forEach((x, c) => shared.set(32 * r + 2 * c, toF16(x))));
    b.forEach((row, r) => row.forEach((x, c) => shared.set(0x1000 + 16 * r + 2 * c, toF16(x))));
    const read = (address: number | bigint): number => shared.get(Number(address)) ?? 0;
    const aRegs = ldmatrix(
      'm8n8',
      4,
      false,
      (lane) => 32 * ((lane % 8) + 8 * ((lane >> 3) & 1)) + 16 * (lane >> 4),
      read,
    );
    const bRegs = ldmatrix('m8n8', 2, true, (lane) => 0x1000 + 16 * (lane % 16), read);
    const zero = Array.from({ length: 32 }, () => [0, 0, 0, 0]);
    const d = unpackD(mmaSync('m16n8k16', aRegs, bRegs, zero));
    const direct = fragments(
      'm16n8k16',
      a,
      b,
      Array.from({ length: 16 }, () => new Array<number>(8).fill(0)),
    );
    expect(aRegs).toEqual(direct.map((lane) => lane.aRegs));
    expect(bRegs).toEqual(direct.map((lane) => lane.bRegs));
    for (let row = 0; row < 16; row++) {
      for (let col = 0; col < 8; col++) {
        const exact = a[row]!.reduce((sum, x, kk) => sum + x * b[kk]![col]!, 0);
        expect(Math.abs(d[row]![col]! - exact)).toBeLessThanOrEqual(17 * 2 ** -24 * 64);
      }
    }
  });
});
