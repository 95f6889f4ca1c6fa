// The kernels being rewritten import dot4I8 from here; it is now the IR op (removed once they move).
export { dot4I8 } from '../expressions.js';
