#!/usr/bin/env node
// scripts/trace-summary.mjs — where the page's main thread spends a Chromium trace: the time of
// each kind of work (script, style, layout, paint, garbage collection…) on the renderer's main
// thread, counted once however deeply the trace nests it, and the longest tasks with what
// filled them. For traces written by `BIG_TRACE=… node tests/e2e/worker.mjs`.
//
// Usage: node scripts/trace-summary.mjs TRACE.json [TOP]

import fs from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/trace-summary.mjs TRACE.json [TOP]');
  process.exit(2);
}
const TOP = Number(topArg ?? 8);
const raw = JSON.parse(fs.readFileSync(file, 'utf8'));
const events = Array.isArray(raw) ? raw : raw.traceEvents;

// The renderer main threads: named CrRendererMain (one per renderer process).
const main = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
const onMain = events.filter((e) => main.has(`${e.pid}:${e.tid}`) && e.ph === 'X' && typeof e.dur === 'number');

// Kinds of work, by trace event name; time nested inside an event already counted is not counted
// again (a Layout inside a FunctionCall counts as Layout, and the FunctionCall as the rest).
const KINDS = {
  script: ['FunctionCall', 'EvaluateScript', 'v8.compile', 'TimerFire', 'FireAnimationFrame', 'EventDispatch', 'v8.callFunction', 'v8.run', 'RunMicrotasks', 'V8.Execute'],
  gc: ['MinorGC', 'MajorGC', 'V8.GCScavenger', 'V8.GCFinalizeMC', 'BlinkGC.AtomicPhase', 'ThreadState::performIdleLazySweep', 'V8.GC_MC_BACKGROUND_EVACUATE_COPY'],
  style: ['UpdateLayoutTree', 'RecalculateStyles', 'ParseAuthorStyleSheet'],
  layout: ['Layout', 'UpdateLayerTree'],
  paint: ['Paint', 'PrePaint', 'PaintImage', 'Layerize', 'Commit', 'UpdateLayer', 'CompositeLayers'],
  html: ['ParseHTML', 'HitTest'],
};
const kindOf = new Map(Object.entries(KINDS).flatMap(([k, names]) => names.map((n) => [n, k])));

const byKind = new Map();
const byName = new Map();
const tasks = [];
const ordered = onMain.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
// A stack of open events per thread, to find each event's innermost counted ancestor.
const stacks = new Map();
for (const e of ordered) {
  const key = `${e.pid}:${e.tid}`;
  const stack = stacks.get(key) ?? [];
  while (stack.length && stack[stack.length - 1].end <= e.ts) stack.pop();
  const kind = kindOf.get(e.name);
  const frame = { e, end: e.ts + e.dur, kind, childKinds: new Map() };
  if (e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask') {
    if (!stack.some((s) => s.task)) { frame.task = true; tasks.push(frame); }
  }
  if (kind) {
    // Time of this kind is taken out of the nearest counted ancestor.
    const parent = [...stack].reverse().find((s) => s.kind);
    if (parent) byKind.set(parent.kind, (byKind.get(parent.kind) ?? 0) - e.dur);
    byKind.set(kind, (byKind.get(kind) ?? 0) + e.dur);
    byName.set(e.name, (byName.get(e.name) ?? 0) + e.dur);
    const task = stack.find((s) => s.task);
    if (task && !parent) task.childKinds.set(kind, (task.childKinds.get(kind) ?? 0) + e.dur);
  }
  stack.push(frame);
  stacks.set(key, stack);
}
const ms = (us) => (us / 1000).toFixed(0);
const taskTotal = tasks.reduce((s, t) => s + t.e.dur, 0);
const first = Math.min(...onMain.map((e) => e.ts));
const last = Math.max(...onMain.map((e) => e.ts + e.dur));
console.log(`main thread: ${tasks.length} tasks, ${ms(taskTotal)} ms busy of ${ms(last - first)} ms traced`);
console.log(`by kind: ${[...byKind].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}=${ms(v)}ms`).join(' ')}`);
console.log(`by event: ${[...byName].sort((a, b) => b[1] - a[1]).slice(0, 14).map(([k, v]) => `${k}=${ms(v)}`).join(' ')}`);
const long = tasks.filter((t) => t.e.dur >= 16000).sort((a, b) => b.e.dur - a.e.dur);
console.log(`tasks over 16 ms: ${long.length}, over 50 ms: ${long.filter((t) => t.e.dur >= 50000).length}`);
for (const t of long.slice(0, TOP)) {
  const parts = [...t.childKinds].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${ms(v)}`).join(', ');
  console.log(`  ${ms(t.e.dur)} ms at +${ms(t.e.ts - first)} ms: ${parts}`);
}
