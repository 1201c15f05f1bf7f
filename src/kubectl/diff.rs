//! `kubectl diff -f FILE`: what `kubectl apply` would change. Each object as it is live and as
//! it would be after the apply — worked out by the API server itself in a dry run, so its
//! defaults, admission and validation all take part — is printed as YAML and compared with
//! `diff -u`. Exit status 1 when something would change, 0 when nothing would.

use super::args::Args;
use super::manifest::Document;
use super::{CSA_MANAGER, Io, Output, document_namespace, last_applied_of, merge, read_documents, with_last_applied};
use crate::apiserver::{Body, Request, Verb};
use crate::cluster::Cluster;
use crate::util::sort::StableSort;
use serde_json::Value;

/// Lines of context around each change, as `diff -u` shows.
const CONTEXT: usize = 3;

/// `kubectl diff`.
pub fn run(cluster: &mut Cluster, args: &Args, io: &Io) -> Output {
    let docs = match read_documents(args, io, "diff") {
        Ok(d) => d,
        Err(e) => return Output::err(e),
    };
    let mut out = Output::default();
    // kubectl writes both versions under temporary directories; their names differ per run.
    let stamp = cluster.now();
    let run_id = 1_000_000_000 + stamp.0 % 1_000_000_000;
    let mtime = format!("{} {}.000000000 +0000", &stamp.rfc3339()[..10], &stamp.rfc3339()[11..19]);
    for (source, doc) in docs {
        let (live, merged) = match versions(cluster, args, &source, &doc) {
            Ok(v) => v,
            Err(e) => {
                out.stderr.push_str(&(e + "\n"));
                out.code = 1;
                return out;
            }
        };
        let (live, merged) = (yaml_of(live), yaml_of(Some(merged)));
        if live == merged {
            continue;
        }
        let file = format!(
            "{}.{}.{}.{}",
            doc.kind.api_version().replace('/', "."),
            doc.kind.info().kind,
            document_namespace(args, &doc).unwrap_or_default(),
            doc.name()
        )
        .replace("..", ".");
        let (a, b) = (format!("/tmp/LIVE-{run_id}/{file}"), format!("/tmp/MERGED-{}/{file}", run_id + 7));
        out.stdout.push_str(&format!("diff -u -N {a} {b}\n--- {a}\t{mtime}\n+++ {b}\t{mtime}\n"));
        out.stdout.push_str(&unified(&live, &merged));
        out.code = 1;
    }
    out
}

/// The object as it is now (None: not there) and as the apply would leave it, from a
/// server-side dry run of the request `kubectl apply` would send.
fn versions(
    cluster: &mut Cluster,
    args: &Args,
    source: &str,
    doc: &Document,
) -> Result<(Option<Value>, Value), String> {
    let kind = doc.kind;
    let namespace = document_namespace(args, doc)?;
    let name = doc.name().to_string();
    let body = with_last_applied(doc.body.clone());
    let live = match cluster.request(Request::get(kind, &namespace, &name)) {
        Ok(reply) => reply.object().map(|o| o.to_json_value()),
        Err(status) if status.reason == "NotFound" => None,
        Err(status) => return Err(status.kubectl_message()),
    };
    let mut req = match &live {
        None => {
            let mut req = Request::new(Verb::Create, kind, &namespace, "").managed_by(CSA_MANAGER);
            req.body = Some(Body::Json(body));
            req
        }
        Some(live) => {
            let merged = merge::three_way(live, last_applied_of(live).as_ref(), &body);
            if merged == *live {
                return Ok((Some(live.clone()), live.clone()));
            }
            let mut req = Request::new(Verb::Update, kind, &namespace, &name).managed_by(CSA_MANAGER);
            req.body = Some(Body::Json(merged));
            req
        }
    };
    req.dry_run = true;
    match cluster.request(req) {
        Ok(reply) => Ok((live, reply.object().map(|o| o.to_json_value()).unwrap_or(Value::Null))),
        Err(status) if status.reason == "Invalid" => Err(status.kubectl_message()),
        Err(status) => Err(format!("Error from server ({}): {}: \"{source}\"", status.reason, status.message)),
    }
}

