#!/usr/bin/env node
// tests/e2e/shell.mjs — the page's shell (#shell in index.html) and the app that takes it over.
//
//   1. The wasm request is held (page.route): the shell alone, as a slow network shows it.
//      Screenshot shell.png; the boxes of the top bar, the panels and the map measured.
//   2. The request goes on: the app mounts. The same boxes measured in the app's first frame
//      (the first animation frame it is in the page), screenshot app.png. Every frame in
//      between is watched: one with neither the shell nor the app (blank), or with both, fails.
//   3. Each box's difference (px) between the shell and the app is printed; more than
//      SHELL_TOLERANCE_PX (default 1) on the top bar, the panels' tops or the map fails.
//   4. A throttled load (CDP, SHELL_THROTTLE_BPS bytes/s, default Slow 4G's 200000, 150 ms
//      latency; 0 skips it) records what the progress line says in each painted frame (ms since
//      navigation start): served compressed (bytes received) and, with SHELL_IDENTITY=1, also
//      uncompressed (bytes of a known total, a percentage). "Starting the cluster…" must be seen.
//
// Usage: node tests/e2e/shell.mjs [outdir]   (after a trunk build; E2E_DIST, default dist/;
//   screenshots in outdir, default tests/e2e/screenshots/shell/)
// Prints `shell: PASS` or `shell: FAIL …`, and one `shell-diff:` line per measured box.

import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.resolve(ROOT, process.env.E2E_DIST ?? 'dist');
const OUT = path.resolve(process.argv[2] ?? path.join(ROOT, 'tests/e2e/screenshots/shell'));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'];
const VIEWPORT = { width: 1440, height: 900 };
const TOLERANCE = Number(process.env.SHELL_TOLERANCE_PX ?? 1);
const THROTTLE = Number(process.env.SHELL_THROTTLE_BPS ?? 200000);
const BASE = '/kubeloop/';

const log = (...args) => console.log('[shell]', ...args);

// The boxes compared; `strict` ones must line up within TOLERANCE.
const BOXES = [
  ['topbar', '.topbar', true],
  ['h1', '.topbar h1', true],
  ['tagline', '.topbar .tagline', true],
  ['time-controls', '.topbar .time-controls', false],
  ['layout', 'main.layout', 'xyw'],
  ['panel.editor', '.panel.editor', false],
  ['editor title', '.panel.editor h2', true],
  ['code-editor', '.panel.editor .code-editor', false],
  ['panel.cluster', '.panel.cluster', false],
  ['control-plane title', '.panel.cluster h2', true],
  ['map', 'svg.map', true],
  ['map frame', 'svg.map .frame', true],
  ['map api box', 'svg.map .box.api', true],
  ['map last node', 'svg.map .node-box:last-of-type', true],
];

