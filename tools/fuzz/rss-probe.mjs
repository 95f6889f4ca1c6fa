// Preloaded into each `forge` child of the fuzzers (`node --import`): at exit, the process's
// peak resident set size in KiB goes to descriptor 3, where the fuzzer reads it.
import { writeSync } from 'node:fs';

process.on('exit', () => {
  try {
    writeSync(3, String(process.resourceUsage().maxRSS));
  } catch {
    // Run without the fuzzer (no descriptor 3): nothing to report to.
  }
});
