// The simulation's worker, started as a module worker from a Blob URL: by index.html as soon as
// the page arrives, or by src/ui/port.rs when the page had none.
//
// Started by index.html, it is named (the Worker's `name`) with the URLs of the module's JS glue
// and of the module itself, and loads both at once, on its own thread: it downloads and compiles
// the module, saying how far the download has come (`{ progress: { got, total } }`, total 0 when
// unknown), and hands the compiled module to the page (`{ compiled }`, or `{ compiled: null,
// why }` when it could not, and the page downloads the module itself). So the page's thread,
// busy drawing its first screen, neither holds up the worker's start nor reads the module's
// bytes, and both run one compiled module.
//
// Otherwise it is posted `{ glue }`, the URL of the glue, and `{ module }`, the page's own
// compiled WebAssembly.Module (or both at once; a second of either, or either once the worker
// loads its own, is ignored).
//
// Then each request comes as a JSON string; those that come while the module starts wait here.
// Each answer goes back as the JSON string worker_answer returns; anything that goes wrong (the
// glue cannot load, the module traps) goes back as { failed }, after which the worker answers
// nothing more. Once the module runs, the worker says { loaded: true } (the page stops waiting for
// it to load).
//
// The worker also keeps its memory for the next visit. Told { image: 'save' } (the page is
// being hidden), it copies the module's memory, which holds the whole simulation, into
// IndexedDB, and answers { imaged: what it did }. On the next visit, before its first request,
// it puts that memory back when the module is the same build (the glue's file name, which
// trunk derives from the build's content): the session in it then goes on with the journal the
// page loads, instead of replaying it from the start (src/page/sim/simulation.rs, `go_on_with`;
// a journal it does not continue is replayed as ever). Besides the memory, the module's state
// is a table of JS values the Rust side refers to by index; at rest it holds only undefined,
// null, true, false and the global object, which are put back in their slots.
//
// A first visit's worker may put back the build's boot image instead, the memory of a worker
// that has booted the playground (scripts/boot-image.mjs; `booting` below): its `name` says
// whether the page wants it (`bootImage`).
//
// A release build moves the code the start does not run to a second file, the rest of the module
// (src/ui/rest.rs). The page posts `{ rest }`, that file compiled, once it has fetched it; should
// a moved function run before, `kubeloopLoadRest` fetches the file here and then, synchronously,
// telling the page through the `{ restPort }` it was given (so that the page stops its own
// download) and handing it the compiled file.
let answer = null;
let dead = false;
let glue = null;
let started = false;
const waiting = [];
let module = null;
let build = '';
// The rest of the module: its URL (read from the module), the instance's exports (known before
// the module's start runs), a compiled rest the page sent early, and how it came.
const rest = self.kubeloopRest = { url: null, exports: null, posted: null, base: null, port: null };
self.kubeloopRestLoads = { posted: 0, waited: 0 };
const restJoin = (compiled) => {
  const loaded = rest.exports && rest.exports.__rest_loaded;
  if (!loaded || loaded.value) return false;
  new WebAssembly.Instance(compiled, { primary: rest.exports });
  loaded.value = 1;
  return true;
};
globalThis.kubeloopLoadRest = () => {
  const loaded = rest.exports && rest.exports.__rest_loaded;
  if (!loaded || loaded.value) return;
  if (rest.posted && restJoin(rest.posted)) return;
  if (!rest.url) throw new Error('this module has no rest to load');
  if (rest.port) rest.port.postMessage('fetching');
  const request = new XMLHttpRequest();
  request.open('GET', rest.url, false);
  request.responseType = 'arraybuffer';
  request.send();
  if (request.status !== 200) throw new Error(`the rest of the simulator could not load (HTTP ${request.status})`);
  self.kubeloopRestLoads.waited++;
  const compiled = new WebAssembly.Module(request.response);
  restJoin(compiled);
  if (rest.port) rest.port.postMessage(compiled);
};
const KEPT = { db: 'kubeloop-worker', store: 'memory', key: 'kept' };
const SLOTS = { u: undefined, n: null, t: true, f: false, g: globalThis };
// One IndexedDB request `act(store)` in a transaction of its own; resolves to its result.
const kept = (mode, act) => new Promise((ok, no) => {
  const open = indexedDB.open(KEPT.db, 1);
  open.onupgradeneeded = () => open.result.createObjectStore(KEPT.store);
  open.onerror = () => no(open.error);
  open.onsuccess = () => {
    const db = open.result;
    const tx = db.transaction(KEPT.store, mode);
    const request = act(tx.objectStore(KEPT.store));
    tx.oncomplete = () => { db.close(); ok(request.result); };
    tx.onerror = tx.onabort = () => { db.close(); no(tx.error); };
  };
});
// Copies the memory (and the table's slots) into IndexedDB; resolves to what it did.
const keep = () => {
  if (!module || dead || !module.glue.worker_keepable()) return Promise.resolve('not kept: no session to keep now');
  const table = module.exports.__wbindgen_externrefs;
  let slots = '';
  for (let i = 0; i < table.length; i++) {
    const value = table.get(i);
    const slot = Object.keys(SLOTS).find((k) => SLOTS[k] === value);
    if (!slot) return Promise.resolve(`not kept: slot ${i} holds a value of this page's own`);
    slots += slot;
  }
  const bytes = module.exports.memory.buffer.slice(0);
  return kept('readwrite', (store) => store.put({ build, bytes, slots }, KEPT.key))
    .then(() => `${(bytes.byteLength / 1048576).toFixed(1)} MiB kept`);
};
// What a previous visit kept, read as soon as the worker starts, while the module downloads,
// so that the first request does not wait for IndexedDB (dropped once used: it is large).
let keptRead = self.indexedDB ? kept('readonly', (store) => store.get(KEPT.key)).catch(() => null) : Promise.resolve(null);
// Puts an image of the memory back: grows the memory to `size`, lets `write` fill it, and puts
// the table's `slots` back; `restored` when it is a visit's kept memory, whose session has a
// page of its own behind it.
const putBack = (size, slots, write, restored) => {
  const memory = module.exports.memory, table = module.exports.__wbindgen_externrefs;
  if (size % 65536 || size < memory.buffer.byteLength || typeof slots !== 'string' || /[^untfg]/.test(slots)) return false;
  memory.grow((size - memory.buffer.byteLength) / 65536);
  write(memory);
  if (table.length < slots.length) table.grow(slots.length - table.length);
  for (let i = 0; i < slots.length; i++) table.set(i, SLOTS[slots[i]]);
  if (restored) module.glue.worker_restored();
  return true;
};
// Puts back what `keep` kept, when it is this build's, or else the build's boot image when it
// came in time; resolves to whether it did.
const restore = () => keptRead.then((image) => {
  keptRead = null;
  if (!image || image.build !== build || !(image.bytes instanceof ArrayBuffer)) return booting();
  boot.abort();
  try {
    const copy = (memory) => new Uint8Array(memory.buffer).set(new Uint8Array(image.bytes));
    return putBack(image.bytes.byteLength, image.slots, copy, true) || booting();
  } catch (e) {
    // The memory is no longer the fresh module's: forget the copy, and give up on this worker
    // (the page then runs the simulation itself and replays the journal).
    return kept('readwrite', (store) => store.delete(KEPT.key)).catch(() => {}).then(() => { throw e; });
  }
});
// The boot image (scripts/boot-image.mjs): the memory of this worker once it has booted a fresh
// playground, made at build time, shipped as a wasm module of data alone that writes it into the
// memory it is given, and named (with its size and the table's slots) in the module's
// `kubeloop_boot` section. Booting is the longest step of a first visit once the module is here;
// on a fast enough connection the image comes sooner. So the worker asks for it once the module
// is compiled, only when the module came fast (BOOT_IMAGE.fast), and waits for it only so long
// (BOOT_IMAGE.wait) once the module runs, after which it boots as ever. (Asking for it beside the
// module, as soon as the module's first bytes came fast, gained nothing on a two-core machine,
// where the two downloads compete for the processor.) It is put back before the first request,
// which then finds the cluster booted (a first visit's journal is that fresh cluster:
// src/page/sim/simulation.rs, `load`); a later visit's kept memory comes first.
// The page says whether to take it (`bootImage` in the worker's name, index.html): 'auto' as
// above, 'never' (a lesson, another seed: they boot their own cluster), or 'always' (tests).
const BOOT_IMAGE = { fast: 200, wait: 150, waitAlways: 10000 };
const boot = { image: null, section: null, wait: BOOT_IMAGE.wait, stop: null, abort: () => boot.stop && boot.stop() };
// What became of it, and how long the module and the image took to come (for the tests).
const bootTimes = self.kubeloopBootImageTimes = { module: null, image: null };
// Starts fetching and compiling the boot image at `url` (once).
const askBootImage = (url) => {
  if (boot.image || !url) return;
  const controller = new AbortController();
  const asked = performance.now();
  // Not when a visit's kept memory of this build will be put back instead.
  const keptFirst = keptRead ? keptRead.then((image) => !!image && image.build === build) : Promise.resolve(false);
  boot.image = keptFirst.then((first) => (first ? 'not fetched: the kept memory comes first' : compile(fetch(url, { signal: controller.signal })).then((image) => {
    bootTimes.image = Math.round(performance.now() - asked);
    return image;
  }, (e) => `not fetched: ${e}`)));
  boot.stop = () => controller.abort();
};
// The module is compiled: what its section says of the image decides whether it is taken.
const bootImageSection = (compiled, tookMs, how) => {
  bootTimes.module = Math.round(tookMs);
  const named = WebAssembly.Module.customSections ? WebAssembly.Module.customSections(compiled, 'kubeloop_boot') : [];
  let section = null;
  try {
    section = named.length ? JSON.parse(new TextDecoder().decode(named[0])) : null;
  } catch (e) {
    section = null;
  }
  const usable = section && typeof section.image === 'string' && Number.isSafeInteger(section.bytes);
  if (!usable || !rest.base || how === 'never') return;
  boot.section = section;
  if (how === 'always') boot.wait = BOOT_IMAGE.waitAlways;
  if (how !== 'always' && tookMs > BOOT_IMAGE.fast) {
    self.kubeloopBootImage = `not fetched: the module took ${Math.round(tookMs)} ms`;
    return;
  }
  askBootImage(new URL(section.image, rest.base).href);
};
// Puts the boot image back if it comes in time (`boot.wait`); resolves to whether it did.
// What became of it is kept in `self.kubeloopBootImage` (for the end-to-end tests). Should
// putting it back throw, the memory is half a fresh module's: the worker gives up (`fail`).
const booting = () => {
  if (!boot.image) return false;
  let timer = null;
  const late = new Promise((resolve) => { timer = setTimeout(() => resolve('not in time'), boot.wait); });
  return Promise.race([boot.image, late]).then((image) => {
    clearTimeout(timer);
    boot.abort();
    const write = (memory) => {
      new Uint8Array(memory.buffer).fill(0);
      new WebAssembly.Instance(image, { kubeloop: { memory } });
    };
    const done = image instanceof WebAssembly.Module && putBack(boot.section.bytes, boot.section.slots, write, false);
    self.kubeloopBootImage = done ? 'put back' : typeof image === 'string' ? image : 'unusable';
    return done;
  });
};
const fail = (e) => {
  dead = true;
  answer = null;
  postMessage({ failed: String((e && (e.message || e)) || 'the worker failed') });
};
const reply = (json) => {
  try {
    postMessage(answer(json));
  } catch (e) {
    fail(e);
  }
};
self.onmessage = (event) => {
  const data = event.data;
  if (dead) return;
  if (typeof data === 'string') {
    if (answer) reply(data);
    else waiting.push(data);
    return;
  }
  if (data.restPort) {
    rest.port = data.restPort;
    return;
  }
  if (data.rest) {
    rest.posted = data.rest;
    if (restJoin(data.rest)) self.kubeloopRestLoads.posted++;
    return;
  }
  if (data.image === 'save') {
    keep().then((said) => postMessage({ imaged: said }), (e) => postMessage({ imaged: `not kept: ${e}` }));
    return;
  }
  if (data.glue) takeGlue(data.glue);
  if (data.module) start(data.module);
};
// Imports the module's JS glue (once).
const takeGlue = (url) => {
  if (glue) return;
  build = String(url).split('?')[0].split('/').pop();
  rest.base = String(url);
  glue = import(url);
  glue.catch(() => {});
};
// Runs the module (once): the glue instantiates it, then the requests that came meanwhile are
// answered.
const start = (compiled) => {
  if (started || dead) return;
  started = true;
  const named = WebAssembly.Module.customSections ? WebAssembly.Module.customSections(compiled, 'kubeloop_rest') : [];
  if (named.length && rest.base) rest.url = new URL(new TextDecoder().decode(named[0]), rest.base).href;
  // The glue instantiates the module and runs its start at once: the instance's exports are
  // taken on the way, for a moved function that the start might run.
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = (...args) => instantiate.apply(WebAssembly, args).then((made) => {
    rest.exports = (made.instance || made).exports;
    if (rest.posted && restJoin(rest.posted)) self.kubeloopRestLoads.posted++;
    return made;
  });
  (glue || Promise.reject(new Error('no glue URL')))
    .then((g) => g.default({ module_or_path: compiled }).then((exports) => {
      WebAssembly.instantiate = instantiate;
      rest.exports = exports;
      module = { glue: g, exports };
      return build ? restore() : false;
    }).then(() => {
      answer = g.worker_answer;
      postMessage({ loaded: true });
      while (answer && waiting.length) reply(waiting.shift());
    }))
    .catch(fail);
};
// Compiles the wasm a fetch brings (streaming it to the compiler when it comes as wasm, which
// also lets the browser keep the compiled code for the next visit); `watch` sees the response.
const compile = (fetched, watch) => fetched.then((response) => {
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  if (watch) watch(response);
  const typed = (response.headers.get('Content-Type') || '').split(';')[0].trim() === 'application/wasm';
  return WebAssembly.compileStreaming && typed
    ? WebAssembly.compileStreaming(response)
    : response.arrayBuffer().then((bytes) => WebAssembly.compile(bytes));
});
// Downloads and compiles the module, posting the download's progress: the bytes received so far,
// and the whole size when known (a compressed response's Content-Length counts encoded bytes,
// its body decoded ones).
const download = (url) => compile(fetch(url), (response) => {
  const encoded = (response.headers.get('Content-Encoding') || 'identity') !== 'identity';
  const total = encoded ? 0 : Number(response.headers.get('Content-Length')) || 0;
  if (!response.body || !response.clone) return;
  const reader = response.clone().body.getReader();
  let got = 0;
  const next = () => reader.read().then((chunk) => {
    if (chunk.done) return;
    got += chunk.value.byteLength;
    postMessage({ progress: { got, total } });
    return next();
  });
  next().catch(() => {});
});
// Started by index.html: the glue and the module, at once.
let told = null;
try {
  told = JSON.parse(self.name || 'null');
} catch (e) {
  told = null;
}
if (told && typeof told.glue === 'string' && told.glue) takeGlue(told.glue);
if (told && typeof told.module === 'string' && told.module) {
  const how = told.bootImage === 'always' || told.bootImage === 'never' ? told.bootImage : 'auto';
  const asked = performance.now();
  download(told.module).then((compiled) => {
    postMessage({ compiled });
    bootImageSection(compiled, performance.now() - asked, how);
    start(compiled);
  }, (e) => postMessage({ compiled: null, why: String((e && e.message) || e) }));
}
