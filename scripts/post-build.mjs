#!/usr/bin/env node
// scripts/post-build.mjs — what a release build does to the directory trunk is about to move into
// dist/, in order: split the wasm module (scripts/split.mjs), then write the compressed copies
// (scripts/compress.mjs). Trunk.toml runs it as the one post_build hook: trunk starts a stage's
// hooks all at once, and the copies must be of the split files.
//
// Usage: node scripts/post-build.mjs [DIR]     DIR defaults to $TRUNK_STAGING_DIR

import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const scripts = path.dirname(fileURLToPath(import.meta.url));
for (const step of ['split.mjs', 'boot-image.mjs', 'compress.mjs']) {
  execFileSync(process.execPath, [path.join(scripts, step), ...process.argv.slice(2)], { stdio: 'inherit' });
}
