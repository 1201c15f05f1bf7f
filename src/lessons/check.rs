//! Checks: reading ```check blocks, making sure their commands only look, and evaluating them
//! against a live session without leaving a trace in it.

use super::model::{Check, CheckResult, Condition, EntryKind, Expect, RecordPattern, Test};
use crate::record::{Happening, Seq, Stage};
use crate::shell::{Session, split_words};

type Problem = (usize, String);

const LINES: &str = "run:, expect:, expect contains:, expect not contains: or record:";

/// Reads a check block. `label` is the info string after `check`; `open` the fence's line.
pub(super) fn parse_check(label: &str, open: usize, lines: &[(usize, &str)]) -> Result<Check, Problem> {
    let mut run: Option<String> = None;
    let mut expect = Vec::new();
    let mut record = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (n, raw) = lines[i];
        i += 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("run:") {
            if run.is_some() {
                return Err((n, "a check block runs one command; write another ```check block".into()));
            }
            let cmd = cmd.trim();
            if cmd.is_empty() {
                return Err((n, "`run:` needs a command".into()));
            }
            if let Some(problem) = read_only_problem(cmd) {
                return Err((n, problem));
            }
            run = Some(cmd.to_string());
        } else if let Some(text) = line.strip_prefix("expect not contains:") {
            expect.push(Expect::NotContains(nonempty(text, n)?));
        } else if let Some(text) = line.strip_prefix("expect contains:") {
            expect.push(Expect::Contains(nonempty(text, n)?));
        } else if let Some(text) = line.strip_prefix("expect:") {
            if text.trim().is_empty() {
                // `expect:` alone: the rest of the block is the exact output.
                let rest: Vec<&str> = lines[i..].iter().map(|(_, l)| *l).collect();
                let exact = normalize(&rest.join("\n"));
                if exact.is_empty() {
                    return Err((n, "`expect:` alone takes the lines after it as the output; there are none".into()));
                }
                expect.push(Expect::Equals(exact));
                break;
            }
            expect.push(Expect::Equals(text.trim().to_string()));
        } else if let Some(pattern) = line.strip_prefix("record:") {
            record.push(parse_pattern(pattern.trim()).map_err(|e| (n, e))?);
        } else {
            return Err((n, format!("a check block's lines are {LINES}; not \"{line}\"")));
        }
    }
    let test = match (run, record.is_empty()) {
        (Some(_), false) => {
            return Err((open, "a check block either runs a command or matches the record, not both".into()));
        }
        (Some(line), true) if expect.is_empty() => {
            return Err((open, format!("check block needs an \"expect\" line for `{line}`")));
        }
        (Some(line), true) => Test::Command { line, expect },
        (None, _) if !expect.is_empty() => {
            return Err((open, "check block has an \"expect\" line but no \"run\" line".into()));
        }
        (None, true) => return Err((open, "check block needs a \"run\" line or a \"record\" line".into())),
        (None, false) => Test::Record(record),
    };
    let label = match (label.trim(), &test) {
        ("", Test::Command { line, .. }) => line.clone(),
        ("", Test::Record(p)) => format!("record: {}", p[0].text),
        (l, _) => l.to_string(),
    };
    Ok(Check { label, line: open, test })
}

fn nonempty(text: &str, n: usize) -> Result<String, Problem> {
    let t = text.trim();
    if t.is_empty() { Err((n, "this expect line needs the text to look for".into())) } else { Ok(t.to_string()) }
}

/// Output as compared: trailing spaces of each line and trailing blank lines dropped.
fn normalize(text: &str) -> String {
    text.lines().map(str::trim_end).collect::<Vec<_>>().join("\n").trim_end().to_string()
}

const REQUEST_KEYS: &[&str] = &["by", "verb", "kind", "namespace", "name", "code", "rejected", "message", "path"];
const NOTIFY_KEYS: &[&str] = &["to", "event", "kind", "namespace", "name"];
const DECISION_KEYS: &[&str] = &["by", "text"];
const STAGES: &[&str] = &[
    "any",
    "none",
    "authentication",
    "authorization",
    "admission",
    "mutating-admission",
    "validation",
    "validating-admission",
    "storage",
];

