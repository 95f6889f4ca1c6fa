import { defineKernel } from '@forge/ir';

// Specs rebuilt through the IR builder API: what a TypeScript author's code hands to the backends.

function replay(builder, statements) {
  for (const s of statements) {
    switch (s.op) {
      case 'let':
        builder.let(s.name, s.value, s.type);
        break;
      case 'assign':
        builder.assign({ op: 'var', type: s.value.type, name: s.name }, s.value);
        break;
      case 'store':
        builder.store(s.memory, s.index, s.value);
        break;
      case 'load_vector':
        builder.loadVector(s.memory, s.index, s.names);
        break;
      case 'store_vector':
        builder.storeVector(s.memory, s.index, s.values);
        break;
      case 'if':
        builder.if(
          s.condition,
          (block) => replay(block, s.then),
          (block) => replay(block, s.else),
        );
        break;
      case 'for':
        builder.for(s.name, { start: s.start, end: s.end, step: s.step }, (block) =>
          replay(block, s.body),
        );
        break;
      case 'barrier':
        builder.barrier();
        break;
      case 'shuffle':
        builder.shuffle(s.mode, s.name, s.value, s.lane);
        break;
      case 'reduce':
        builder.reduce(s.reduction, s.name, s.value);
        break;
      case 'mma':
        builder.mma(s.shape, s.names, { a: s.a, b: s.b, c: s.c });
        break;
      default:
        throw new Error(`replay: unknown statement ${s.op}`);
    }
  }
}

/** Builds `spec` again with `defineKernel`: validated, sealed, sub-expressions shared as given. */
export function buildThroughApi(spec) {
  const { body, ...declarations } = spec;
  return defineKernel(declarations, (builder) => replay(builder, body));
}
