import { F32_MODEL_F16_KV, F32_MODEL_F32_KV, decodeSuite } from './decode-suite.test-support.js';

// The quantized model runs in decode-ptx-sim-quantized.test.ts, so the two files share the cores.
decodeSuite('ptx-sim', [F32_MODEL_F32_KV, F32_MODEL_F16_KV]);
