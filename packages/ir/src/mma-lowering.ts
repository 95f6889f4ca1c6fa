import type { Expr, MmaStmt, Stmt } from './body.js';
import * as ir from './expressions.js';
import { MMA_DIMENSIONS } from './mma.js';
import { rewriteBody } from './rewrite.js';

const lane = ir.builtin('lane_id');
const u32Var = (name: string): Expr<'u32'> => ({ op: 'var', type: 'u32', name });

/**
 * Rewrites every `mma` into per-lane f32 arithmetic for targets without tensor cores: each lane
 * gathers the A words of its two rows (from lanes 4g..4g+3) and the B words of its two columns
 * (from lanes 4·col..4·col+3) by `idx` shuffles (32 in all), then computes its 4 D elements as C
 * plus the 16 products in increasing k, each sum rounded to f32 — the order MmaStmt defines, so the
 * result equals the interpreter's bit for bit. Generated names start with `__`, which no validated
 * spec uses.
 */
export function lowerMmaToShuffles(body: readonly Stmt[]): Stmt[] {
  return rewriteBody(body, {
    statement: (statement) => (statement.op === 'mma' ? lowerMma(statement) : [statement]),
  });
}

function lowerMma(statement: MmaStmt): Stmt[] {
  const { k } = MMA_DIMENSIONS[statement.shape];
  const prefix = `__${statement.names[0] ?? 'mma'}`;
  const out: Stmt[] = [];
  // Each operand once, in a local: every word is shuffled to four lanes.
  const words = (key: 'a' | 'b') =>
    statement[key].map((value, r) => {
      const name = `${prefix}_${key}${r}`;
      out.push({ op: 'let', name, type: 'u32', value });
      return u32Var(name);
    });
  const a = words('a');
  const b = words('b');
  const shuffled = (name: string, value: Expr<'u32'>, source: Expr<'u32'>): Expr<'u32'> => {
    out.push({ op: 'shuffle', mode: 'idx', name, type: 'u32', value, lane: source });
    return u32Var(name);
  };
  // rowWords[s][r]: word r of lane 4g + s, which holds A[g + 8(r & 1)][2s + 8(r >> 1) + h].
  const rowWords = [0, 1, 2, 3].map((s) =>
    a.map((word, r) => shuffled(`${prefix}_a${r}_${s}`, word, ir.or(ir.and(lane, 0x1c), s))),
  );
  // colWords[j][s][r]: word r of lane 4(2t + j) + s, which holds B[2s + 8r + h][2t + j].
  const colWords = [0, 1].map((j) =>
    [0, 1, 2, 3].map((s) =>
      b.map((word, r) =>
        shuffled(`${prefix}_b${r}_${j}_${s}`, word, ir.add(ir.shl(ir.and(lane, 3), 3), 4 * j + s)),
      ),
    ),
  );
  statement.names.forEach((name, i) => {
    const sum: Expr<'f32'> = { op: 'var', type: 'f32', name };
    out.push({ op: 'let', name, type: 'f32', value: statement.c[i] as Expr });
    for (let kk = 0; kk < k; kk++) {
      const [s, half, high] = [(kk % 8) >> 1, (kk & 1) as 0 | 1, kk >> 3];
      const aWord = rowWords[s]?.[(i >> 1) + 2 * high] as Expr<'u32'>;
      const bWord = colWords[i & 1]?.[s]?.[high] as Expr<'u32'>;
      const product = ir.mul(ir.unpackHalf(aWord, half), ir.unpackHalf(bWord, half));
      out.push({ op: 'assign', name, value: ir.add(sum, product) });
    }
  });
  return out;
}
