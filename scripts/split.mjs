#!/usr/bin/env node
// scripts/split.mjs — splits a release build's wasm module in two (tools/wasm-split): the code
// the page's start runs, and the rest (the functions the profile web/wasm-profile.txt lists),
// which the page loads once it is interactive (src/ui/rest.rs). Trunk's post_build hook runs it
// (scripts/post-build.mjs), before the compression, on the directory trunk is about to move into
// dist/. It keeps the module as wasm-opt left it, names and all, in target/split/ (what
// scripts/split-profile.mjs records a new profile with), and then writes the primary over the
// module and the rest beside it.
//
// Usage: node scripts/split.mjs [DIR]        DIR defaults to $TRUNK_STAGING_DIR
//   KUBELOOP_SPLIT=0 ships the module whole (only its names are dropped).
// A debug build (TRUNK_PROFILE=debug, `trunk serve`) is left as it is: it has no wasm-opt pass.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = process.argv[2] || process.env.TRUNK_STAGING_DIR;
if (!dir) {
  console.error('usage: node scripts/split.mjs DIR (or run as a trunk post_build hook)');
  process.exit(2);
}
if (!process.argv[2] && process.env.TRUNK_PROFILE === 'debug') process.exit(0);

const tool = path.join(root, 'tools/wasm-split/target/release/kubeloop-split');
const sources = ['Cargo.toml', 'Cargo.lock', 'src/main.rs'].map((f) => path.join(root, 'tools/wasm-split', f));
const stale = !fs.existsSync(tool) || sources.some((f) => fs.existsSync(f) && fs.statSync(f).mtimeMs > fs.statSync(tool).mtimeMs);
if (stale) {
  execFileSync('cargo', ['build', '--release', '--quiet', '--manifest-path', path.join(root, 'tools/wasm-split/Cargo.toml')], { stdio: 'inherit' });
}

const modules = fs.readdirSync(dir).filter((f) => f.endsWith('_bg.wasm'));
if (modules.length !== 1) {
  console.error(`split.mjs: expected one *_bg.wasm in ${dir}, found ${modules.length}`);
  process.exit(1);
}
const module = path.join(dir, modules[0]);
const kept = path.join(root, 'target/split');
fs.mkdirSync(kept, { recursive: true });
fs.copyFileSync(module, path.join(kept, 'kubeloop_bg.wasm'));
for (const old of fs.readdirSync(dir).filter((f) => f.startsWith('kubeloop-rest-'))) fs.rmSync(path.join(dir, old));

const profile = path.join(root, 'web/wasm-profile.txt');
if (process.env.KUBELOOP_SPLIT === '0' || !fs.existsSync(profile)) {
  if (!fs.existsSync(profile)) console.error('split.mjs: no web/wasm-profile.txt (scripts/split-profile.mjs): the module ships whole');
  execFileSync(tool, ['strip', module], { stdio: 'inherit' });
} else {
  execFileSync(tool, ['split', module, profile, dir], { stdio: 'inherit' });
}
