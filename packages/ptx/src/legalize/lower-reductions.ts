import { WARP_SIZE, ir, rewriteBody, type Expr, type Stmt } from '@forge/ir';
import type { PtxTarget } from '../targets.js';

const COMBINE = { add: ir.add, min: ir.min, max: ir.max } as const;

/**
 * PTX has no float warp reduction (redux.sync is integer-only and sm_80+), so every reduction
 * becomes a butterfly of xor shuffles: offsets 16, 8, 4, 2, 1 leave the result in all lanes.
 */
export function lowerReductions(body: readonly Stmt[], _target: PtxTarget): Stmt[] {
  return rewriteBody(body, {
    statement: (statement) => {
      if (statement.op !== 'reduce') return [statement];
      const accumulator: Expr = { op: 'var', type: statement.type, name: statement.name };
      const lowered: Stmt[] = [
        { op: 'let', name: statement.name, type: statement.type, value: statement.value },
      ];
      for (let offset = WARP_SIZE / 2; offset >= 1; offset /= 2) {
        // Names with a leading "__" cannot come from a validated spec, so they never collide.
        const partner = `__${statement.name}_xor${offset}`;
        lowered.push(
          {
            op: 'shuffle',
            mode: 'xor',
            name: partner,
            type: statement.type,
            value: accumulator,
            lane: ir.u32(offset),
          },
          {
            op: 'assign',
            name: statement.name,
            value: COMBINE[statement.reduction](accumulator, {
              op: 'var',
              type: statement.type,
              name: partner,
            }),
          },
        );
      }
      return lowered;
    },
  });
}
