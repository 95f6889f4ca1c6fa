#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { DAWN_LOG_ENV, opensDawn, runWithoutDawnLog } from './dawn-log.js';
import { runCli } from './main.js';

// A reader that stops early (`forge spec q6k-gemv | head -c 10`) is not an error: end quietly.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

const argv = process.argv.slice(2);
// Dawn writes its log to descriptor 2 from native code: such commands run behind a filter.
const exit =
  process.env[DAWN_LOG_ENV] === undefined && opensDawn(argv)
    ? runWithoutDawnLog(fileURLToPath(import.meta.url), argv)
    : runCli(argv, {
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
        cwd: process.cwd(),
      });
void exit.then((code) => {
  process.exitCode = code;
});
