// Hashing (BLAKE3 in WebAssembly) is prepared once per test file, as an engine does at start-up.
import { ready } from '@forge/ir';

await ready();
