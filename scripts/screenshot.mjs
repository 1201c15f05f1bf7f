#!/usr/bin/env node
// scripts/screenshot.mjs — the README's screenshot: the release build in dist/, the default
// example (a Deployment and a Service) applied at the teaching pace and shown at the moment
// the scheduler's binding travels to etcd, at 1440x900.
// Usage: node scripts/screenshot.mjs [out.png]   (after scripts/test.sh or a release build)
import http from 'node:http';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const OUT = path.resolve(process.argv[2] ?? path.join(ROOT, 'docs/screenshot.png'));
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.svg': 'image/svg+xml' };

const server = http.createServer(async (req, res) => {
  const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/+/, '') || 'index.html';
  const file = path.resolve(DIST, rel);
  if (!file.startsWith(DIST)) { res.writeHead(403); return res.end(); }
  try {
    const body = await fs.readFile(file);
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    res.end(body);
  } catch { res.writeHead(404); res.end(); }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  // The page's clock is Playwright's fake one: the story plays to the moment wanted, exactly.
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.clock.install();
  await page.goto(`http://127.0.0.1:${server.address().port}/?paused`);
  await page.waitForSelector('#map');
  await page.clock.pauseAt(Date.now() + 60 * 60 * 1000);
  await page.selectOption('#speed', 'teaching');
  await page.click('#apply');
  await page.click('#play');
  // At the teaching pace, to the scheduler's first binding, its token halfway to etcd.
  for (let i = 0; i < 3000; i++) {
    await page.clock.runFor(100);
    const caption = await page.textContent('#map-caption');
    if (/asks the API server to bind pod/.test(caption ?? '')) break;
  }
  await page.clock.runFor(450);
  await fs.mkdir(path.dirname(OUT), { recursive: true });
  await page.screenshot({ path: OUT });
  console.log(`screenshot: ${path.relative(ROOT, OUT)}`);
} finally {
  await browser.close();
  server.close();
}
