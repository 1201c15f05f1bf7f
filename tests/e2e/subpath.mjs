#!/usr/bin/env node
// tests/e2e/subpath.mjs — end-to-end check of the release build in dist/, served the way
// GitHub Pages serves a project site: from a subpath (/kubeloop/), not from /.
//
// 1. Serves dist/ under /kubeloop/ with scripts/serve.mjs on 127.0.0.1 (random free port), as
//    a host would: the precompressed .br/.gz files when the browser accepts them. The wasm
//    module must come compressed when dist/ has its compressed copies.
// 2. Opens the page in Debian's headless Chromium through playwright-core (no browser
//    download). Fails if ANY request leaves the page's origin, fails, or gets a 4xx/5xx,
//    or if the page logs an error or throws.
// 3. Runs the UI story (selectors are the contract with src/ui):
//      fill #manifest with a Pod, click #apply  -> #apply-result says "pod/web created"
//      click #settle                            -> tr[data-pod="web"] is Running,
//                                                  #events has Scheduled and Started
//      click #export                           -> kubeloop-export.yaml downloads, with the Pod
//      fill #manifest with "kind: [", #apply    -> #apply-error is visible and non-empty
//      open ?lesson=02-desired-state           -> #lesson-title (fetched lessons/<id>.md)
//    saving screenshots to tests/e2e/screenshots/ (gitignored).
// Prints one "e2e: PASS ..." or "e2e: FAIL ..." line; exits non-zero on failure.
//
// Usage: node tests/e2e/subpath.mjs            (after `trunk build --release --offline`)
// Environment:
//   E2E_SMOKE_ONLY=1   only check that the page loads from the subpath and the app renders
//                      (E2E_SMOKE_SELECTOR, default "#app, #manifest", becomes visible)
//   E2E_DIST=path      directory to serve (default: dist/ at the repo root)
//   E2E_BASE=/x/       subpath to serve it under (default: /kubeloop/)
//   CHROMIUM=path      browser binary (default: /usr/bin/chromium)
//   E2E_TIMEOUT_MS=n   per-step timeout (default: 15000; the first load gets 4x)

import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { normaliseBase, serve } from '../../scripts/serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.resolve(ROOT, process.env.E2E_DIST ?? 'dist');
const BASE = normaliseBase(process.env.E2E_BASE ?? '/kubeloop/');
const SHOTS = path.join(ROOT, 'tests/e2e/screenshots');
const SMOKE_ONLY = ['1', 'true', 'yes'].includes((process.env.E2E_SMOKE_ONLY ?? '').toLowerCase());
const SMOKE_SELECTOR = process.env.E2E_SMOKE_SELECTOR ?? '#app, #manifest';
const STEP_MS = Number(process.env.E2E_TIMEOUT_MS ?? 15000);
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const CHROME_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const POD_MANIFEST = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
    - name: nginx
      image: nginx:1.25
