// Preloaded into a fuzzed CLI child: reports its peak resident memory (kilobytes) on fd 3 as it
// exits, however it exits, so the fuzzer can bound memory without a tool outside Node.
'use strict';
const { writeSync } = require('node:fs');
process.on('exit', () => {
  try {
    writeSync(3, String(process.resourceUsage().maxRSS));
  } catch {
    // fd 3 is not open when the CLI runs outside the fuzzer.
  }
});
