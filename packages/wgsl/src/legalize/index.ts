import {
  BIND_SCHEDULE,
  UnsupportedError,
  walkBody,
  warpOpsInDivergentFlow,
  type BackendPass,
  type KernelSpec,
  type Stmt,
} from '@forge/ir';
import { hasFeature } from '../targets.js';
import { expandWordOps } from './word-ops.js';
import type { WgslTarget } from '../targets.js';

const targetName = (target: WgslTarget): string =>
  `wgsl${target.features.length > 0 ? `+${target.features.join('+')}` : ''}`;

/** f16 values need the `f16` feature; names the first op that uses one. */
export function requireF16Feature(
  spec: KernelSpec,
  body: readonly Stmt[],
  target: WgslTarget,
): boolean {
  let user: string | undefined;
  const f16Memory = [...spec.buffers, ...spec.shared].find((memory) => memory.element === 'f16');
  if (f16Memory !== undefined) user = 'load';
  walkBody(body, {
    expression: (expression) => {
      if (
        user === undefined &&
        (expression.type === 'f16' ||
          ('args' in expression && expression.args.some((arg) => arg.type === 'f16')))
      ) {
        user = expression.op;
      }
    },
    statement: (statement) => {
      if (user === undefined && 'type' in statement && statement.type === 'f16')
        user = statement.op;
    },
  });
  if (user !== undefined && !hasFeature(target, 'f16')) {
    throw new UnsupportedError(
      targetName(target),
      user,
      "f16 values need the 'f16' feature (--features f16)",
    );
  }
  return user !== undefined;
}

/** The statement at a validator path such as `body[3].then[0]`, if there is one. */
function statementAt(spec: KernelSpec, path: string): Stmt | undefined {
  // Paths start at the spec: `body[…]…` or `stages[k].body[…]…`.
  let node: unknown = spec;
  for (const [, key, index] of path.matchAll(/(\w+)\[(\d+)\]/g))
    node = (node as Record<string, readonly unknown[] | undefined>)[key ?? '']?.[Number(index)];
  return node as Stmt | undefined;
}

/** Warp operations become barrier-separated exchanges, so they must sit in workgroup-uniform control flow. */
export function requireUniformWarpOps(spec: KernelSpec, target: WgslTarget): void {
  const [path] = warpOpsInDivergentFlow(spec);
  if (path !== undefined) {
    throw new UnsupportedError(
      targetName(target),
      statementAt(spec, path)?.op ?? 'warp operation',
      `${path}: WGSL emulates 32-lane warps with workgroup barriers, so warp operations need workgroup-uniform control flow`,
    );
  }
}

/**
 * WGSL's passes in order: word ops without a builtin become other ops (expandWordOps), then the
 * schedule is bound.
 */
export const WGSL_PASSES: readonly BackendPass<WgslTarget>[] = [
  (body) => expandWordOps(body),
  BIND_SCHEDULE,
];
