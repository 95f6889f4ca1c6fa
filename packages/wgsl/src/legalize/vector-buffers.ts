import { walkBody, type KernelSpec, type Stmt } from '@forge/ir';

/**
 * Buffers accessed only by `load_vector`s and `store_vector`s of one width W are declared
 * `array<vecW<T>>`, so each such access is one WGSL vector access (one wide load or store on the
 * GPU); any other access keeps `array<T>`. Returns the width per vector-typed buffer.
 */
export function vectorBufferWidths(spec: KernelSpec, body: readonly Stmt[]): Map<string, number> {
  const widths = new Map<string, number>();
  const scalar = new Set<string>();
  walkBody(body, {
    expression: (expression) => {
      if (expression.op === 'load') scalar.add(expression.memory);
    },
    statement: (statement) => {
      if (statement.op === 'store') scalar.add(statement.memory);
      if (statement.op !== 'load_vector' && statement.op !== 'store_vector') return;
      const width =
        statement.op === 'load_vector' ? statement.names.length : statement.values.length;
      const seen = widths.get(statement.memory);
      if (seen !== undefined && seen !== width) scalar.add(statement.memory);
      widths.set(statement.memory, width);
    },
  });
  for (const name of widths.keys()) {
    const isBuffer = spec.buffers.some((buffer) => buffer.name === name);
    if (!isBuffer || scalar.has(name)) widths.delete(name);
  }
  return widths;
}
