// The PTX parser: text in, the plain-data module of ../ast.ts out.
export { parsePtx } from './parser.js';
