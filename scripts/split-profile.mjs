#!/usr/bin/env node
// scripts/split-profile.mjs — records which functions of the wasm module the page's start does not
// run, into web/wasm-profile.txt: the profile scripts/split.mjs splits the module by (the listed
// functions move to the rest, which loads once the page is interactive; all others stay). Run it
// after a change that makes the start run other code: tests/e2e/load.mjs fails when the start had
// to wait for the rest of the module, and says to run this. (Code newer than the profile is not
// listed, so it stays: a stale profile costs bytes, not waits.)
//
// It takes the last release build (dist/, with the whole module as wasm-opt left it in
// target/split/kubeloop_bg.wasm, both written by `trunk build --release`), makes a copy of the
// site whose module sets a flag as each function first runs (kubeloop-split instrument), and
// opens that site in headless Chromium as a student would start it: the playground, each
// lesson, three control planes, the simulation in the page (?worker=0), and a reload that brings
// back the worker's kept memory. Each start runs until interactive and then a few more seconds of
// the simulation. Then, in the playground and each lesson, what a student does first (the page's
// code for it only: the worker's may load after the start). What ran is the union of the flags of
// the page and the worker, by function name; the profile lists every other function.
//
// Usage: node scripts/split-profile.mjs      (then rebuild: trunk build --release)

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const WHOLE = path.join(ROOT, 'target/split/kubeloop_bg.wasm');
const TOOL = path.join(ROOT, 'tools/wasm-split/target/release/kubeloop-split');
const OUT = path.join(ROOT, 'web/wasm-profile.txt');
const RUN_MS = Number(process.env.PROFILE_RUN_MS || 3000);

if (!fs.existsSync(WHOLE) || !fs.existsSync(TOOL)) {
  console.error('split-profile: build the release site first (trunk build --release)');
  process.exit(1);
}

// The site, its module replaced by the instrumented whole module (served uncompressed).
const site = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeloop-profile-'));
fs.cpSync(DIST, site, { recursive: true });
const module = fs.readdirSync(site).find((f) => f.endsWith('_bg.wasm'));
for (const f of fs.readdirSync(site)) {
  if (f.startsWith(module + '.') || f.startsWith('kubeloop-rest-')) fs.rmSync(path.join(site, f));
}
execFileSync(TOOL, ['instrument', WHOLE, path.join(site, module)], { stdio: 'inherit' });
const names = fs.readFileSync(path.join(site, module) + '.names', 'utf8').split('\n');

const lessons = fs
  .readdirSync(path.join(ROOT, 'lessons'))
  .filter((f) => /^(\d\d|i\d\d)-.*\.md$/.test(f))
  .map((f) => f.replace(/\.md$/, ''));
const starts = ['', '?control-planes=3', '?worker=0', '?embed', '?lessons', ...lessons.map((id) => `?lesson=${id}`)];

const ran = new Set();
const take = async (context) => {
  const flags = await context
    .evaluate(() => {
      const rest = self.kubeloopRest;
      const memory = rest && rest.exports && rest.exports.__profile;
      return memory ? Array.from(new Uint8Array(memory.buffer)) : [];
    })
    .catch(() => []);
  flags.forEach((flag, at) => flag && at < names.length && names[at] && names[at] !== '?' && ran.add(names[at]));
};
const takeAll = async (page) => {
  await take(page);
  for (const worker of page.workers()) await take(worker);
};
const interactive = (page) =>
  page.waitForFunction(() => performance.getEntriesByName('kubeloop-interactive').length > 0, undefined, { timeout: 60000 });

