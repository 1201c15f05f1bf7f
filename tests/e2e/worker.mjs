#!/usr/bin/env node
// tests/e2e/worker.mjs — the simulation in a Web Worker (src/ui/port.rs), on the release build in
// dist/, served under /kubeloop/ as a host would. The page is opened with `?porttest`: the port
// alone, driven through `window.kubeloopPort` (src/ui/port/probe.rs), without the page's app. It
// checks and measures:
//   1. the worker starts (<html data-sim="worker">) and answers `kubectl get nodes` with the
//      nodes table; the time from navigation start to its `kubeloop-worker-ready` mark;
//   2. a `Settle` of a rollout of SETTLE_PODS pods, answered by the worker while the page's
//      requestAnimationFrame keeps ticking (the longest frame is recorded), and the same in the
//      page's thread (`?porttest=thread`) for comparison;
//   3. what one reply with a 1,000-pod cluster's frame (board and sequence included) costs as
//      JSON: written in the worker, read in the page, and its size;
//   4. a worker that dies (an uncaught error in it; an answer it cannot give) or never loads
//      (its fetch of the glue hangs: the 10 s deadline) is reported to on_failure, and the port
//      then answers in the page's thread.
// Prints one grep-able line:
//   worker: ready_ms=… settle_longest_frame_ms=… thread_settle_longest_frame_ms=… frame1000_bytes=…
//           frame1000_encode_ms=… frame1000_decode_ms=… …
// Numbers are recorded, not enforced; it fails when the worker does not start or answer, when a
// failure is not reported, or when frames stop while the worker works (a frame over 1 s).
//
// Usage: node tests/e2e/worker.mjs   (after `trunk build --release --offline`)
// Environment: E2E_DIST (default dist/), CHROMIUM (default /usr/bin/chromium),
//   SETTLE_PODS (default 300), FRAME_PODS (default 1000)

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.resolve(ROOT, process.env.E2E_DIST ?? 'dist');
const BASE = '/kubeloop/';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const CHROME_ARGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'];
const SETTLE_PODS = Number(process.env.SETTLE_PODS ?? 300);
const FRAME_PODS = Number(process.env.FRAME_PODS ?? 1000);
/// Nodes enough for the pods (110 each; the control plane takes none).
const nodesFor = (pods) => Math.max(3, Math.ceil(pods / 100));

const log = (...args) => console.log('[worker]', ...args);

const deployment = (replicas) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: load
spec:
  replicas: ${replicas}
  selector:
    matchLabels:
      app: load
  template:
    metadata:
      labels:
        app: load
    spec:
      containers:
      - name: app
        image: nginx:1.25
        resources:
          requests:
            cpu: 10m
            memory: 16Mi
