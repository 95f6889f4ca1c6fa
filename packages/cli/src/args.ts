import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export interface ParsedArgs {
  readonly positionals: readonly string[];
  string(name: string): string | undefined;
  strings(name: string): readonly string[];
  flag(name: string): boolean;
}

/** node's parseArgs with its errors turned into one-line UsageErrors. */
export function parseCommandArgs(
  args: readonly string[],
  options: OptionSpec,
  usage: string,
): ParsedArgs {
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    // node's message runs over several lines; keep the first and its hint on how to pass '-x'.
    const lines = (error as Error).message.split('\n');
    const first = (lines[0] ?? 'bad arguments').replace(/\. To specify a positional.*$/, '');
    const dash = lines.find((line) => line.startsWith('To specify an option argument'));
    const hint = dash === undefined ? '' : `; ${dash.replace(/^To/, 'to').replace(/\.$/, '')}`;
    throw new UsageError(`${first.replace(/\.$/, '')}${hint}; usage: ${usage}`);
  }
  const { values, positionals } = parsed;
  return {
    positionals,
    string: (name) => (typeof values[name] === 'string' ? values[name] : undefined),
    strings: (name) => (Array.isArray(values[name]) ? (values[name] as string[]) : []),
    flag: (name) => values[name] === true,
  };
}
