/**
 * The `forge` command as a library. `runCli` runs one command line against a CliIo and returns its
 * exit code; the golden helpers pin the emitted PTX and WGSL of every catalog kernel under
 * `golden/` and report any byte that changes.
 *
 * @packageDocumentation
 */
export { runCli } from './main.js';
export type { CliIo } from './io.js';
export {
  goldenEntries,
  goldenFileName,
  type GoldenEntrySpec,
  type GoldenTarget,
} from './golden/entries.js';
export {
  checkGolden,
  updateGolden,
  emitEntry,
  readManifest,
  type GoldenProblem,
  type Manifest,
  type ManifestEntry,
} from './golden/golden.js';
export { unifiedDiff } from './golden/unified-diff.js';
export { checkoutGoldenDirectory } from './commands/golden.js';
export { BUILD_INFO as CLI_PACKAGE } from './build-info.js';