/// Reads `[request|notify|decision] key=value key~value ...`.
pub fn parse_pattern(text: &str) -> Result<RecordPattern, String> {
    let words = split_words(text).map_err(|e| format!("this record pattern does not parse: {e}"))?;
    let mut words = words.as_slice();
    let entry = match words.first().map(String::as_str) {
        Some("request") => EntryKind::Request,
        Some("notify") => EntryKind::Notify,
        Some("decision") => EntryKind::Decision,
        _ => EntryKind::Request,
    };
    if words.first().is_some_and(|w| !w.contains(['=', '~'])) {
        words = &words[1..];
    }
    let keys = match entry {
        EntryKind::Request => REQUEST_KEYS,
        EntryKind::Notify => NOTIFY_KEYS,
        EntryKind::Decision => DECISION_KEYS,
    };
    if words.is_empty() {
        return Err(format!(
            "a record pattern needs conditions such as `by=kubectl verb=create kind=Pod` (keys: {})",
            keys.join(", ")
        ));
    }
    let mut conditions = Vec::new();
    for word in words {
        let Some(at) = word.find(['=', '~']) else {
            return Err(format!("\"{word}\" is not `key=value` or `key~value`"));
        };
        let (key, value) = (&word[..at], &word[at + 1..]);
        if !keys.contains(&key) {
            return Err(format!("unknown key `{key}` in a record pattern (keys: {})", keys.join(", ")));
        }
        if key == "rejected" && !value.split('|').all(|v| STAGES.contains(&v)) {
            return Err(format!("rejected= takes a stage: {}", STAGES.join(", ")));
        }
        conditions.push(Condition {
            key: key.to_string(),
            contains: word.as_bytes()[at] == b'~',
            value: value.to_string(),
        });
    }
    Ok(RecordPattern { text: text.to_string(), entry, conditions })
}

/// Why a check command might change the cluster, if it might. Checks may only look: kubectl's
/// reading verbs, etcdctl, `sim curl` and `sim time`, with pipes and `$(...)` of the same.
pub fn read_only_problem(line: &str) -> Option<String> {
    let mut line = line.to_string();
    while let Some((start, end, inner)) = crate::util::pipes::find_substitution(&line) {
        if let Some(p) = read_only_problem(&inner) {
            return Some(p);
        }
        line.replace_range(start..end, "x");
    }
    let stages = crate::util::pipes::split_pipeline(&line);
    for (i, stage) in stages.iter().enumerate() {
        let words = match split_words(stage) {
            Ok(w) => w,
            Err(e) => return Some(format!("this command does not parse: {e}")),
        };
        let words = match words.first().map(String::as_str) {
            Some("xargs") if i > 0 => &words[1..],
            // A later stage that is a sandbox command runs (on the stage before as its input).
            Some(p)
                if i > 0 && (crate::shell::PROGRAMS.contains(&p) || crate::shell::coreutils::PROGRAMS.contains(&p)) =>
            {
                &words[..]
            }
            _ if i > 0 => continue,
            _ => &words[..],
        };
        if let Some(p) = command_problem(words) {
            return Some(p);
        }
    }
    None
}

