#!/usr/bin/env node
// tests/e2e/soak.mjs — a long session in the page (#29): the example Deployment and a CronJob
// that runs every minute, then SOAK_HOURS virtual hours typed as `sleep 1h` one at a time, in
// the worker, on the release build in dist/. After each hour it notes:
//   - the worker's wasm memory (the `memory_bytes` at the head of its replies: wasm memory only
//     grows, so this is the most the simulation has needed so far);
//   - the Events the cluster keeps (`kubectl get events -A`): the API server expires them an
//     hour after their last write;
//   - how long the hour took to simulate (real ms).
// Then it measures animation frames at 1× for FRAME_SECONDS, against the same measure taken
// right after the setup, and the two ways back after a reload:
//   - the page hidden first (another tab), so the worker kept its memory (src/ui/port/worker.js):
//     the reload puts it back and goes on, and must print the same pods as before;
//   - the same saved session in a browser profile without that memory (a new context with the
//     page's localStorage only): the journal replays, showing its progress in the page's shell.
// Prints one grep-able line:
//   soak: hours=… memory_mb=[per hour] growth_after_h6_pct=… events=[per hour] events_max=…
//     hour_ms_p50=… p95_frame_start_ms=… p95_frame_end_ms=… reload_interactive_ms=…
//     replay_interactive_ms=… replay_progress_shown=… load=…
// It fails when memory grows by more than 20% after the sixth hour (the record fills its room in
// the first hours, and wasm memory grows in steps), when Events exceed what an
// hour of this workload writes (EVENTS_MAX), when the page stops answering, when the reload with
// the kept memory prints other pods or takes over RELOAD_MAX_MS (2 s; #29 asks for under 1 s,
// which this reports), or when the replay does not show its progress.
//
// Usage: node tests/e2e/soak.mjs   (after `trunk build --release --offline`)
// Environment: E2E_DIST (default dist/), CHROMIUM, SOAK_HOURS (24), FRAME_SECONDS (3),
//   EVENTS_MAX (600)

import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';
import { WATCH_WORKER, frameDeltas, pct, typed } from './page.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.resolve(ROOT, process.env.E2E_DIST ?? 'dist');
const BASE = '/kubeloop/';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const HOURS = Number(process.env.SOAK_HOURS ?? 24);
const FRAME_SECONDS = Number(process.env.FRAME_SECONDS ?? 3);
const EVENTS_MAX = Number(process.env.EVENTS_MAX ?? 600);
const RELOAD_MAX_MS = 2000;
const LONG = 300000;

const log = (...args) => console.log('[soak]', ...args);
const command = (page, line, quiet = false) => typed(page, line, LONG, quiet);

/// The worker's wasm memory, in MiB, as its latest reply said.
const memory = async (page) => page.evaluate(() => {
  const replies = (window.kPort ?? []).filter((r) => Number.isFinite(r.memory_bytes));
  return replies.length ? replies[replies.length - 1].memory_bytes / 1048576 : NaN;
});

async function interactive(page) {
  await page.waitForFunction(() => performance.getEntriesByName('kubeloop-interactive').length > 0, undefined, { timeout: LONG });
  return page.evaluate(() => performance.getEntriesByName('kubeloop-interactive')[0].startTime);
}

/// The p95 of requestAnimationFrame deltas over `seconds`, playing at 1×.
async function frames(page, seconds) {
  await page.selectOption('#speed', '1');
  if ((await page.textContent('#play')).trim().startsWith('play')) await page.click('#play');
  const deltas = await frameDeltas(page, seconds);
  await page.click('#play'); // paused again: the hours are typed
  return pct(deltas.sort((a, b) => a - b), 0.95);
}

