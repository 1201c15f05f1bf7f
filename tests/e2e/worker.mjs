#!/usr/bin/env node
// tests/e2e/worker.mjs — the page with its simulation in a Web Worker (src/ui/port.rs), against
// the same page with `?worker=0` (the simulation in the page's own thread), on the release build
// in dist/ served under /kubeloop/ as a host would. Each mode has its own browser context (its
// own localStorage). It checks:
//   1. the page runs in the worker (<html data-sim="worker">), and `?worker=0` in the thread
//      (data-sim="thread"); a command typed in the terminal answers in both;
//   2. determinism: the same commands (a 3-replica Deployment, skip to settled) give the same pod
//      names in the worker and in the thread; the page's share link (`#session=…`, opened in a
//      fresh context) and a reload (the session saved in localStorage) replay in the worker to
//      the same names;
//   3. a big cluster, built through the page (`sim node add worker-N` typed in the terminal, a
//      Deployment of small pods applied from the editor), in each mode, at the page's top speed:
//      - requestAnimationFrame deltas over BIG_SECONDS while the rollout runs (p50, p95, max),
//        and the page's long tasks meanwhile (PerformanceObserver `longtask`);
//      - how long CLICKS clicks on the pause/play button take to be answered: from the click's
//        event.timeStamp (when the browser made the input) to the button's text changing
//        (MutationObserver), and to the next frame after that (painted);
//      - the speed achieved: virtual seconds per real second, from `sim time` typed before and
//        after the window (and the page's own "running at N×" note, when it shows one);
//      - "skip to settled" (#settle) during the rollout (a `kubectl rollout restart` first when
//        the rollout is already over): the longest frame while it runs, and the time from the
//        click until the terminal says it settled;
//      - in the worker, what crosses the port: each tick's cost in the worker and its reply's
//        size, read from the head of each reply by a wrapper around the page's Worker;
//   4. the worker downloads the module for the page (index.html): when that download fails, the
//      page downloads it itself, and the simulation still runs in the worker;
//   5. the boot image: a worker that puts it back has the cluster a worker that boots has (the
//      same objects, events, leases and etcd revision, the same names for a new Deployment).
// Prints grep-able lines, one per mode:
//   worker: ready_ms=… interactive_ms=… same_names=1
//   worker-big: mode=worker nodes=… pods=… [ticks=… tick_answer_p50_ms=… tick_reply_p50_bytes=…] p50_frame_ms=… p95_frame_ms=… max_frame_ms=… frames=…
//     longtasks=… longtask_max_ms=… click_max_ms=… click_p50_ms=… click_painted_max_ms=…
//     achieved_speed=… settle_ms=… settle_longest_frame_ms=… load=…
// and the targets of issue #28 as met/missed (p95 ≤ 20 ms, every click ≤ 100 ms, skip never
// blocks a frame > 50 ms, in the worker). Numbers are recorded, not enforced (machines vary);
// it fails when a check of 1, 2, 4 or 5 fails, or when frames stop for over 1 s in the worker.
//
// Usage: node tests/e2e/worker.mjs   (after `trunk build --release --offline`)
//        WORKER_BIG=1 node tests/e2e/worker.mjs   the big case: 300 nodes, 9,000 pods
// Environment: E2E_DIST (default dist/), CHROMIUM (default /usr/bin/chromium),
//   BIG_NODES / BIG_PODS (default 50 / 1500; with WORKER_BIG=1, 300 / 9000), BIG_SECONDS (5),
//   BIG_SPEED (100), CLICKS (6), WORKER_MODES (default "worker,thread"), BIG_TRACE (a path
//   prefix: a Chromium trace of the window, summed by scripts/trace-summary.mjs), BIG_PROFILE (a
//   path prefix: a CPU profile of the page's main thread over the window)

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';
import { WATCH_WORKER, deployment, frameDeltas, pct, type, typed } from './page.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.resolve(ROOT, process.env.E2E_DIST ?? 'dist');
const BASE = '/kubeloop/';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const CHROME_ARGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'];
const BIG = !!process.env.WORKER_BIG && process.env.WORKER_BIG !== '0';
const NODES = Number(process.env.BIG_NODES ?? (BIG ? 300 : 50));
const PODS = Number(process.env.BIG_PODS ?? (BIG ? 9000 : 1500));
const SECONDS = Number(process.env.BIG_SECONDS ?? 5);
const SPEED = process.env.BIG_SPEED ?? '100';
const CLICKS = Number(process.env.CLICKS ?? 6);
/// Where to write a Chromium trace of the big window (`<path>-<mode>.json`), for
/// `scripts/trace-summary.mjs`.
const TRACE = process.env.BIG_TRACE ?? '';
/// Where to write a CPU profile of the page's main thread over the big window
/// (`<path>-<mode>.cpuprofile`); a build with `data-keep-debug` names the wasm functions.
const PROFILE = process.env.BIG_PROFILE ?? '';
const MODES = (process.env.WORKER_MODES ?? 'worker,thread').split(',').filter(Boolean);
/// Long waits (a big cluster in the page's thread is slow on purpose: it is the comparison).
const LONG = BIG ? 600000 : 120000;

