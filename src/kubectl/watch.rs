//! `kubectl get -w` / `--watch-only`: the list first (unless watch-only), then one line per
//! watch event as virtual time passes — every MODIFIED, even one no column shows, as the real
//! one prints — until [`WATCH_CAP`] (or `--request-timeout`) of virtual time has passed.
//!
//! kubectl LISTs, then WATCHes from the list's resourceVersion through the API server; each
//! event's row is flushed on its own, so its columns are as wide as its own cells.

use super::args::Args;
use super::{Output, namespace_flag, printable, printers, to_json, to_yaml};
use crate::api::Object;
use crate::apiserver::{FieldSelector, Reply, Request, WatchEvent};
use crate::cluster::Cluster;
use crate::record::WatchEventType;
use crate::sim::Duration;
use std::sync::Arc;

/// How long `get -w` watches when nothing stops it (a terminal user would press Ctrl-C).
pub const WATCH_CAP: Duration = Duration::minutes(1);

pub fn get_watch(cluster: &mut Cluster, args: &Args) -> Output {
    let (mut out, mut live) = match start(cluster, args) {
        Ok(started) => started,
        Err(out) => return out,
    };
    let deadline = cluster.now() + live.cap;
    loop {
        out.stdout.push_str(&live.poll(cluster));
        if cluster.now() >= deadline {
            break;
        }
        cluster.step_toward(deadline);
    }
    live.stop(cluster);
    out.stderr.push_str(&format!(
        "kubeloop: stopped watching after {} of virtual time (as Ctrl-C would; --request-timeout sets it)\n",
        live.cap
    ));
    out
}

/// A watch kubectl holds open: the page's terminal polls it as its clock runs, printing rows
/// as they come, until Ctrl-C stops it.
pub struct LiveWatch {
    id: crate::apiserver::WatchId,
    printer: Printer,
    /// How long the CLI lets it run (`--request-timeout`, else [`WATCH_CAP`]).
    pub cap: Duration,
}

impl LiveWatch {
    /// The rows for what changed since the last poll.
    pub fn poll(&mut self, cluster: &mut Cluster) -> String {
        let events: Vec<WatchEvent> = cluster.drain_watch(self.id);
        let now = cluster.now();
        events.into_iter().map(|e| self.printer.print(&[e.object], e.type_, now)).collect()
    }

    /// Closes the watch (Ctrl-C).
    pub fn stop(&self, cluster: &mut Cluster) {
        cluster.close_user_watches();
    }
}

/// Lists, prints the list (unless `--watch-only`) and opens the watch.
pub fn start(cluster: &mut Cluster, args: &Args) -> Result<(Output, LiveWatch), Output> {
    let targets = match super::resolve_targets(&args.positionals) {
        Ok(t) => t,
        Err(e) => return Err(Output::err(e)),
    };
    if targets.len() > 1 {
        return Err(Output::err("error: you may only specify a single resource type"));
    }
    let Some((kind, names)) = targets.into_iter().next() else {
        return Err(Output::err("error: you may only specify a single resource type"));
    };
    if names.len() > 1 {
        return Err(Output::err(format!(
            "error: watch is only supported on individual resources and resource collections, but {} resources were found",
            names.len()
        )));
    }
    let output = args.get("output").unwrap_or("");
    if !matches!(output, "" | "wide" | "name" | "json" | "yaml") {
        return Err(Output::err(format!(
            "error: this sandbox's kubectl get --watch prints tables, -o wide, -o name, -o json and -o yaml, not \"{output}\""
        )));
    }
    let cap = match args.request_timeout() {
        Ok(cap) => cap.unwrap_or(WATCH_CAP),
        Err(e) => return Err(Output::err(e)),
    };
    let all_ns = args.has("all-namespaces");
    let ns = if kind.info().namespaced && !all_ns { namespace_flag(args) } else { String::new() };
    let mut list = match super::list_request(kind, &ns, args) {
        Ok(r) => r,
        Err(e) => return Err(Output::err(e)),
    };
    let single = names.first().cloned();
    if let Some(name) = &single {
        list = list.with_fields(FieldSelector::equals("metadata.name", name));
    }
    let (items, revision) = match cluster.request(list.clone()) {
        Ok(Reply::List { items, revision }) => (items, revision),
        Ok(_) => (Vec::new(), 0),
        Err(status) => return Err(Output::err(status.kubectl_message())),
    };
    if let Some(name) = &single {
        if items.is_empty() {
            return Err(Output::err(crate::apiserver::Status::not_found(kind, name).kubectl_message()));
        }
    }
    let mut printer = Printer {
        output: output.to_string(),
        args: args.clone(),
        all_ns,
        headed: false,
        count: 0,
        events: args.has("output-watch-events"),
        widths: Vec::new(),
    };
    let mut out = Output::default();
    if !args.has("watch-only") {
        let now = cluster.now();
        out.stdout.push_str(&printer.print(&items, WatchEventType::Added, now));
    }
    let mut watch = Request::watch(kind, &ns).from_revision(revision);
    watch.label_selector = list.label_selector.clone();
    watch.field_selector = list.field_selector.clone();
    let id = match cluster.request(watch) {
        Ok(Reply::Watch { id, .. }) => id,
        Ok(_) => return Err(out),
        Err(status) => {
            out.stderr.push_str(&(status.kubectl_message() + "\n"));
            out.code = 1;
            return Err(out);
        }
    };
    Ok((out, LiveWatch { id, printer, cap }))
}

