#!/usr/bin/env node
// scripts/compress.mjs — writes precompressed copies beside every text asset of a built site:
// FILE.gz (gzip -9) and FILE.br (brotli, quality 11), for .wasm .js .css .html .svg .md files,
// in the directory and below it (dist/lessons/ too). A host that serves precompressed files
// (scripts/serve.mjs, nginx's gzip_static/brotli_static, Netlify, S3 with Content-Encoding
// metadata; see README, "Deploying the static site") then sends them as they are.
// A copy that would not be smaller than its file is not written.
//
// Usage: node scripts/compress.mjs [DIR]
//   DIR defaults to $TRUNK_STAGING_DIR: Trunk's post_build hook runs this after the split
//   (scripts/post-build.mjs), on the directory trunk is about to move into dist/. Under that
//   hook it does nothing for a debug build (TRUNK_PROFILE=debug, `trunk serve`): only release
//   builds are shipped.
// Only node's own zlib: no dependency.

import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const EXTENSIONS = new Set(['.wasm', '.js', '.css', '.html', '.svg', '.md']);
const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

async function* files(dir) {
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(file);
    else if (entry.isFile() && EXTENSIONS.has(path.extname(entry.name).toLowerCase())) yield file;
  }
}

async function compress(file) {
  const raw = await fs.readFile(file);
  const text = path.extname(file) !== '.wasm';
  const [gz, br] = await Promise.all([
    gzip(raw, { level: 9 }),
    brotli(raw, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
        [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
        [zlib.constants.BROTLI_PARAM_MODE]: text ? zlib.constants.BROTLI_MODE_TEXT : zlib.constants.BROTLI_MODE_GENERIC,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      },
    }),
  ]);
  const sizes = { file, raw: raw.length, gz: 0, br: 0 };
  for (const [ext, body] of [['.gz', gz], ['.br', br]]) {
    if (body.length < raw.length) {
      await fs.writeFile(file + ext, body);
      sizes[ext.slice(1)] = body.length;
    } else {
      await fs.rm(file + ext, { force: true });
    }
  }
  return sizes;
}

async function main() {
  const dir = process.argv[2] ?? process.env.TRUNK_STAGING_DIR;
  if (!dir) throw new Error('usage: node scripts/compress.mjs DIR (or run as a trunk hook, with TRUNK_STAGING_DIR)');
  if (!process.argv[2] && process.env.TRUNK_PROFILE === 'debug') {
    console.log('compress: debug build, nothing precompressed');
    return;
  }
  const t0 = Date.now();
  const all = [];
  for await (const file of files(dir)) all.push(file);
  const results = await Promise.all(all.map(compress));
  const total = (k) => results.reduce((n, r) => n + r[k], 0);
  const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
  for (const r of results.filter((r) => r.raw >= 64 * 1024)) {
    console.log(`compress: ${path.relative(dir, r.file)} ${kib(r.raw)} -> gzip ${kib(r.gz)}, brotli ${kib(r.br)}`);
  }
  console.log(`compress: ${results.length} files in ${dir}, ${kib(total('raw'))} -> gzip ${kib(total('gz'))}, ` +
    `brotli ${kib(total('br'))} (${Date.now() - t0} ms)`);
}

main().catch((err) => {
  console.error(`compress: ${err.message}`);
  process.exit(1);
});
