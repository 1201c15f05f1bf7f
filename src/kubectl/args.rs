//! kubectl's command line: positional arguments and flags, with its error texts.

use crate::util::sort::StableSort;
use std::collections::BTreeMap;

/// A flag kubectl knows: long name, optional one-letter short name, whether it takes a value.
pub(crate) struct FlagSpec {
    pub long: &'static str,
    pub short: Option<char>,
    pub takes_value: bool,
}

/// Every flag: the common ones here, then those of the imperative verbs.
fn all_flags() -> impl Iterator<Item = &'static FlagSpec> {
    FLAGS.iter().chain(super::imperative_flags::FLAGS.iter())
}

const FLAGS: &[FlagSpec] = &[
    FlagSpec { long: "namespace", short: Some('n'), takes_value: true },
    FlagSpec { long: "all-namespaces", short: Some('A'), takes_value: false },
    FlagSpec { long: "output", short: Some('o'), takes_value: true },
    FlagSpec { long: "selector", short: Some('l'), takes_value: true },
    FlagSpec { long: "field-selector", short: None, takes_value: true },
    FlagSpec { long: "filename", short: Some('f'), takes_value: true },
    FlagSpec { long: "recursive", short: Some('R'), takes_value: false },
    FlagSpec { long: "v", short: Some('v'), takes_value: true },
    FlagSpec { long: "dry-run", short: None, takes_value: true },
    FlagSpec { long: "grace-period", short: None, takes_value: true },
    FlagSpec { long: "now", short: None, takes_value: false },
    FlagSpec { long: "force", short: None, takes_value: false },
    FlagSpec { long: "wait", short: None, takes_value: false },
    FlagSpec { long: "all", short: None, takes_value: false },
    FlagSpec { long: "ignore-not-found", short: None, takes_value: false },
    FlagSpec { long: "show-labels", short: None, takes_value: false },
    FlagSpec { long: "label-columns", short: Some('L'), takes_value: true },
    FlagSpec { long: "watch", short: Some('w'), takes_value: false },
    FlagSpec { long: "container", short: Some('c'), takes_value: true },
    FlagSpec { long: "previous", short: Some('p'), takes_value: false },
    FlagSpec { long: "tail", short: None, takes_value: true },
    FlagSpec { long: "timestamps", short: None, takes_value: false },
    FlagSpec { long: "cascade", short: None, takes_value: true },
    FlagSpec { long: "sort-by", short: None, takes_value: true },
    // rollout, events and the informational verbs
    FlagSpec { long: "revision", short: None, takes_value: true },
    FlagSpec { long: "to-revision", short: None, takes_value: true },
    FlagSpec { long: "timeout", short: None, takes_value: true },
    FlagSpec { long: "types", short: None, takes_value: true },
    FlagSpec { long: "for", short: None, takes_value: true },
    FlagSpec { long: "namespaced", short: None, takes_value: false },
    FlagSpec { long: "api-group", short: None, takes_value: true },
    FlagSpec { long: "verbs", short: None, takes_value: true },
    FlagSpec { long: "minify", short: None, takes_value: false },
    FlagSpec { long: "raw", short: None, takes_value: false },
    FlagSpec { long: "flatten", short: None, takes_value: false },
    FlagSpec { long: "current", short: None, takes_value: false },
    FlagSpec { long: "no-headers", short: None, takes_value: false },
    FlagSpec { long: "validate", short: None, takes_value: true },
    FlagSpec { long: "save-config", short: None, takes_value: false },
    FlagSpec { long: "replicas", short: None, takes_value: true },
    FlagSpec { long: "patch", short: Some('p'), takes_value: true },
    FlagSpec { long: "type", short: None, takes_value: true },
    FlagSpec { long: "subresource", short: None, takes_value: true },
    FlagSpec { long: "current-replicas", short: None, takes_value: true },
    FlagSpec { long: "server-side", short: None, takes_value: false },
    FlagSpec { long: "force-conflicts", short: None, takes_value: false },
    FlagSpec { long: "field-manager", short: None, takes_value: true },
    FlagSpec { long: "show-managed-fields", short: None, takes_value: false },
    // logs -f, get -w, exec, top and autoscale
    FlagSpec { long: "follow", short: None, takes_value: false },
    FlagSpec { long: "since", short: None, takes_value: true },
    FlagSpec { long: "since-time", short: None, takes_value: true },
    FlagSpec { long: "all-containers", short: None, takes_value: false },
    FlagSpec { long: "prefix", short: None, takes_value: false },
    FlagSpec { long: "max-log-requests", short: None, takes_value: true },
    FlagSpec { long: "ignore-errors", short: None, takes_value: false },
    FlagSpec { long: "limit-bytes", short: None, takes_value: true },
    FlagSpec { long: "watch-only", short: None, takes_value: false },
    FlagSpec { long: "output-watch-events", short: None, takes_value: false },
    FlagSpec { long: "request-timeout", short: None, takes_value: true },
    FlagSpec { long: "containers", short: None, takes_value: false },
    FlagSpec { long: "max", short: None, takes_value: true },
    FlagSpec { long: "min", short: None, takes_value: true },
    FlagSpec { long: "cpu-percent", short: None, takes_value: true },
    FlagSpec { long: "cpu", short: None, takes_value: true },
    FlagSpec { long: "memory", short: None, takes_value: true },
    // impersonation, for any verb
    FlagSpec { long: "as", short: None, takes_value: true },
    FlagSpec { long: "as-group", short: None, takes_value: true },
];