/// Prints objects as they arrive, each flush on its own.
struct Printer {
    output: String,
    args: Args,
    all_ns: bool,
    headed: bool,
    count: usize,
    events: bool,
    /// Column widths so far: kubectl's tabwriter remembers them across flushes, so later
    /// rows line up with earlier ones (growing, never shrinking).
    widths: Vec<usize>,
}

/// Renders one flush of rows as kubectl's width-remembering tabwriter does (minimum width 6,
/// padding 3; the last cell unpadded).
fn render(rows: &[Vec<String>], widths: &mut Vec<usize>) -> String {
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(row.len().saturating_sub(1)) {
            let w = (cell.chars().count() + 3).max(6);
            if widths.len() <= i {
                widths.resize(i + 1, 0);
            }
            widths[i] = widths[i].max(w);
        }
    }
    let mut out = String::new();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            out.push_str(cell);
            if i + 1 < row.len() {
                out.push_str(&" ".repeat(widths[i].saturating_sub(cell.chars().count())));
            }
        }
        out.push('\n');
    }
    out
}

impl Printer {
    fn print(&mut self, objects: &[Arc<Object>], type_: WatchEventType, now: crate::sim::Time) -> String {
        if objects.is_empty() {
            return String::new();
        }
        let event = type_.as_str();
        match self.output.as_str() {
            "name" => objects.iter().map(|o| printers::type_name(o) + "\n").collect(),
            "json" => objects
                .iter()
                .map(|o| {
                    let value = printable(o, &self.args);
                    if self.events {
                        to_json(&crate::util::json_macro::json!({"type": event, "object": value}))
                    } else {
                        to_json(&value)
                    }
                })
                .collect(),
            "yaml" => objects
                .iter()
                .map(|o| {
                    self.count += 1;
                    let value = printable(o, &self.args);
                    let value = if self.events {
                        crate::util::json_macro::json!({"type": event, "object": value})
                    } else {
                        value
                    };
                    format!("{}{}", if self.count > 1 { "---\n" } else { "" }, to_yaml(&value))
                })
                .collect(),
            _ => {
                let wide = self.output == "wide";
                let kind = objects[0].kind();
                let namespaced = kind.info().namespaced;
                let label_columns = printers::LabelColumns::from_args(&self.args);
                let mut rows = Vec::new();
                if !self.headed && !self.args.has("no-headers") {
                    let mut header: Vec<String> = printers::header_strings(kind, wide);
                    if self.all_ns && namespaced {
                        header.insert(0, "NAMESPACE".into());
                    }
                    if self.events {
                        header.insert(0, "EVENT".into());
                    }
                    header.extend(label_columns.headers());
                    rows.push(header);
                }
                self.headed = true;
                for o in objects {
                    let mut row = printers::row(o, now, wide);
                    if self.all_ns && namespaced {
                        row.insert(0, o.namespace().to_string());
                    }
                    if self.events {
                        row.insert(0, event.to_string());
                    }
                    row.extend(label_columns.cells(&o.meta().labels));
                    rows.push(row);
                }
                render(&rows, &mut self.widths)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn later_rows_keep_the_widths_of_earlier_flushes_and_widen_them_when_needed() {
        let mut widths = Vec::new();
        let head = render(&[row(&["NAME", "STATUS", "AGE"]), row(&["default", "Active", "9h"])], &mut widths);
        assert_eq!(head, "NAME      STATUS   AGE\ndefault   Active   9h\n");
        assert_eq!(render(&[row(&["ns1", "Active", "0s"])], &mut widths), "ns1       Active   0s\n");
        assert_eq!(render(&[row(&["ns1", "Terminating", "8s"])], &mut widths), "ns1       Terminating   8s\n");
        assert_eq!(render(&[row(&["ns1", "Active", "9s"])], &mut widths), "ns1       Active        9s\n");
    }

    #[test]
    fn a_watch_prints_the_list_then_a_row_per_change_until_its_timeout() {
        let mut s = crate::shell::Session::new(4);
        s.execute(&crate::shell::Command::new("kubectl run box --image=busybox -- sleep 3600"));
        let start = s.cluster.now();
        let out = s.execute(&crate::shell::Command::new("kubectl get pods -w --request-timeout=10s"));
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert!(lines[0].starts_with("NAME "));
        assert!(lines.len() > 3, "{}", out.stdout);
        assert!(lines.last().is_some_and(|l| l.contains("Running")), "{}", out.stdout);
        assert_eq!(s.cluster.now().since(start), Duration::seconds(10));
    }
}
