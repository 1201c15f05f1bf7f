//! etcdctl's view of the etcd cluster: `member list`, `endpoint status` and `endpoint health`
//! (each with `--cluster`: every member's client URL from the member list), for one member or
//! for a Raft group. etcdctl runs beside the first member and reaches the others over the
//! network, so a stopped or partitioned member cannot answer it.

use crate::etcd::Etcd;
use crate::etcd::raft::member::Role;
use crate::etcd::raft::{FIRST_MEMBER_ID, Group};
use crate::kubectl::Output;
use crate::util::sort::StableSort;
use std::fmt::Write;

/// One member as etcdctl sees it.
struct Seen {
    id: u64,
    name: String,
    ip: String,
    /// Whether etcdctl (beside the first member) reaches it.
    answers: bool,
    is_leader: bool,
    leader: u64,
    term: u64,
    index: u64,
    applied: u64,
    /// Whether it can commit a proposal now (it answers and a quorum stands behind it).
    healthy: bool,
}

fn members(etcd: &Etcd) -> Vec<Seen> {
    let Some(group) = etcd.raft() else {
        let r = etcd.revision() as u64;
        return vec![Seen {
            id: FIRST_MEMBER_ID,
            name: "control-plane".into(),
            ip: "172.18.0.2".into(),
            answers: true,
            is_leader: true,
            leader: FIRST_MEMBER_ID,
            term: 2,
            index: r,
            applied: r,
            healthy: true,
        }];
    };
    let local = group.links[0];
    let leader = group.leader();
    group
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let link = group.links[i];
            let answers = link.running() && (i == 0 || (local.reachable() && link.reachable()));
            let knows = m.leader.filter(|l| group.members[*l].term == m.term);
            Seen {
                id: m.id,
                name: m.name.clone(),
                ip: m.ip.clone(),
                answers,
                is_leader: m.role == Role::Leader,
                leader: knows.map_or(0, |l| group.members[l].id),
                term: m.term,
                index: m.log.last_index(),
                applied: m.commit,
                healthy: answers && link.reachable() && group.has_quorum() && leader.is_some(),
            }
        })
        .collect()
}

/// Whether the member etcdctl talks to (the first) runs at all.
pub fn local_running(etcd: &Etcd) -> bool {
    etcd.raft().is_none_or(|g: &Group| g.links[0].running())
}

fn out(stdout: String) -> Output {
    Output { stdout, ..Default::default() }
}

/// etcdctl's bordered table (tablewriter, every cell right-aligned, headers centered).
pub fn table(heads: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = heads
        .iter()
        .enumerate()
        .map(|(i, h)| rows.iter().map(|r| r[i].len()).max().unwrap_or(0).max(h.len()) + 2)
        .collect();
    let rule = format!("+{}+\n", widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("+"));
    let centered = |text: &str, w: usize| {
        let left = (w - text.len()) / 2;
        format!("{}{text}{}", " ".repeat(left), " ".repeat(w - text.len() - left))
    };
    let head: Vec<String> = heads.iter().zip(&widths).map(|(h, w)| centered(h, *w)).collect();
    let mut text = format!("{rule}|{}|\n{rule}", head.join("|"));
    for row in rows {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(c, w)| format!("{c:>0$} ", w - 1)).collect();
        let _ = writeln!(text, "|{}|", cells.join("|"));
    }
    text + &rule
}

/// `member list`, in member ID order as etcd returns it.
pub fn member_list(etcd: &Etcd, format: &str, header: &str) -> Output {
    let mut seen = members(etcd);
    seen.stable_sort_by_key(|m| m.id);
    let rows: Vec<Vec<String>> = seen
        .iter()
        .map(|m| {
            vec![
                format!("{:x}", m.id),
                "started".into(),
                m.name.clone(),
                format!("https://{}:2380", m.ip),
                format!("https://{}:2379", m.ip),
                "false".into(),
            ]
        })
        .collect();
    match format {
        "table" => out(table(&["ID", "STATUS", "NAME", "PEER ADDRS", "CLIENT ADDRS", "IS LEARNER"], &rows)),
        "json" => {
            let list: Vec<String> = seen
                .iter()
                .map(|m| {
                    format!(
                        "{{\"ID\":{},\"name\":\"{}\",\"peerURLs\":[\"https://{ip}:2380\"],\"clientURLs\":[\"https://{ip}:2379\"]}}",
                        m.id,
                        m.name,
                        ip = m.ip
                    )
                })
                .collect();
            out(format!("{{{header},\"members\":[{}]}}\n", list.join(",")))
        }
        _ => out(rows.iter().map(|r| r.join(", ") + "\n").collect()),
    }
}