const log = (...args) => console.log('[worker]', ...args);


const query = (mode, extra = '') => `?seed=1&paused${mode === 'thread' ? '&worker=0' : ''}${extra}`;



/// Opens the page in `mode` in a context of its own; waits until it is interactive.
async function open(browser, origin, mode, problems, url = null) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(WATCH_WORKER);
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(`page error (${mode}): ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'warning' && msg.text().startsWith('kubeloop')) log(`console (${mode}): ${msg.text()}`); });
  await page.goto(url ?? `${origin}${BASE}${query(mode)}`, { waitUntil: 'load' });
  await interactive(page, mode);
  return page;
}

async function interactive(page, mode) {
  await page.waitForFunction(() => performance.getEntriesByName('kubeloop-interactive').length > 0, undefined, { timeout: 30000 });
  const sim = await page.evaluate(() => document.documentElement.dataset.sim);
  if (sim !== mode) throw new Error(`<html data-sim="${sim}">, expected "${mode}"`);
}


const command = (page, line, timeout = LONG, quiet = false) => typed(page, line, timeout, quiet);

const podNames = async (page) => {
  const out = await command(page, 'kubectl get pods -o name');
  return [...out.matchAll(/pod\/[a-z0-9.-]+/g)].map((m) => m[0]).sort();
};

/// A 3-replica Deployment, created, then skip to settled (until the terminal says so).
async function threeReplicasSettled(page) {
  await command(page, 'kubectl create deployment web --image=nginx:1.25 --replicas=3');
  await page.click('#settle');
  await page.waitForFunction(() => [...document.querySelectorAll('#terminal-output .out')].some((o) => /settled after/.test(o.textContent)), undefined, { timeout: 30000 });
}

/// Part 1: where it runs, that it answers, and the same names everywhere.
async function determinism(browser, origin, problems, numbers) {
  const names = {};
  let shareUrl = null;
  for (const mode of ['worker', 'thread']) {
    const page = await open(browser, origin, mode, problems);
    const nodes = await command(page, 'kubectl get nodes');
    if (!/NAME\s+STATUS/.test(nodes) || !nodes.includes('worker-1')) problems.push(`${mode}: kubectl get nodes printed ${JSON.stringify(nodes)}`);
    await threeReplicasSettled(page);
    names[mode] = await podNames(page);
    log(`${mode}: kubectl get nodes answered; after a 3-replica Deployment and skip to settled: ${names[mode].join(' ')}`);
    if (mode === 'worker') {
      numbers.ready_ms = await page.evaluate(() => performance.getEntriesByName('kubeloop-worker-ready')[0]?.startTime ?? -1);
      numbers.interactive_ms = await page.evaluate(() => performance.getEntriesByName('kubeloop-interactive')[0]?.startTime ?? -1);
      if (numbers.ready_ms < 0) problems.push('no kubeloop-worker-ready mark');
      // The share link, then a reload (the session saved in this context's localStorage).
      await page.click('#share');
      await page.waitForSelector('#share-link', { timeout: 10000 });
      shareUrl = await page.inputValue('#share-link');
      if (!shareUrl.includes('#session=')) problems.push(`share link ${shareUrl}`);
      await page.waitForFunction(() => !!localStorage.getItem('kubeloop.session'), undefined, { timeout: 10000 });
      await page.reload({ waitUntil: 'load' });
      await interactive(page, 'worker');
      names.reload = await podNames(page);
      log(`worker, reloaded (the saved session replayed): ${names.reload.join(' ')}`);
    }
    await page.context().close();
  }
  // The share link in a fresh context (no saved session): replayed in the worker.
  const shared = await open(browser, origin, 'worker', problems, shareUrl);
  names.shared = await podNames(shared);
  log(`worker, from the share link (${shareUrl.length} chars): ${names.shared.join(' ')}`);
  await shared.context().close();
  const want = names.worker;
  if (want.length !== 3) problems.push(`worker: ${want.length} pods, expected 3`);
  for (const k of ['thread', 'reload', 'shared']) {
    if (JSON.stringify(names[k]) !== JSON.stringify(want)) problems.push(`pod names differ: worker ${want.join(',')} vs ${k} ${names[k].join(',')}`);
  }
  numbers.same_names = Number(!problems.some((p) => p.startsWith('pod names')));
}

const seconds = (text) => {
  const m = /virtual time (?:(\d+)h)?(?:(\d+)m)?(?:([\d.]+)s)?(?:(\d+)ms)?/.exec(text);
  if (!m) return NaN;
  return (+(m[1] ?? 0)) * 3600 + (+(m[2] ?? 0)) * 60 + (+(m[3] ?? 0)) + (+(m[4] ?? 0)) / 1000;
};

/// Part 3: the big cluster in `mode`.
async function big(browser, origin, mode, problems) {
  const r = { mode, nodes: NODES, pods: PODS, speed: SPEED };
  const page = await open(browser, origin, mode, problems);
  const t0 = Date.now();
  for (let i = 4; i <= NODES; i++) await type(page, `sim node add worker-${i}`);
  await command(page, 'sleep 20s', LONG, true); // the kubelets register their Nodes
  log(`${mode}: ${NODES - 3} nodes added, 20 s slept (${Date.now() - t0} ms)`);
  await page.waitForFunction((n) => document.querySelectorAll('#map g.node[data-node^="worker-"]').length >= n, NODES, { timeout: LONG });
  await page.fill('#manifest', deployment('load', PODS));
  await page.click('#apply');
  await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.includes('deployment.apps/load'), undefined, { timeout: LONG });
  log(`${mode}: built ${NODES} worker nodes and a ${PODS}-replica Deployment in ${Date.now() - t0} ms`);
  await page.selectOption('#speed', SPEED);
  // The clicks' answers: from the input's timestamp to the button's text changing, and to the
  // next frame after that.
  await page.evaluate(() => {
    window.kClicks = [];
    let pending = null;
    const play = () => document.querySelector('#play');
    document.addEventListener('click', (e) => {
      if (e.target.closest?.('#play')) pending = { t0: e.timeStamp, handled: performance.now(), before: play().textContent };
    }, true);
    new MutationObserver(() => {
      if (!pending || play().textContent === pending.before) return;
      const p = pending;
      pending = null;
      const changed = performance.now();
      requestAnimationFrame(() => window.kClicks.push({ delay: p.handled - p.t0, answer: changed - p.t0, painted: performance.now() - p.t0 }));
    }).observe(document.querySelector('.time-controls'), { subtree: true, childList: true, characterData: true });
    window.kLong = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.kLong.push({ at: e.startTime, ms: e.duration }); })
      .observe({ type: 'longtask' });
  });
  const clickPlay = async () => {
    const n = await page.evaluate(() => window.kClicks.length);
    await page.click('#play', { timeout: LONG });
    await page.waitForFunction((n) => window.kClicks.length > n, n, { timeout: LONG, polling: 20 });
  };
  log(`${mode}: playing at ${SPEED}×`);
  await clickPlay(); // play
  await page.waitForTimeout(1000); // the rollout gets going
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  const clicksBefore = await page.evaluate(() => window.kClicks.length);
  const before = await metrics();
  const v0 = seconds(await command(page, 'sim time'));
  const real0 = Date.now();
  const longBefore = await page.evaluate(() => window.kLong.length);
  const portBefore = await page.evaluate(() => window.kPort?.length ?? 0);
  if (PROFILE) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  if (TRACE) await browser.startTracing(page, { path: `${TRACE}-${mode}.json`, categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'blink', 'cc'] });
  const frames = frameDeltas(page, SECONDS);
  // Pause/play pairs spread over the window (each waits for its answer).
  const spacing = Math.max(100, (SECONDS * 1000 - 500) / Math.max(1, CLICKS));
  for (let i = 0; i < CLICKS; i++) {
    const at = Date.now();
    await clickPlay();
    if (i % 2 === 1) await page.waitForTimeout(Math.max(0, spacing * 2 - (Date.now() - at)));
  }
  if (CLICKS % 2 === 1) await clickPlay(); // playing again
  const deltas = await frames;
  if (TRACE) {
    await browser.stopTracing();
    await page.screenshot({ path: `${TRACE}-${mode}.png`, fullPage: true });
  }
  if (PROFILE) {
    const { profile } = await cdp.send('Profiler.stop');
    await fs.writeFile(`${PROFILE}-${mode}.cpuprofile`, JSON.stringify(profile));
  }
  const v1 = seconds(await command(page, 'sim time'));
  const real1 = Date.now();
  const after = await metrics();
  const note = await page.evaluate(() => document.querySelector('#achieved-speed')?.textContent ?? '');
  const clicks = (await page.evaluate(() => window.kClicks)).slice(clicksBefore);
  const longs = (await page.evaluate(() => window.kLong)).slice(longBefore);
  const replies = await page.evaluate((from) => (window.kPort ?? []).slice(from), portBefore);
  const sorted = [...deltas].sort((a, b) => a - b);
  if (mode === 'worker') {
    const ticks = replies.filter((x) => x.kind === 'Tick');
    const st = (k) => { const v = ticks.map(k).sort((a, b) => a - b); return v.length ? [pct(v, 0.5), v[v.length - 1]] : [NaN, NaN]; };
    const [a50, aMax] = st((x) => x.answer_ms), [e50, eMax] = st((x) => x.encode_ms), [b50, bMax] = st((x) => x.bytes), [t50, tMax] = st((x) => x.came - x.sent);
    Object.assign(r, { ticks: ticks.length, tick_answer_p50_ms: a50, tick_answer_max_ms: aMax, tick_encode_max_ms: eMax, tick_reply_p50_bytes: b50, tick_reply_max_bytes: bMax, tick_roundtrip_p50_ms: t50 });
    log(`worker: ${ticks.length} ticks answered in the window (of ${replies.length} replies); in the worker each took p50 ${a50.toFixed(1)} / max ` +
      `${aMax.toFixed(1)} ms to answer and p50 ${e50.toFixed(1)} / max ${eMax.toFixed(1)} ms to write as JSON; replies p50 ${(b50 / 1024).toFixed(0)} KiB, ` +
      `max ${(bMax / 1024).toFixed(0)} KiB; sent → reply in the page p50 ${t50.toFixed(0)} / max ${tMax.toFixed(0)} ms`);
  }
  Object.assign(r, {
    p50_frame_ms: pct(sorted, 0.5), p95_frame_ms: pct(sorted, 0.95), max_frame_ms: sorted[sorted.length - 1], frames: sorted.length,
    longtasks: longs.length, longtask_max_ms: Math.max(0, ...longs.map((l) => l.ms)), longtask_total_ms: longs.reduce((s, l) => s + l.ms, 0),
    clicks: clicks.length, click_max_ms: Math.max(...clicks.map((c) => c.answer)),
    click_p50_ms: [...clicks.map((c) => c.answer)].sort((a, b) => a - b)[clicks.length >> 1],
    click_painted_max_ms: Math.max(...clicks.map((c) => c.painted)), click_delay_max_ms: Math.max(...clicks.map((c) => c.delay)),
    achieved_speed: (v1 - v0) / ((real1 - real0) / 1000),
  });
  const spent = (k) => `${k.replace('Duration', '')}=${((after[k] - before[k]) * 1000).toFixed(0)}ms`;
  log(`${mode}: main thread over the window: ${['TaskDuration', 'ScriptDuration', 'RecalcStyleDuration', 'LayoutDuration'].map(spent).join(' ')}; ` +
    `long tasks: ${longs.length}, ${JSON.stringify(longs.slice(0, 12).map((l) => Math.round(l.ms)))}`);
  log(`${mode}: clicks (input → text changed / → painted, ms): ${JSON.stringify(clicks.map((c) => [Math.round(c.answer), Math.round(c.painted)]))}`);
  log(`${mode}: virtual ${v0.toFixed(1)} s → ${v1.toFixed(1)} s in ${((real1 - real0) / 1000).toFixed(1)} s real: ${r.achieved_speed.toFixed(1)}× ` +
    `(asked ${SPEED}×; the page says ${JSON.stringify(note || 'nothing: it keeps up')})`);
  const workloads = async () => (await page.evaluate(() => document.querySelector('#workloads')?.textContent ?? '')).replace(/\s+/g, ' ').slice(0, 160);
  const rolling = await workloads();
  log(`${mode}: workloads before skip to settled: ${rolling}`);
  // Skip to settled is measured during a rollout: when this one is over, a restart starts another.
  r.settle_during = 'rollout';
  if (rolling.includes(`load${PODS}/${PODS}`)) {
    await command(page, 'kubectl rollout restart deployment/load');
    r.settle_during = 'restart';
    log(`${mode}: the rollout was over: kubectl rollout restart deployment/load`);
  }

  // Skip to settled, timed from the click's input to the terminal's "settled after".
  const settling = page.evaluate((limit) => new Promise((resolve) => {
    const done = () => [...document.querySelectorAll('#terminal-output .out')].filter((o) => /settled after/.test(o.textContent)).length;
    const before = done();
    let clicked = null;
    document.addEventListener('click', (e) => { if (e.target.closest?.('#settle')) clicked = e.timeStamp; }, { capture: true, once: true });
    const deltas = [];
    let last = performance.now();
    let settledAt = null;
    let after = 0;
    const frame = (t) => {
      deltas.push(t - last);
      last = t;
      if (settledAt === null && done() > before) settledAt = performance.now();
      if ((settledAt !== null && ++after >= 3) || (clicked !== null && t - clicked > limit)) {
        return resolve({ deltas, settle_ms: settledAt === null ? -1 : settledAt - clicked });
      }
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }), LONG);
  await page.waitForTimeout(100);
  await page.click('#settle', { timeout: LONG });
  const portSettle = await page.evaluate(() => window.kPort?.length ?? 0);
  const settled = await settling;
  const settleReply = (await page.evaluate((from) => (window.kPort ?? []).slice(from), portSettle)).find((x) => x.kind === 'Settle');
  if (settleReply) {
    Object.assign(r, { settle_worker_ms: settleReply.answer_ms, settle_reply_bytes: settleReply.bytes });
    log(`worker: the Settle took ${settleReply.answer_ms.toFixed(0)} ms in the worker (+${settleReply.encode_ms.toFixed(0)} ms to write ` +
      `${(settleReply.bytes / 1024).toFixed(0)} KiB of JSON); sent → reply in the page ${(settleReply.came - settleReply.sent).toFixed(0)} ms`);
  }
  r.settle_ms = settled.settle_ms;
  r.settle_longest_frame_ms = Math.max(...settled.deltas);
  r.settle_frames_over_50ms = settled.deltas.filter((d) => d > 50).length;
  const said = await page.evaluate(() => [...document.querySelectorAll('#terminal-output .out')].map((o) => o.textContent).filter((t) => /settled after/.test(t)).pop() ?? '');
  log(`${mode}: skip to settled answered in ${r.settle_ms.toFixed(0)} ms (${said.trim()}); meanwhile ${settled.deltas.length} frames, ` +
    `the longest ${r.settle_longest_frame_ms.toFixed(1)} ms, ${r.settle_frames_over_50ms} over 50 ms`);
  log(`${mode}: workloads after: ${await workloads()}`);
  if (r.frames < 10) problems.push(`${mode}: only ${r.frames} frames in ${SECONDS} s`);
  if (r.clicks < CLICKS) problems.push(`${mode}: ${r.clicks} of ${CLICKS} clicks answered`);
  if (r.settle_ms < 0) problems.push(`${mode}: skip to settled did not answer`);
  if (mode === 'worker' && r.max_frame_ms > 1000) problems.push(`worker: frames stopped for ${r.max_frame_ms.toFixed(0)} ms`);
  if (mode === 'worker' && r.settle_longest_frame_ms > 1000) problems.push(`worker: frames stopped for ${r.settle_longest_frame_ms.toFixed(0)} ms while settling`);
  await page.context().close();
  return r;
}

const fmt = (v) => (typeof v === 'number' ? (Number.isInteger(v) ? `${v}` : v.toFixed(1)) : `${v}`);

/// Part 4: the worker's download of the module fails (the first request for it is refused):
/// the page downloads the module itself and hands it to the worker, which runs as ever.
async function workerDownloadFails(browser, origin, problems) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  let refused = 0;
  let served = 0;
  await context.route(/_bg\.wasm$/, (route) => {
    if (refused === 0) {
      refused++;
      return route.abort();
    }
    served++;
    return route.continue();
  });
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(`page error (download refused): ${err.message}`));
  await page.goto(`${origin}${BASE}${query('worker')}`, { waitUntil: 'load' });
  await interactive(page, 'worker').catch((err) => problems.push(`download refused: ${err.message.split('\n')[0]}`));
  const nodes = await command(page, 'kubectl get nodes', 30000).catch(() => '');
  if (!nodes.includes('worker-1')) problems.push(`download refused: kubectl get nodes printed ${JSON.stringify(nodes)}`);
  if (refused !== 1 || served !== 1) problems.push(`download refused: ${refused} refused and ${served} served, expected one of each`);
  log(`the worker's download refused: the page downloaded the module (${served} request), the simulation runs in the worker`);
  await context.close();
}

