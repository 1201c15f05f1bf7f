#!/usr/bin/env node
// tests/e2e/load.mjs — the first load of the release build over a slow network: Chromium's
// Slow 4G (150 ms latency, 1.6 Mbps down, 750 kbps up, through CDP's
// Network.emulateNetworkConditions), the cache disabled, dist/ served compressed by
// scripts/serve.mjs under /kubeloop/. Run by tests/e2e/perf.mjs before its own checks, or alone.
//
//   slow4g_fcp_ms          navigation start → first-contentful-paint (the first non-empty paint)
//   slow4g_shell_ms        → the static page shell (#shell in index.html) first visible (the
//                          frame it is laid out in, just before its paint), or n/a
//   slow4g_interactive_ms  → the app's `kubeloop-interactive` mark (src/ui/clock.rs)
//   wasm_transfer_bytes    the wasm module's bytes on the wire (its encoded body, as served)
//   wasm_raw_bytes         the module itself, decoded
//
// Prints one grep-able line:
//   load: slow4g_fcp_ms=… slow4g_shell_ms=… slow4g_interactive_ms=… wasm_transfer_bytes=… wasm_raw_bytes=…
// Recorded, not enforced, except that interactive past 30 s fails.
//
// Usage: node tests/e2e/load.mjs   (after `trunk build --release --offline`)
// Environment: E2E_DIST (default dist/), CHROMIUM (default /usr/bin/chromium),
//   LOAD_ENCODINGS (alone only; default "br,gzip"): the precompressed copies the server may
//   send, to compare ("gzip", or "" for none)

import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';
import { typed } from './page.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DIST = path.resolve(ROOT, process.env.E2E_DIST ?? 'dist');
export const BASE = '/kubeloop/';
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const CHROME_ARGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'];
const INTERACTIVE_LIMIT_MS = 30000;
// Chromium DevTools' "Slow 4G" preset (throughputs in bytes per second).
const SLOW_4G = { offline: false, latency: 150, downloadThroughput: 200000, uploadThroughput: (750 * 1000) / 8 };

const log = (...args) => console.log('[load]', ...args);

// Runs in the page before its own scripts: notes when #shell is first visible (checked each
// frame until the app is interactive).
function watchShell() {
  const visible = (el) => {
    if (!el) return false;
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && style.visibility !== 'hidden' && style.display !== 'none' && style.opacity !== '0';
  };
  const frame = (t) => {
    if (window.__shellVisibleAt === undefined && visible(document.getElementById('shell'))) window.__shellVisibleAt = t;
    if (window.__shellVisibleAt === undefined && performance.getEntriesByName('kubeloop-interactive').length === 0) {
      requestAnimationFrame(frame);
    }
  };
  requestAnimationFrame(frame);
}

/// Where the rest of the module stands (src/ui/rest.rs) in the page and in its workers.
async function restState(page) {
  const pageState = await page.evaluate(() => {
    const r = window.kubeloopRest;
    return r ? { url: r.url, waited: r.loads.waited, fromWorker: r.loads.fromWorker, loaded: !!(r.exports && r.exports.__rest_loaded && r.exports.__rest_loaded.value) } : null;
  });
  const workers = await Promise.all(page.workers().map((w) => w.evaluate(() => {
    const r = self.kubeloopRest;
    return r ? { waited: self.kubeloopRestLoads.waited, loaded: !!(r.exports && r.exports.__rest_loaded && r.exports.__rest_loaded.value) } : null;
  }).catch(() => null)));
  return { page: pageState, workers };
}

/// The wasm module's resource timing, in the page's time: the simulation's worker downloads it
/// (index.html), or the page itself when it runs without one. Null when neither did.
export async function wasmTiming(page) {
  const find = (origin) => {
    const e = performance.getEntriesByType('resource').find((r) => r.name.endsWith('_bg.wasm'));
    const shift = performance.timeOrigin - origin;
    return e ? { url: e.name, transfer: e.transferSize, encoded: e.encodedBodySize, raw: e.decodedBodySize, start: e.startTime + shift, end: e.responseEnd + shift } : null;
  };
  const origin = await page.evaluate(() => performance.timeOrigin);
  const own = await page.evaluate(find, origin);
  if (own) return own;
  for (const worker of page.workers()) {
    const theirs = await worker.evaluate(find, origin).catch(() => null);
    if (theirs) return theirs;
  }
  return null;
}

