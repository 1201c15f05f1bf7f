//! The flags of kubectl's imperative verbs (`create NAME`, `run`, `expose`, `label`,
//! `annotate`, `set image`, `taint`, `cordon`, `drain`, `replace`), and the one-letter
//! flags whose meaning depends on the verb.

use super::args::FlagSpec;

const fn value(long: &'static str) -> FlagSpec {
    FlagSpec { long, short: None, takes_value: true }
}

const fn switch(long: &'static str) -> FlagSpec {
    FlagSpec { long, short: None, takes_value: false }
}

pub(crate) const FLAGS: &[FlagSpec] = &[
    value("image"),
    value("port"),
    value("target-port"),
    value("container-port"),
    value("protocol"),
    value("name"),
    value("external-ip"),
    value("cluster-ip"),
    value("load-balancer-ip"),
    value("session-affinity"),
    value("labels"),
    value("env"),
    value("annotations"),
    value("restart"),
    switch("command"),
    value("image-pull-policy"),
    switch("stdin"),
    switch("tty"),
    switch("attach"),
    switch("rm"),
    switch("quiet"),
    switch("expose"),
    switch("privileged"),
    value("overrides"),
    value("override-type"),
    value("from-literal"),
    value("from-file"),
    value("from-env-file"),
    switch("append-hash"),
    switch("overwrite"),
    value("resource-version"),
    switch("list"),
    switch("local"),
    switch("ignore-daemonsets"),
    switch("delete-emptydir-data"),
    switch("delete-local-data"),
    switch("disable-eviction"),
    value("pod-selector"),
    value("timeout"),
    value("skip-wait-for-delete-timeout"),
    value("field-manager"),
    switch("record"),
    value("tcp"),
    value("node-port"),
    value("clusterip"),
    value("external-name"),
    value("from"),
    // create role / clusterrole / rolebinding / clusterrolebinding
    value("verb"),
    value("resource"),
    value("resource-name"),
    value("non-resource-url"),
    value("role"),
    value("clusterrole"),
    value("user"),
    value("group"),
    value("serviceaccount"),
    // create quota
    value("hard"),
    value("schedule"),
    value("scopes"),
    // create poddisruptionbudget / priorityclass
    value("min-available"),
    value("max-unavailable"),
    value("value"),
    switch("global-default"),
    value("description"),
    value("preemption-policy"),
    // create ingress
    value("rule"),
    value("class"),
    value("default-backend"),
    value("annotation"),
];

/// `-l` is `--labels` for `run` and `expose` (a selector everywhere else); `run` has `-i`,
/// `-t` and `-q`; `create deployment` has `-r` for `--replicas`.
pub(crate) fn short_flag(verb: &str, c: char) -> Option<&'static FlagSpec> {
    static LABELS: FlagSpec = value("labels");
    static STDIN: FlagSpec = switch("stdin");
    static TTY: FlagSpec = switch("tty");
    static QUIET: FlagSpec = switch("quiet");
    static REPLICAS: FlagSpec = value("replicas");
    match (verb, c) {
        ("run" | "expose", 'l') => Some(&LABELS),
        ("run" | "debug", 'i') => Some(&STDIN),
        ("run" | "debug", 't') => Some(&TTY),
        ("run", 'q') => Some(&QUIET),
        ("create", 'r') => Some(&REPLICAS),
        _ => None,
    }
}
