//! What a running container uses of its node: CPU and memory, as its image and its command
//! line say it would, and as the requests reaching it load it. A server waiting for
//! requests uses next to nothing; a busy loop (`while true; do :; done`, `yes`) or `stress
//! --cpu N` uses whole cores; `registry.k8s.io/hpa-example` (the HPA walkthrough's
//! php-apache) spends CPU on each request it answers; a shell loop that fetches a URL
//! (`while sleep 0.01; do wget -q -O- http://php-apache; done`) is a load generator, whose
//! requests the cluster delivers to the Service's pods. Usage never exceeds the container's
//! limits (CPU is throttled; memory over the limit is the OOM killer's, elsewhere).

use crate::api::Container;

/// How much CPU one request costs php-apache, in millicore-seconds: its page computes square
/// roots for a while.
pub const HPA_EXAMPLE_COST_PER_REQUEST: f64 = 35.0;
/// How long a request to a pod takes to come back, in seconds, besides the generator's own
/// sleep: what bounds a serial `wget` loop's rate.
pub const REQUEST_ROUND_TRIP: f64 = 0.04;

/// What a container's process does with the node's CPU.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// Waits (a server without load, `sleep`): `cpu` millicores, `memory` bytes.
    Idle { cpu: i64, memory: i64 },
    /// Spins: `cpu` millicores whatever happens.
    Busy { cpu: i64, memory: i64 },
    /// Answers requests, each costing `per_request` millicore-seconds.
    Server { idle_cpu: i64, per_request: f64, memory: i64 },
    /// Sends requests to `url` one after another, `rate` a second.
    LoadGenerator { url: String, rate: f64, memory: i64 },
}

const MI: i64 = 1 << 20;

impl Workload {
    /// The workload of a container of image `repository` run as `command` + `args`.
    pub fn of(repository: &str, command: &[String], args: &[String]) -> Workload {
        let words: Vec<&str> = command.iter().chain(args).map(String::as_str).collect();
        let script = words.join(" ");
        if let Some(w) = stress(repository, &words) {
            return w;
        }
        if let Some(w) = shell_loop(&script) {
            return w;
        }
        let (cpu, memory) = idle_footprint(repository);
        if repository == "registry.k8s.io/hpa-example" {
            return Workload::Server { idle_cpu: cpu, per_request: HPA_EXAMPLE_COST_PER_REQUEST, memory };
        }
        Workload::Idle { cpu, memory }
    }

    /// Requests a second it sends to `url`, if it is a load generator.
    pub fn sends(&self) -> Option<(&str, f64)> {
        match self {
            Workload::LoadGenerator { url, rate, .. } => Some((url, *rate)),
            _ => None,
        }
    }

    /// CPU (millicores) and memory (bytes) used while `received` requests a second reach it,
    /// capped by the container's limits.
    pub fn usage(&self, received: f64, container: &Container) -> (i64, i64) {
        let (cpu, memory) = match self {
            Workload::Idle { cpu, memory } | Workload::Busy { cpu, memory } => (*cpu, *memory),
            Workload::Server { idle_cpu, per_request, memory } => {
                let busy = (received * per_request).round() as i64;
                // Each busy Apache worker holds a little more memory.
                (idle_cpu + busy, memory + (busy / 100) * 2 * MI)
            }
            Workload::LoadGenerator { rate, memory, .. } => (1 + (rate / 20.0).round() as i64, *memory),
        };
        let limits = &container.resources.limits;
        let cpu = limits.get("cpu").map_or(cpu, |l| cpu.min(l.milli()));
        let memory = limits.get("memory").map_or(memory, |l| memory.min(l.value()));
        (cpu.max(0), memory.max(0))
    }
}

