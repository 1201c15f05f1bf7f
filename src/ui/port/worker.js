// The simulation's worker, started as a module worker from a Blob URL: by index.html as soon as
// the page arrives (so it fetches its JS glue while the module downloads), or by src/ui/port.rs
// when the page had none. It is posted `{ glue }`, the URL of the module's JS glue, and
// `{ module }`, the page's own compiled WebAssembly.Module (or both at once; a second of either
// is ignored), so it runs the same code with no second download; then each request as a JSON
// string. Requests that come while the module starts wait here. Each answer goes back as the
// JSON string worker_answer returns; anything that goes wrong (the glue cannot load, the module
// traps) goes back as { failed }, after which the worker answers nothing more. Once the module
// runs, the worker says { loaded: true } (the page stops waiting for it to load).
let answer = null;
let dead = false;
let glue = null;
let started = false;
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
  if (data.glue && !glue) {
    glue = import(data.glue);
    glue.catch(() => {});
  }
  if (!data.module || started) return;
  started = true;
  (glue || Promise.reject(new Error('no glue URL')))
    .then((g) => g.default({ module_or_path: data.module }).then(() => {
      answer = g.worker_answer;
      postMessage({ loaded: true });
      while (answer && waiting.length) reply(waiting.shift());
    }))
    .catch(fail);
};