/// Every long flag name, for completion.
pub fn flag_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = all_flags().map(|f| f.long).collect();
    names.stable_sort();
    names.dedup();
    names
}

/// Flags whose value is optional (`--dry-run` means `--dry-run=client`).
const OPTIONAL_VALUE: &[(&str, &str)] = &[("dry-run", "client"), ("validate", "strict"), ("cascade", "background")];

/// Finds a one-letter flag. `-p` is `--previous` for `kubectl logs` but `--patch` for `kubectl patch`.
fn short_flag(verb: &str, c: char) -> Option<&'static FlagSpec> {
    if let Some(spec) = super::imperative_flags::short_flag(verb, c) {
        return Some(spec);
    }
    let wanted = |f: &&FlagSpec| f.short == Some(c);
    static FOLLOW: FlagSpec = FlagSpec { long: "follow", short: None, takes_value: false };
    static STDIN: FlagSpec = FlagSpec { long: "stdin", short: None, takes_value: false };
    static TTY: FlagSpec = FlagSpec { long: "tty", short: None, takes_value: false };
    static QUIET: FlagSpec = FlagSpec { long: "quiet", short: None, takes_value: false };
    match (verb, c) {
        ("logs", 'f') => Some(&FOLLOW),
        ("exec" | "attach", 'i') => Some(&STDIN),
        ("exec" | "attach", 't') => Some(&TTY),
        ("exec" | "attach", 'q') => Some(&QUIET),
        ("patch", 'p') => FLAGS.iter().find(|f| f.long == "patch"),
        (_, 'p') => FLAGS.iter().find(|f| f.long == "previous"),
        _ => FLAGS.iter().find(wanted),
    }
}

/// Finds the verb when global flags come first (`kubectl -n kube-system get pods`): the first
/// word that is neither a flag nor a flag's value. Returns it and the other words, in order.
pub fn split_verb(words: &[String]) -> Option<(String, Vec<String>)> {
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        if !word.starts_with('-') || word == "-" {
            let mut rest = words[..i].to_vec();
            rest.extend_from_slice(&words[i + 1..]);
            return Some((word.clone(), rest));
        }
        let takes_next = match word.strip_prefix("--") {
            Some(long) => !long.contains('=') && all_flags().any(|f| f.long == long && f.takes_value),
            None => word.len() == 2 && FLAGS.iter().any(|f| f.short == word.chars().nth(1) && f.takes_value),
        };
        i += if takes_next { 2 } else { 1 };
    }
    None
}

