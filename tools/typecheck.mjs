// `tsc --noEmit -p DIR` in process, for tests that typecheck one scratch project several times
// with edits in between: like `tsc --incremental`, a check re-parses only the edited files and
// rechecks only the files an edit can affect (importers of a file whose declarations changed).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from './workspace.mjs';

// The repository's own TypeScript, the one its packages' `tsc` builds run.
const ts = createRequire(join(ROOT, 'package.json'))('typescript');

/**
 * Writes `dir/tsconfig.json` (the repository's strict settings, no output, plus `options` and the
 * `files`/`include` of `sources`) and a `package.json` making `dir`'s sources ES modules.
 */
export function writeScratchProject(dir, sources, options = {}) {
  const base = JSON.parse(readFileSync(join(ROOT, 'tsconfig.base.json'), 'utf8'));
  const compilerOptions = {
    ...base.compilerOptions,
    composite: false,
    declaration: false,
    noEmit: true,
    ...options,
  };
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions, ...sources }, null, 2),
  );
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
}

/** A checker of the project `dir/tsconfig.json`: each call returns tsc's error report ('' when clean). */
export function projectChecker(dir) {
  /** Parsed files by path, reused while their text is unchanged. */
  const parsed = new Map();
  let previous;
  return () => {
    const config = ts.getParsedCommandLineOfConfigFile(
      join(dir, 'tsconfig.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
          throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
        },
      },
    );
    const host = ts.createIncrementalCompilerHost(config.options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (fileName, ...rest) => {
      const text = host.readFile(fileName);
      const cached = parsed.get(fileName);
      if (cached !== undefined && cached.text === text) return cached;
      const file = getSourceFile(fileName, ...rest);
      if (file !== undefined) parsed.set(fileName, file);
      return file;
    };
    const program = ts.createSemanticDiagnosticsBuilderProgram(
      config.fileNames,
      config.options,
      host,
      previous,
      config.errors,
    );
    previous = program;
    // The diagnostics tsc reports for a project without emit, in its order and plain format.
    const diagnostics = [
      ...program.getConfigFileParsingDiagnostics(),
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...program.getSyntacticDiagnostics(),
      ...program.getSemanticDiagnostics(),
    ];
    return ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => dir,
      getNewLine: () => '\n',
    });
  };
}
