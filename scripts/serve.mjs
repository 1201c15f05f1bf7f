#!/usr/bin/env node
// scripts/serve.mjs — serves the built site (dist/) as a static host would: on 127.0.0.1 only,
// under a base path, sending the precompressed FILE.br or FILE.gz (scripts/compress.mjs)
// when the request's Accept-Encoding allows it, with Content-Encoding and
// Vary: Accept-Encoding, and the file's own Content-Type (application/wasm for the module,
// which WebAssembly.instantiateStreaming needs). Like GitHub Pages, /base redirects to /base/
// (the page's asset URLs are relative) and nothing outside the base path is served.
// Node's own http: no dependency.
//
// Usage: node scripts/serve.mjs [--dir dist] [--base /] [--port 8080]
//   (scripts/run.sh --release builds the release site and runs this.)
// As a module (tests/e2e/*.mjs): `const server = await serve({ dir, base, port: 0 })`, then
//   server.address().port; `server.close()`.

import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.md': 'text/markdown; charset=utf-8',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.yaml': 'text/yaml; charset=utf-8',
};

// Most preferred first, with the suffix scripts/compress.mjs gives its files.
const ENCODINGS = [['br', '.br'], ['gzip', '.gz']];

export function normaliseBase(base) {
  if (!base.startsWith('/')) base = `/${base}`;
  return base.endsWith('/') ? base : `${base}/`;
}

/// The encodings an Accept-Encoding header allows (q > 0), e.g. "gzip, deflate, br;q=0.5".
export function accepted(header) {
  const allowed = new Set();
  let star = false;
  const refused = new Set();
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const ok = q === undefined || Number(q.slice(2)) > 0;
    if (name === '*') star = ok;
    else if (ok) allowed.add(name);
    else refused.add(name);
  }
  return (encoding) => allowed.has(encoding) || (star && !refused.has(encoding));
}

async function statFile(file) {
  try {
    const st = await fs.stat(file);
    return st.isFile() ? st : null;
  } catch {
    return null;
  }
}

/// Starts the server; resolves once it listens. Options: dir (the site), base ('/'), port
/// (0: any free one), host ('127.0.0.1'), cacheControl ('no-cache': revalidate, by ETag),
/// encodings (the precompressed copies it may send, ['br', 'gzip']: [] sends files as they
/// are), log (a function given each request's line).
export function serve({ dir, base = '/', port = 0, host = '127.0.0.1', cacheControl = 'no-cache', encodings = ['br', 'gzip'], log } = {}) {
  const offered = ENCODINGS.filter(([encoding]) => encodings.includes(encoding));
  const root = path.resolve(dir);
  base = normaliseBase(base);
  const server = http.createServer(async (req, res) => {
    const send = (status, body, headers = {}) => {
      res.writeHead(status, { 'Cache-Control': cacheControl, ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
      log?.(`${status} ${req.method} ${req.url}${headers['Content-Encoding'] ? ` (${headers['Content-Encoding']})` : ''}`);
    };
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n', { Allow: 'GET, HEAD' });
      const url = new URL(req.url, 'http://localhost');
      let pathname;
      try {
        pathname = decodeURIComponent(url.pathname);
      } catch {
        return send(400, 'bad request\n');
      }
      // Like GitHub Pages: /kubeloop -> /kubeloop/ (relative asset URLs need the slash).
      if (`${pathname}/` === base) return send(301, '', { Location: base + url.search });
      if (!pathname.startsWith(base)) return send(404, 'not found (outside the base path)\n');
      let rel = pathname.slice(base.length);
      if (rel === '' || rel.endsWith('/')) rel += 'index.html';
      const file = path.resolve(root, rel);
      if (!file.startsWith(root + path.sep) || rel.includes('\0')) return send(403, 'forbidden\n');
      if (!(await statFile(file))) {
        if (await statFile(path.join(file, 'index.html'))) return send(301, '', { Location: `${url.pathname}/${url.search}` });
        return send(404, 'not found\n');
      }
      const type = MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
      const headers = { 'Content-Type': type };
      // The precompressed variant the client takes, if there is one.
      const allows = accepted(req.headers['accept-encoding']);
      let served = file;
      let variants = false;
      for (const [encoding, suffix] of offered) {
        if (!(await statFile(file + suffix))) continue;
        variants = true;
        if (served === file && allows(encoding)) {
          served = file + suffix;
          headers['Content-Encoding'] = encoding;
        }
      }
      if (variants) headers.Vary = 'Accept-Encoding';
      const st = await statFile(served);
      const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}${headers['Content-Encoding'] ? `-${headers['Content-Encoding']}` : ''}"`;
      headers.ETag = etag;
      headers['Last-Modified'] = st.mtime.toUTCString();
      if (req.headers['if-none-match'] === etag) return send(304, undefined, headers);
      const body = await fs.readFile(served);
      headers['Content-Length'] = body.length;
      return send(200, body, headers);
    } catch (err) {
      return send(500, `${err}\n`);
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

async function main() {
  const opts = { dir: 'dist', base: '/', port: 8080 };
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const [flag, value] = [args[i], args[i + 1]];
    if (flag === '--dir') opts.dir = value;
    else if (flag === '--base') opts.base = value;
    else if (flag === '--port') opts.port = Number(value);
    else {
      console.error('usage: node scripts/serve.mjs [--dir dist] [--base /] [--port 8080]');
      process.exit(2);
    }
    i++;
  }
  await fs.access(path.join(opts.dir, 'index.html')).catch(() => {
    console.error(`serve: ${opts.dir}/index.html not found: build first (trunk build --release --offline)`);
    process.exit(1);
  });
  const server = await serve({ ...opts, log: process.env.SERVE_QUIET ? undefined : (line) => console.log(`serve: ${line}`) });
  const base = normaliseBase(opts.base);
  console.log(`serve: ${opts.dir} at http://127.0.0.1:${server.address().port}${base}  (Ctrl-C to stop)`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