/// kubectl's own flags, which every command takes: with no command, the only flags it reads.
/// (long name, shorthand, takes a value)
const GLOBAL_FLAGS: &[(&str, Option<char>, bool)] = &[
    ("as", None, true),
    ("as-group", None, true),
    ("as-uid", None, true),
    ("cache-dir", None, true),
    ("certificate-authority", None, true),
    ("client-certificate", None, true),
    ("client-key", None, true),
    ("cluster", None, true),
    ("context", None, true),
    ("disable-compression", None, false),
    ("help", Some('h'), false),
    ("insecure-skip-tls-verify", None, false),
    ("kubeconfig", None, true),
    ("match-server-version", None, false),
    ("namespace", Some('n'), true),
    ("password", None, true),
    ("profile", None, true),
    ("profile-output", None, true),
    ("request-timeout", None, true),
    ("server", Some('s'), true),
    ("tls-server-name", None, true),
    ("token", None, true),
    ("user", None, true),
    ("username", None, true),
    ("v", Some('v'), true),
    ("warnings-as-errors", None, false),
];

/// The words of a kubectl line with no command in it: fine when each is one of kubectl's own
/// flags (kubectl then prints its help), else the error kubectl stops at.
pub fn global_flags_only(words: &[String]) -> Result<(), String> {
    let usage = "See 'kubectl --help' for usage.";
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        i += 1;
        if word == "--" {
            break;
        }
        let (takes_value, inline, missing) = if let Some(long) = word.strip_prefix("--") {
            let (name, inline) = long.split_once('=').map_or((long, false), |(n, _)| (n, true));
            match GLOBAL_FLAGS.iter().find(|f| f.0 == name) {
                Some(f) => (f.2, inline, format!("flag needs an argument: --{name}")),
                None => return Err(format!("error: unknown flag: --{name}\n{usage}")),
            }
        } else if let Some(short) = word.strip_prefix('-').and_then(|w| w.chars().next()) {
            match GLOBAL_FLAGS.iter().find(|f| f.1 == Some(short)) {
                Some(f) => (f.2, word.len() > 2, format!("flag needs an argument: '{short}' in -{short}")),
                None => return Err(format!("error: unknown shorthand flag: '{short}' in {word}\n{usage}")),
            }
        } else {
            continue;
        };
        if takes_value && !inline {
            if i >= words.len() {
                return Err(format!("error: {missing}\n{usage}"));
            }
            i += 1;
        }
    }
    Ok(())
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args {
    pub positionals: Vec<String>,
    flags: BTreeMap<String, Vec<String>>,
}