/// One throttled first load in a fresh context of `browser`; returns the numbers and any
/// problems (strings).
export async function measureLoad(browser, origin) {
  const problems = [];
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // Over Slow 4G the module comes slowly: the worker boots rather than fetch the boot image
  // (src/ui/port/worker.js), whose bytes would only slow the rest of the module.
  const bootImages = [];
  context.on('request', (request) => { if (/_boot\.wasm$/.test(new URL(request.url()).pathname)) bootImages.push(request.url()); });
  try {
    const page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    await page.addInitScript(watchShell);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    await cdp.send('Network.emulateNetworkConditions', SLOW_4G);
    const encodings = new Map();
    cdp.on('Network.responseReceived', ({ response }) => {
      const h = Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k.toLowerCase(), v]));
      encodings.set(response.url, h['content-encoding'] ?? 'identity');
    });

    await page.goto(`${origin}${BASE}?seed=1`, { waitUntil: 'commit', timeout: INTERACTIVE_LIMIT_MS });
    await page.waitForFunction(() => performance.getEntriesByName('kubeloop-interactive').length > 0, undefined, {
      timeout: INTERACTIVE_LIMIT_MS,
      polling: 50,
    }).catch(() => problems.push(`not interactive within ${INTERACTIVE_LIMIT_MS} ms on Slow 4G`));
    // first-contentful-paint can be reported a frame after the paint itself.
    await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0, undefined, { timeout: 5000 })
      .catch(() => problems.push('no first-contentful-paint entry'));
    // The start must not have waited for the rest of the module (src/ui/rest.rs).
    const started = await restState(page);
    const waitedAtStart = [started.page, ...started.workers].filter((s) => s && s.waited > 0).length;
    if (waitedAtStart) problems.push('the start ran code that was moved to the rest of the module and waited for it: record the profile again (node scripts/split-profile.mjs, then rebuild)');
    const m = await page.evaluate(() => {
      const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? -1;
      return {
        fcp: at('first-contentful-paint'),
        interactive: at('kubeloop-interactive'),
        shell: window.__shellVisibleAt ?? null,
        hasShell: document.getElementById('shell') !== null,
      };
    });
    m.wasm = await wasmTiming(page);
    if (!m.wasm) problems.push('no .wasm in the resource timings');
    const encoding = (m.wasm && encodings.get(m.wasm.url)) ?? '?';
    // A student who types at once, before the rest has arrived: the command that needs it waits
    // for it, and answers.
    let rest = null;
    if (started.page && started.page.url) {
      const typedAt = await page.evaluate(() => performance.now());
      const out = await typed(page, 'kubectl explain pods.spec.containers', 60000);
      const answeredAt = await page.evaluate(() => performance.now());
      if (!/FIELDS?:/.test(out)) problems.push(`kubectl explain, typed at once, printed ${JSON.stringify(out.slice(0, 200))}`);
      await page.waitForFunction(() => window.kubeloopRest.exports.__rest_loaded.value === 1, undefined, { timeout: INTERACTIVE_LIMIT_MS })
        .catch(() => problems.push('the page never loaded the rest of the module'));
      const after = await restState(page);
      if (!after.workers.some((w) => w && w.loaded)) problems.push('the worker never loaded the rest of the module');
      const loadedAt = await page.evaluate(() => performance.now());
      // The rest's download, whichever thread made it (the page stops its own when the worker
      // fetches first).
      const entries = (context) => context.evaluate(() => performance.getEntriesByType('resource')
        .filter((e) => e.name.includes('kubeloop-rest-') && e.encodedBodySize > 0)
        .map((e) => ({ encoded: e.encodedBodySize, raw: e.decodedBodySize }))).catch(() => []);
      const fetched = [...await entries(page), ...(await Promise.all(page.workers().map(entries))).flat()];
      rest = { fetches: fetched.length, encoded: fetched[0]?.encoded ?? null, raw: fetched[0]?.raw ?? null, end: loadedAt };
      rest.answerMs = answeredAt - typedAt;
      rest.workerWaited = after.workers.reduce((n, w) => n + ((w && w.waited) || 0), 0);
      rest.fromWorker = after.page.fromWorker;
    }
    if (bootImages.length) problems.push(`the worker fetched the boot image over Slow 4G (${bootImages.join(', ')})`);
    return { ...m, encoding, rest, problems };
  } finally {
    await context.close().catch(() => {});
  }
}