/// An object as diff shows it: YAML without its managedFields; nothing when it is not there.
fn yaml_of(value: Option<Value>) -> String {
    let Some(mut value) = value else { return String::new() };
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    super::to_yaml(&value)
}

/// `diff -u` of two texts: hunks of changed lines with `CONTEXT` lines around them.
pub fn unified(a: &str, b: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let ops = edit_script(&a, &b);
    let mut out = String::new();
    let mut i = 0;
    while i < ops.len() {
        // The next change, and the hunk around it: changes closer than twice the context
        // join one hunk.
        let Some(first) = ops[i..].iter().position(|op| !matches!(op, Op::Same(..))).map(|p| p + i) else { break };
        let start = first.saturating_sub(CONTEXT);
        let mut end = first;
        let mut same_run = 0;
        let mut j = first;
        while j < ops.len() {
            if matches!(ops[j], Op::Same(..)) {
                same_run += 1;
                if same_run > 2 * CONTEXT {
                    break;
                }
            } else {
                same_run = 0;
                end = j;
            }
            j += 1;
        }
        let stop = (end + CONTEXT + 1).min(ops.len());
        let hunk = &ops[start..stop];
        let (a_start, b_start) = match ops[start] {
            Op::Same(x, y) => (x, y),
            Op::Delete(x) => (x, ops[..start].iter().filter(|o| !matches!(o, Op::Delete(_))).count()),
            Op::Insert(y) => (ops[..start].iter().filter(|o| !matches!(o, Op::Insert(_))).count(), y),
        };
        let a_len = hunk.iter().filter(|o| !matches!(o, Op::Insert(_))).count();
        let b_len = hunk.iter().filter(|o| !matches!(o, Op::Delete(_))).count();
        let range = |start: usize, len: usize| match len {
            0 => format!("{start},0"),
            1 => format!("{}", start + 1),
            n => format!("{},{n}", start + 1),
        };
        out.push_str(&format!("@@ -{} +{} @@\n", range(a_start, a_len), range(b_start, b_len)));
        for op in hunk {
            match *op {
                Op::Same(x, _) => out.push_str(&format!(" {}\n", a[x])),
                Op::Delete(x) => out.push_str(&format!("-{}\n", a[x])),
                Op::Insert(y) => out.push_str(&format!("+{}\n", b[y])),
            }
        }
        i = stop;
    }
    out
}

/// One step from the old text to the new: a line kept (old index, new index), removed, or added.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Same(usize, usize),
    Delete(usize),
    Insert(usize),
}

/// The shortest edit from `a` to `b` by longest common subsequence (objects are a few
/// hundred lines: the quadratic table is small).
fn edit_script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::new();
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Same(i, j));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            ops.push(Op::Insert(j));
            j += 1;
        } else {
            ops.push(Op::Delete(i));
            i += 1;
        }
    }
    // diff prints a change's removed lines before its added ones.
    let mut k = 0;
    while k < ops.len() {
        let run_end = ops[k..].iter().position(|o| matches!(o, Op::Same(..))).map_or(ops.len(), |p| p + k);
        ops[k..run_end].stable_sort_by_key(|o| matches!(o, Op::Insert(_)));
        k = run_end + 1;
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_is_shown_with_three_lines_around_it() {
        let a = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let b = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(unified(a, b), "@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n");
    }

    #[test]
    fn a_new_file_is_all_added_lines() {
        assert_eq!(unified("", "x\ny\n"), "@@ -0,0 +1,2 @@\n+x\n+y\n");
    }

    #[test]
    fn changes_far_apart_make_separate_hunks() {
        let line = |i: i32| match i {
            2 => "two\n".to_string(),
            19 => "nineteen\n".to_string(),
            i => format!("{i}\n"),
        };
        let a: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let b: String = (1..=20).map(line).collect();
        let diff = unified(&a, &b);
        assert_eq!(diff.matches("@@ -").count(), 2, "{diff}");
        assert!(diff.starts_with("@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n"), "{diff}");
    }

    #[test]
    fn the_same_text_has_no_hunks() {
        assert_eq!(unified("a\nb\n", "a\nb\n"), "");
    }
}