/// Part 5: the boot image (scripts/boot-image.mjs): a first visit's worker that puts it back
/// (`?boot-image=1`) has the very cluster a worker that boots (`?boot-image=0`) has: the same
/// objects, events and leases, and the same names for what comes next.
async function bootImage(browser, origin, problems, numbers) {
  const seen = {};
  for (const [mode, flag] of [['image', '1'], ['booted', '0']]) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`page error (boot image ${flag}): ${err.message}`));
    // Paused: the clock moves only with the commands, so both see the same times.
    await page.goto(`${origin}${BASE}?boot-image=${flag}&paused=1`, { waitUntil: 'load' });
    await interactive(page, 'worker');
    const said = await Promise.all(page.workers().map((w) => w.evaluate(() => self.kubeloopBootImage ?? null).catch(() => null)));
    const took = said.find((s) => s !== null) ?? null;
    const want = flag === '1' ? 'put back' : null;
    if (took !== want) problems.push(`boot image ${flag}: the worker says ${JSON.stringify(took)}, expected ${JSON.stringify(want)}`);
    if (flag === '1') numbers.boot_image_interactive_ms = await page.evaluate(() => performance.getEntriesByName('kubeloop-interactive')[0].startTime);
    const out = [];
    for (const line of ['sim time', 'kubectl get all -A -o wide', 'kubectl get events -A', 'kubectl get leases -A', 'etcdctl endpoint status']) {
      out.push(await command(page, line));
    }
    await threeReplicasSettled(page);
    out.push((await podNames(page)).join(' '));
    seen[mode] = out;
    await context.close();
  }
  const differ = seen.image.findIndex((o, i) => o !== seen.booted[i]);
  if (differ >= 0) problems.push(`boot image: output ${differ} differs from a booted worker's: ${JSON.stringify(seen.image[differ]).slice(0, 300)} vs ${JSON.stringify(seen.booted[differ]).slice(0, 300)}`);
  else log(`the boot image put back: the same cluster as booting (${seen.image.map((o) => o.split('\n').length).join('+')} lines compared)`);
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
  const results = [];
  try {
    await determinism(browser, origin, problems, numbers);
    await workerDownloadFails(browser, origin, problems);
    await bootImage(browser, origin, problems, numbers);
    console.log(`worker: ${Object.entries(numbers).map(([k, v]) => `${k}=${fmt(v)}`).join(' ')}`);
    for (const mode of MODES) results.push(await big(browser, origin, mode, problems));
  } catch (err) {
    problems.push(err.message.split('\n')[0]);
  } finally {
    await browser.close().catch(() => {});
    server.close();
  }
  const load = os.loadavg().map((l) => l.toFixed(2)).join(',');
  for (const r of results) console.log(`worker-big: ${Object.entries(r).map(([k, v]) => `${k}=${fmt(v)}`).join(' ')} load=${load}`);
  const w = results.find((r) => r.mode === 'worker');
  if (w) {
    const met = (ok) => (ok ? 'met' : 'MISSED');
    console.log(`worker-targets: p95_le_20ms=${met(w.p95_frame_ms <= 20)} clicks_le_100ms=${met(w.click_max_ms <= 100)} ` +
      `settle_frames_le_50ms=${met(w.settle_longest_frame_ms <= 50)} (${NODES} nodes, ${PODS} pods, ${SPEED}×; recorded, not enforced)`);
  }
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
