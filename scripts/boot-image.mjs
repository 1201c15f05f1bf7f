#!/usr/bin/env node
// scripts/boot-image.mjs — the boot image: the memory of the simulation's worker once it has
// booted a fresh playground cluster, made at build time so that a first visit's worker can put it
// back instead of booting (src/ui/port/worker.js). Booting is the longest step of a first visit
// once the module is there: the cluster's first minute of virtual time, run by code the browser
// compiles function by function as it first runs. Putting back a few megabytes is a copy.
//
// It runs the release build's module as the worker does, here in Node: the JS glue, the primary
// part and, should the boot run a moved function, the rest (scripts/split.mjs); then the module's
// `worker_boot` export, which makes the worker's simulation as its first request would. The
// memory it leaves is written beside the module as `<glue name>_boot.wasm`, a module of data
// alone (below); its name, its size and the table's slots go into the primary part as the custom
// section `kubeloop_boot`, where the worker reads them. So an image belongs to the one module that
// names it, and that module is the same code, run on the same input: the cluster put back is the
// one booting would make, byte for byte.
//
// The boot must leave the module's table of JS values at rest (undefined, null, true, false and
// the global object): an image that would need a value of this process is not written, and the
// build fails, since the worker could not put it back.
//
// Usage: node scripts/boot-image.mjs [DIR]   DIR defaults to $TRUNK_STAGING_DIR
//   KUBELOOP_BOOT_IMAGE=0 writes none (a first visit then boots, as without a release build).
// A debug build (TRUNK_PROFILE=debug, `trunk serve`) gets none.

import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.argv[2] || process.env.TRUNK_STAGING_DIR;
if (!dir) {
  console.error('usage: node scripts/boot-image.mjs DIR (or run as a trunk post_build hook)');
  process.exit(2);
}
if (!process.argv[2] && process.env.TRUNK_PROFILE === 'debug') process.exit(0);
if (process.env.KUBELOOP_BOOT_IMAGE === '0') process.exit(0);

const SECTION = 'kubeloop_boot';
// What a slot of the table may hold at rest, by the letter worker.js keeps it under.
const SLOTS = { u: undefined, n: null, t: true, f: false, g: globalThis };

const wasms = fs.readdirSync(dir).filter((f) => f.endsWith('_bg.wasm'));
if (wasms.length !== 1) {
  console.error(`boot-image.mjs: expected one *_bg.wasm in ${dir}, found ${wasms.length}`);
  process.exit(1);
}
const primaryFile = path.join(dir, wasms[0]);
const glueName = wasms[0].replace(/_bg\.wasm$/, '.js');
const imageName = glueName.replace(/\.js$/, '_boot.wasm');
const bytes = fs.readFileSync(primaryFile);
if (WebAssembly.Module.customSections(new WebAssembly.Module(bytes), SECTION).length) {
  console.error(`boot-image.mjs: ${wasms[0]} already names a boot image`);
  process.exit(1);
}
const compiled = new WebAssembly.Module(bytes);

// The rest of the module, joined as worker.js joins it, should the boot run a moved function.
const restNamed = WebAssembly.Module.customSections(compiled, 'kubeloop_rest');
let exports = null;
globalThis.kubeloopLoadRest = () => {
  const loaded = exports && exports.__rest_loaded;
  if (!loaded || loaded.value) return;
  if (!restNamed.length) throw new Error('this module has no rest to load');
  const restFile = path.join(dir, new TextDecoder().decode(restNamed[0]));
  new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync(restFile)), { primary: exports });
  loaded.value = 1;
};

const glue = await import(pathToFileURL(path.join(dir, glueName)).href);
exports = glue.initSync({ module: compiled });
glue.worker_boot();

const table = exports.__wbindgen_externrefs;
let slots = '';
for (let i = 0; i < table.length; i++) {
  const value = table.get(i);
  const slot = Object.keys(SLOTS).find((k) => SLOTS[k] === value);
  if (!slot) {
    console.error(`boot-image.mjs: the boot left a value of its own in slot ${i} of the table: no image`);
    process.exit(1);
  }
  slots += slot;
}
const memory = new Uint8Array(exports.memory.buffer);

// LEB128, unsigned and signed (an i32.const offset is signed).
const leb = (n) => {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return Buffer.from(out);
};
const sleb = (n) => {
  const out = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(byte & 0x40)) || (n === -1 && byte & 0x40)) {
      out.push(byte);
      return Buffer.from(out);
    }
    out.push(byte | 0x80);
  }
};
const section = (id, body) => Buffer.concat([Buffer.from([id]), leb(body.length), body]);
const vec = (items) => Buffer.concat([leb(items.length), ...items]);
const name = (text) => Buffer.concat([leb(Buffer.byteLength(text)), Buffer.from(text)]);

// The image is a wasm module of data alone: it imports a memory (`kubeloop.memory`, as large as
// the image) and writes the memory's non-zero runs into it as it is instantiated. So any host
// serves and compresses it as it does the module, the browser decompresses it off the worker's
// thread and copies it in natively, and zeros cost nothing. The worker zeroes the memory first.
const GAP = 64; // zero bytes that end a run (a segment costs about eight)
const runs = [];
for (let i = 0; i < memory.length;) {
  while (i < memory.length && memory[i] === 0) i++;
  if (i >= memory.length) break;
  const start = i;
  let end = i;
  for (let zeros = 0; i < memory.length && zeros < GAP; i++) {
    if (memory[i] !== 0) {
      end = i + 1;
      zeros = 0;
    } else {
      zeros++;
    }
  }
  runs.push([start, end]);
}
const pages = memory.length / 65536;
const image = Buffer.concat([
  Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]),
  section(2, vec([Buffer.concat([name('kubeloop'), name('memory'), Buffer.from([0x02, 0x00]), leb(pages)])])),
  section(11, vec(runs.map(([start, end]) => Buffer.concat([
    Buffer.from([0x00, 0x41]), sleb(start), Buffer.from([0x0b]), leb(end - start), Buffer.from(memory.subarray(start, end)),
  ])))),
]);
new WebAssembly.Module(image); // (throws if it is not a valid module)
fs.writeFileSync(path.join(dir, imageName), image);

// What the worker needs to put it back, as a custom section appended to the primary part.
const told = Buffer.from(JSON.stringify({ image: imageName, bytes: memory.length, slots }));
const payload = Buffer.concat([name(SECTION), told]);
fs.writeFileSync(primaryFile, Buffer.concat([bytes, section(0, payload)]));
console.log(`boot-image.mjs: ${imageName}, ${(memory.length / 1048576).toFixed(1)} MiB of memory, ` +
  `${(image.length / 1048576).toFixed(1)} MiB in ${runs.length} runs, ${slots.length} table slots`);
