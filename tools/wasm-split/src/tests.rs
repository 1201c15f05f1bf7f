//! The splitter on a module built here: both halves validate, the profile's names are matched,
//! and the moved code runs (in node, when it is installed) only after the stub loaded the rest.

use super::*;
use walrus::ir::BinaryOp;

#[test]
fn a_name_loses_its_demangled_hash() {
    assert_eq!(key("kubeloop::kubectl::run::h0123456789abcdef"), "kubeloop::kubectl::run");
    assert_eq!(key("_ZN8kubeloop3run17h0123456789abcdefE"), "_ZN8kubeloop3runE");
}

#[test]
fn a_name_without_a_hash_is_kept_as_it_is() {
    assert_eq!(key("core::fmt::write"), "core::fmt::write");
    assert_eq!(key("f::hello"), "f::hello");
    assert_eq!(key("?"), "?");
}

#[test]
fn only_the_names_that_occur_once_are_matched_without_their_hash() {
    let names = ["a::f::h0000000000000001", "a::g::h0000000000000002", "a::g::h0000000000000003"];
    let unique = unique_keys(names.into_iter());
    assert!(unique.contains("a::f"));
    assert!(!unique.contains("a::g"));
}

/// A module like the page's: wasm-bindgen's import of the loader, a memory and a mutable global
/// (the stack pointer), a function table, and three functions: `run` (exported, hot) calls
/// `work` (cold), which calls `add` (hot) and keeps a count in memory and in the global;
/// `run_indirect` reaches `work` through the table.
fn fixture() -> Vec<u8> {
    let mut m = Module::with_config(ModuleConfig::new());
    let load_ty = m.types.add(&[], &[]);
    let (load, _) = m.add_import_func("wbg", "__wbg_kubeloopLoadRest_0123", load_ty);
    let memory = m.memories.add_local(false, false, 1, None, None);
    m.exports.add("memory", memory);
    let sp = m.globals.add_local(ValType::I32, true, false, ConstExpr::Value(Value::I32(0)));

    let mut add = FunctionBuilder::new(&mut m.types, &[ValType::I32, ValType::I32], &[ValType::I32]);
    let (a, b) = (m.locals.add(ValType::I32), m.locals.add(ValType::I32));
    add.name("fixture::add::h0000000000000001".into()).func_body().local_get(a).local_get(b).binop(BinaryOp::I32Add);
    let add = add.finish(vec![a, b], &mut m.funcs);

    let mut work = FunctionBuilder::new(&mut m.types, &[ValType::I32], &[ValType::I32]);
    let x = m.locals.add(ValType::I32);
    let memarg = MemArg { align: 4, offset: 16 };
    work.name("fixture::work::h0000000000000002".into())
        .func_body()
        // memory[16] += 1; sp += 1; return add(x, memory[16] * 100 + sp)
        .i32_const(0)
        .i32_const(0)
        .load(memory, walrus::ir::LoadKind::I32 { atomic: false }, memarg)
        .i32_const(1)
        .binop(BinaryOp::I32Add)
        .store(memory, StoreKind::I32 { atomic: false }, memarg)
        .global_get(sp)
        .i32_const(1)
        .binop(BinaryOp::I32Add)
        .global_set(sp)
        .local_get(x)
        .i32_const(0)
        .load(memory, walrus::ir::LoadKind::I32 { atomic: false }, memarg)
        .i32_const(100)
        .binop(BinaryOp::I32Mul)
        .global_get(sp)
        .binop(BinaryOp::I32Add)
        .call(add);
    let work = work.finish(vec![x], &mut m.funcs);

    let table = m.tables.add_local(false, 1, Some(1), RefType::FUNCREF);
    m.elements.add(
        ElementKind::Active { table, offset: ConstExpr::Value(Value::I32(0)) },
        ElementItems::Functions(vec![work]),
    );
    let work_ty = m.funcs.get(work).ty();

    let mut run = FunctionBuilder::new(&mut m.types, &[ValType::I32], &[ValType::I32]);
    let y = m.locals.add(ValType::I32);
    run.name("fixture::run::h0000000000000003".into()).func_body().local_get(y).call(work);
    let run = run.finish(vec![y], &mut m.funcs);
    m.exports.add("run", run);

    let mut indirect = FunctionBuilder::new(&mut m.types, &[ValType::I32], &[ValType::I32]);
    let z = m.locals.add(ValType::I32);
    indirect
        .name("fixture::run_indirect::h0000000000000004".into())
        .func_body()
        .local_get(z)
        .i32_const(0)
        .call_indirect(work_ty, table);
    let indirect = indirect.finish(vec![z], &mut m.funcs);
    m.exports.add("run_indirect", indirect);

    // The loader import must be kept, as wasm-bindgen keeps it for its exported caller.
    let mut keep = FunctionBuilder::new(&mut m.types, &[], &[]);
    keep.name("fixture::keep::h0000000000000005".into()).func_body().call(load);
    let keep = keep.finish(vec![], &mut m.funcs);
    m.exports.add("keep", keep);
    m.emit_wasm()
}