fn command_problem(words: &[String]) -> Option<String> {
    let refuse = || {
        Some(format!(
            "check command \"{}\" could change the cluster; checks may only look (kubectl get, describe, logs, events, auth can-i, rollout history, rollout status --watch=false, etcdctl, sim curl, cat, ls, pwd)",
            words.join(" ")
        ))
    };
    let program = words.first().map(String::as_str).unwrap_or("");
    match program {
        "kubectl" | "k" => {
            let Some((verb, rest)) = crate::kubectl::args::split_verb(&words[1..]) else { return refuse() };
            let watching = rest.iter().any(|w| {
                matches!(w.as_str(), "-w" | "--watch" | "--watch-only" | "-f" | "--follow" | "-w=true" | "--watch=true")
            });
            let sub = rest.iter().find(|w| !w.starts_with('-')).map(String::as_str).unwrap_or("");
            let ok = match verb.as_str() {
                "get" | "describe" | "events" | "explain" | "api-resources" | "api-versions" | "cluster-info"
                | "version" => !watching,
                "logs" => !watching,
                "config" => matches!(sub, "view" | "current-context" | "get-contexts"),
                "auth" => matches!(sub, "can-i" | "whoami"),
                "rollout" => sub == "history" || (sub == "status" && rest.iter().any(|w| w == "--watch=false")),
                _ => false,
            };
            if ok { None } else { refuse() }
        }
        "etcdctl" => None,
        // The home directory's files may be read (a check runs with it read-only).
        "cat" | "ls" | "pwd" => None,
        "sim" => match words.get(1).map(String::as_str) {
            Some("curl" | "time" | "help") => None,
            _ => refuse(),
        },
        _ => refuse(),
    }
}

/// Evaluates checks against the session as it stands, leaving no trace: check commands are
/// not logged or recorded, and record patterns read entries after `since`.
pub fn evaluate(checks: &[Check], session: &mut Session, since: Seq) -> Vec<CheckResult> {
    checks.iter().map(|c| evaluate_one(c, session, since)).collect()
}

fn evaluate_one(check: &Check, session: &mut Session, since: Seq) -> CheckResult {
    let (passed, detail) = match &check.test {
        Test::Command { line, expect } => command(line, expect, session),
        Test::Record(patterns) => record(patterns, session, since),
    };
    CheckResult { label: check.label.clone(), passed, detail: if passed { String::new() } else { detail } }
}

fn command(line: &str, expect: &[Expect], session: &mut Session) -> (bool, String) {
    if let Some(problem) = read_only_problem(line) {
        return (false, problem);
    }
    let before = (session.cluster.now(), session.cluster.inspect().etcd().revision());
    let out = session.inspect(line);
    let after = (session.cluster.now(), session.cluster.inspect().etcd().revision());
    if before != after {
        return (false, format!("`{line}` changed the cluster: a check must only look"));
    }
    let got = normalize(&out.combined());
    for e in expect {
        let (ok, want) = match e {
            Expect::Equals(text) => (got == normalize(text), format!("exactly:\n{}", indent(text))),
            Expect::Contains(text) => (got.contains(text.as_str()), format!("output containing \"{text}\"")),
            Expect::NotContains(text) => (!got.contains(text.as_str()), format!("output without \"{text}\"")),
        };
        if !ok {
            let shown = if got.is_empty() { "  (nothing)".to_string() } else { indent(&got) };
            return (false, format!("`{line}` should print {want}\nbut printed:\n{shown}"));
        }
    }
    (true, String::new())
}

fn indent(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines.iter().take(12).map(|l| format!("  {l}")).collect();
    if lines.len() > 12 {
        out.push(format!("  ... ({} more lines)", lines.len() - 12));
    }
    out.join("\n")
}

/// What a command that only looks prints now (a prediction's answer), trimmed; nothing is
/// logged or recorded.
pub fn look(line: &str, session: &mut Session) -> String {
    if read_only_problem(line).is_some() {
        return String::new();
    }
    normalize(&session.inspect(line).combined())
}

/// The first record entry after `since` that `pattern` matches (a prediction's reason).
pub fn first_match(pattern: &RecordPattern, session: &Session, since: Seq) -> Option<Seq> {
    let cluster = &session.cluster;
    cluster
        .record
        .since(since)
        .find(|e| matches(pattern, &e.what, cluster.component_name(e.actor), |id| cluster.component_name(id)))
        .map(|e| e.seq)
}

fn record(patterns: &[RecordPattern], session: &Session, since: Seq) -> (bool, String) {
    let cluster = &session.cluster;
    let mut next = 0;
    for entry in cluster.record.since(since) {
        let Some(pattern) = patterns.get(next) else { break };
        let actor = cluster.component_name(entry.actor);
        if matches(pattern, &entry.what, actor, |id| cluster.component_name(id)) {
            next += 1;
        }
    }
    match patterns.get(next) {
        None => (true, String::new()),
        Some(p) if next == 0 => (false, format!("nothing in the record since this step began matches `{}`", p.text)),
        Some(p) => (false, format!("nothing in the record after `{}` matches `{}`", patterns[next - 1].text, p.text)),
    }
}

