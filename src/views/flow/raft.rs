//! etcd's Raft group on the map: for each write, the leader's AppendEntries to its followers,
//! their acknowledgements and the commit once a quorum holds the entry; for an election, the
//! candidate's RequestVotes and the answers — each a hop between the members' chips in the
//! etcd box, told in a sentence a student can follow.
//!
//! The record holds what the group did as the API server's decisions, caused by the request
//! whose write it replicated (`etcd: MsgApp control-plane2 → control-plane term 1 index 547`);
//! the votes of an election are read from the group's own trace when the record says who won.

use super::{Class, End, Hop, Place};
use crate::cluster::Cluster;
use crate::record::{ComponentId, Entry, Happening, Seq};
use std::collections::BTreeSet;

const PREFIX: &str = "etcd: ";

/// What one of the group's record entries says.
#[derive(Debug, PartialEq)]
enum Note<'a> {
    /// A message between two members: etcd's type, sender, receiver, term, the log index it
    /// carries or acknowledges, and whether the network lost it.
    Message {
        kind: &'a str,
        from: &'a str,
        to: &'a str,
        term: u64,
        index: u64,
        lost: bool,
    },
    Committed {
        member: &'a str,
        index: u64,
        term: u64,
    },
    Leader {
        member: &'a str,
        term: u64,
    },
    SteppedDown {
        member: &'a str,
        term: u64,
    },
}

fn parse(text: &str) -> Option<Note<'_>> {
    let rest = text.strip_prefix(PREFIX)?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    let number = |w: Option<&&str>| w.and_then(|w| w.parse::<u64>().ok());
    match words.as_slice() {
        [kind, from, "→", to, "term", term, "index", index, tail @ ..] if kind.starts_with("Msg") => {
            Some(Note::Message {
                kind,
                from,
                to,
                term: term.parse().ok()?,
                index: index.parse().ok()?,
                lost: tail.first() == Some(&"(lost)"),
            })
        }
        [member, "committed", "index", index, "at", "term", term, ..] => {
            Some(Note::Committed { member, index: number(Some(index))?, term: number(Some(term))? })
        }
        [member, "became", "leader", "at", "term", term] => Some(Note::Leader { member, term: term.parse().ok()? }),
        [member, "stepped", "down", "at", "term", term] => Some(Note::SteppedDown { member, term: term.parse().ok()? }),
        _ => None,
    }
}

fn note(entry: &Entry) -> Option<Note<'_>> {
    match &entry.what {
        Happening::Decision { text } if entry.actor == ComponentId::API_SERVER => parse(text),
        _ => None,
    }
}

/// Whether the entry is one of the group's.
pub(super) fn is_raft(entry: &Entry) -> bool {
    note(entry).is_some()
}

/// Whether the map shows it: not the replication of background writes (Lease renewals,
/// Events); at the teaching pace, nor a late acknowledgement of a write told before (the entry
/// was already committed at a quorum).
pub(super) fn worth_telling(cluster: &Cluster, entry: &Entry, requests: &BTreeSet<Seq>, teaching: bool) -> bool {
    let cause = entry.cause.and_then(|c| cluster.record.get(c));
    if cause.is_some_and(|c| crate::views::caption::is_chatter(cluster, c)) {
        return false;
    }
    match note(entry) {
        Some(Note::Message { kind: "MsgApp" | "MsgAppResp", .. }) if teaching => {
            entry.cause.is_some_and(|c| requests.contains(&c))
        }
        _ => true,
    }
}

/// The member's place in the group.
fn index(cluster: &Cluster, name: &str) -> Option<u8> {
    cluster.inspect().etcd().raft()?.find(name).and_then(|i| u8::try_from(i).ok())
}

pub(super) fn member_place(cluster: &Cluster, i: u8) -> Place {
    match cluster.inspect().etcd().raft().and_then(|g| g.members.get(usize::from(i))) {
        Some(m) => Place::EtcdMember(m.name.clone()),
        None => Place::Etcd,
    }
}

