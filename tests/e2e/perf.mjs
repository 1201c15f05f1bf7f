#!/usr/bin/env node
// tests/e2e/perf.mjs — how the release build in dist/ performs, measured in headless Chromium
// (playwright-core, Debian's chromium; no browser download):
//
//   first_interactive_ms  navigation start → the app's `kubeloop-interactive` mark (the first
//                         snapshot is rendered and the terminal takes commands); the check then
//                         runs `kubectl get nodes` to prove the terminal answers.
//   return_interactive_ms the same on a reload: the module from the browser's HTTP cache and its
//                         compiled code from the browser's cache of compiled wasm.
//   frame times           a cluster of 1,000 pods on 50 worker nodes, built through the page
//                         (`sim node add` in the terminal, a 1,000-replica Deployment with small
//                         requests from the editor), running and animating at PERF_SPEED; the
//                         page records requestAnimationFrame deltas for PERF_SECONDS.
//
// First, tests/e2e/load.mjs: the first load over Slow 4G with the cache disabled, printed as its
// own `load: slow4g_fcp_ms=… slow4g_shell_ms=… slow4g_interactive_ms=… wasm_transfer_bytes=…
// wasm_raw_bytes=…` line (fails only past 30 s to interactive). dist/ is served by
// scripts/serve.mjs, compressed as a host would serve it.
//
// Prints one grep-able line:
//   perf: p95_frame_ms=… p50_frame_ms=… max_frame_ms=… frames=… messages_seen=… first_interactive_ms=…
//     return_interactive_ms=… load=…
// The numbers are recorded, not enforced (CI machines vary); the check fails only when they are
// grossly off: first interactive over 5 s, or frames not animating at all.
//
// Usage: node tests/e2e/perf.mjs   (after `trunk build --release --offline`)
// Environment: E2E_DIST (default dist/), CHROMIUM (default /usr/bin/chromium),
//   PERF_SPEED (default 1, a value of the page's speed menu), PERF_SECONDS (default 5),
//   PERF_NODES (default 50), PERF_PODS (default 1000)

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';
import { deployment, pct, type } from './page.mjs';
import { reportLoad, wasmTiming } from './load.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.resolve(ROOT, process.env.E2E_DIST ?? 'dist');
const BASE = '/kubeloop/';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const SPEED = process.env.PERF_SPEED ?? '1';
const SECONDS = Number(process.env.PERF_SECONDS ?? 5);
const NODES = Number(process.env.PERF_NODES ?? 50);
const PODS = Number(process.env.PERF_PODS ?? 1000);
const FIRST_INTERACTIVE_LIMIT_MS = 5000;
const CHROME_ARGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'];

const log = (...args) => console.log('[perf]', ...args);

const DEPLOYMENT = deployment('load', PODS);



