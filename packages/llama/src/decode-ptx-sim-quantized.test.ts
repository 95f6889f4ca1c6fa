import { QUANTIZED_MODEL, TIED_MODEL, decodeSuite } from './decode-suite.test-support.js';

decodeSuite('ptx-sim', [QUANTIZED_MODEL, TIED_MODEL]);