/// The wasm module's size on disk, raw and as its precompressed copies.
export async function wasmSizes(dist = DIST) {
  const wasm = (await fs.readdir(dist)).find((f) => f.endsWith('_bg.wasm'));
  if (!wasm) return null;
  const size = async (f) => (await fs.stat(path.join(dist, f)).catch(() => null))?.size ?? null;
  return { file: wasm, raw: await size(wasm), gzip: await size(`${wasm}.gz`), brotli: await size(`${wasm}.br`) };
}

/// Measures, logs and prints the `load:` line; returns the problems.
export async function reportLoad(browser, origin) {
  const t0 = Date.now();
  const m = await measureLoad(browser, origin);
  const ms = (v) => (v === null || v < 0 ? 'n/a' : v.toFixed(0));
  const sizes = await wasmSizes();
  if (sizes) {
    log(`${sizes.file} on disk: raw ${sizes.raw} B, gzip -9 ${sizes.gzip ?? 'n/a'} B, brotli 11 ${sizes.brotli ?? 'n/a'} B`);
  }
  // The worker's download is not among the page's own responses: its encoding is the copy on
  // disk whose size came over the wire.
  if (m.encoding === '?' && m.wasm && sizes) {
    const sent = { [sizes.brotli]: 'br', [sizes.gzip]: 'gzip', [sizes.raw]: 'identity' }[m.wasm.encoded];
    if (sent) m.encoding = sent;
  }
  log(`Slow 4G, cache disabled (${((Date.now() - t0) / 1000).toFixed(1)} s): first contentful paint ${ms(m.fcp)} ms, ` +
    `shell ${m.shell !== null ? `${ms(m.shell)} ms` : m.hasShell ? 'never visible' : 'n/a (no #shell in the page)'}, wasm fetched by ${ms(m.wasm?.end ?? -1)} ms ` +
    `(content-encoding ${m.encoding}), interactive ${ms(m.interactive)} ms`);
  if (m.rest) {
    log(`the rest of the module: ${m.rest.encoded} B on the wire (${m.rest.raw} B raw, fetched ${m.rest.fetches} time(s)), in the page by ${ms(m.rest.end)} ms; ` +
      `kubectl explain typed at once answered in ${ms(m.rest.answerMs)} ms (the worker fetched the rest itself ${m.rest.workerWaited} time(s), ` +
      `and handed it to the page ${m.rest.fromWorker} time(s))`);
  }
  console.log(`load: slow4g_fcp_ms=${ms(m.fcp)} slow4g_shell_ms=${ms(m.shell)} slow4g_interactive_ms=${ms(m.interactive)} ` +
    `wasm_transfer_bytes=${m.wasm?.encoded ?? 'n/a'} wasm_raw_bytes=${m.wasm?.raw ?? 'n/a'} wasm_encoding=${m.encoding} ` +
    `rest_transfer_bytes=${m.rest?.encoded ?? 'n/a'} slow4g_rest_ms=${m.rest ? ms(m.rest.end) : 'n/a'}`);
  if (m.interactive > INTERACTIVE_LIMIT_MS) m.problems.push(`interactive after ${ms(m.interactive)} ms on Slow 4G (> ${INTERACTIVE_LIMIT_MS})`);
  return m.problems;
}

async function main() {
  await fs.access(path.join(DIST, 'index.html'));
  const encodings = (process.env.LOAD_ENCODINGS ?? 'br,gzip').split(',').filter(Boolean);
  const server = await serve({ dir: DIST, base: BASE, cacheControl: 'no-store', encodings });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROME_ARGS });
  let problems;
  try {
    problems = await reportLoad(browser, `http://127.0.0.1:${server.address().port}`);
  } finally {
    await browser.close().catch(() => {});
    server.close();
  }
  if (problems.length) {
    console.log(`load: FAIL ${problems.join('; ')}`);
    return 1;
  }
  console.log('load: PASS (numbers recorded, not enforced)');
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then((code) => process.exit(code), (err) => {
    console.log(`load: FAIL ${err.message}`);
    process.exit(1);
  });
}
