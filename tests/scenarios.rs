//! Scenario transcripts: each file in `tests/scenarios/` is a session as `kubeloop run` prints
//! it — commands after `$ ` (or, typed into a container's shell, after its prompt), then their
//! output. The test replays the commands on a fresh sandbox (seed 1, or `# seed: N` on the
//! first line; one control-plane node, or `# control-planes: N` among the first lines) and expects the same transcript, byte for byte. After a deliberate change, review the diff and rerun with `UPDATE_SCENARIOS=1`.

use kubeloop::cluster::ClusterConfig;
use kubeloop::shell::Session;
use std::path::Path;

fn seed_of(text: &str) -> u64 {
    text.lines().next().and_then(|l| l.strip_prefix("$ # seed: ")).and_then(|n| n.trim().parse().ok()).unwrap_or(1)
}

/// The cluster a transcript runs on: its seed, and `$ # control-planes: N` on a line of its
/// own among its first lines.
fn config_of(text: &str) -> ClusterConfig {
    let control_planes = text
        .lines()
        .take(5)
        .find_map(|l| l.strip_prefix("$ # control-planes: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(1);
    ClusterConfig { seed: seed_of(text), control_planes, ..ClusterConfig::default() }
}

fn diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        let (x, y) = (e.get(i).copied(), a.get(i).copied());
        if x != y {
            out.push_str(&format!(
                "line {}:\n  expected: {}\n  actual:   {}\n",
                i + 1,
                x.unwrap_or("<end>"),
                y.unwrap_or("<end>")
            ));
            if out.lines().count() > 30 {
                break;
            }
        }
    }
    out
}

#[test]
fn every_scenario_transcript_replays_exactly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().filter_map(Result::ok).map(|e| e.path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "txt"));
    files.sort();
    assert!(!files.is_empty(), "no scenarios in {}", dir.display());
    let update = std::env::var("UPDATE_SCENARIOS").is_ok();
    let mut failures = Vec::new();
    for path in &files {
        let expected = std::fs::read_to_string(path).unwrap();
        let mut session = Session::with_config(config_of(&expected));
        let actual = session.replay(&expected);
        if actual != expected {
            if update {
                std::fs::write(path, &actual).unwrap();
            } else {
                failures.push(format!("{}:\n{}", path.display(), diff(&expected, &actual)));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "scenario transcripts differ (UPDATE_SCENARIOS=1 rewrites them):\n{}",
        failures.join("\n")
    );
}
