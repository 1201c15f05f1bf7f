//! Splits the page's wasm module in two, so that a student waits only for the code the page's
//! start runs. The profile lists the functions a recorded start did not run; their bodies move to
//! the rest, and each leaves in the primary a stub that loads the rest (once, through the JS
//! import `kubeloopLoadRest`) and calls the moved body through the function table. A function the
//! profile does not know (code newer than the profile) stays in the primary. The page fetches the
//! rest as soon as it is interactive (index.html), so the stubs seldom wait. `instrument` makes
//! the module that records a profile (scripts/split-profile.mjs).

use anyhow::{Context, Result, bail};
use std::collections::BTreeSet;
use std::path::Path;
use walrus::ir::{CallIndirect, Const, Instr, InstrSeqId, MemArg, Store, StoreKind, UnaryOp, Value};
use walrus::{
    ConstExpr, ElementItems, ElementKind, ExportItem, FunctionBuilder, FunctionId, FunctionKind, GlobalKind,
    ImportKind, ImportedFunction, Module, ModuleConfig, RawCustomSection, RefType, ValType,
};

/// The custom section of the primary that names the rest's file (the page reads it from the
/// compiled module, so a primary never loads another build's rest).
const REST_SECTION: &str = "kubeloop_rest";
/// The JS function the stubs call to load the rest (src/ui/rest.rs declares it).
const LOAD_IMPORT: &str = "kubeloopLoadRest";
/// A function with fewer instructions stays in the primary: its stub would be as large.
const SMALL: usize = 12;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let done = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["instrument", input, output] => instrument(Path::new(input), Path::new(output)),
        ["split", input, moved, rest_dir] => split(Path::new(input), Path::new(moved), Path::new(rest_dir)),
        ["names", input] => names(Path::new(input)),
        ["strip", input] => strip(Path::new(input)),
        _ => {
            eprintln!(
                "usage: kubeloop-split instrument IN.wasm OUT.wasm   (OUT.wasm.names: one name a line)\n\
                 \x20      kubeloop-split split MODULE.wasm MOVED.txt REST_DIR   (rewrites MODULE.wasm)\n\
                 \x20      kubeloop-split names MODULE.wasm\n\
                 \x20      kubeloop-split strip MODULE.wasm   (drops the names; rewrites it)"
            );
            std::process::exit(2);
        }
    };
    if let Err(e) = done {
        eprintln!("kubeloop-split: {e:#}");
        std::process::exit(1);
    }
}

fn parse(bytes: &[u8], keep_names: bool) -> Result<Module> {
    let mut config = ModuleConfig::new();
    config.generate_name_section(keep_names).generate_producers_section(false);
    config.parse(bytes).context("reading the module")
}

/// A function's name without the hash rustc appends to each symbol. The hash tells apart the
/// instances of a generic function (which share the rest of the name), so the profile keeps it;
/// it also changes when the toolchain or a dependency does, so a function whose name without
/// the hash is unique in both the profile and the module is matched by that too.
fn key(name: &str) -> String {
    let name = name.trim();
    // Demangled: `path::to::f::h0123456789abcdef`; mangled: `_ZN…17h0123456789abcdefE`.
    if let Some(at) = name.rfind("::h") {
        let hash = &name[at + 3..];
        if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return name[..at].to_string();
        }
    }
    if name.len() > 20 && name.ends_with('E') {
        let at = name.len() - 20;
        let hash = &name[at..name.len() - 1];
        if hash.starts_with("17h") && hash[3..].bytes().all(|b| b.is_ascii_hexdigit()) {
            return format!("{}E", &name[..at]);
        }
    }
    name.to_string()
}

/// Each defined function's name (or `?`), in order: what `instrument`'s flags index.
fn local_names(module: &Module) -> Vec<(FunctionId, String)> {
    module
        .funcs
        .iter_local()
        .map(|(id, _)| {
            (id, module.funcs.get(id).name.as_deref().map_or_else(|| "?".to_string(), |n| n.trim().to_string()))
        })
        .collect()
}

fn names(input: &Path) -> Result<()> {
    let module = parse(&std::fs::read(input)?, true)?;
    for (_, name) in local_names(&module) {
        println!("{name}");
    }
    Ok(())
}

