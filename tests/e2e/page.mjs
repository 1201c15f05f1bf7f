// tests/e2e/page.mjs — what the end-to-end scripts that drive the page share: a Deployment of
// small pods for a big cluster, typing a line in the terminal (and waiting for its answer), what
// crosses to and from the worker, animation frames' deltas, and a percentile.

/// A Deployment of `replicas` nginx pods named after `name`, requesting little (10m, 16Mi), so
/// that thousands fit on a few hundred nodes.
export const deployment = (name, replicas) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: ${replicas}
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      containers:
      - name: app
        image: nginx:1.25
        resources:
          requests:
            cpu: 10m
            memory: 16Mi
`;

/// Types `line` in the page's terminal and presses Enter.
export async function type(page, line) {
  await page.fill('#terminal-input', line);
  await page.press('#terminal-input', 'Enter');
}

/// The `p` percentile (0..1) of ascending `sorted` values.
export const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))];

/// Types `line` and waits for its answer (within `timeout` ms): the text of the output lines after the last `$ line`,
/// once there is a new one and it is not empty (`quiet`: once the line is there, for a command
/// that prints nothing).
export async function typed(page, line, timeout = 120000, quiet = false) {
  const count = () => page.evaluate((l) => [...document.querySelectorAll('#terminal-output .cmd:not(.pending-command)')].filter((c) => c.textContent === `$ ${l}`).length, line);
  const before = await count();
  await type(page, line);
  const handle = await page.waitForFunction(([l, before, quiet]) => {
    const cmds = [...document.querySelectorAll('#terminal-output .cmd:not(.pending-command)')].filter((c) => c.textContent === `$ ${l}`);
    if (cmds.length <= before) return false;
    let out = '';
    for (let e = cmds[cmds.length - 1].nextElementSibling; e && !e.classList.contains('cmd'); e = e.nextElementSibling) out += `${e.textContent}\n`;
    return out.trim() || quiet ? { out } : false;
  }, [line, before, quiet], { timeout, polling: 50 });
  return (await handle.jsonValue()).out;
}

/// Runs in the page before its scripts: records what crosses to and from the worker — each
/// request's kind and when it left, each reply's size, when it came and what it cost in the worker
/// (the `answer_ms`, `encode_ms` and `memory_bytes` the worker writes at the head of every reply).
export const WATCH_WORKER = `(() => {
  const Native = window.Worker;
  if (!Native) return;
  window.kPort = [];
  const sent = new Map();
  window.Worker = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        if (typeof e.data !== 'string') return;
        const head = /^\\{"id":(\\d+),"answer_ms":([^,]+),"encode_ms":([^,]+)(?:,"memory_bytes":([^,]+))?/.exec(e.data.slice(0, 160));
        if (!head) return;
        const id = +head[1];
        const asked = sent.get(id);
        sent.delete(id);
        window.kPort.push({ kind: asked?.kind ?? '?', sent: asked?.at ?? -1, came: performance.now(), bytes: e.data.length, answer_ms: +head[2], encode_ms: +head[3], memory_bytes: +(head[4] ?? NaN) });
      });
    }
    postMessage(data, ...rest) {
      if (typeof data === 'string') {
        const m = /^\\{"id":(\\d+),"request":\\{?"?([A-Za-z]+)/.exec(data);
        if (m) sent.set(+m[1], { kind: m[2], at: performance.now() });
      }
      return super.postMessage(data, ...rest);
    }
  };
})();`;

/// The requestAnimationFrame deltas (ms) over the next `seconds`, as a promise (start it, do
/// something meanwhile, then await it).
export const frameDeltas = (page, seconds) => page.evaluate((seconds) => new Promise((resolve) => {
  const deltas = [];
  let last = performance.now();
  const end = last + seconds * 1000;
  const frame = (t) => {
    deltas.push(t - last);
    last = t;
    if (t < end) requestAnimationFrame(frame);
    else resolve(deltas);
  };
  requestAnimationFrame(frame);
}), seconds);