`;

const run = (line, stdin = null) => ({ Run: { line, stdin, beside: false } });

/// Asks the port one request and waits for its answer (at once in the page's thread, later from
/// the worker), while requestAnimationFrame records every frame until a few frames after it.
async function ask(page, id, request, timeout = 120000) {
  return page.evaluate(([id, json, timeout]) => new Promise((resolve, reject) => {
    const port = window.kubeloopPort;
    const deltas = [];
    let last = performance.now();
    const started = last;
    let answer = null;
    let after = 0;
    const find = () => window.kubeloopPortReplies.map((r) => JSON.parse(r)).find((r) => r.id === id);
    const frame = (t) => {
      deltas.push(t - last);
      last = t;
      if (!answer) { answer = find() ?? null; if (answer) answer.at = t; }
      if (window.kubeloopPortFailures.length) return reject(new Error(`port failed: ${window.kubeloopPortFailures.join('; ')}`));
      if (t - started > timeout) return reject(new Error(`no answer to request ${id} in ${timeout} ms`));
      if (answer && ++after >= 3) return resolve({ answer, deltas, elapsed_ms: answer.at - started });
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(() => {
      last = performance.now();
      const now = port.ask(id, json);
      if (now !== null) answer = JSON.parse(now);
      if (answer) answer.at = performance.now();
      requestAnimationFrame(frame);
    });
    const watch = setInterval(() => {
      if (!answer) { answer = find() ?? null; if (answer) answer.at = performance.now(); }
      if (answer || window.kubeloopPortFailures.length) clearInterval(watch);
    }, 1);
  }), [id, JSON.stringify(request), timeout]);
}

const longest = (deltas) => Math.max(...deltas);

/// Opens the probe: `?porttest` (the worker) or `?porttest=thread`.
async function open(browser, origin, mode, problems) {
  const page = await browser.newPage();
  page.on('pageerror', (err) => problems.push(`page error (${mode}): ${err.message}`));
  page.on('console', (msg) => { if (msg.text().startsWith('kubeloop')) log(`console (${mode}): ${msg.text()}`); });
  await page.goto(`${origin}${BASE}?${mode === 'worker' ? 'porttest' : 'porttest=thread'}`, { waitUntil: 'load' });
  await page.waitForFunction(() => window.kubeloopPort !== undefined, undefined, { timeout: 30000 });
  const sim = await page.evaluate(() => document.documentElement.dataset.sim);
  if (sim !== mode) throw new Error(`<html data-sim="${sim}">, expected "${mode}"`);
  return page;
}

/// Grows the cluster to `nodes` workers and a `pods`-replica Deployment, settled, from request
/// `id` on; the Settle's answer (its frames recorded) and the next free id.
async function grow(page, id, nodes, pods, have) {
  for (let i = have + 1; i <= nodes; i++) await ask(page, id++, run(`sim node add worker-${i}`));
  if (nodes > have) await ask(page, id++, { Settle: null });
  const applied = await ask(page, id++, run('kubectl apply -f -', deployment(pods)));
  if (!/deployment\.apps\/load/.test(applied.answer.stdout ?? '')) throw new Error(`apply printed ${JSON.stringify(applied.answer)}`);
  const settled = await ask(page, id++, 'Settle');
  if (settled.answer.pod_count !== pods) throw new Error(`after Settle: ${settled.answer.pod_count} pods, expected ${pods}`);
  return [settled, id];
}

async function main() {
  await fs.access(path.join(DIST, 'index.html')).catch(() => {
    throw new Error(`${DIST}/index.html not found: run trunk build --release --offline first`);
  });
  const server = await serve({ dir: DIST, base: BASE, cacheControl: 'no-store' });
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROME_ARGS });
  const problems = [];
  const numbers = {};
  try {
    // 1. The worker starts and answers.
    const page = await open(browser, origin, 'worker', problems);
    const nodes = await ask(page, 1, run('kubectl get nodes'));
    const stdout = nodes.answer.stdout ?? '';
    if (!/^NAME\s+STATUS/.test(stdout) || !stdout.includes('worker-1')) throw new Error(`kubectl get nodes printed ${JSON.stringify(stdout)}`);
    const marks = await page.evaluate(() => Object.fromEntries(['kubeloop-start', 'kubeloop-worker-loaded', 'kubeloop-worker-ready']
      .map((n) => [n, performance.getEntriesByName(n)[0]?.startTime ?? -1])));
    numbers.ready_ms = marks['kubeloop-worker-ready'];
    numbers.start_ms = marks['kubeloop-start'];
    numbers.loaded_ms = marks['kubeloop-worker-loaded'];
    if (numbers.ready_ms < 0) problems.push('no kubeloop-worker-ready mark');
    log(`worker ready (its first answer, to the request the probe sends at once) ${numbers.ready_ms.toFixed(0)} ms after ` +
      `navigation start; the module's main ran at ${numbers.start_ms.toFixed(0)} ms, the worker had loaded it at ` +
      `${numbers.loaded_ms.toFixed(0)} ms (then booted its cluster); kubectl get nodes answered in ` +
      `${nodes.elapsed_ms.toFixed(0)} ms:\n${stdout.trimEnd()}`);

    // 2. Settle a rollout in the worker while the page animates.
    let [settled, id] = await grow(page, 2, nodesFor(SETTLE_PODS), SETTLE_PODS, 3);
    numbers.settle_ms = settled.elapsed_ms;
    numbers.settle_longest_frame_ms = longest(settled.deltas);
    numbers.settle_frames = settled.deltas.length;
    log(`worker: Settle of ${SETTLE_PODS} pods answered in ${settled.elapsed_ms.toFixed(0)} ms (in the worker ` +
      `${settled.answer.costs.answer_ms.toFixed(0)} ms); meanwhile ${settled.deltas.length} frames, the longest ` +
      `${numbers.settle_longest_frame_ms.toFixed(1)} ms`);
    if (numbers.settle_longest_frame_ms > 1000) problems.push(`a frame took ${numbers.settle_longest_frame_ms.toFixed(0)} ms while the worker settled`);

    // 3. A 1,000-pod cluster's frame, board and sequence included, as JSON.
    [settled, id] = await grow(page, id, nodesFor(FRAME_PODS), FRAME_PODS, nodesFor(SETTLE_PODS));
    numbers.settle1000_ms = settled.elapsed_ms;
    numbers.settle1000_longest_frame_ms = longest(settled.deltas);
    log(`worker: Settle to ${FRAME_PODS} pods answered in ${settled.elapsed_ms.toFixed(0)} ms, longest frame ${numbers.settle1000_longest_frame_ms.toFixed(1)} ms`);
    await ask(page, id++, { View: { past: null, board: true, board_at: null, sequence: true, detail: null } });
    const costs = [];
    for (let i = 0; i < 7; i++) {
      const { answer, deltas } = await ask(page, id++, 'Frame');
      if (!answer.board || answer.pod_count !== FRAME_PODS) throw new Error(`frame: ${JSON.stringify(answer)}`);
      costs.push({ ...answer.costs, longest: longest(deltas) });
    }
    const median = (k) => costs.map((c) => c[k]).sort((a, b) => a - b)[costs.length >> 1];
    numbers.frame1000_bytes = median('bytes');
    numbers.frame1000_answer_ms = median('answer_ms');
    numbers.frame1000_encode_ms = median('encode_ms');
    numbers.frame1000_decode_ms = median('decode_ms');
    log(`a ${FRAME_PODS}-pod frame (board, sequence): ${(numbers.frame1000_bytes / 1024).toFixed(0)} KiB of JSON; median of ` +
      `${costs.length}: built in ${numbers.frame1000_answer_ms.toFixed(1)} ms and written in ${numbers.frame1000_encode_ms.toFixed(1)} ms ` +
      `(worker), read in ${numbers.frame1000_decode_ms.toFixed(1)} ms (page); each: ${JSON.stringify(costs.map((c) => [c.encode_ms, c.decode_ms].map((x) => +x.toFixed(1))))}`);

    // 4a. The worker dies of an uncaught error: reported, then the page's thread answers.
    const [worker] = page.workers();
    if (!worker) throw new Error('playwright sees no worker');
    await worker.evaluate(() => { setTimeout(() => { throw new Error('boom'); }, 0); });
    await page.waitForFunction(() => window.kubeloopPortFailures.length > 0, undefined, { timeout: 10000 });
    const failure = await page.evaluate(() => [window.kubeloopPortFailures[0], document.documentElement.dataset.sim, window.kubeloopPort.state()]);
    log(`worker error → on_failure(${JSON.stringify(failure[0])}); data-sim=${failure[1]}; state ${failure[2]}`);
    if (failure[1] !== 'thread' || !failure[0].includes('boom')) problems.push(`after the worker's error: ${JSON.stringify(failure)}`);
    const local = await page.evaluate(() => window.kubeloopPort.ask(999, JSON.stringify({ Run: { line: 'kubectl get nodes', stdin: null, beside: false } })));
    if (!local || !JSON.parse(local).stdout.includes('worker-1')) problems.push(`after the failure, the thread answered ${local}`);
    await page.close();

    // 4b. An answer the worker cannot give (a request it cannot read) is a failure too.
    const page2 = await open(browser, origin, 'worker', problems);
    await ask(page2, 1, run('kubectl get nodes'));
    const [worker2] = page2.workers();
    await worker2.evaluate(() => self.onmessage({ data: '{"id":2,"request":"NoSuchRequest"}' }));
    await page2.waitForFunction(() => window.kubeloopPortFailures.length > 0, undefined, { timeout: 10000 });
    const failure2 = await page2.evaluate(() => [window.kubeloopPortFailures[0], document.documentElement.dataset.sim]);
    log(`unreadable request → on_failure(${JSON.stringify(failure2[0])}); data-sim=${failure2[1]}`);
    if (failure2[1] !== 'thread') problems.push(`after the worker's failed answer: ${JSON.stringify(failure2)}`);
    await page2.close();

    // 4c. A worker whose glue never arrives (its second fetch, the worker's, hangs): after the
    // load deadline (10 s) the port gives up on it.
    const page4 = await browser.newPage();
    page4.on('pageerror', (err) => problems.push(`page error (hang): ${err.message}`));
    let glueFetches = 0;
    await page4.route(/kubeloop-[0-9a-f]+\.js$/, (route) => (++glueFetches === 1 ? route.continue() : undefined));
    const hangStart = Date.now();
    await page4.goto(`${origin}${BASE}?porttest`, { waitUntil: 'load' });
    await page4.waitForFunction(() => window.kubeloopPortFailures?.length > 0, undefined, { timeout: 20000 });
    const failure4 = await page4.evaluate(() => [window.kubeloopPortFailures[0], document.documentElement.dataset.sim]);
    numbers.load_deadline_s = (Date.now() - hangStart) / 1000;
    log(`glue fetch hangs (${glueFetches} fetches) → on_failure(${JSON.stringify(failure4[0])}) after ${numbers.load_deadline_s.toFixed(1)} s; data-sim=${failure4[1]}`);
    if (failure4[1] !== 'thread' || !/did not load/.test(failure4[0])) problems.push(`the hung worker: ${JSON.stringify(failure4)}`);
    await page4.close();

    // 2'. The same Settle in the page's thread, for comparison.
    const page3 = await open(browser, origin, 'thread', problems);
    await ask(page3, 1, run('kubectl get nodes'));
    const [settledHere] = await grow(page3, 2, nodesFor(SETTLE_PODS), SETTLE_PODS, 3);
    numbers.thread_settle_ms = settledHere.elapsed_ms;
    numbers.thread_settle_longest_frame_ms = longest(settledHere.deltas);
    log(`thread: Settle of ${SETTLE_PODS} pods answered in ${settledHere.elapsed_ms.toFixed(0)} ms; the longest frame ` +
      `${numbers.thread_settle_longest_frame_ms.toFixed(1)} ms`);
    await page3.close();
  } catch (err) {
    problems.push(err.message.split('\n')[0]);
  } finally {
    await browser.close().catch(() => {});
    server.close();
  }
  const load = os.loadavg().map((l) => l.toFixed(2)).join(',');
  console.log(`worker: ${Object.entries(numbers).map(([k, v]) => `${k}=${Number.isInteger(v) ? v : v.toFixed(1)}`).join(' ')} load=${load}`);
  if (problems.length) {
    console.log(`worker: FAIL ${problems.join('; ')}`);
    return 1;
  }
  console.log('worker: PASS (numbers recorded, not enforced)');
  return 0;
}

main().then((code) => process.exit(code), (err) => {
  console.log(`worker: FAIL ${err.message}`);
  process.exit(1);
});