// Runs in the page from its start: each animation frame, whether the shell and the app are in
// the body; stops a few frames after the app has appeared.
function watchFrames() {
  window.__frames = [];
  let after = 0;
  const frame = () => {
    const shell = !!document.getElementById('shell');
    const app = !!document.querySelector('#app-root:not([hidden]) > .app');
    if (document.body) window.__frames.push({ t: performance.now(), shell, app });
    if (app) after += 1;
    if (after < 5) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

// Each box's client rectangle under `root` (defined in the page as window.__measure).
function measure(boxes, root) {
  const out = {};
  for (const [name, selector] of boxes) {
    const all = [...document.querySelectorAll(`${root} ${selector}`)];
    const el = selector.endsWith(':last-of-type') ? all[all.length - 1] : all[0];
    if (!el) { out[name] = null; continue; }
    const r = el.getBoundingClientRect();
    out[name] = { x: r.x, y: r.y, w: r.width, h: r.height };
  }
  return out;
}

async function heldThenMounted(browser, origin, query, tag) {
  const context = await browser.newContext({ viewport: VIEWPORT });
  const problems = [];
  try {
    const page = await context.newPage();
    page.on('pageerror', (e) => problems.push(`${tag}: page error ${e.message}`));
    await page.addInitScript(watchFrames);
    await page.addInitScript(`window.__measure = ${measure};`);
    let release;
    const held = new Promise((r) => { release = r; });
    await page.route('**/*.wasm', async (route) => { await held; await route.continue(); });
    await page.goto(`${origin}${BASE}${query}`, { waitUntil: 'domcontentloaded' });
    const hasShell = await page.waitForSelector('#shell', { state: 'visible', timeout: 10000 }).then(() => true, () => false);
    if (!hasShell) problems.push(`${tag}: no visible #shell`);
    await page.waitForTimeout(300);
    const shell = await page.evaluate((boxes) => window.__measure(boxes, '#shell'), BOXES);
    const progress = await page.evaluate(() => document.getElementById('shell-progress')?.getAttribute('aria-valuetext'));
    await page.screenshot({ path: path.join(OUT, `${tag}-shell.png`) });
    release();
    // The app's first frame: measured in the first animation frame it is in the page.
    const app = await page.evaluate((boxes) => new Promise((resolve) => {
      const look = () => {
        if (document.querySelector('#app-root:not([hidden]) > .app svg.map')) resolve(window.__measure(boxes, '#app-root:not([hidden]) > .app'));
        else requestAnimationFrame(look);
      };
      look();
    }), BOXES);
    await page.screenshot({ path: path.join(OUT, `${tag}-app.png`) });
    await page.waitForTimeout(200);
    const frames = await page.evaluate(() => window.__frames);
    const firstApp = frames.findIndex((f) => f.app);
    const blank = frames.filter((f, i) => i > 0 && i <= firstApp && !f.shell && !f.app && frames.slice(0, i).some((g) => g.shell));
    const both = frames.filter((f) => f.shell && f.app);
    if (blank.length) problems.push(`${tag}: ${blank.length} blank frame(s) between the shell and the app`);
    if (both.length) problems.push(`${tag}: ${both.length} frame(s) with both the shell and the app`);
    if (await page.$('#shell')) problems.push(`${tag}: #shell still in the page after the app mounted`);
    return { shell, app, progress, frames: frames.length, problems };
  } finally {
    await context.close().catch(() => {});
  }
}

function diff(shell, app) {
  const lines = [];
  const problems = [];
  for (const [name, , strict] of BOXES) {
    const a = shell[name];
    const b = app[name];
    if (!a || !b) {
      lines.push(`${name}: ${a ? '' : 'not in the shell '}${b ? '' : 'not in the app'}`.trim());
      if (strict && a) problems.push(`${name} is not in the app`);
      continue;
    }
    const d = { x: b.x - a.x, y: b.y - a.y, w: b.w - a.w, h: b.h - a.h };
    const worst = Math.max(...Object.entries(d).filter(([k]) => strict !== 'xyw' || k !== 'h').map(([, v]) => Math.abs(v)));
    const fmt = (v) => (Math.abs(v) < 0.05 ? '0' : v.toFixed(1));
    lines.push(`${name}: dx=${fmt(d.x)} dy=${fmt(d.y)} dw=${fmt(d.w)} dh=${fmt(d.h)}  (shell ${a.x.toFixed(1)},${a.y.toFixed(1)} ${a.w.toFixed(1)}×${a.h.toFixed(1)})`);
    // The top bar, titles and map must match in all four; the layout in all but its height (it
    // grows with what the app adds below the map); the panels are only reported.
    if (strict && worst > TOLERANCE) problems.push(`${name} moved by ${worst.toFixed(1)} px`);
  }
  return { lines, problems };
}

async function throttled(browser, origin, encodings) {
  const server = await serve({ dir: DIST, base: BASE, cacheControl: 'no-store', encodings });
  const context = await browser.newContext({ viewport: VIEWPORT });
  try {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 150, downloadThroughput: THROTTLE, uploadThroughput: 93750 });
    // What each painted frame's progress line says (the frame callback runs just before a paint).
    await page.addInitScript(() => {
      window.__progress = [];
      const frame = (t) => {
        const bar = document.getElementById('shell-progress');
        const line = document.querySelector('#shell .shell-progress-line');
        if (bar && line) {
          const text = `${line.textContent.replace(/\s+/g, ' ').trim()} [valuenow=${bar.getAttribute('aria-valuenow') ?? '-'}]`;
          if (window.__progress[window.__progress.length - 1]?.text !== text) window.__progress.push({ ms: Math.round(t), text });
        }
        if (!document.querySelector('#app-root:not([hidden]) > .app')) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    });
    await page.goto(`http://127.0.0.1:${server.address().port}${BASE}?seed=1`, { waitUntil: 'commit' });
    await page.waitForSelector('#app-root:not([hidden]) > .app svg.map', { timeout: 120000 });
    const seen = await page.evaluate(() => window.__progress);
    return seen;
  } finally {
    await context.close().catch(() => {});
    server.close();
  }
}

async function main() {
  await fs.access(path.join(DIST, 'index.html'));
  await fs.mkdir(OUT, { recursive: true });
  const server = await serve({ dir: DIST, base: BASE, cacheControl: 'no-store' });
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  const problems = [];
  try {
    for (const [tag, query] of [['sandbox', '?seed=1'], ['embed', '?seed=1&embed'], ['lessons', '?lessons']]) {
      const run = await heldThenMounted(browser, origin, query, tag);
      problems.push(...run.problems);
      log(`${tag}: held at "${run.progress}"; ${run.frames} frames watched; screenshots ${path.relative(ROOT, OUT)}/${tag}-{shell,app}.png`);
      const d = diff(run.shell, run.app);
      for (const line of d.lines) console.log(`shell-diff: ${tag}: ${line}`);
      if (tag === 'sandbox') problems.push(...d.problems.map((p) => `${tag}: ${p}`));
    }
    if (THROTTLE > 0) {
      for (const encodings of process.env.SHELL_IDENTITY ? [['br', 'gzip'], []] : [['br', 'gzip']]) {
        const seen = await throttled(browser, origin, encodings);
        const shown = seen.length > 12 ? [...seen.slice(0, 6), { ms: '…', text: `(${seen.length - 10} more)` }, ...seen.slice(-4)] : seen;
        log(`progress, ${THROTTLE} B/s, encodings [${encodings.join(',') || 'identity'}]:`);
        for (const s of shown) console.log(`  ${s.ms} ms  ${s.text}`);
        if (!seen.some((s) => /Starting/.test(s.text))) problems.push(`no "Starting…" seen with encodings [${encodings}]`);
      }
    }
  } finally {
    await browser.close().catch(() => {});
    server.close();
  }
  if (problems.length) {
    console.log(`shell: FAIL ${problems.join('; ')}`);
    return 1;
  }
  console.log('shell: PASS');
  return 0;
}

process.exitCode = await main();