fn matches<'a>(
    pattern: &RecordPattern,
    what: &Happening,
    actor: &str,
    name_of: impl Fn(crate::record::ComponentId) -> &'a str,
) -> bool {
    let field = |value: &str, c: &Condition| -> bool {
        if c.contains { value.contains(c.value.as_str()) } else { c.value.split('|').any(|v| glob(v, value)) }
    };
    match (pattern.entry, what) {
        (
            EntryKind::Request,
            Happening::Request { verb, kind, namespace, name, code, failed_at, message, path, .. },
        ) => pattern.conditions.iter().all(|c| match c.key.as_str() {
            "by" => component(&c.value, actor, c.contains),
            "verb" => field(verb, c),
            "kind" => kind_matches(&c.value, *kind),
            "namespace" => field(namespace, c),
            "name" => field(name, c),
            "code" => field(&code.to_string(), c),
            "rejected" => stage_matches(&c.value, *failed_at),
            "message" => field(message, c),
            "path" => field(path, c),
            _ => false,
        }),
        (EntryKind::Notify, Happening::Notify { to, event, kind, namespace, name }) => {
            pattern.conditions.iter().all(|c| match c.key.as_str() {
                "to" => component(&c.value, name_of(*to), c.contains),
                "event" => c.value.split('|').any(|e| event.as_str().eq_ignore_ascii_case(e)),
                "kind" => kind_matches(&c.value, *kind),
                "namespace" => field(namespace, c),
                "name" => field(name, c),
                _ => false,
            })
        }
        (EntryKind::Decision, Happening::Decision { text }) => {
            pattern.conditions.iter().all(|c| match c.key.as_str() {
                "by" => component(&c.value, actor, c.contains),
                "text" => field(text, c),
                _ => false,
            })
        }
        _ => false,
    }
}

/// `kubelet` names every kubelet (`kubelet (worker-1)`, ...); a full name names one.
fn component(want: &str, name: &str, contains: bool) -> bool {
    if contains {
        return name.contains(want);
    }
    want.split('|').any(|w| glob(w, name) || name.strip_prefix(w).is_some_and(|rest| rest.starts_with(" (")))
}

fn kind_matches(want: &str, kind: crate::api::Kind) -> bool {
    let info = kind.info();
    want.split('|').any(|w| [info.kind, info.resource, info.singular].iter().any(|k| k.eq_ignore_ascii_case(w)))
}

fn stage_matches(want: &str, failed: Option<Stage>) -> bool {
    want.split('|').any(|w| one_stage_matches(w, failed))
}

fn one_stage_matches(want: &str, failed: Option<Stage>) -> bool {
    match (want, failed) {
        ("none", None) => true,
        ("none", Some(_)) | (_, None) => false,
        ("any", Some(_)) => true,
        ("admission", Some(s)) => matches!(s, Stage::MutatingAdmission | Stage::ValidatingAdmission),
        (want, Some(s)) => s.label().replace(' ', "-") == want,
    }
}