impl Args {
    /// Parses everything after the verb. Errors are kubectl's, ready to print.
    pub fn parse(verb: &str, words: &[String]) -> Result<Args, String> {
        let mut args = Args::default();
        let mut i = 0;
        let usage = format!("See 'kubectl {verb} --help' for usage.");
        while i < words.len() {
            let word = &words[i];
            i += 1;
            if word == "--" {
                args.positionals.extend(words[i..].iter().cloned());
                break;
            }
            if let Some(long) = word.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (long, None),
                };
                let Some(spec) = all_flags().find(|f| f.long == name) else {
                    return Err(format!("error: unknown flag: --{name}\n{usage}"));
                };
                let value = if spec.takes_value {
                    match inline {
                        Some(v) => v,
                        None => match OPTIONAL_VALUE.iter().find(|(n, _)| *n == name) {
                            Some((_, default)) => default.to_string(),
                            None if i < words.len() => {
                                i += 1;
                                words[i - 1].clone()
                            }
                            None => return Err(format!("error: flag needs an argument: --{name}\n{usage}")),
                        },
                    }
                } else {
                    inline.unwrap_or_else(|| "true".into())
                };
                args.flags.entry(spec.long.to_string()).or_default().push(value);
            } else if word.len() > 1 && word.starts_with('-') {
                let chars = word[1..].char_indices();
                for (pos, c) in chars {
                    let Some(spec) = short_flag(verb, c) else {
                        return Err(format!("error: unknown shorthand flag: '{c}' in {word}\n{usage}"));
                    };
                    if spec.takes_value {
                        let rest = &word[1 + pos + c.len_utf8()..];
                        let value = if let Some(v) = rest.strip_prefix('=') {
                            v.to_string()
                        } else if !rest.is_empty() {
                            rest.to_string()
                        } else if i < words.len() {
                            i += 1;
                            words[i - 1].clone()
                        } else {
                            return Err(format!("error: flag needs an argument: '{c}' in -{c}\n{usage}"));
                        };
                        args.flags.entry(spec.long.to_string()).or_default().push(value);
                        break;
                    }
                    // A boolean short flag may carry its value: `-w=false`.
                    if let Some(v) = word[1 + pos + c.len_utf8()..].strip_prefix('=') {
                        args.flags.entry(spec.long.to_string()).or_default().push(v.to_string());
                        break;
                    }
                    args.flags.entry(spec.long.to_string()).or_default().push("true".into());
                }
            } else {
                args.positionals.push(word.clone());
            }
        }
        Ok(args)
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.flags.get(name).and_then(|v| v.last()).map(String::as_str)
    }

    /// A Go duration flag (`--timeout=90s`) of a command that waits: None when not given;
    /// kubectl's error, naming `kubectl VERB --help`, when it does not parse (as Go's parser,
    /// which refuses values past 2562047h); the sandbox's when it asks for more virtual time
    /// than one command may let pass ([`COMMAND_TIME_CAP`]). A negative value is zero here:
    /// callers for which it means something else look at [`Args::negative`].
    pub fn duration(&self, name: &str, verb: &str) -> Result<Option<crate::sim::Duration>, String> {
        let Some(text) = self.get(name) else { return Ok(None) };
        let Some(nanos) = crate::sim::time::parse_go_nanos(text) else {
            return Err(format!(
                "Error: invalid argument \"{text}\" for \"--{name}\" flag: time: invalid duration \"{text}\"\nSee 'kubectl {verb} --help' for usage."
            ));
        };
        let d = crate::sim::Duration::from_go_nanos(nanos);
        if d > COMMAND_TIME_CAP {
            return Err(crate::sim::limits::flag_over_cap(name, text));
        }
        Ok(Some(d))
    }

    /// Whether a duration flag was given a negative value that parses (`--timeout=-1s`).
    pub fn negative(&self, name: &str) -> bool {
        self.get(name).and_then(crate::sim::time::parse_go_nanos).is_some_and(|n| n < 0)
    }

    /// `--request-timeout` of a command that streams (`logs -f`, `get -w`): a whole number of
    /// seconds or a Go duration; None when not given (or `0`, no timeout). kubectl's error when
    /// it does not parse, the sandbox's past [`COMMAND_TIME_CAP`].
    pub fn request_timeout(&self) -> Result<Option<crate::sim::Duration>, String> {
        let Some(t) = self.get("request-timeout").filter(|t| *t != "0") else { return Ok(None) };
        let seconds = || t.parse::<u64>().ok().map(|s| crate::sim::Duration(s.saturating_mul(1000)));
        match parse_go_duration(t).or_else(seconds) {
            Some(d) if d > COMMAND_TIME_CAP => Err(crate::sim::limits::flag_over_cap("request-timeout", t)),
            Some(d) => Ok(Some(d)),
            None => Err(format!(
                "error: invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)\n{t}"
            )),
        }
    }

    pub fn all(&self, name: &str) -> Vec<&str> {
        self.flags.get(name).map(|v| v.iter().map(String::as_str).collect()).unwrap_or_default()
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| v != "false")
    }

    /// Every flag given, by long name (alphabetically), with each of its values.
    pub fn flag_values(&self) -> impl Iterator<Item = (&str, &str)> {
        self.flags.iter().flat_map(|(k, vs)| vs.iter().map(move |v| (k.as_str(), v.as_str())))
    }

    /// Records the kubeconfig context's namespace, the default when `-n` is not given.
    pub fn set_context_namespace(&mut self, namespace: &str) {
        self.flags.insert(CONTEXT_NAMESPACE.into(), vec![namespace.into()]);
    }

    /// The namespace a command works in: `-n`, else the context's, else `default`.
    pub fn namespace(&self) -> &str {
        self.get("namespace").or(self.get(CONTEXT_NAMESPACE)).unwrap_or("default")
    }
}

use crate::sim::limits::COMMAND_TIME_CAP;

/// Not a flag anyone types: where the context's namespace rides along with the flags.
const CONTEXT_NAMESPACE: &str = " context-namespace";

