//! Scale benchmark: upstream's size limits (5,000 nodes, 150,000 pods), applied as
//! Deployments, driven until every pod is Running. Reports wall time, virtual time, requests
//! and peak memory.
//!
//! `cargo bench --bench scale` runs the full size; `-- --nodes N --pods N --per-deployment N`
//! changes it (`--profile` adds each component's time, `--timeline` a line each virtual
//! second). Events are kept in an etcd of their own, as upstream's large clusters keep them
//! (`--events-in-main-etcd` keeps them with everything else). Without `--bench` (as
//! `cargo test --all-targets` runs it) it does a small smoke
//! run so the harness stays honest without taking minutes.

#[cfg_attr(test, allow(dead_code))]
mod janitor;
#[cfg_attr(test, allow(dead_code))]
mod prefault;

use kubeloop::api::{Kind, Object};
use kubeloop::apiserver::{Body, Request, Verb};
use kubeloop::cluster::{Cluster, ClusterConfig};
use kubeloop::sim::Duration;
use std::time::Instant;

// As the native CLI does (see Cargo.toml).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs before Rust's runtime makes its first allocation: see `prefault::small_first_arena`.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static SMALL_FIRST_ARENA: extern "C" fn() = prefault::small_first_arena;

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.windows(2).find(|w| w[0] == name).and_then(|w| w[1].parse().ok()).unwrap_or(default)
}

fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The calling thread's CPU time so far, user and system, in seconds.
fn thread_cpu() -> Option<(f64, f64)> {
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_THREAD is Linux's, for the calling thread only.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return None;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some((secs(usage.ru_utime), secs(usage.ru_stime)))
}

fn deployment(name: &str, replicas: usize) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.25",
                    "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}
            }
        }
    })
}

/// Pods Running and ready, as the benchmark's Deployments `app-0` .. report them (cheap: one
/// read by key each, where a range would have etcd's key index put every new pod's key in
/// order), confirmed pod by pod at the end. Only the `default` namespace: kube-system's
/// Deployments and DaemonSet pods are not the benchmark's.
fn ready_replicas(cluster: &Cluster, deployments: usize) -> usize {
    let etcd = cluster.inspect().etcd();
    (0..deployments)
        .filter_map(|i| etcd.get(&format!("/registry/deployments/default/app-{i}")))
        .filter_map(|kv| kv.value.as_deployment().map(|d| d.status.ready_replicas.unwrap_or(0) as usize))
        .sum()
}

