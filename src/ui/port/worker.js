// The simulation's worker (src/ui/port.rs starts it from a Blob URL, as a module worker). The page
// posts it first `{ module, glue }`: its own compiled WebAssembly.Module and the URL of its JS glue,
// so the worker runs the same code with no second download; then each request as a JSON string.
// Requests that come while the module starts wait here. Each answer goes back as the JSON string
// worker_answer returns; anything that goes wrong (the glue cannot load, the module traps) goes
// back as { failed }, after which the worker answers nothing more. Once the module runs, the worker
// says { loaded: true } (the page stops waiting for it to load).
let answer = null;
let dead = false;
const waiting = [];
const fail = (e) => {
  dead = true;
  answer = null;
  postMessage({ failed: String((e && (e.message || e)) || 'the worker failed') });
};
const reply = (json) => {
  try {
    postMessage(answer(json));
  } catch (e) {
    fail(e);
  }
};
self.onmessage = (event) => {
  const data = event.data;
  if (dead) return;
  if (typeof data === 'string') {
    if (answer) reply(data);
    else waiting.push(data);
    return;
  }
  import(data.glue)
    .then((glue) => glue.default({ module_or_path: data.module }).then(() => {
      answer = glue.worker_answer;
      postMessage({ loaded: true });
      while (answer && waiting.length) reply(waiting.shift());
    }))
    .catch(fail);
};
