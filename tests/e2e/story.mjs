#!/usr/bin/env node
// tests/e2e/story.mjs — the apply story at the teaching pace, on the release build in dist/.
//
// The page's clock is Playwright's fake clock (page.clock): timers, animation frames and
// performance.now move only when this script says, so the story plays the same on any
// machine and nothing sleeps. The script:
//   1. opens the page paused, picks the "teaching pace", applies the example Deployment (3 nginx
//      pods and a Service) and presses play;
//   2. moves the clock 100 ms at a time until every pod is Running and the map is quiet,
//      reading the tokens on the map and the caption under it at each sample;
//   3. saves one screenshot of the map per hop (a new caption) while the story lasts, to
//      tests/e2e/screenshots/story/NN.png, with index.txt listing each hop's sentence;
//   4. fails unless tokens crossed kubectl → API server → etcd, then API server → the
//      deployment controller, the ReplicaSet controller, the scheduler and a kubelet, in that
//      order; unless every pod ended Running; or if any token's box overlapped a text panel's
//      box at a sampled frame.
// Prints one "story: PASS …" or "story: FAIL …" line; exits non-zero on failure.
//
// Usage: node tests/e2e/story.mjs        (after `trunk build --release --offline`)
// Environment: E2E_DIST (default dist/), CHROMIUM (default /usr/bin/chromium),
//              STORY_SHOTS (most screenshots to save, default 120)

import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.resolve(ROOT, process.env.E2E_DIST ?? 'dist');
const SHOTS = path.join(ROOT, 'tests/e2e/screenshots/story');
const MAX_SHOTS = Number(process.env.STORY_SHOTS ?? 120);
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const SAMPLE_MS = 100;
/// The story must end within this much page time (the example plays in about two minutes).
const LIMIT_MS = 6 * 60 * 1000;

// Each hop of the chain, as a token's ends, in the causal order the story must show them.
const CHAIN = [
  ['kubectl → etcd (the Deployment stored)', (t) => t.from === 'kubectl' && t.to === 'etcd'],
  ['kube-apiserver → deployment-controller', (t) => t.from === 'kube-apiserver' && t.to === 'deployment-controller'],
  ['kube-apiserver → replicaset-controller', (t) => t.from === 'kube-apiserver' && t.to === 'replicaset-controller'],
  ['kube-apiserver → kube-scheduler', (t) => t.from === 'kube-apiserver' && t.to === 'kube-scheduler'],
  // The pod reaching the kubelet it was bound to (kubelets also watch Services, which the
  // example's Service reaches first).
  ['kube-apiserver → a kubelet (the pod)', (t) => t.from === 'kube-apiserver' && t.to.startsWith('kubelet/') && /\bpod\//.test(t.label)],
];

// The text panels no token may cover.
const PANELS = ['.topbar', '.panel.editor', '#terminal', '#map-caption', '.map-legend', '#pods', '#events', '#workloads', '#nodes'];

function overlaps(a, b) {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

async function main() {
  await fs.access(path.join(DIST, 'index.html')).catch(() => {
    throw new Error(`${DIST}/index.html not found: run trunk build --release --offline first`);
  });
  await fs.rm(SHOTS, { recursive: true, force: true });
  await fs.mkdir(SHOTS, { recursive: true });
  const server = await serve({ dir: DIST, base: '/', cacheControl: 'no-store' });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
  });
  const problems = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    await page.clock.install();
    await page.goto(`http://127.0.0.1:${server.address().port}/?paused`, { waitUntil: 'load' });
    await page.waitForSelector('#map', { timeout: 60000 });
    await page.clock.pauseAt(Date.now() + 60 * 60 * 1000);
    await page.selectOption('#speed', 'teaching');
    await page.click('#apply');
    await page.click('#play');

    const firstSeen = new Map(); // chain index -> sample number
    const hops = [];
    let caption = '';
    let shots = 0;
    let overlapsSeen = 0;
    let sample = 0;
    let settledAt = null;
    for (let t = 0; t < LIMIT_MS; t += SAMPLE_MS, sample++) {
      await page.clock.runFor(SAMPLE_MS);
      const frame = await page.evaluate((panels) => {
        const box = (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; };
        const tokens = [...document.querySelectorAll('#map .token')].map((g) => ({
          from: g.getAttribute('data-from'), to: g.getAttribute('data-to'),
          label: g.getAttribute('data-label') ?? '', box: box(g),
        }));
        const texts = panels.flatMap((sel) => [...document.querySelectorAll(sel)].map((e) => ({ sel, box: box(e) })));
        const statuses = [...document.querySelectorAll('#map .pod[data-pod^="web-"]')].map((p) => p.getAttribute('data-status'));
        return { tokens, texts, statuses, caption: document.querySelector('#map-caption')?.textContent ?? '' };
      }, PANELS);
      for (const tok of frame.tokens) {
        CHAIN.forEach(([, matches], i) => { if (!firstSeen.has(i) && matches(tok)) firstSeen.set(i, sample); });
        for (const p of frame.texts) {
          if (p.box.width > 0 && overlaps(tok.box, p.box)) {
            overlapsSeen++;
            if (overlapsSeen <= 3) problems.push(`token ${tok.label} (${tok.from} → ${tok.to}) overlaps ${p.sel} at ${t} ms`);
          }
        }
      }
      if (frame.caption !== caption) {
        caption = frame.caption;
        hops.push({ at: t, caption, tokens: frame.tokens.map((x) => `${x.from} → ${x.to}: ${x.label}`) });
        if (shots < MAX_SHOTS) {
          shots++;
          await page.locator('#map-figure').screenshot({ path: path.join(SHOTS, `${String(shots).padStart(2, '0')}.png`) });
        }
      }
      const running = frame.statuses.length === 3 && frame.statuses.every((s) => s === 'Running');
      if (running && settledAt === null) settledAt = t;
      // Done once every pod runs and the map has had a few quiet seconds to finish the story.
      if (settledAt !== null && t - settledAt > 8000 && frame.tokens.length === 0) break;
    }
    await page.screenshot({ path: path.join(SHOTS, 'final.png') });
    await fs.writeFile(
      path.join(SHOTS, 'index.txt'),
      hops.map((h, i) => `${String(i + 1).padStart(2, '0')} ${(h.at / 1000).toFixed(1)}s ${h.caption}\n    ${h.tokens.join('\n    ')}`).join('\n') + '\n',
    );
    if (settledAt === null) problems.push('the three web pods never all showed Running on the map');
    const order = CHAIN.map(([name], i) => [name, firstSeen.get(i)]);
    for (const [name, at] of order) if (at === undefined) problems.push(`no token ${name}`);
    for (let i = 1; i < order.length; i++) {
      const [a, ta] = order[i - 1];
      const [b, tb] = order[i];
      if (ta !== undefined && tb !== undefined && tb < ta) problems.push(`${b} came before ${a}`);
    }
    const summary = `hops=${hops.length} screenshots=${shots} running_at_s=${settledAt === null ? 'never' : (settledAt / 1000).toFixed(1)} ` +
      `order=${order.map(([n, at]) => `${n.split(' (')[0].replace('kube-apiserver → ', '')}@${at === undefined ? '-' : (at * SAMPLE_MS / 1000).toFixed(1)}s`).join(', ')}`;
    if (problems.length) throw new Error(`${problems.join('; ')} (${summary})`);
    console.log(`story: PASS ${summary}; screenshots in ${path.relative(ROOT, SHOTS)}/`);
  } finally {
    await browser.close();
    server.close();
  }
}

main().catch((err) => {
  console.log(`story: FAIL ${err.message}`);
  process.exit(1);
});