async function main() {
  const server = await serve({ dir: DIST, base: BASE, cacheControl: 'no-store' });
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const problems = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(WATCH_WORKER);
    const page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    await page.goto(`${origin}${BASE}?seed=1&paused`, { waitUntil: 'load' });
    await interactive(page);
    const sim = await page.evaluate(() => document.documentElement.dataset.sim);
    if (sim !== 'worker') problems.push(`the simulation runs in the ${sim}, not a worker`);
    await command(page, 'kubectl create deployment web --image=nginx:1.25 --replicas=3');
    await command(page, 'kubectl create cronjob tick --image=busybox:1.36 --schedule="* * * * *" -- date');
    await command(page, 'sim settle');
    const p95Start = await frames(page, FRAME_SECONDS);
    const hours = [];
    for (let h = 1; h <= HOURS; h++) {
      const t0 = Date.now();
      await command(page, 'sleep 1h', true);
      const ms = Date.now() - t0;
      const events = (await command(page, 'kubectl get events -A --no-headers')).split('\n').filter((l) => l.trim()).length;
      hours.push({ h, ms, events, mb: await memory(page) });
      log(`hour ${h}: ${ms} ms real, ${events} Events, worker memory ${hours[h - 1].mb.toFixed(1)} MiB`);
    }
    const p95End = await frames(page, FRAME_SECONDS);
    // The page still answers, and the saved session replays on reload.
    const pods = await command(page, 'kubectl get pods');
    if (!/web-/.test(pods)) problems.push(`kubectl get pods printed ${JSON.stringify(pods.slice(0, 200))}`);
    await page.waitForTimeout(2500); // the session is saved every two seconds
    const saved = await context.storageState();

    // 1. Hidden, then reloaded: the worker's kept memory comes back.
    const kept = new Promise((resolve) => {
      const listen = (message) => {
        if (!/the worker's memory/.test(message.text())) return;
        page.off('console', listen);
        resolve(message.text());
      };
      page.on('console', listen);
    });
    await page.evaluate(() => {
      Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    log(await Promise.race([kept, page.waitForTimeout(20000).then(() => 'no word from the worker')]));
    const t0 = Date.now();
    await page.reload({ waitUntil: 'commit' });
    const reloadMs = await interactive(page);
    log(`reloaded with the kept memory: interactive ${reloadMs.toFixed(0)} ms after navigation (${Date.now() - t0} ms from the reload)`);
    const podsAfter = await command(page, 'kubectl get pods');
    if (podsAfter !== pods) problems.push(`after the reload, kubectl get pods printed ${JSON.stringify(podsAfter.slice(0, 200))}, not what it printed before`);
    if (reloadMs > RELOAD_MAX_MS) problems.push(`the reload with the kept memory took ${reloadMs.toFixed(0)} ms (> ${RELOAD_MAX_MS})`);

    // 2. The same session where no memory was kept: the journal replays, and says how far.
    const other = await browser.newContext({ viewport: { width: 1280, height: 900 }, storageState: saved });
    await other.addInitScript(WATCH_WORKER);
    const fresh = await other.newPage();
    fresh.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    const t1 = Date.now();
    await fresh.goto(`${origin}${BASE}?seed=1&paused`, { waitUntil: 'commit' });
    // While the session replays, the shell says how far it has come.
    const phases = new Set();
    while (!(await fresh.evaluate(() => performance.getEntriesByName('kubeloop-interactive').length > 0).catch(() => false))) {
      const phase = await fresh.evaluate(() => document.getElementById('shell-phase')?.textContent ?? '').catch(() => '');
      if (phase.startsWith('Replaying')) phases.add(phase);
      await fresh.waitForTimeout(50);
    }
    const replayMs = await interactive(fresh);
    log(`while it replayed, the shell said: ${[...phases].slice(0, 3).join(' / ')}${phases.size > 3 ? ` … (${phases.size})` : ''}`);
    if (HOURS >= 6 && phases.size < 2) problems.push(`the shell showed the replay's progress ${phases.size} time(s)`);
    const after = await command(fresh, 'kubectl get cronjob tick');
    if (!/tick/.test(after)) problems.push(`after the replay, kubectl get cronjob tick printed ${JSON.stringify(after)}`);
    log(`replayed: interactive ${replayMs.toFixed(0)} ms after navigation (${Date.now() - t1} ms from the start)`);
    await other.close();

    const at6 = hours[Math.min(5, hours.length - 1)].mb;
    const last = hours[hours.length - 1].mb;
    const growth = ((last - at6) / at6) * 100;
    const eventsMax = Math.max(...hours.map((x) => x.events));
    const hourMs = pct(hours.map((x) => x.ms).sort((a, b) => a - b), 0.5);
    console.log(`soak: hours=${HOURS} memory_mb=${JSON.stringify(hours.map((x) => +x.mb.toFixed(1)))} growth_after_h6_pct=${growth.toFixed(1)} ` +
      `events=${JSON.stringify(hours.map((x) => x.events))} events_max=${eventsMax} hour_ms_p50=${hourMs} ` +
      `p95_frame_start_ms=${p95Start.toFixed(1)} p95_frame_end_ms=${p95End.toFixed(1)} reload_interactive_ms=${reloadMs.toFixed(0)} ` +
      `replay_interactive_ms=${replayMs.toFixed(0)} ` +
      `replay_progress_shown=${phases.size} ` +
      `load=${os.loadavg().map((l) => l.toFixed(2)).join(',')}`);
    if (HOURS >= 12 && growth > 20) problems.push(`the worker's memory grew ${growth.toFixed(1)}% after the sixth hour`);
    if (eventsMax > EVENTS_MAX) problems.push(`${eventsMax} Events kept (more than ${EVENTS_MAX})`);
  } finally {
    await browser.close();
    server.close();
  }
  if (problems.length) {
    for (const p of problems) console.log(`soak: FAIL ${p}`);
    process.exit(1);
  }
  console.log('soak: PASS');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