fn validate(bytes: &[u8]) {
    wasmparser::Validator::new().validate_all(bytes).expect("a valid module");
}

/// A directory holding the fixture module and `profile`: the directory, the module, the profile.
fn prepared(profile: &str) -> (tempdir::Dir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempdir::Dir::new();
    let module = dir.path.join("m_bg.wasm");
    std::fs::write(&module, fixture()).unwrap();
    let list = dir.path.join("profile.txt");
    std::fs::write(&list, profile).unwrap();
    (dir, module, list)
}

fn split_fixture(profile: &str) -> (tempdir::Dir, Vec<u8>, Vec<u8>) {
    let (dir, module, list) = prepared(profile);
    split(&module, &list, &dir.path).expect("the split");
    let primary = std::fs::read(&module).unwrap();
    let rest_name = std::fs::read_dir(&dir.path)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("kubeloop-rest-"))
        .expect("a rest file");
    let rest = std::fs::read(dir.path.join(rest_name)).unwrap();
    (dir, primary, rest)
}

/// What the start of the fixture did not run.
const PROFILE: &str = "# moves\nfixture::work::h0000000000000002\n";

#[test]
fn both_halves_of_a_split_module_are_valid() {
    let (_dir, primary, rest) = split_fixture(PROFILE);
    validate(&primary);
    validate(&rest);
    let rest = parse(&rest, false).unwrap();
    assert_eq!(rest.funcs.iter_local().count(), 1, "only `work` moves");
    assert!(rest.imports.iter().all(|i| i.module == "primary" && i.name.starts_with("__rest_")));
    let primary = parse(&primary, false).unwrap();
    for i in rest.imports.iter() {
        assert!(primary.exports.iter().any(|e| e.name == i.name), "the primary exports {}", i.name);
    }
    assert!(primary.customs.iter().any(|(_, c)| c.name() == REST_SECTION));
}

#[test]
fn a_function_the_profile_does_not_name_stays() {
    // Code newer than the profile stays in the part the page waits for.
    let (dir, module, list) = prepared("fixture::newer::h0000000000000009\n");
    assert!(split(&module, &list, &dir.path).is_err(), "nothing to move");
}

#[test]
fn a_function_renamed_by_a_new_hash_is_still_matched_when_its_name_is_unique() {
    // `work` under another hash (a new toolchain, say) still moves.
    let (_dir, _primary, rest) = split_fixture("fixture::work::h00000000000000ff\n");
    assert_eq!(parse(&rest, false).unwrap().funcs.iter_local().count(), 1);
    // A name that two profile entries share is not matched without its hash.
    let (dir, module, list) = prepared("fixture::work::h00000000000000ff\nfixture::work::h00000000000000fe\n");
    assert!(split(&module, &list, &dir.path).is_err(), "nothing to move");
}

#[test]
fn a_small_function_stays_though_the_profile_names_it() {
    // `add` is smaller than its stub would be.
    let (_dir, _primary, rest) = split_fixture(&format!("{PROFILE}fixture::add::h0000000000000001\n"));
    assert_eq!(parse(&rest, false).unwrap().funcs.iter_local().count(), 1);
}

#[test]
fn the_moved_code_runs_once_the_stub_has_loaded_the_rest() {
    let node = std::process::Command::new("node").arg("--version").output();
    if node.is_err() {
        eprintln!("node is not installed: the split module is only validated");
        return;
    }
    let (dir, primary, rest) = split_fixture(PROFILE);
    std::fs::write(dir.path.join("primary.wasm"), &primary).unwrap();
    std::fs::write(dir.path.join("rest.wasm"), &rest).unwrap();
    let script = r#"
        const fs = require('fs');
        const rest = new WebAssembly.Module(fs.readFileSync('rest.wasm'));
        let loads = 0, instance = null;
        const load = () => {
          loads++;
          new WebAssembly.Instance(rest, { primary: instance.exports });
          instance.exports.__rest_loaded.value = 1;
        };
        instance = new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync('primary.wasm')),
          { wbg: { __wbg_kubeloopLoadRest_0123: load } });
        const before = loads;
        const out = [instance.exports.run(5), instance.exports.run(5), instance.exports.run_indirect(7)];
        console.log(JSON.stringify({ before, loads, out }));
    "#;
    let out = std::process::Command::new("node").arg("-e").arg(script).current_dir(&dir.path).output().unwrap();
    assert!(out.status.success(), "node: {}", String::from_utf8_lossy(&out.stderr));
    // work(x) = x + count*100 + sp, with count and sp both counting calls.
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), r#"{"before":0,"loads":1,"out":[106,207,310]}"#);
}

/// A directory of its own for one test, removed after it.
mod tempdir {
    pub struct Dir {
        pub path: std::path::PathBuf,
    }
    impl Dir {
        pub fn new() -> Dir {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let path = std::env::temp_dir().join(format!(
                "kubeloop-split-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&path).unwrap();
            Dir { path }
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