fn group_size(cluster: &Cluster) -> usize {
    cluster.inspect().etcd().raft().map_or(1, |g| g.members.len())
}

/// Fan-outs of one write (or one election) leave together: a wave no revision, node or flood
/// uses.
fn wave(cause: Seq, what: i64) -> Option<i64> {
    Some(i64::MIN / 2 + i64::try_from(cause).unwrap_or(0) * 8 + what)
}

/// The group's other record entries of the same moment and cause, near this one.
fn siblings<'a>(cluster: &'a Cluster, entry: &Entry) -> impl Iterator<Item = &'a Entry> {
    let from = entry.seq.saturating_sub(12);
    (from..entry.seq.saturating_add(12))
        .filter_map(|s| cluster.record.get(s))
        .filter(move |e| e.cause == entry.cause && e.time == entry.time && is_raft(e))
}

/// The members a fan-out could not reach, as the end of its sentence.
fn unreached(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("; {one} cannot be reached, so its copy is lost"),
        many => format!("; {} cannot be reached, so their copies are lost", and_list(many)),
    }
}

fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The hops one of the group's entries makes (`notes`: the teaching pace, which also shows a
/// commit or a leader change at its member).
pub(super) fn hops(cluster: &Cluster, entry: &Entry, notes: bool) -> Vec<Hop> {
    let Some(n) = note(entry) else { return Vec::new() };
    let size = group_size(cluster);
    let quorum = size / 2 + 1;
    match n {
        Note::Message { kind, from, to, term, index: at, lost } => {
            let (Some(a), Some(b)) = (index(cluster, from), index(cluster, to)) else { return Vec::new() };
            let lost_words =
                if lost { format!(" — but {to} cannot be reached, and the message is lost") } else { String::new() };
            let (label, caption, fan) = match kind {
                "MsgApp" => {
                    let followers: Vec<&str> = siblings(cluster, entry)
                        .filter_map(|e| match note(e) {
                            Some(Note::Message { kind: "MsgApp", to, index, .. }) if index == at => Some(to),
                            _ => None,
                        })
                        .collect();
                    let lost: Vec<&str> = siblings(cluster, entry)
                        .filter_map(|e| match note(e) {
                            Some(Note::Message { kind: "MsgApp", to, index, lost: true, .. }) if index == at => {
                                Some(to)
                            }
                            _ => None,
                        })
                        .collect();
                    let lost_words = unreached(&lost);
                    let whom = if followers.len() > 1 {
                        format!("its followers {}", and_list(&followers))
                    } else {
                        format!("its follower {to}")
                    };
                    let caption = format!(
                        "etcd's leader {from} writes the change as entry {at} of its log and sends it to {whom} \
                         (AppendEntries, term {term}): it is committed once {quorum} of the {size} members hold it{lost_words}."
                    );
                    (format!("append {at}"), caption, wave(entry.cause.unwrap_or(entry.seq), 1))
                }
                "MsgAppResp" => {
                    let before = siblings(cluster, entry)
                        .filter(|e| e.seq < entry.seq)
                        .filter(
                            |e| matches!(note(e), Some(Note::Message { kind: "MsgAppResp", index, .. }) if index == at),
                        )
                        .count();
                    // The leader holds its own copy; each acknowledgement adds one.
                    let holding = before + 2;
                    let quorum_words = if holding == quorum {
                        format!(
                            "with the leader's own copy, {holding} of {size} members hold it — a quorum, so it can be committed"
                        )
                    } else if holding > quorum {
                        format!("{holding} of {size} members hold it now")
                    } else {
                        format!("{holding} of {size} members hold it; a quorum is {quorum}")
                    };
                    let caption = format!(
                        "{from} has written entry {at} to its disk and acknowledges it to the leader {to}: {quorum_words}{lost_words}."
                    );
                    (format!("ack {at}"), caption, None)
                }
                "MsgVote" => {
                    let caption = format!(
                        "{from} heard no leader within its election timeout: it becomes a candidate for term {term} and asks {to} for its vote (RequestVote, its log ends at entry {at}){lost_words}."
                    );
                    (format!("vote? term {term}"), caption, wave(entry.cause.unwrap_or(entry.seq), 2))
                }
                _ => {
                    let caption = format!("{from} answers {to}'s request for a vote in term {term}{lost_words}.");
                    (format!("vote term {term}"), caption, None)
                }
            };
            vec![Hop {
                refused: lost,
                wave: fan,
                said: Some((label, caption)),
                ..Hop::new(entry.seq, End::Member(a), End::Member(b), Class::Raft)
            }]
        }
        Note::Committed { member, index: at, term } => {
            let Some(i) = index(cluster, member).filter(|_| notes) else { return Vec::new() };
            let caption = format!(
                "{member}, the leader, marks entry {at} committed (term {term}): a quorum ({quorum} of {size}) holds it, \
                 so etcd applies the write and answers the API server; the followers learn of the commit with the next message."
            );
            vec![Hop {
                said: Some((format!("committed {at}"), caption)),
                ..Hop::new(entry.seq, End::Member(i), End::Member(i), Class::Note)
            }]
        }
        Note::Leader { member, term } => {
            let Some(i) = index(cluster, member) else { return Vec::new() };
            let mut out = votes(cluster, entry, i, term);
            if notes {
                let caption = format!(
                    "{member} won the election: a majority voted for it, so it leads term {term}. \
                     From now on every write goes through it."
                );
                out.push(Hop {
                    said: Some((format!("leader, term {term}"), caption)),
                    ..Hop::new(entry.seq, End::Member(i), End::Member(i), Class::Note)
                });
            }
            out
        }
        Note::SteppedDown { member, term } => {
            let Some(i) = index(cluster, member).filter(|_| notes) else { return Vec::new() };
            let caption = format!("{member} steps down to follower at term {term}: another member holds a newer term.");
            vec![Hop {
                said: Some(("steps down".into(), caption)),
                ..Hop::new(entry.seq, End::Member(i), End::Member(i), Class::Note)
            }]
        }
    }
}

