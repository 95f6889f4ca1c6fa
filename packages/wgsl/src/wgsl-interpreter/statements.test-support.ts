import { markActive } from './memory.test-support.js';
import type { ExprNode, StmtNode } from './parse.test-support.js';
import { ExpressionCompiler } from './expressions.test-support.js';
import { WgslCompileError, as, concrete, valueType, type At } from './types.test-support.js';
import { WgslExecutionError, scalarType, type Value } from './values.test-support.js';

// Compiles an entry point to closures that run a whole workgroup in lockstep: a statement runs for
// every active lane before the next starts, an `if` splits the lanes, a loop keeps those whose
// condition holds. Forge puts barriers and subgroup operations in uniform control flow only, so
// lockstep is a faithful schedule, and the interpreter checks that uniformity instead of assuming it.

type Run = (lanes: readonly number[]) => void;

/** Compiles an entry point's statements, given the module's storage, workgroup and uniform globals. */
export class EntryCompiler extends ExpressionCompiler {
  entry(name: string): { workgroupSize: number; run: () => void } {
    const node = this.module.functions.get(name);
    if (node?.workgroupSize === undefined)
      throw new WgslCompileError(`no compute entry point '${name}'`);
    const machine = this.machine;
    const size = machine.workgroupSize;
    const builtins: Readonly<Record<string, At>> = {
      local_invocation_index: (lane) => lane,
      local_invocation_id: (lane) => [lane, 0, 0],
      workgroup_id: () => machine.workgroupId,
      num_workgroups: () => machine.numWorkgroups,
      global_invocation_id: (lane) => [
        (machine.workgroupId[0] ?? 0) * size + lane,
        machine.workgroupId[1] ?? 0,
        machine.workgroupId[2] ?? 0,
      ],
      subgroup_size: () => machine.subgroupSize,
      subgroup_invocation_id: (lane) => lane % machine.subgroupSize,
    };
    return this.scoped(() => {
      for (const parameter of node.parameters) {
        const at = builtins[parameter.builtin ?? ''];
        if (at === undefined)
          throw new WgslCompileError(
            `${name}: parameter '${parameter.name}' is not a supported builtin`,
          );
        this.declare(parameter.name, { kind: 'value', type: valueType(parameter.type), at });
      }
      const body = this.block(node.body);
      const lanes = Array.from({ length: size }, (_, lane) => lane);
      return { workgroupSize: node.workgroupSize ?? size, run: () => body(lanes) };
    });
  }

  private block(statements: readonly StmtNode[]): Run {
    return this.scoped(() => {
      const runs = statements.map((statement) => this.statement(statement));
      return (lanes) => {
        for (const run of runs) run(lanes);
      };
    });
  }

  private statement(node: StmtNode): Run {
    const machine = this.machine;
    switch (node.kind) {
      case 'declare': {
        const value = this.expression(node.value);
        const type = node.type === undefined ? concrete(value) : valueType(node.type);
        const typed = as(value, type);
        this.checkType(typed, type, `'${node.name}'`);
        const slot: Value[] = new Array<Value>(machine.workgroupSize).fill(0);
        this.declare(node.name, { kind: 'local', slot, type, mutable: node.mutable });
        const at = typed.at;
        return this.lanewise(typed.subgroup, (lanes) => {
          for (let position = 0; position < lanes.length; position++) {
            const lane = lanes[position] ?? 0;
            slot[lane] = at(lane);
          }
        });
      }
      case 'assign':
        return this.assignment(node.target, node.value);
      case 'if': {
        const condition = this.expression(node.condition);
        const then = this.block(node.then);
        const otherwise = this.block(node.else);
        const at = condition.at;
        // Reused on every run: a statement cannot run again inside its own branches.
        const taken: number[] = [];
        const others: number[] = [];
        return this.lanewise(condition.subgroup, (lanes) => {
          taken.length = 0;
          others.length = 0;
          for (let position = 0; position < lanes.length; position++) {
            const lane = lanes[position] ?? 0;
            if (at(lane) === true) taken.push(lane);
            else others.push(lane);
          }
          // A branch no lane takes does not run, so a barrier in it is not reached.
          if (taken.length > 0) then(taken);
          if (others.length > 0) otherwise(others);
        });
      }
      case 'for':
        return this.scoped(() => {
          const init = this.statement(node.init);
          const condition = this.expression(node.condition);
          const update = this.statement(node.update);
          const body = this.block(node.body);
          const at = condition.at;
          // The lanes still looping, kept in place: reused on every run, as an `if`'s are.
          const running: number[] = [];
          return (lanes) => {
            init(lanes);
            running.length = 0;
            for (let position = 0; position < lanes.length; position++)
              running.push(lanes[position] ?? 0);
            for (;;) {
              if (condition.subgroup) markActive(machine, running);
              let kept = 0;
              for (let position = 0; position < running.length; position++) {
                const lane = running[position] ?? 0;
                if (at(lane) === true) running[kept++] = lane;
              }
              running.length = kept;
              if (kept === 0) return;
              body(running);
              update(running);
            }
          };
        });
      case 'call':
        return this.callStatement(node.call);
      case 'return':
        throw new WgslCompileError('return in an entry point');
    }
  }