/// A server's or tool's resting CPU (millicores) and memory (bytes), by image.
fn idle_footprint(repository: &str) -> (i64, i64) {
    let name = repository.rsplit('/').next().unwrap_or(repository);
    match name {
        "kube-apiserver" => (45, 260 * MI),
        "etcd" => (22, 42 * MI),
        "kube-controller-manager" => (14, 52 * MI),
        "kube-scheduler" => (3, 21 * MI),
        "kube-proxy" => (1, 15 * MI),
        "coredns" => (2, 14 * MI),
        "metrics-server" => (4, 19 * MI),
        "local-path-provisioner" => (1, 9 * MI),
        "hpa-example" | "httpd" | "php" => (1, 11 * MI),
        "nginx" | "nginx-slim" => (0, 3 * MI),
        "redis" | "memcached" => (2, 3 * MI),
        "mongo" | "mysql" | "postgres" | "mariadb" => (6, 120 * MI),
        "busybox" | "alpine" | "pause" | "debian" | "ubuntu" => (0, MI / 2),
        _ => (1, 6 * MI),
    }
}

/// `vish/stress` (`-cpus N`, `-mem-total 150Mi`) and `polinux/stress` (`stress --cpu N
/// --vm-bytes 150M`): cores and memory as its arguments ask.
fn stress(repository: &str, words: &[&str]) -> Option<Workload> {
    if !repository.ends_with("stress") && words.first().is_none_or(|w| *w != "stress") {
        return None;
    }
    let value = |names: &[&str]| {
        words.iter().enumerate().find_map(|(i, w)| {
            names.iter().find_map(|n| {
                w.strip_prefix(n)
                    .and_then(|r| r.strip_prefix('='))
                    .map(str::to_string)
                    .or_else(|| (*w == *n).then(|| words.get(i + 1).map(|v| v.to_string())).flatten())
            })
        })
    };
    let cores: i64 = value(&["-cpus", "--cpu", "-c"]).and_then(|v| v.parse().ok()).unwrap_or(0);
    let memory = value(&["-mem-total", "--vm-bytes"]).map_or(MI, |v| bytes(&v));
    let workers: i64 = value(&["--vm", "-m"]).and_then(|v| v.parse().ok()).unwrap_or(1);
    let memory = if words.iter().any(|w| *w == "--vm" || *w == "-m" || w.starts_with("-mem-total")) {
        memory * workers.max(1) + MI
    } else {
        MI
    };
    Some(Workload::Busy { cpu: cores * 1000, memory })
}

/// `150M`, `150Mi`, `1G`, `512k`: bytes.
fn bytes(text: &str) -> i64 {
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    let n: i64 = digits.parse().unwrap_or(0);
    let unit = text[digits.len()..].trim_end_matches(['i', 'B', 'b']).to_ascii_uppercase();
    n * match unit.as_str() {
        "K" => 1 << 10,
        "M" => MI,
        "G" => 1 << 30,
        _ => 1,
    }
}