/// The module as it is, without its names (a build that is not split).
fn strip(input: &Path) -> Result<()> {
    let mut module = parse(&std::fs::read(input)?, false)?;
    std::fs::write(input, module.emit_wasm())?;
    Ok(())
}

/// The profiling module: a second memory, exported as `__profile`, where each defined function
/// sets its own byte when it runs; OUT.names lists the functions in that order.
fn instrument(input: &Path, output: &Path) -> Result<()> {
    let mut module = parse(&std::fs::read(input)?, true)?;
    let funcs = local_names(&module);
    let pages = (funcs.len() as u64).div_ceil(65536).max(1);
    let flags = module.memories.add_local(false, false, pages, Some(pages), None);
    module.exports.add("__profile", flags);
    for (at, (id, _)) in funcs.iter().enumerate() {
        let FunctionKind::Local(local) = &mut module.funcs.get_mut(*id).kind else { continue };
        let mut body = local.builder_mut().func_body();
        let store =
            Store { memory: flags, kind: StoreKind::I32_8 { atomic: false }, arg: MemArg { align: 1, offset: 0 } };
        body.instr_at(0, store);
        body.instr_at(0, Const { value: Value::I32(1) });
        body.instr_at(0, Const { value: Value::I32(at as i32) });
    }
    std::fs::write(output, module.emit_wasm())?;
    let list: String = funcs.iter().map(|(_, name)| format!("{name}\n")).collect();
    std::fs::write(format!("{}.names", output.display()), list)?;
    eprintln!("kubeloop-split: {} functions instrumented", funcs.len());
    Ok(())
}

/// How many instructions a function body holds (a stand-in for its size).
fn instructions(local: &walrus::LocalFunction) -> usize {
    fn count(local: &walrus::LocalFunction, seq: InstrSeqId, n: &mut usize) {
        for (instr, _) in &local.block(seq).instrs {
            *n += 1;
            match instr {
                Instr::Block(b) => count(local, b.seq, n),
                Instr::Loop(l) => count(local, l.seq, n),
                Instr::IfElse(i) => {
                    count(local, i.consequent, n);
                    count(local, i.alternative, n);
                }
                _ => {}
            }
        }
    }
    let mut n = 0;
    count(local, local.entry_block(), &mut n);
    n
}