/// Go's `time.ParseDuration` for the forms kubectl users type: `0`, `90s`, `2m`, `1h30m`,
/// `500ms` (unlike `sleep`, a bare number other than 0 needs a unit).
pub fn parse_go_duration(text: &str) -> Option<crate::sim::Duration> {
    let nanos = crate::sim::time::parse_go_nanos(text).filter(|n| *n >= 0)?;
    Some(crate::sim::Duration::from_go_nanos(nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn with_no_command_only_kubectl_s_own_flags_are_read() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(global_flags_only(&words(&["-n", "x", "--context=a", "-v", "6"])), Ok(()));
        assert_eq!(global_flags_only(&words(&["--", "--anything"])), Ok(()), "flags end at --");
        assert!(
            global_flags_only(&words(&["-n", "x", "--recursive"]))
                .unwrap_err()
                .starts_with("error: unknown flag: --recursive")
        );
        assert!(
            global_flags_only(&words(&["--namespace"]))
                .unwrap_err()
                .starts_with("error: flag needs an argument: --namespace")
        );
        assert!(
            global_flags_only(&words(&["-q"])).unwrap_err().starts_with("error: unknown shorthand flag: 'q' in -q")
        );
    }

    #[test]
    fn global_flags_may_come_before_the_verb() {
        let (verb, rest) = split_verb(&words("-n kube-system get pods -o wide")).unwrap();
        assert_eq!(verb, "get");
        assert_eq!(rest, words("-n kube-system pods -o wide"));
        let (verb, rest) = split_verb(&words("--namespace=x describe pod a")).unwrap();
        assert_eq!((verb.as_str(), rest), ("describe", words("--namespace=x pod a")));
        assert_eq!(split_verb(&words("-n kube-system")), None);
    }

    #[test]
    fn short_p_means_patch_for_patch_and_previous_for_logs() {
        let patch = Args::parse("patch", &words("deploy web -p {}")).unwrap();
        assert_eq!(patch.get("patch"), Some("{}"));
        let logs = Args::parse("logs", &words("web -p")).unwrap();
        assert!(logs.has("previous"));
    }

    #[test]
    fn long_short_and_inline_values_parse() {
        let a = Args::parse("get", &words("pods -n kube-system -o=wide --selector app=web -A")).unwrap();
        assert_eq!(a.positionals, ["pods"]);
        assert_eq!(a.get("namespace"), Some("kube-system"));
        assert_eq!(a.get("output"), Some("wide"));
        assert_eq!(a.get("selector"), Some("app=web"));
        assert!(a.has("all-namespaces"));
    }

    #[test]
    fn attached_short_values_and_optional_values() {
        let a = Args::parse("get", &words("pods -owide --dry-run")).unwrap();
        assert_eq!(a.get("output"), Some("wide"));
        assert_eq!(a.get("dry-run"), Some("client"));
    }

    #[test]
    fn a_boolean_short_flag_may_carry_its_value() {
        let a = Args::parse("rollout", &words("status deploy/web -w=false")).unwrap();
        assert_eq!(a.get("watch"), Some("false"));
        assert!(!a.has("watch"));
    }

    #[test]
    fn the_contexts_namespace_is_the_default_but_n_wins() {
        let mut a = Args::parse("get", &words("pods")).unwrap();
        assert_eq!(a.namespace(), "default");
        a.set_context_namespace("dev");
        assert_eq!(a.namespace(), "dev");
        let mut b = Args::parse("get", &words("pods -n prod")).unwrap();
        b.set_context_namespace("dev");
        assert_eq!(b.namespace(), "prod");
    }

    #[test]
    fn unknown_flags_get_kubectls_error() {
        assert_eq!(
            Args::parse("get", &words("pods --frobnicate")).unwrap_err(),
            "error: unknown flag: --frobnicate\nSee 'kubectl get --help' for usage."
        );
        assert_eq!(
            Args::parse("get", &words("pods -z")).unwrap_err(),
            "error: unknown shorthand flag: 'z' in -z\nSee 'kubectl get --help' for usage."
        );
    }

    #[test]
    fn kubectl_durations_need_a_unit_except_zero() {
        assert_eq!(parse_go_duration("90s"), Some(crate::sim::Duration::seconds(90)));
        assert_eq!(parse_go_duration("1m30s"), Some(crate::sim::Duration::seconds(90)));
        assert_eq!(parse_go_duration("1h"), Some(crate::sim::Duration::minutes(60)));
        assert_eq!(parse_go_duration("0"), Some(crate::sim::Duration::ZERO));
        assert_eq!(parse_go_duration("abc"), None);
        assert_eq!(parse_go_duration("5"), None);
        assert_eq!(parse_go_duration(""), None);
    }
}
