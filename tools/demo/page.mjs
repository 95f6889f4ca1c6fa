// The decode demo page: a GGUF model (the tiny test models by default, or a file the user picks)
// run token by token on the page's WebGPU through @forge/llama's browser entry.
import {
  createReferenceDecoder,
  dequantizedModel,
  openWebGpuModel,
  parseLlamaModel,
} from '@forge/llama/browser';

const $ = (id) => document.getElementById(id);
const status = (text) => ($('status').textContent = text);

/** The model the form names: a picked file, else one of the tiny models the server serves. */
async function loadModel() {
  const [file] = $('file').files ?? [];
  if (file !== undefined) return parseLlamaModel(file, file.name);
  const name = $('model').value;
  const response = await fetch(`models/${name}`);
  if (!response.ok) throw new Error(`models/${name}: HTTP ${response.status}`);
  return parseLlamaModel(await response.blob(), name);
}

/** Draws per-kernel time (summed over the profiled step's launches) as horizontal bars. */
function drawChart(launches) {
  const byKernel = new Map();
  for (const { kernel, milliseconds } of launches)
    byKernel.set(kernel, (byKernel.get(kernel) ?? 0) + milliseconds);
  const rows = [...byKernel].sort((a, b) => b[1] - a[1]);
  const canvas = $('chart');
  const context = canvas.getContext('2d');
  const rowHeight = 18;
  canvas.height = rows.length * rowHeight + 8;
  context.clearRect(0, 0, canvas.width, canvas.height);
  context.font = '12px monospace';
  const widest = rows[0]?.[1] ?? 1;
  rows.forEach(([kernel, milliseconds], row) => {
    const y = 4 + row * rowHeight;
    context.fillStyle = '#333';
    context.fillText(kernel, 4, y + 12);
    context.fillStyle = '#4a7bd0';
    context.fillRect(130, y + 2, (milliseconds / widest) * (canvas.width - 230), rowHeight - 6);
    context.fillStyle = '#333';
    context.fillText(`${milliseconds.toFixed(2)} ms`, canvas.width - 90, y + 12);
  });
}

/** Runs the form's decode; returns the figures the browser test checks. */
async function decode() {
  const tokens = $('tokens').value.split(',').map(Number);
  const steps = tokens.length + Number($('generate').value);
  const kv = $('kv').value;
  status('loading the model…');
  const model = await loadModel();
  const decoder = await openWebGpuModel(model, { kv, maxCtx: steps, gpu: navigator.gpu });
  const reference = $('reference').checked
    ? createReferenceDecoder(dequantizedModel(model), { kv })
    : undefined;
  $('adapter').textContent = decoder.adapter;
  $('output').replaceChildren();
  const logits = [];
  const nmse = [];
  const inputs = [];
  let next = tokens[0];
  // Tokens/s over the steps after the first two: the first builds the pipelines, the second is profiled.
  let seconds = 0;
  let measured = 0;
  try {
    for (let position = 0; position < steps; position++) {
      const input = position < tokens.length ? tokens[position] : next;
      inputs.push(input);
      // The second step is profiled launch by launch for the chart; the others run as one submission.
      const result =
        position === 1
          ? await decoder.profileStep(input, position)
          : await decoder.step(input, position);
      if (position === 1) drawChart(result.launches);
      if (position >= 2) {
        seconds += result.milliseconds / 1000;
        measured += 1;
        $('speed').textContent = `${(measured / seconds).toFixed(1)} tokens/s`;
      }
      next = result.token;
      logits.push(Array.from(result.logits));
      const item = document.createElement('li');
      item.textContent = `pos ${position}: ${input} → ${result.token} (logit ${result.logit.toFixed(4)})`;
      if (reference !== undefined) {
        const expected = reference.step(input, position);
        let error = 0;
        let energy = 0;
        expected.forEach((value, i) => {
          error += (result.logits[i] - value) ** 2;
          energy += value ** 2;
        });
        nmse.push(error / energy);
        item.textContent += `, NMSE ${(error / energy).toExponential(2)}`;
      }
      $('output').append(item);
    }
  } finally {
    decoder.close();
  }
  const tokensPerSecond = measured === 0 ? 0 : measured / seconds;
  $('speed').textContent = `${tokensPerSecond.toFixed(1)} tokens/s over ${measured} steps`;
  status('done');
  return {
    steps,
    tokensPerSecond,
    adapter: decoder.adapter,
    inputs,
    nmse,
    logits,
    model: model.name,
  };
}

$('run').addEventListener('click', () => {
  decode().then(
    (result) => (window.forgeDemoResult = result),
    (error) => {
      status(`error: ${error.message}`);
      window.forgeDemoResult = { error: error.message };
    },
  );
});
window.forgeDecode = decode;
status(navigator.gpu === undefined ? 'this browser has no WebGPU (navigator.gpu)' : 'ready');
// `?run` decodes with the form's defaults at once (the browser test and a quick look use it).
if (new URLSearchParams(location.search).has('run')) $('run').click();