/// Moves the functions `moved` names (one a line; `#` starts a comment) out of `input` into
/// `rest_dir/kubeloop-rest-HASH.wasm`, and rewrites `input` as the primary.
fn split(input: &Path, moved: &Path, rest_dir: &Path) -> Result<()> {
    let bytes = std::fs::read(input).with_context(|| format!("reading {}", input.display()))?;
    let listed: BTreeSet<String> = std::fs::read_to_string(moved)
        .with_context(|| format!("reading {}", moved.display()))?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    // Both parses read the names (neither writes them out).
    let mut primary = parse(&bytes, false)?;
    let mut rest = parse(&bytes, false)?;

    // The same items in the same order in both parses.
    let funcs: Vec<FunctionId> = primary.funcs.iter().map(|f| f.id()).collect();
    let rest_funcs: Vec<FunctionId> = rest.funcs.iter().map(|f| f.id()).collect();
    let names: Vec<Option<String>> =
        primary.funcs.iter().map(|f| f.name.as_deref().map(|n| n.trim().to_string())).collect();
    let listed_keys = unique_keys(listed.iter().map(String::as_str));
    let module_keys = unique_keys(names.iter().flatten().map(String::as_str));
    let is_listed = |name: &str| {
        listed.contains(name) || {
            let k = key(name);
            listed_keys.contains(&k) && module_keys.contains(&k)
        }
    };
    if funcs.len() != rest_funcs.len() {
        bail!("the module parsed differently twice");
    }

    let load = primary
        .imports
        .iter()
        .find(|i| i.name.contains(LOAD_IMPORT))
        .and_then(|i| match i.kind {
            ImportKind::Function(f) => Some(f),
            _ => None,
        })
        .with_context(|| format!("the module imports no `{LOAD_IMPORT}`"))?;
    let start = primary.start;

    // What moves: listed (the start did not run it), large enough to be worth a stub.
    let cold: Vec<usize> = (0..funcs.len())
        .filter(|&at| {
            let f = primary.funcs.get(funcs[at]);
            let FunctionKind::Local(local) = &f.kind else { return false };
            Some(f.id()) != start && names[at].as_deref().is_some_and(is_listed) && instructions(local) >= SMALL
        })
        .collect();
    if cold.is_empty() {
        bail!("no function to move: is {} this module's profile?", moved.display());
    }

    let table = primary
        .tables
        .iter()
        .find(|t| t.element_ty == RefType::FUNCREF && t.import.is_none())
        .map(|t| t.id())
        .context("the module has no function table")?;
    let table_at = primary.tables.iter().position(|t| t.id() == table).unwrap_or(0);
    let first_slot = primary.tables.get(table).initial;
    grow(primary.tables.get_mut(table), cold.len());

    // The rest: every function that stays becomes an import of the primary's; memories, tables
    // and globals are the primary's own; the moved bodies fill their table slots.
    let primary_globals: Vec<_> = primary.globals.iter().map(|g| g.id()).collect();
    let rest_globals: Vec<_> = rest.globals.iter().map(|g| g.id()).collect();
    let is_cold: BTreeSet<usize> = cold.iter().copied().collect();
    for (at, &id) in rest_funcs.iter().enumerate() {
        if is_cold.contains(&at) {
            continue;
        }
        let ty = rest.funcs.get(id).ty();
        let existing = match &rest.funcs.get(id).kind {
            FunctionKind::Import(imported) => Some(imported.import),
            _ => None,
        };
        let import = from_primary(&mut rest, existing, &format!("__rest_f{at}"), ImportKind::Function(id));
        rest.funcs.get_mut(id).kind = FunctionKind::Import(ImportedFunction { import, ty });
    }
    let memories: Vec<_> = rest.memories.iter().map(|m| m.id()).collect();
    for (at, id) in memories.iter().enumerate() {
        let existing = rest.memories.get(*id).import;
        let import = from_primary(&mut rest, existing, &format!("__rest_m{at}"), ImportKind::Memory(*id));
        let m = rest.memories.get_mut(*id);
        m.import = Some(import);
        m.data_segments.clear();
    }
    let data: Vec<_> = rest.data.iter().map(|d| d.id()).collect();
    for d in data {
        rest.data.delete(d);
    }
    let elements: Vec<_> = rest.elements.iter().map(|e| e.id()).collect();
    for e in elements {
        rest.elements.delete(e);
    }
    let tables: Vec<_> = rest.tables.iter().map(|t| t.id()).collect();
    for (at, id) in tables.iter().enumerate() {
        let existing = rest.tables.get(*id).import;
        let import = from_primary(&mut rest, existing, &format!("__rest_t{at}"), ImportKind::Table(*id));
        let t = rest.tables.get_mut(*id);
        t.import = Some(import);
        t.init = None;
        t.elem_segments.clear();
        if at == table_at {
            grow(t, cold.len());
        }
    }
    for (at, id) in rest_globals.iter().enumerate() {
        let existing = match rest.globals.get(*id).kind {
            GlobalKind::Import(i) => Some(i),
            GlobalKind::Local(_) => None,
        };
        let import = from_primary(&mut rest, existing, &format!("__rest_g{at}"), ImportKind::Global(*id));
        rest.globals.get_mut(*id).kind = GlobalKind::Import(import);
    }
    let exports: Vec<_> = rest.exports.iter().map(|e| e.id()).collect();
    for e in exports {
        rest.exports.delete(e);
    }
    rest.start = None;
    let rest_table = tables[table_at];
    let moved: Vec<FunctionId> = cold.iter().map(|&at| rest_funcs[at]).collect();
    rest.elements.add(
        ElementKind::Active { table: rest_table, offset: ConstExpr::Value(Value::I32(first_slot as i32)) },
        ElementItems::Functions(moved),
    );
    let customs: Vec<_> = rest.customs.iter().map(|(id, _)| id).collect();
    for c in customs {
        rest.customs.delete(c);
    }
    walrus::passes::gc::run(&mut rest);
    let rest_bytes = rest.emit_wasm();

    // What the rest needs from the primary, exported under the names it imports.
    let wanted: Vec<String> = rest.imports.iter().filter(|i| i.module == "primary").map(|i| i.name.clone()).collect();
    let primary_memories: Vec<_> = primary.memories.iter().map(|m| m.id()).collect();
    let primary_tables: Vec<_> = primary.tables.iter().map(|t| t.id()).collect();
    for name in &wanted {
        let item = name.strip_prefix("__rest_").and_then(|n| {
            let (kind, at) = n.split_at(1);
            let at: usize = at.parse().ok()?;
            Some(match kind {
                "f" => ExportItem::Function(*funcs.get(at)?),
                "m" => ExportItem::Memory(*primary_memories.get(at)?),
                "t" => ExportItem::Table(*primary_tables.get(at)?),
                "g" => ExportItem::Global(*primary_globals.get(at)?),
                _ => return None,
            })
        });
        primary.exports.add(name, item.with_context(|| format!("the rest imports {name}"))?);
    }

    // The primary: each moved function becomes a stub.
    let loaded = primary.globals.add_local(ValType::I32, true, false, ConstExpr::Value(Value::I32(0)));
    primary.exports.add("__rest_loaded", loaded);
    for (slot, &at) in cold.iter().enumerate() {
        let id = funcs[at];
        let ty = primary.funcs.get(id).ty();
        let (params, results) = {
            let t = primary.types.get(ty);
            (t.params().to_vec(), t.results().to_vec())
        };
        let args: Vec<_> = params.iter().map(|&p| primary.locals.add(p)).collect();
        let mut stub = FunctionBuilder::new(&mut primary.types, &params, &results);
        let mut body = stub.func_body();
        body.global_get(loaded).unop(UnaryOp::I32Eqz).if_else(
            None,
            |then| {
                then.call(load);
            },
            |_| {},
        );
        for &a in &args {
            body.local_get(a);
        }
        body.i32_const((first_slot as usize + slot) as i32);
        body.instr(CallIndirect { ty, table });
        primary.funcs.get_mut(id).kind = FunctionKind::Local(stub.local_func(args));
    }

    let rest_name = format!("kubeloop-rest-{:016x}.wasm", fnv(&rest_bytes));
    primary.customs.add(RawCustomSection { name: REST_SECTION.into(), data: rest_name.clone().into_bytes() });
    walrus::passes::gc::run(&mut primary);
    let primary_bytes = primary.emit_wasm();
    std::fs::write(input, &primary_bytes)?;
    std::fs::write(rest_dir.join(&rest_name), &rest_bytes)?;
    eprintln!(
        "kubeloop-split: {} of {} functions moved to {rest_name}; primary {} B, rest {} B (was {} B)",
        cold.len(),
        funcs.len(),
        primary_bytes.len(),
        rest_bytes.len(),
        bytes.len()
    );
    Ok(())
}

/// An item of the rest as an import of the primary's export `name`: its import renamed when it
/// was one already (a JS function, say), else a new import.
fn from_primary(
    rest: &mut Module,
    existing: Option<walrus::ImportId>,
    name: &str,
    kind: ImportKind,
) -> walrus::ImportId {
    match existing {
        Some(import) => {
            let i = rest.imports.get_mut(import);
            i.module = "primary".into();
            i.name = name.into();
            import
        }
        None => rest.imports.add("primary", name, kind),
    }
}

/// `by` more slots in a function table (its maximum raised to match, when it has one).
fn grow(table: &mut walrus::Table, by: usize) {
    table.initial += by as u64;
    if let Some(max) = table.maximum.as_mut() {
        *max = (*max).max(table.initial);
    }
}

/// The names (without their hash) that occur once.
fn unique_keys<'a>(names: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for name in names {
        *seen.entry(key(name)).or_default() += 1;
    }
    seen.into_iter().filter(|&(_, n)| n == 1).map(|(k, _)| k).collect()
}

/// FNV-1a: the rest's file name follows its content.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests;