  private lanewise(subgroup: boolean, run: Run): Run {
    return subgroup
      ? (lanes) => {
          markActive(this.machine, lanes);
          run(lanes);
        }
      : run;
  }

  private callStatement(call: ExprNode): Run {
    if (
      call.kind === 'call' &&
      (call.callee === 'workgroupBarrier' || call.callee === 'storageBarrier')
    ) {
      const machine = this.machine;
      return (lanes) => {
        if (lanes.length !== machine.workgroupSize)
          throw new WgslExecutionError(
            `${call.callee}() reached by ${lanes.length} of ${machine.workgroupSize} invocations (non-uniform control flow)`,
          );
        // Only workgroupBarrier orders workgroup memory; storageBarrier orders storage buffers.
        if (call.callee === 'workgroupBarrier') machine.epoch += 1;
      };
    }
    const value = this.expression(call);
    const at = value.at;
    return this.lanewise(value.subgroup, (lanes) => {
      for (let position = 0; position < lanes.length; position++) at(lanes[position] ?? 0);
    });
  }

  // Every lane's value is computed before any is stored, as lockstep lanes would.
  private assignment(target: ExprNode, valueNode: ExprNode): Run {
    const values: Value[] = new Array<Value>(this.machine.workgroupSize);
    if (target.kind === 'name') {
      const binding = this.lookup(target.name);
      if (binding.kind !== 'local' || !binding.mutable)
        throw new WgslCompileError(`cannot assign to '${target.name}'`);
      const value = as(this.expression(valueNode), binding.type);
      this.checkType(value, binding.type, `'${target.name}'`);
      const slot = binding.slot;
      const at = value.at;
      return this.lanewise(value.subgroup, (lanes) => {
        const count = lanes.length;
        for (let position = 0; position < count; position++) {
          const lane = lanes[position] ?? 0;
          values[lane] = at(lane);
        }
        for (let position = 0; position < count; position++) {
          const lane = lanes[position] ?? 0;
          slot[lane] = values[lane] as Value;
        }
      });
    }
    if (target.kind === 'index' && target.base.kind === 'name') {
      const binding = this.lookup(target.base.name);
      if (binding.kind !== 'memory')
        throw new WgslCompileError(`cannot index '${target.base.name}'`);
      const memory = binding.memory;
      const index = as(this.expression(target.index), scalarType('u32'));
      const value = as(this.expression(valueNode), memory.element);
      this.checkType(value, memory.element, memory.name);
      const indices: number[] = new Array<number>(this.machine.workgroupSize);
      const [indexAt, valueAt] = [index.at, value.at];
      return this.lanewise(value.subgroup || index.subgroup, (lanes) => {
        const count = lanes.length;
        for (let position = 0; position < count; position++) {
          const lane = lanes[position] ?? 0;
          indices[lane] = indexAt(lane) as number;
          values[lane] = valueAt(lane);
        }
        for (let position = 0; position < count; position++) {
          const lane = lanes[position] ?? 0;
          memory.store(indices[lane] ?? 0, values[lane] as Value, lane);
        }
      });
    }
    throw new WgslCompileError('unsupported assignment target');
  }
}
