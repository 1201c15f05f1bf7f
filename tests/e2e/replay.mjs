#!/usr/bin/env node
// tests/e2e/replay.mjs — the simulation is the same wherever it runs: a script of commands typed
// into the page's terminal (paused, seed 1, so virtual time moves only with the commands) prints
// exactly what the native CLI prints for the same script — pod names, ages, addresses, and a
// component's own client log (`sim record`, its requests and watch events with their times) —
// in the page's Web Worker and in its own thread (`?worker=0`). Then a reload replays the saved
// session in the worker to the same pod names.
//
// Usage: node tests/e2e/replay.mjs   (after `trunk build --release --offline`; the native
// transcript comes from target/debug/kubeloop, built by `cargo test`, or KUBELOOP_BIN)

import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.resolve(ROOT, process.env.E2E_DIST ?? 'dist');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const BIN = process.env.KUBELOOP_BIN ?? path.join(ROOT, 'target/debug/kubeloop');
const log = (...args) => console.log('[replay]', ...args);

const SCRIPT = [
  'kubectl create deployment web --image=nginx:1.25 --replicas=3',
  'sleep 8s',
  'kubectl delete $(kubectl get pods -o name | head -1) --wait=false',
  'sim node stop worker-2',
  'sleep 70s',
  'kubectl scale deployment web --replicas=5',
  'sleep 10s',
  'kubectl get pods -o wide',
  'sim record replicaset-controller --last 12',
];

/// The transcript the native CLI prints, as lines (`$ command`, then its output).
function native() {
  if (!fs.existsSync(BIN)) return null;
  const out = execFileSync(BIN, ['run', '-'], { input: SCRIPT.join('\n') + '\n', encoding: 'utf8' });
  return out.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '');
}

async function typed(page, query) {
  await page.goto(`${BASE()}?paused${query}`);
  await page.waitForFunction(() => performance.getEntriesByName('kubeloop-interactive').length > 0, undefined, { timeout: 30000 });
  const where = await page.evaluate(() => document.documentElement.dataset.sim);
  for (const line of SCRIPT) {
    const echoed = await page.$$eval('#terminal-output > div.cmd', (ds) => ds.length);
    await page.fill('#terminal-input', line);
    await page.press('#terminal-input', 'Enter');
    // Its echo and output come with the simulation's reply.
    await page.waitForFunction(
      (n) => document.querySelectorAll('#terminal-output > div.cmd').length > n && !document.querySelector('#terminal-running'),
      echoed,
      { timeout: 30000 },
    );
  }
  const lines = await page.$$eval('#terminal-output > div', (ds) => ds.flatMap((d) => d.textContent.split('\n')));
  return { where, lines: lines.map((l) => l.trimEnd()).filter((l) => l !== '') };
}

let base = '';
const BASE = () => base;

function same(name, got, want) {
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) {
    if (got[i] !== want[i]) {
      throw new Error(`${name}: line ${i + 1} differs\n  got:  ${got[i]}\n  want: ${want[i]}`);
    }
  }
}

async function main() {
  const server = await serve({ dir: DIST, base: '/', cacheControl: 'no-store' });
  base = `http://127.0.0.1:${server.address().port}/`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.on('pageerror', (e) => { throw e; });
    const worker = await typed(page, '');
    if (worker.where !== 'worker') throw new Error(`the page ran the simulation in the ${worker.where}, not a worker`);
    const thread = await typed(await (await browser.newContext()).newPage(), '&worker=0');
    if (thread.where !== 'thread') throw new Error(`?worker=0 ran in the ${thread.where}`);
    if (process.env.REPLAY_DEBUG) log(worker.lines.slice(0, 4), thread.lines.slice(0, 4));
    same('worker vs thread', worker.lines, thread.lines);
    const cli = native();
    if (cli) same('worker vs the native CLI', worker.lines, cli);
    else log(`no native binary at ${BIN}: compared the worker with the thread only`);
    // A reload replays the saved session (in the worker) to the same pods.
    const names = (lines) => lines.filter((l) => l.startsWith('web-')).map((l) => l.split(/\s+/)[0]).sort();
    await page.reload();
    await page.waitForFunction(() => performance.getEntriesByName('kubeloop-interactive').length > 0, undefined, { timeout: 30000 });
    const replayed = await page.$$eval('#terminal-output > div', (ds) => ds.flatMap((d) => d.textContent.split('\n')));
    if (process.env.REPLAY_DEBUG) log(replayed.slice(0, 5), await page.evaluate(() => Object.keys(localStorage)));
    same('the reload', names(replayed.map((l) => l.trimEnd())), names(worker.lines));
    console.log(`replay: PASS lines=${worker.lines.length} native=${cli ? 'same' : 'skipped'} pods=${names(worker.lines).length}`);
  } finally {
    await browser.close();
    server.close();
  }
}

main().catch((e) => {
  console.error(`replay: FAIL ${e.message}`);
  process.exit(1);
});