/// The winning candidate's RequestVotes and the answers, from the group's trace: the steps of
/// the election the record's leader change ends.
fn votes(cluster: &Cluster, entry: &Entry, leader: u8, term: u64) -> Vec<Hop> {
    let Some(group) = cluster.inspect().etcd().raft() else { return Vec::new() };
    let name = |i: usize| group.members.get(i).map_or("?", |m| m.name.as_str());
    let won = usize::from(leader);
    let mut out = Vec::new();
    let asks = || group.trace().filter(|t| t.term == term && t.kind == "MsgVote" && t.from == won);
    let asked: Vec<&str> = asks().map(|t| name(t.to)).collect();
    let unreached = unreached(&asks().filter(|t| !t.delivered).map(|t| name(t.to)).collect::<Vec<_>>());
    for t in group.trace().filter(|t| {
        t.term == term && ((t.kind == "MsgVote" && t.from == won) || (t.kind == "MsgVoteResp" && t.to == won))
    }) {
        let Some(part) = u8::try_from(out.len() + 1).ok().filter(|p| *p < 32) else { break };
        let (from, to) = (name(t.from), name(t.to));
        let lost = if t.delivered { "" } else { " — but the message is lost" };
        let (label, caption, fan) = if t.kind == "MsgVote" {
            (
                format!("vote? term {term}"),
                format!(
                    "{from} heard no leader within its election timeout: it becomes a candidate for term {term} \
                     and asks {} for their votes (RequestVote){unreached}.",
                    and_list(&asked)
                ),
                wave(entry.seq, 2),
            )
        } else {
            (
                format!("vote term {term}"),
                format!(
                    "{from} answers {to}'s RequestVote for term {term}: a member gives one vote per term, to a \
                     candidate whose log is at least as complete as its own{lost}."
                ),
                None,
            )
        };
        let (Ok(a), Ok(b)) = (u8::try_from(t.from), u8::try_from(t.to)) else { continue };
        out.push(Hop {
            part,
            refused: !t.delivered,
            wave: fan,
            said: Some((label, caption)),
            ..Hop::new(entry.seq, End::Member(a), End::Member(b), Class::Raft)
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterConfig;
    use crate::shell::{Command, Session};
    use crate::views::flow::{Flow, Message, Pace};

    fn three() -> Session {
        Session::with_config(ClusterConfig { control_planes: 3, ..ClusterConfig::default() })
    }

    /// Every message that leaves while the flow plays what is recorded now, in order.
    fn departures(s: &Session, flow: &mut Flow, pace: Pace) -> Vec<Message> {
        let (mut now, mut seen): (f64, Vec<Message>) = (0.0, Vec::new());
        while !flow.idle() || seen.is_empty() {
            now += 16.0;
            for m in flow.frame(&s.cluster, now, pace) {
                if !seen.iter().any(|d| d.id == m.id) {
                    seen.push(m.clone());
                }
            }
            assert!(now < 600_000.0, "the flow never ends");
        }
        seen
    }

    fn member(m: &Message) -> Option<(&str, &str)> {
        match (&m.from, &m.to) {
            (Place::EtcdMember(a), Place::EtcdMember(b)) => Some((a.as_str(), b.as_str())),
            _ => None,
        }
    }

    #[test]
    fn a_write_reaches_etcd_then_the_leader_sends_the_entry_to_both_followers_and_one_ack_makes_a_quorum() {
        let mut s = three();
        let mut flow = Flow::new(s.cluster.record.last_seq());
        s.execute(&Command::new("kubectl create configmap one --from-literal=a=1"));
        let seen = departures(&s, &mut flow, Pace::new(1.0, false));
        let post = seen.iter().position(|m| m.label == "POST configmaps").expect("the POST");
        let appends: Vec<&Message> = seen.iter().filter(|m| m.label.starts_with("append ")).collect();
        assert_eq!(appends.len(), 2, "{seen:#?}");
        let leader = member(appends[0]).unwrap().0;
        assert!(appends.iter().all(|m| member(m).unwrap().0 == leader && m.started_ms == appends[0].started_ms));
        assert!(appends[0].caption.contains("its followers") && appends[0].caption.contains("2 of the 3"));
        // (An earlier write's second acknowledgement, late, may travel too.)
        let entry = appends[0].label.trim_start_matches("append ");
        let ack = seen.iter().find(|m| m.label == format!("ack {entry}")).expect("an acknowledgement");
        assert_eq!(member(ack).unwrap().1, leader);
        assert!(ack.caption.contains("2 of 3 members hold it — a quorum"), "{}", ack.caption);
        // The write reaches etcd, is replicated, and only then do the watchers hear of it.
        let first_append = seen.iter().position(|m| m.label.starts_with("append ")).unwrap();
        let notified = seen.iter().position(|m| m.label.starts_with("watch: ADDED configmap/one"));
        assert!(post < first_append, "{seen:#?}");
        assert!(notified.is_none_or(|n| n > first_append), "{seen:#?}");
    }

    #[test]
    fn the_teaching_pace_tells_each_hop_and_the_commit_at_a_quorum_of_two_of_three() {
        let mut s = three();
        let mut flow = Flow::new(s.cluster.record.last_seq());
        s.execute(&Command::new("kubectl create configmap one --from-literal=a=1"));
        let seen = departures(&s, &mut flow, Pace::teaching(false));
        let told: Vec<&str> = seen.iter().map(|m| m.label.as_str()).collect();
        let at = |p: &str| told.iter().position(|l| l.starts_with(p)).unwrap_or_else(|| panic!("{p}: {told:?}"));
        assert!(at("POST configmaps") < at("append ") && at("append ") < at("ack ") && at("ack ") < at("committed "));
        let commit = &seen[at("committed ")];
        assert_eq!(commit.from, commit.to, "the commit happens at the leader");
        assert!(commit.caption.contains("a quorum (2 of 3)"), "{}", commit.caption);
        assert!(seen.iter().filter(|m| member(m).is_some()).all(|m| m.count == 1 && m.caption.ends_with('.')));
    }

    #[test]
    fn after_the_leader_stops_the_next_write_shows_the_election_first() {
        let mut s = three();
        let leader = s.cluster.inspect().etcd().raft().and_then(|g| g.leader()).expect("a leader");
        let name = s.cluster.inspect().etcd().raft().unwrap().members[leader].name.clone();
        s.execute(&Command::new(&format!("sim etcd stop {name}")));
        let mut flow = Flow::new(s.cluster.record.last_seq());
        s.execute(&Command::new("kubectl create configmap two --from-literal=a=1"));
        let seen = departures(&s, &mut flow, Pace::teaching(false));
        let told: Vec<&str> = seen.iter().map(|m| m.label.as_str()).collect();
        let asked = told.iter().position(|l| l.starts_with("vote? term ")).unwrap_or_else(|| panic!("{told:?}"));
        let won = told.iter().position(|l| l.starts_with("leader, term ")).unwrap_or_else(|| panic!("{told:?}"));
        let append = told.iter().position(|l| l.starts_with("append ")).unwrap_or_else(|| panic!("{told:?}"));
        assert!(asked < won && won < append, "{told:?}");
        let call = &seen[asked].caption;
        assert!(call.contains("for their votes") && call.contains(&format!("{name} cannot be reached")), "{call}");
        assert!(told.iter().any(|l| l.starts_with("vote term ")), "{told:?}");
        // The stopped member's copy is lost on the way.
        assert!(seen.iter().any(|m| m.refused && matches!(&m.to, Place::EtcdMember(n) if *n == name)), "{seen:#?}");
    }

    #[test]
    fn a_single_etcd_member_sends_no_raft_messages() {
        let mut s = Session::new(1);
        let mut flow = Flow::new(s.cluster.record.last_seq());
        s.execute(&Command::new("kubectl create configmap one --from-literal=a=1"));
        let seen = departures(&s, &mut flow, Pace::new(1.0, false));
        assert!(seen.iter().all(|m| member(m).is_none()));
    }

    #[test]
    fn the_replication_of_lease_renewals_is_background_chatter_at_every_pace() {
        for pace in [Pace::teaching(false), Pace::new(1.0, false)] {
            let mut s = three();
            let mut flow = Flow::new(s.cluster.record.last_seq());
            s.execute(&Command::new("sleep 5s"));
            let renewals = s
                .cluster
                .record
                .since(flow.cursor())
                .filter(|e| matches!(&e.what, Happening::Request { kind: crate::api::Kind::Lease, .. }))
                .count();
            assert!(renewals > 3, "{renewals}");
            flow.absorb(&s.cluster, pace);
            assert_eq!(flow.passed_over() > 0, pace.teaching, "counted at the teaching pace");
            let mut now = 0.0;
            while !flow.idle() && now < 100_000.0 {
                now += 16.0;
                assert!(flow.frame(&s.cluster, now, pace).iter().all(|m| member(m).is_none()));
            }
        }
    }

    #[test]
    fn the_groups_record_entries_are_read_back_as_what_they_say() {
        assert_eq!(
            parse("etcd: MsgApp control-plane2 → control-plane term 1 index 547"),
            Some(Note::Message {
                kind: "MsgApp",
                from: "control-plane2",
                to: "control-plane",
                term: 1,
                index: 547,
                lost: false
            })
        );
        assert!(matches!(
            parse("etcd: MsgAppResp control-plane3 → control-plane2 term 2 index 9 (lost)"),
            Some(Note::Message { lost: true, .. })
        ));
        assert_eq!(
            parse("etcd: control-plane2 committed index 547 at term 1 (a quorum holds it)"),
            Some(Note::Committed { member: "control-plane2", index: 547, term: 1 })
        );
        assert_eq!(
            parse("etcd: control-plane became leader at term 2"),
            Some(Note::Leader { member: "control-plane", term: 2 })
        );
        assert_eq!(parse("etcd: something else"), None);
    }
}