/// `*` matches any run of characters; everything else matches itself.
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_in_a_glob_match_any_run_of_characters() {
        assert!(glob("web-*", "web-6766cbdd68-p478q"));
        assert!(glob("*-p478q", "web-6766cbdd68-p478q"));
        assert!(glob("web-*-p*q", "web-6766cbdd68-p478q"));
        assert!(!glob("web-*", "api-1"));
        assert!(!glob("web", "web-1"));
        assert!(glob("*", ""));
    }

    #[test]
    fn a_bar_separates_values_any_of_which_may_match() {
        let p = parse_pattern("by=kubectl|kube-scheduler verb=update|patch kind=Pod|ReplicaSet").unwrap();
        let what = |verb: &'static str, kind| Happening::Request {
            method: "PUT",
            verb,
            path: String::new(),
            kind,
            namespace: "default".into(),
            name: "x".into(),
            code: 200,
            failed_at: None,
            message: String::new(),
        };
        let name_of = |_| "";
        assert!(matches(&p, &what("patch", crate::api::Kind::ReplicaSet), "kubectl", name_of));
        assert!(matches(&p, &what("update", crate::api::Kind::Pod), "kube-scheduler", name_of));
        assert!(!matches(&p, &what("delete", crate::api::Kind::Pod), "kubectl", name_of));
        assert!(!matches(&p, &what("update", crate::api::Kind::Pod), "kubelet (worker-1)", name_of));
    }

    #[test]
    fn reading_commands_are_allowed_in_checks_and_writing_ones_are_not() {
        for ok in [
            "kubectl get pods -o name | wc -l",
            "kubectl -n kube-system get pods",
            "kubectl describe $(kubectl get pods -o name | head -1)",
            "kubectl rollout status deployment/web --watch=false",
            "kubectl get pods -o name | xargs kubectl describe",
            "etcdctl get /registry --prefix --keys-only",
            "sim curl http://web",
            "kubectl get pods -o yaml | cat",
        ] {
            assert_eq!(read_only_problem(ok), None, "{ok}");
        }
        for bad in [
            "kubectl delete pod x",
            "kubectl get pods -w",
            "kubectl rollout status deployment/web",
            "kubectl get $(kubectl scale deploy web --replicas=0)",
            "kubectl get pods -o name | xargs kubectl delete",
            "kubectl get pods -o yaml | kubectl delete -f -",
            "sleep 5s",
            "sim node stop worker-1",
            "kubectl config set-context --current --namespace=x",
        ] {
            assert!(read_only_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn a_record_pattern_names_its_entry_type_and_conditions() {
        let p = parse_pattern("notify to=kube-scheduler kind=Pod name~web").unwrap();
        assert_eq!(p.entry, EntryKind::Notify);
        assert_eq!(p.conditions.len(), 3);
        assert!(p.conditions[2].contains);
        assert_eq!(parse_pattern("by=kubectl").unwrap().entry, EntryKind::Request);
        assert!(parse_pattern("notify by=kubectl").unwrap_err().contains("unknown key `by`"));
        assert!(parse_pattern("").is_err());
    }

    #[test]
    fn a_component_name_matches_every_instance_of_it() {
        assert!(component("kubelet", "kubelet (worker-1)", false));
        assert!(component("kubelet (worker-1)", "kubelet (worker-1)", false));
        assert!(!component("kubelet (worker-2)", "kubelet (worker-1)", false));
        assert!(!component("kube", "kube-scheduler", false));
    }

    #[test]
    fn outputs_compare_without_trailing_spaces_or_blank_lines() {
        assert_eq!(normalize("a   \nb\n\n\n"), "a\nb");
    }

    #[test]
    fn a_check_that_passes_and_one_that_fails_say_so_without_touching_the_session() {
        let mut session = Session::new(1);
        let (ok, _) = command("kubectl get nodes -o name | wc -l", &[Expect::Equals("4".into())], &mut session);
        assert!(ok);
        let (ok, detail) = command("kubectl get pods", &[Expect::Contains("web".into())], &mut session);
        assert!(!ok);
        assert!(detail.contains("No resources found"), "{detail}");
        assert!(session.log().is_empty());
    }

    #[test]
    fn a_check_may_read_the_home_directory_but_not_write_to_it() {
        let mut session = Session::new(1);
        session.execute(&crate::shell::Command::new("echo replicas: 3 > web.yaml"));
        let (ok, _) = command("cat web.yaml", &[Expect::Contains("replicas: 3".into())], &mut session);
        assert!(ok);
        let (ok, detail) = command("kubectl get nodes > nodes.txt", &[Expect::Equals(String::new())], &mut session);
        assert!(!ok && detail.contains("Read-only file system"), "{detail}");
        assert_eq!(session.path_candidates("", false), vec!["web.yaml"], "nothing was written");
    }
}
