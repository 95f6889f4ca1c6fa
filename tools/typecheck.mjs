// `tsc --noEmit -p DIR` in process, for tests that typecheck one scratch project several times
// with edits in between: like `tsc --incremental`, a check re-parses only the edited files and
// rechecks only the files an edit can affect (importers of a file whose declarations changed).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from './workspace.mjs';

// The repository's own TypeScript, the one its packages' `tsc` builds run.
const ts = createRequire(join(ROOT, 'package.json'))('typescript');

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