/// The endpoints a command asks: every member's client URL with `--cluster`, else the local one.
fn endpoints(etcd: &Etcd, all: bool) -> Vec<(String, Seen)> {
    let mut seen = members(etcd);
    if !all {
        let first = seen.remove(0);
        return vec![("127.0.0.1:2379".into(), first)];
    }
    seen.stable_sort_by_key(|m| m.id);
    seen.into_iter().map(|m| (format!("https://{}:2379", m.ip), m)).collect()
}

/// `endpoint status [--cluster]`: each member's own view: its term, its log, whom it follows.
pub fn endpoint_status(etcd: &Etcd, format: &str, all: bool, size: &str, size_bytes: usize, version: &str) -> Output {
    let mut stderr = String::new();
    let mut rows = Vec::new();
    let mut json = Vec::new();
    for (ep, m) in endpoints(etcd, all) {
        if !m.answers {
            let _ = writeln!(stderr, "Failed to get the status of endpoint {ep} (context deadline exceeded)");
            continue;
        }
        let (index, applied) = (m.index, m.applied);
        rows.push(vec![
            ep.clone(),
            format!("{:x}", m.id),
            version.to_string(),
            size.to_string(),
            m.is_leader.to_string(),
            "false".into(),
            m.term.to_string(),
            index.to_string(),
            applied.to_string(),
            String::new(),
        ]);
        json.push(format!(
            "{{\"Endpoint\":\"{ep}\",\"Status\":{{\"header\":{{\"cluster_id\":{},\"member_id\":{},\"revision\":{},\"raft_term\":{}}},\"version\":\"{version}\",\"dbSize\":{size_bytes},\"leader\":{},\"raftIndex\":{index},\"raftTerm\":{}}}}}",
            crate::etcdctl::CLUSTER_ID,
            m.id,
            etcd.revision(),
            m.term,
            m.leader,
            m.term
        ));
    }
    let stdout = match format {
        "table" => table(
            &[
                "ENDPOINT",
                "ID",
                "VERSION",
                "DB SIZE",
                "IS LEADER",
                "IS LEARNER",
                "RAFT TERM",
                "RAFT INDEX",
                "RAFT APPLIED INDEX",
                "ERRORS",
            ],
            &rows,
        ),
        "json" => format!("[{}]\n", json.join(",")),
        _ => rows.iter().map(|r| r.join(", ") + "\n").collect(),
    };
    let code = if stderr.is_empty() { 0 } else { 1 };
    Output { stdout, stderr, code, ..Default::default() }
}

/// How long a healthy member takes to commit etcdctl's proposal (a fixed figure per member).
fn took(id: u64) -> String {
    format!("{}.{:03}ms", 1 + id % 2, id % 1000)
}

/// `endpoint health [--cluster]`: each member commits a proposal, which needs a quorum.
pub fn endpoint_health(etcd: &Etcd, format: &str, all: bool) -> Output {
    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut json = Vec::new();
    for (ep, m) in endpoints(etcd, all) {
        let took = if etcd.raft().is_none() { "1.874ms".to_string() } else { took(m.id) };
        if m.healthy {
            let _ = writeln!(stdout, "{ep} is healthy: successfully committed proposal: took = {took}");
            json.push(format!("{{\"endpoint\":\"{ep}\",\"health\":true,\"took\":\"{took}\"}}"));
        } else {
            let _ = writeln!(stderr, "{ep} is unhealthy: failed to commit proposal: context deadline exceeded");
            json.push(format!(
                "{{\"endpoint\":\"{ep}\",\"health\":false,\"took\":\"5s\",\"error\":\"context deadline exceeded\"}}"
            ));
        }
    }
    if format == "json" {
        stdout = format!("[{}]\n", json.join(","));
    }
    if stderr.is_empty() {
        return Output { stdout, ..Default::default() };
    }
    stderr.push_str("Error: unhealthy cluster\n");
    Output { stdout, stderr, code: 1, ..Default::default() }
}