fn running_pods(cluster: &Cluster) -> usize {
    cluster
        .inspect()
        .etcd()
        .unordered("/registry/pods/default/")
        .filter(|(_, kv)| kv.value.as_pod().is_some_and(|p| p.status.phase == "Running" && p.is_ready()))
        .count()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let full = args.iter().any(|a| a == "--bench");
    let nodes = arg(&args, "--nodes", if full { 5000 } else { 50 });
    let pods = arg(&args, "--pods", if full { 150_000 } else { 1000 });
    let per = arg(&args, "--per-deployment", if full { 500 } else { 100 }).max(1);
    let seed = arg(&args, "--seed", 1) as u64;

    // The kernel's page zeroing on the second core (see `prefault`); `--no-prefault` measures
    // without it. 12 GiB of address space: mimalloc takes at most ~15 GiB as one arena.
    if !args.iter().any(|a| a == "--no-prefault") {
        prefault::start(12 << 30);
    }
    let started = Instant::now();
    // Events in an etcd of their own, as upstream's large clusters keep them;
    // `--events-in-main-etcd` keeps them with everything else, as a kubeadm cluster does.
    let events_etcd = !args.iter().any(|a| a == "--events-in-main-etcd");
    let mut cluster = Cluster::new(ClusterConfig {
        seed,
        workers: nodes as u32,
        record: false,
        events_etcd,
        ..ClusterConfig::default()
    });
    // Old object versions freed on the second core (see `janitor`); `--no-janitor` frees them
    // on the simulation's.
    if !args.iter().any(|a| a == "--no-janitor") {
        if let Some(janitor) = janitor::start() {
            cluster.with_api(|api, _| api.etcd_bypass().set_discard(Box::new(janitor)));
        }
    }
    cluster.advance(Duration::seconds(5));
    let boot = started.elapsed();
    println!("scale: {nodes} nodes registered in {:.2}s wall", boot.as_secs_f64());

    let apply = Instant::now();
    let deployments = pods.div_ceil(per);
    for i in 0..deployments {
        let replicas = per.min(pods - i * per);
        let mut req = Request::new(Verb::Create, Kind::Deployment, "default", "");
        req.body = Some(Body::Json(deployment(&format!("app-{i}"), replicas)));
        if let Err(e) = cluster.request(req) {
            eprintln!("scale: creating app-{i} failed: {}", e.message);
            std::process::exit(1);
        }
    }
    let t0 = cluster.now();
    let mut running = 0;
    let mut last_report = Instant::now();
    // `--profile`: the wall time each kind of component spends in its turns (kubelets
    // together, each controller on its own).
    let profile = args.iter().any(|a| a == "--profile");
    // `--timeline`: a line each virtual second (wall time so far, pods Running, memory taken).
    let timeline = args.iter().any(|a| a == "--timeline");
    let mut spent: std::collections::BTreeMap<String, (f64, u64)> = Default::default();
    while running < pods {
        let target = cluster.now() + Duration::seconds(1);
        if profile {
            while let Some((_, id)) = cluster.next_due().filter(|(at, _)| *at <= target) {
                let name = cluster.component_name(id);
                let name = if name.starts_with("kubelet") { "kubelet".to_string() } else { name.to_string() };
                let turn = Instant::now();
                cluster.step();
                let entry = spent.entry(name).or_default();
                entry.0 += turn.elapsed().as_secs_f64();
                entry.1 += 1;
            }
        }
        // Up to the same second either way (profiled turns have taken the clock part of it).
        cluster.advance(target.since(cluster.now()));
        running = ready_replicas(&cluster, deployments);
        if running >= pods {
            running = running_pods(&cluster);
        }
        if timeline {
            println!(
                "scale:   {} virtual: {:.2}s wall from apply, {running}/{pods} Running{}",
                cluster.now().since(t0),
                apply.elapsed().as_secs_f64(),
                prefault::used().map_or(String::new(), |b| format!(", allocator {} MiB", b >> 20))
            );
        } else if last_report.elapsed().as_secs_f64() > 5.0 {
            println!(
                "scale:   {running}/{pods} Running after {} virtual, {:.1}s wall",
                cluster.now().since(t0),
                apply.elapsed().as_secs_f64()
            );
            last_report = Instant::now();
        }
        if cluster.now().since(t0) > Duration::minutes(30) {
            eprintln!("scale: gave up: {running}/{pods} Running after 30 virtual minutes");
            std::process::exit(1);
        }
    }
    let wall = apply.elapsed();
    // Every event reported so far stored (the events thread may still be at it).
    let events = cluster.with_api(|api, _| api.settle_events());
    let settled = apply.elapsed();
    let total = started.elapsed();
    let revision = cluster.inspect().etcd().revision();
    let objects = cluster.inspect().etcd().len();
    let deployments_ready = cluster
        .objects(Kind::Deployment, "default")
        .iter()
        .filter(|d| matches!(&***d, Object::Deployment(d) if d.status.available_replicas == d.spec.replicas))
        .count();
    println!(
        "scale: {pods} pods in {deployments} Deployments Running on {nodes} nodes: {:.2}s wall from apply ({:.2}s including boot), {} virtual; {revision} etcd writes, {objects} objects; {deployments_ready}/{deployments} Deployments available; {:.1} µs per pod; peak RSS {}",
        wall.as_secs_f64(),
        total.as_secs_f64(),
        cluster.now().since(t0),
        wall.as_secs_f64() * 1e6 / pods as f64,
        peak_rss_mib().map_or("n/a".to_string(), |m| format!("{m:.0} MiB"))
    );
    if let Some((events, revision)) = events {
        println!(
            "scale: {events} Events in their own etcd (revision {revision}), all stored {:.2}s after apply",
            settled.as_secs_f64()
        );
    }
    if let Some((user, system)) = thread_cpu() {
        // Steadier than wall time on a shared machine: what the simulation itself spent, not
        // the helper threads nor the time it waited for a core.
        println!("scale: the simulation's thread: {user:.2}s user, {system:.2}s system, since start");
    }
    if let Some(bytes) = prefault::used() {
        println!("scale: the allocator took {} MiB from the region faulted in on the other core", bytes >> 20);
    }
    let mut spent: Vec<_> = spent.into_iter().collect();
    spent.sort_by(|a, b| b.1.0.total_cmp(&a.1.0));
    for (name, (secs, turns)) in spent {
        println!("scale:   {name:<40} {secs:7.2}s in {turns} turns");
    }
    // Tearing down a cluster this size takes a while and measures nothing.
    std::mem::forget(cluster);
}
