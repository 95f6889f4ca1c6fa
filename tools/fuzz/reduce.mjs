// Structural reduction of a failing case (delta debugging on the spec's JSON): drop chunks of
// statements and declarations, unwrap `if`s and hoist operands while the failure stays the same.

const clone = (value) => JSON.parse(JSON.stringify(value));

function at(root, path) {
  return path.reduce((node, key) => node[key], root);
}

/** Paths of every array worth shrinking and every expression node, in the spec. */
function collect(spec) {
  const arrays = [['buffers'], ['params'], ['shared']];
  const ifs = [];
  const expressions = [];
  const walkExpr = (node, path) => {
    if (node === null || typeof node !== 'object' || !Array.isArray(node.args)) return;
    expressions.push(path);
    node.args.forEach((arg, k) => walkExpr(arg, [...path, 'args', k]));
  };
  const walkBlock = (block, path) => {
    if (!Array.isArray(block)) return;
    arrays.push(path);
    block.forEach((statement, k) => {
      const here = [...path, k];
      if (statement === null || typeof statement !== 'object') return;
      if (statement.op === 'if') ifs.push(here);
      for (const key of ['then', 'else', 'body']) walkBlock(statement[key], [...here, key]);
      for (const key of ['value', 'index', 'condition', 'start', 'end', 'step', 'lane'])
        walkExpr(statement[key], [...here, key]);
    });
  };
  walkBlock(spec.body, ['body']);
  return { arrays, ifs, expressions };
}

/** Candidate edits of `spec`, largest first; each returns a new spec. */
function* candidates(spec) {
  const { arrays, ifs, expressions } = collect(spec);
  for (const path of arrays) {
    const length = at(spec, path).length;
    for (let size = Math.max(1, length >> 1); size >= 1; size >>= 1) {
      for (let start = 0; start + size <= length; start += size) {
        yield () => {
          const next = clone(spec);
          at(next, path).splice(start, size);
          return next;
        };
      }
      if (size === 1) break;
    }
  }
  for (const path of ifs) {
    for (const branch of ['then', 'else']) {
      yield () => {
        const next = clone(spec);
        const block = at(next, path.slice(0, -1));
        const statement = block[path[path.length - 1]];
        block.splice(path[path.length - 1], 1, ...statement[branch]);
        return next;
      };
    }
  }
  for (const path of expressions) {
    const node = at(spec, path);
    for (const arg of node.args) {
      if (arg?.type !== node.type) continue;
      yield () => {
        const next = clone(spec);
        const parent = at(next, path.slice(0, -1));
        parent[path[path.length - 1]] = clone(arg);
        return next;
      };
    }
  }
}

/**
 * The smallest variant of `fuzzCase` found within `timeLimitMs` for which `stillFails(case)`
 * (async) holds; greedy: the first candidate that keeps failing is taken and the search restarts.
 */
export async function reduceCase(fuzzCase, stillFails, timeLimitMs) {
  const deadline = Date.now() + timeLimitMs;
  let current = fuzzCase;
  let progress = true;
  while (progress && Date.now() < deadline) {
    progress = false;
    for (const edit of candidates(current.spec)) {
      if (Date.now() >= deadline) break;
      const next = { ...current, spec: edit() };
      if (await stillFails(next)) {
        current = next;
        progress = true;
        break;
      }
    }
  }
  return current;
}