async function main() {
  await fs.access(path.join(DIST, 'index.html'));
  const server = await serve({ dir: DIST, base: BASE, cacheControl: 'no-store' });
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROME_ARGS });
  const problems = [];
  try {
    // 0. The first load over Slow 4G (its own context: throttled, cache disabled).
    problems.push(...(await reportLoad(browser, origin)));

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));

    // 1. Time to first interactive cluster.
    await page.goto(`${origin}${BASE}?seed=1`, { waitUntil: 'load' });
    await page.waitForFunction(() => performance.getEntriesByName('kubeloop-interactive').length > 0, undefined, { timeout: 30000 });
    const firstInteractive = await page.evaluate(() => performance.getEntriesByName('kubeloop-interactive')[0].startTime);
    await type(page, 'kubectl get nodes');
    await page.waitForFunction(() => document.querySelector('#terminal-output')?.textContent.includes('worker-1'), undefined, { timeout: 10000 });
    const phases = await page.evaluate(() => {
      const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? -1;
      return { app_start: at('kubeloop-start'), booted: at('kubeloop-booted') };
    });
    phases.wasm_loaded = (await wasmTiming(page))?.end ?? -1;
    // What the worker did with the boot image (src/ui/port/worker.js): put back, or why not.
    const said = await Promise.all(page.workers().map((w) => w.evaluate(() => {
      const t = self.kubeloopBootImageTimes;
      return self.kubeloopBootImage ? `${self.kubeloopBootImage}${t ? ` (the module came in ${t.module} ms, the image in ${t.image ?? '-'} ms)` : ''}` : null;
    }).catch(() => null)));
    const bootImage = said.find((s) => s) ?? 'not asked for';
    log(`first interactive: ${firstInteractive.toFixed(0)} ms after navigation start ` +
      `(wasm fetched by ${phases.wasm_loaded.toFixed(0)} ms, app started at ${phases.app_start.toFixed(0)} ms, ` +
      `cluster booted at ${phases.booted.toFixed(0)} ms; the boot image: ${bootImage})`);
    if (firstInteractive > FIRST_INTERACTIVE_LIMIT_MS) problems.push(`first interactive took ${firstInteractive.toFixed(0)} ms (> ${FIRST_INTERACTIVE_LIMIT_MS})`);
    // The same, coming back: a reload finds the module in the browser's HTTP cache and its
    // compiled code in the browser's cache of compiled wasm (written a moment after a visit).
    await page.waitForTimeout(1500);
    await page.reload({ waitUntil: 'load' });
    await page.waitForFunction(() => performance.getEntriesByName('kubeloop-interactive').length > 0, undefined, { timeout: 30000 });
    const returnInteractive = await page.evaluate(() => performance.getEntriesByName('kubeloop-interactive')[0].startTime);
    log(`first interactive on coming back (a reload): ${returnInteractive.toFixed(0)} ms`);

    // 2. 1,000 pods on 50 nodes, built through the page while the clock is paused.
    await page.click('#play'); // pause
    const t0 = Date.now();
    for (let i = 4; i <= NODES; i++) await type(page, `sim node add worker-${i}`);
    await type(page, 'sleep 20s'); // the kubelets register their Nodes
    await page.waitForFunction((n) => document.querySelectorAll('#map g.node[data-node^="worker-"]').length >= n, NODES, { timeout: 60000 });
    await page.fill('#manifest', DEPLOYMENT);
    await page.click('#apply');
    await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.includes('deployment.apps/load'), undefined, { timeout: 30000 });
    log(`built ${NODES} worker nodes and a ${PODS}-replica Deployment in ${Date.now() - t0} ms`);
    await page.selectOption('#speed', SPEED);
    await page.click('#play'); // play
    // Let the rollout get going, then measure while it runs and animates.
    await page.waitForTimeout(1000);
    // Where the main thread's time goes while measuring (Chromium's own counters, via CDP).
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    const before = await metrics();
    const clockBefore = await page.textContent('#clock');
    const result = await page.evaluate((seconds) => new Promise((resolve) => {
      const deltas = [];
      const ids = new Set();
      let last = performance.now();
      const end = last + seconds * 1000;
      const frame = (t) => {
        deltas.push(t - last);
        last = t;
        for (const m of document.querySelectorAll('#map .token')) ids.add(m.getAttribute('data-from') + '>' + m.getAttribute('data-to') + ':' + (m.getAttribute('data-label') ?? ''));
        if (t < end) requestAnimationFrame(frame);
        else resolve({ deltas, messages: ids.size, sample: [...ids].slice(0, 6) });
      };
      requestAnimationFrame(frame);
    }), SECONDS);
    const after = await metrics();
    const clockAfter = await page.textContent('#clock');
    log(`virtual clock: ${clockBefore} → ${clockAfter} over ${SECONDS} s (the page's clock gives the simulation a ` +
      'budget per tick: a big cluster slows it rather than the frames)');
    const spent = (k) => `${k.replace('Duration', '')}=${((after[k] - before[k]) * 1000).toFixed(0)}ms`;
    log(`main thread over the ${SECONDS} s: ${['TaskDuration', 'ScriptDuration', 'RecalcStyleDuration', 'LayoutDuration'].map(spent).join(' ')}`);
    const pods = await page.evaluate(() => document.querySelectorAll('#nodes .chip, #nodes .chip-count').length);
    const running = await page.evaluate(() => document.querySelector('#workloads')?.textContent ?? '');
    const sorted = [...result.deltas].sort((a, b) => a - b);
    const [p50, p95, max] = [pct(sorted, 0.5), pct(sorted, 0.95), sorted[sorted.length - 1]];
    log(`frames: ${sorted.length} in ${SECONDS} s at ${SPEED}×; messages seen: ${result.messages}, e.g. ${JSON.stringify(result.sample)}`);
    log(`workloads: ${running.replace(/\s+/g, ' ').slice(0, 200)}; pod elements on node cards: ${pods}`);
    if (sorted.length < 10) problems.push(`only ${sorted.length} frames in ${SECONDS} s`);
    if (result.messages === 0) problems.push('no message travelled on the map');
    const load = os.loadavg().map((l) => l.toFixed(2)).join(',');
    console.log(`perf: p95_frame_ms=${p95.toFixed(1)} p50_frame_ms=${p50.toFixed(1)} max_frame_ms=${max.toFixed(1)} frames=${sorted.length} messages_seen=${result.messages} first_interactive_ms=${firstInteractive.toFixed(0)} return_interactive_ms=${returnInteractive.toFixed(0)} nodes=${NODES} pods=${PODS} speed=${SPEED} load=${load}`);
    // requestAnimationFrame times come in whole refresh intervals: 16.7–16.8 ms is one frame.
    if (p95 > 17) log(`p95 frame time ${p95.toFixed(1)} ms is over the 16.7 ms target (recorded, not enforced)`);
  } catch (err) {
    problems.push(err.message.split('\n')[0]);
  } finally {
    await browser.close().catch(() => {});
    server.close();
  }
  if (problems.length) {
    console.log(`perf: FAIL ${problems.join('; ')}`);
    return 1;
  }
  console.log('perf: PASS (numbers recorded, not enforced)');
  return 0;
}

main().then((code) => process.exit(code), (err) => {
  console.log(`perf: FAIL ${err.message}`);
  process.exit(1);
});
