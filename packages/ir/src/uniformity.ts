import type { ExprOp, StmtOp } from './body.js';
import { joinPath, ownField, type IssueCollector, type JsonRecord } from './json-shape.js';
import { assertNever, isBinaryOp, isUnaryOp, isWordOp } from './ops.js';
import type { BodyContext } from './typecheck.js';

/** How far a value (or control flow) is the same across threads. Ordered: larger is less uniform. */
export const Uniformity = { Workgroup: 0, Warp: 1, Thread: 2 } as const;
export type Uniformity = (typeof Uniformity)[keyof typeof Uniformity];

/**
 * Checks that barriers sit in workgroup-uniform control flow and warp operations in warp-uniform
 * control flow, on a body that type-checks. Returns the paths of warp operations in warp-uniform
 * (not workgroup-uniform) control flow.
 */
export function checkUniformity(
  body: readonly JsonRecord[],
  path: string,
  context: BodyContext,
  issues: IssueCollector,
): string[] {
  const analysis = new UniformityAnalysis(context, issues);
  analysis.checkUniformity(body, path);
  return analysis.warpUniformOnly;
}

class UniformityAnalysis {
  /** Uniformity of each local, raised monotonically until a fixed point. */
  private readonly levels = new Map<string, Uniformity>();
  private changed = false;
  private reportUniformity = false;
  /** Paths of warp operations whose control flow is warp-uniform but not workgroup-uniform. */
  readonly warpUniformOnly: string[] = [];

  constructor(
    private readonly context: BodyContext,
    private readonly issues: IssueCollector,
  ) {}

  /** Fixed-point uniformity analysis over locals, then checks barrier and warp-op placement. */
  checkUniformity(body: readonly JsonRecord[], path: string): void {
    do {
      this.changed = false;
      this.uniformBlock(body, Uniformity.Workgroup, path);
    } while (this.changed);
    this.reportUniformity = true;
    this.uniformBlock(body, Uniformity.Workgroup, path);
  }

  private raise(name: string, level: Uniformity): void {
    const current = this.levels.get(name) ?? Uniformity.Workgroup;
    if (level > current) {
      this.levels.set(name, level);
      this.changed = true;
    }
  }

  private uniformBlock(statements: readonly JsonRecord[], control: Uniformity, path: string): void {
    statements.forEach((statement, index) => {
      const at = joinPath(path, index);
      const level = (key: string): Uniformity => this.uniformityOf(statement[key] as JsonRecord);
      // The body type-checked, so every op is a known one.
      const op = statement['op'] as StmtOp;
      switch (op) {
        case 'let':
        case 'assign':
          return this.raise(
            statement['name'] as string,
            Math.max(control, level('value')) as Uniformity,
          );
        case 'load_vector': {
          const loaded = this.uniformityOf({ op: 'load', memory: statement['memory'], args: [] });
          const value = Math.max(control, loaded, level('index')) as Uniformity;
          for (const name of statement['names'] as readonly string[]) this.raise(name, value);
          return;
        }
        case 'if': {
          const inner = Math.max(control, level('condition')) as Uniformity;
          this.uniformBlock(
            statement['then'] as readonly JsonRecord[],
            inner,
            joinPath(at, 'then'),
          );
          return this.uniformBlock(
            statement['else'] as readonly JsonRecord[],
            inner,
            joinPath(at, 'else'),
          );
        }
        case 'for': {
          const inner = Math.max(
            control,
            level('start'),
            level('end'),
            level('step'),
          ) as Uniformity;
          this.raise(statement['name'] as string, inner);
          return this.uniformBlock(
            statement['body'] as readonly JsonRecord[],
            inner,
            joinPath(at, 'body'),
          );
        }
        case 'barrier':
          if (this.reportUniformity && control !== Uniformity.Workgroup) {
            this.issues.add(
              at,
              'barrier in control flow that is not uniform across the workgroup (it would deadlock or race)',
            );
          }
          return;
        case 'shuffle':
        case 'reduce':
        case 'mma': {
          if (this.reportUniformity && control === Uniformity.Thread) {
            this.issues.add(
              at,
              `${String(statement['op'])} in control flow that is not uniform across the warp (all 32 lanes must take part)`,
            );
          }
          if (this.reportUniformity && control === Uniformity.Warp) this.warpUniformOnly.push(at);
          const names =
            op === 'mma'
              ? (statement['names'] as readonly string[])
              : [statement['name'] as string];
          // A reduction is the same in every lane; a shuffled value or mma fragment differs per lane.
          const result =
            op === 'reduce'
              ? (Math.max(control, Uniformity.Warp) as Uniformity)
              : Uniformity.Thread;
          for (const name of names) this.raise(name, result);
          return;
        }
        case 'store':
        case 'store_vector':
          return;
        default:
          return assertNever(op, 'statement op');
      }
    });
  }

  private uniformityOf(expression: JsonRecord): Uniformity {
    // Own only: a leaf has no operands, whatever a polluted Object.prototype holds.
    const args = (ownField(expression, 'args') as readonly JsonRecord[] | undefined) ?? [];
    const fromArgs = args.reduce<Uniformity>(
      (level, arg) => Math.max(level, this.uniformityOf(arg)) as Uniformity,
      Uniformity.Workgroup,
    );
    const op = expression['op'] as ExprOp;
    switch (op) {
      case 'var':
        return this.levels.get(expression['name'] as string) ?? Uniformity.Workgroup;
      case 'builtin': {
        const name = expression['name'];
        return name === 'warp_id'
          ? Uniformity.Warp
          : name === 'local_id' || name === 'lane_id'
            ? Uniformity.Thread
            : Uniformity.Workgroup;
      }
      case 'load': {
        const buffer = this.context.buffers.get(expression['memory'] as string);
        const readOnly = buffer !== undefined && buffer.access !== 'read_write';
        return readOnly ? fromArgs : Uniformity.Thread;
      }
      case 'const':
      case 'param':
      case 'schedule':
      case 'unpack_half':
      case 'pack_half':
      case 'fma':
      case 'select':
      case 'convert':
      case 'bitcast':
        return fromArgs;
      default:
        if (isUnaryOp(op) || isBinaryOp(op) || isWordOp(op)) return fromArgs;
        return assertNever(op, 'expression op');
    }
  }
}