/// A shell loop: spinning (`while true; do :; done`, `yes`) or fetching a URL again and again.
fn shell_loop(script: &str) -> Option<Workload> {
    let words: Vec<&str> = script.split(|c: char| c.is_whitespace() || c == ';').filter(|w| !w.is_empty()).collect();
    if words.first().is_some_and(|w| *w == "yes") || words.windows(2).any(|w| w == ["yes", ">"] || w == ["yes", "|"]) {
        return Some(Workload::Busy { cpu: 1000, memory: MI / 2 });
    }
    if !(script.contains("while ") || script.contains("until ") || script.contains("for ")) {
        return None;
    }
    let fetch = words.iter().position(|w| *w == "wget" || *w == "curl");
    let sleep: Option<f64> = words
        .iter()
        .position(|w| *w == "sleep")
        .and_then(|i| words.get(i + 1))
        .and_then(|s| s.trim_end_matches('s').parse().ok());
    if let Some(i) = fetch {
        let url = words[i + 1..].iter().find(|w| {
            !w.starts_with('-')
                && (w.contains("://") || w.contains('.') || w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
                && **w != "do"
                && **w != "done"
        })?;
        let rate = 1.0 / (sleep.unwrap_or(0.0) + REQUEST_ROUND_TRIP);
        return Some(Workload::LoadGenerator { url: url.trim_matches(['"', '\'']).to_string(), rate, memory: MI });
    }
    let spins = sleep.is_none()
        && (script.contains("do :")
            || script.contains("do true")
            || script.contains("do ((")
            || script.contains("do i="));
    spins.then_some(Workload::Busy { cpu: 1000, memory: MI / 2 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Workload {
        Workload::of("busybox", &["sh".into(), "-c".into()], &[script.into()])
    }

    fn container(limits: &[(&str, &str)]) -> Container {
        let mut c = Container::default();
        for (k, v) in limits {
            c.resources.limits.insert(k.to_string(), crate::api::Quantity::parse(v).unwrap());
        }
        c
    }

    #[test]
    fn a_busy_loop_uses_a_whole_core_until_its_limit_throttles_it() {
        let w = sh("while true; do :; done");
        assert_eq!(w.usage(0.0, &container(&[])).0, 1000);
        assert_eq!(w.usage(0.0, &container(&[("cpu", "200m")])).0, 200);
        assert!(matches!(Workload::of("busybox", &["yes".into()], &[]), Workload::Busy { cpu: 1000, .. }));
    }

    #[test]
    fn the_walkthroughs_load_generator_sends_about_twenty_requests_a_second_to_php_apache() {
        let w = sh("while sleep 0.01; do wget -q -O- http://php-apache; done");
        let (url, rate) = w.sends().unwrap();
        assert_eq!(url, "http://php-apache");
        assert!((rate - 20.0).abs() < 0.01, "{rate}");
    }

    #[test]
    fn php_apache_spends_cpu_in_proportion_to_the_requests_it_answers_within_its_limit() {
        let w = Workload::of("registry.k8s.io/hpa-example", &[], &[]);
        let idle = w.usage(0.0, &container(&[])).0;
        assert!(idle <= 2);
        assert_eq!(w.usage(10.0, &container(&[])).0, idle + 350);
        assert_eq!(w.usage(20.0, &container(&[("cpu", "500m")])).0, 500);
    }

    #[test]
    fn stress_images_use_the_cores_and_memory_their_arguments_ask_for() {
        let vish = Workload::of("vish/stress", &[], &["-cpus".into(), "2".into()]);
        assert_eq!(vish.usage(0.0, &container(&[])).0, 2000);
        let polinux = Workload::of(
            "polinux/stress",
            &["stress".into()],
            &["--vm".into(), "1".into(), "--vm-bytes".into(), "150M".into(), "--vm-hang".into(), "1".into()],
        );
        assert_eq!(polinux.usage(0.0, &container(&[])).1, 151 * MI);
    }

    #[test]
    fn an_idle_server_uses_next_to_nothing() {
        let (cpu, memory) = Workload::of("nginx", &[], &[]).usage(0.0, &container(&[]));
        assert!(cpu <= 1 && memory < 10 * MI);
        assert!(matches!(sh("while true; do echo hi; sleep 5; done"), Workload::Idle { .. }));
    }
}

/// One running container of a node's pods, as the kubelet's resource metrics endpoint
/// (`/metrics/resource`) reports it.
#[derive(Clone, Debug)]
pub struct Running<'a> {
    pub pod: &'a crate::api::Pod,
    pub container: &'a Container,
    /// Where its image and command line come from: worked out once per container instance.
    pub key: (String, String),
}

/// The running containers of the pods a kubelet runs, in pod order.
pub fn running(kubelet: &super::Kubelet) -> Vec<Running<'_>> {
    let mut out = Vec::new();
    for object in kubelet.pods() {
        let Some(pod) = object.as_pod() else { continue };
        if pod.status.phase != "Running" {
            continue;
        }
        for c in &pod.spec.containers {
            let status = pod.status.container_statuses.iter().find(|s| s.name == c.name);
            if let Some(s) = status.filter(|s| s.state.running.is_some()) {
                out.push(Running { pod, container: c, key: (pod.metadata.uid.clone(), s.container_id.clone()) });
            }
        }
    }
    out
}

/// A running container's workload, from its image and its command line as started.
pub fn workload_of(kubelet: &super::Kubelet, r: &Running<'_>) -> Workload {
    let image = super::images::parse_reference(&r.container.image);
    let (command, args) = super::env::command_line(&kubelet.objects(), r.pod, r.container, None);
    let repository = super::images::lookup(&image).map_or(image.repository.as_str(), |i| i.repository);
    Workload::of(repository, &command, &args)
}