// The page's first interactions: the editor's apply, commands typed (with completion and
// history), the time controls, the views' filters, a node's buttons, the scrubber, a reset.
const interact = async (page, lesson = false) => {
  const click = (selector) => page.click(selector, { timeout: 3000 }).catch(() => {});
  const settle = () => page.waitForTimeout(400);
  const type = async (line) => {
    await page.fill('#terminal-input', line).catch(() => {});
    await page.press('#terminal-input', 'Enter').catch(() => {});
    await page.waitForTimeout(600);
  };
  if (lesson) {
    for (const button of await page.$$('.lesson button, #lesson button')) {
      await button.click({ timeout: 2000 }).catch(() => {});
      await settle();
    }
    await type('kubectl get pods');
    return;
  }
  await click('#apply');
  await page.waitForTimeout(1500);
  for (const line of ['kubectl get pods', 'kubectl get pods -o wide', 'kubectl describe deployment web', 'kubectl get events', 'help']) await type(line);
  await page.fill('#terminal-input', 'kubectl get po').catch(() => {});
  await page.press('#terminal-input', 'Tab').catch(() => {});
  await page.press('#terminal-input', 'ArrowUp').catch(() => {});
  await page.press('#terminal-input', 'ArrowDown').catch(() => {});
  await page.fill('#terminal-input', '').catch(() => {});
  await click('#follow-apply');
  await settle();
  for (const speed of await page.$$eval('#speed option', (options) => options.map((o) => o.value)).catch(() => [])) {
    await page.selectOption('#speed', speed).catch(() => {});
    await settle();
  }
  await click('#play');
  await click('#step');
  await click('#play');
  await click('#settle');
  await settle();
  await click('#presenter');
  await click('#presenter');
  await page.selectOption('#event-kind', { index: 1 }).catch(() => {});
  await page.selectOption('#event-from', { index: 1 }).catch(() => {});
  await page.fill('#event-object', 'web').catch(() => {});
  await page.selectOption('#examples', { index: 1 }).catch(() => {});
  await click('#dry-run');
  await settle();
  await page.$eval('#scrubber', (range) => {
    range.value = String(Math.floor(Number(range.max || 0) / 2));
    range.dispatchEvent(new Event('input', { bubbles: true }));
    range.dispatchEvent(new Event('change', { bubbles: true }));
  }).catch(() => {});
  await settle();
  await click('#play');
  await click('button:has-text("stop kubelet")');
  await page.waitForTimeout(1500);
  await click('#share');
  await page.keyboard.press('Escape').catch(() => {});
  await click('#reset');
  await page.waitForTimeout(1500);
};

const server = await serve({ dir: site, base: '/', port: 0 });
const url = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  for (const start of starts) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(url + start);
    await interactive(page);
    await page.waitForTimeout(RUN_MS);
    await takeAll(page);
    if (start === '') {
      // A reload: the worker's kept memory comes back (its save, when the page is hidden).
      await page.reload();
      await interactive(page);
      await page.waitForTimeout(RUN_MS);
      await takeAll(page);
      // What a student does first, for the page's own code only: the commands run in the
      // worker, whose code for them may load after the start.
      await interact(page);
      await take(page);
    }
    if (start.startsWith('?lesson=')) {
      await interact(page, true);
      await take(page);
    }
    await context.close();
    process.stdout.write('.');
  }
  process.stdout.write('\n');
} finally {
  await browser.close();
  server.close();
  fs.rmSync(site, { recursive: true, force: true });
}

// What moves: every named function that ran in none of these starts. A function the list does
// not name (newer code) stays in the part the page waits for.
const moved = [...new Set(names.filter((n) => n && n !== '?' && !ran.has(n)))].sort();
const header =
  '# The functions of the wasm module that the page\'s start did not run, by name: the rest of the\n' +
  '# module, loaded once the page is interactive (src/ui/rest.rs). Written by\n' +
  '# scripts/split-profile.mjs; read by scripts/split.mjs (tools/wasm-split). A function not listed\n' +
  '# here stays in the part of the module the page waits for.\n';
fs.writeFileSync(OUT, header + moved.join('\n') + '\n');
console.log(`split-profile: ${ran.size} of ${new Set(names.filter((n) => n && n !== '?')).size} named functions ran; ${moved.length} listed to move; wrote ${path.relative(ROOT, OUT)}`);