`;

const log = (...args) => console.log('[e2e]', ...args);
const show = (p) => (path.relative(ROOT, p).startsWith('..') ? p : path.relative(ROOT, p) || '.');

// --- small waiting helpers (playwright-core has no `expect`) ----------------------------------
async function waitForText(page, selector, text, what) {
  try {
    await page.waitForFunction(
      ([sel, want]) => document.querySelector(sel)?.textContent?.includes(want),
      [selector, text],
      { timeout: STEP_MS },
    );
  } catch {
    const actual = await page.locator(selector).first().textContent({ timeout: 100 }).catch(() => null);
    throw new Error(`${what}: expected ${selector} to contain ${JSON.stringify(text)}, ` +
      `got ${actual === null ? '(no such element)' : JSON.stringify(actual.trim().slice(0, 300))}`);
  }
}

async function waitVisible(page, selector, what, timeout = STEP_MS) {
  try {
    await page.locator(selector).first().waitFor({ state: 'visible', timeout });
  } catch {
    throw new Error(`${what}: ${selector} did not become visible within ${timeout} ms`);
  }
}

async function screenshot(page, name) {
  const file = path.join(SHOTS, name);
  await page.screenshot({ path: file, fullPage: true });
  log(`screenshot ${show(file)}`);
}

// --- the UI story ------------------------------------------------------------------------------
async function story(page) {
  await waitVisible(page, '#manifest', 'page load', 4 * STEP_MS);

  // Apply a Pod.
  await page.fill('#manifest', POD_MANIFEST);
  await page.click('#apply');
  await waitForText(page, '#apply-result', 'pod/web created', 'apply');
  log('applied: pod/web created');

  // Skip to settled: the pod is scheduled, started and Running.
  await page.click('#settle');
  const row = 'tr[data-pod="web"]';
  await waitForText(page, row, 'Running', 'settle');
  // Columns are NAME READY STATUS RESTARTS AGE.
  const cells = await page.locator(`${row} > :is(td, th)`).allTextContents();
  if (cells.length < 5 || cells[0].trim() !== 'web' || !cells[2].includes('Running')) {
    throw new Error(`pods table: expected cells NAME READY STATUS RESTARTS AGE = web, ?, Running, ?, ?; ` +
      `got ${JSON.stringify(cells.map((c) => c.trim()))}`);
  }
  await waitForText(page, '#events', 'Scheduled', 'events');
  await waitForText(page, '#events', 'Started', 'events');
  log(`settled: ${JSON.stringify(cells.map((c) => c.trim()))}`);
  await screenshot(page, 'pod-running.png');

  // Export: the page downloads what was applied, cut to the fields the student set.
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: STEP_MS }), page.click('#export')]);
  const chunks = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk);
  const exported = Buffer.concat(chunks).toString('utf8');
  if (download.suggestedFilename() !== 'kubeloop-export.yaml' || !exported.includes('kind: Pod') ||
      !exported.includes('name: web') || exported.includes('nodeName') || exported.includes('status:')) {
    throw new Error(`export: expected kubeloop-export.yaml with the Pod web and no status or nodeName, got ` +
      `${download.suggestedFilename()}: ${JSON.stringify(exported.slice(0, 300))}`);
  }
  log(`export: ${download.suggestedFilename()}, ${exported.split('\n---\n').length - 1} object(s)`);

  // Bad YAML shows an error.
  await page.fill('#manifest', 'kind: [');
  await page.click('#apply');
  await waitVisible(page, '#apply-error', 'bad yaml');
  await page.waitForFunction(
    () => (document.querySelector('#apply-error')?.textContent ?? '').trim().length > 0,
    undefined,
    { timeout: STEP_MS },
  ).catch(() => { throw new Error('bad yaml: #apply-error is visible but empty'); });
  log(`apply error: ${JSON.stringify((await page.textContent('#apply-error')).trim().slice(0, 200))}`);
  await screenshot(page, 'apply-error.png');

  // A lesson: its Markdown is fetched from lessons/<id>.md beside the page.
  await page.goto(new URL('?lesson=02-desired-state', page.url()).href, { waitUntil: 'load' });
  await waitForText(page, '#lesson-title', 'Declaring desired state', 'lesson');
  log(`lesson: ${JSON.stringify((await page.textContent('#lesson-title')).trim())}`);
}

async function smoke(page) {
  await waitVisible(page, SMOKE_SELECTOR, 'page load', 4 * STEP_MS);
  await screenshot(page, 'smoke.png');
}

// --- main ----------------------------------------------------------------------------------------
async function main() {
  await fs.access(path.join(DIST, 'index.html')).catch(() => {
    throw new Error(`${show(DIST)}/index.html not found: run trunk build --release --offline first`);
  });
  await fs.mkdir(SHOTS, { recursive: true });

  const server = await serve({ dir: DIST, base: BASE, cacheControl: 'no-store' });
  const origin = `http://127.0.0.1:${server.address().port}`;
  const problems = []; // everything that makes the check fail, in order
  const requests = [];
  let browser;
  let page;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROME_ARGS });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });

    // Every request from every page/worker passes here: only the page's own origin is let
    // through; anything else is aborted and counted as a failure.
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === origin) {
        return route.continue();
      }
      problems.push(`off-origin request: ${route.request().method()} ${url}`);
      return route.abort('blockedbyclient');
    });
    context.on('request', (req) => requests.push(req.url()));
    const wasmEncodings = [];
    context.on('response', async (res) => {
      if (res.url().endsWith('.wasm')) wasmEncodings.push((await res.allHeaders())['content-encoding'] ?? 'identity');
    });
    context.on('requestfailed', (req) => {
      // The page stops its own download of the rest of the module when the worker fetches it
      // first (index.html): that one is aborted on purpose.
      if (req.url().includes('/kubeloop-rest-') && req.failure()?.errorText === 'net::ERR_ABORTED') return;
      if (new URL(req.url()).origin === origin) {
        problems.push(`request failed: ${req.url()} (${req.failure()?.errorText})`);
      }
    });
    context.on('response', (res) => {
      if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
    });

    page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
    });

    // Visit the subpath without its trailing slash, as a person typing it would:
    // the server redirects to /kubeloop/ and every asset must load relative to that.
    const url = `${origin}${BASE.slice(0, -1)}`;
    log(`serving ${show(DIST)} at ${origin}${BASE}; opening ${url}`);
    await page.goto(url, { waitUntil: 'load', timeout: 4 * STEP_MS });
    if (new URL(page.url()).pathname !== BASE) problems.push(`landed on ${page.url()}, expected ${origin}${BASE}`);

    await (SMOKE_ONLY ? smoke(page) : story(page));

    // The wasm module itself must have come from under the subpath.
    const wasm = requests.filter((u) => u.endsWith('.wasm'));
    if (!wasm.some((u) => new URL(u).pathname.startsWith(BASE))) {
      problems.push(`no .wasm was loaded from ${BASE} (requests: ${requests.join(', ')})`);
    }
    // Served compressed, as a host with the precompressed copies would.
    const dir = await fs.readdir(DIST);
    const compressed = dir.some((f) => f.endsWith('.wasm.br') || f.endsWith('.wasm.gz'));
    if (compressed && !wasmEncodings.some((e) => e === 'br' || e === 'gzip')) {
      problems.push(`dist/ has a compressed wasm, but it was served as ${wasmEncodings.join(', ') || 'nothing'}`);
    }
    log(`wasm served with content-encoding ${wasmEncodings.join(', ')}`);
    await page.waitForLoadState('networkidle', { timeout: STEP_MS }).catch(() => {});
  } catch (err) {
    problems.push(err.message.split('\n')[0]);
    if (page) await screenshot(page, 'failure.png').catch(() => {});
  } finally {
    await browser?.close().catch(() => {});
    server.close();
  }

  const mode = SMOKE_ONLY ? 'smoke (E2E_SMOKE_ONLY=1)' : 'story';
  if (problems.length) {
    for (const p of problems) console.log(`[e2e]   ${p}`);
    console.log(`e2e: FAIL subpath ${BASE} ${mode}: ${problems.length} problem(s), first: ${problems[0]}`);
    return 1;
  }
  console.log(`e2e: PASS subpath ${BASE} ${mode}: ${requests.length} requests, all same-origin and OK`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.log(`e2e: FAIL ${err.message}`);
    process.exit(1);
  },
);
