//! The group's behaviour, member by member.

use super::member::Role;
use super::*;

fn group(seed: u64) -> Group {
    let names: Vec<(String, String)> = ["control-plane", "control-plane2", "control-plane3"]
        .iter()
        .enumerate()
        .map(|(i, n)| (n.to_string(), format!("172.18.0.{}", 10 + i)))
        .collect();
    Group::new(&names, seed, Time::ZERO)
}

fn at(ms: u64) -> Time {
    Time::ZERO + Duration::millis(ms)
}

fn leaders(g: &Group) -> Vec<usize> {
    (0..g.members.len()).filter(|&i| g.links[i].running() && g.members[i].role == Role::Leader).collect()
}

#[test]
fn three_members_elect_exactly_one_leader() {
    for seed in 1..20 {
        let mut g = group(seed);
        g.advance_to(at(5_000));
        assert_eq!(leaders(&g).len(), 1, "seed {seed}");
        let l = leaders(&g)[0];
        assert!(g.members.iter().all(|m| m.term == g.members[l].term));
    }
}

#[test]
fn the_same_seed_elects_the_same_leader_at_the_same_term() {
    let (mut a, mut b) = (group(7), group(7));
    a.advance_to(at(10_000));
    b.advance_to(at(10_000));
    assert_eq!(a.leader(), b.leader());
    assert_eq!(a.trace().collect::<Vec<_>>(), b.trace().collect::<Vec<_>>());
}

#[test]
fn a_write_commits_once_a_quorum_holds_it() {
    let mut g = group(1);
    g.advance_to(at(5_000));
    let index = g.propose(at(5_000), Some(42), 1).expect("commits");
    let held = g.members.iter().filter(|m| m.log.last_index() >= index).count();
    assert!(held >= 2);
    let l = g.leader().unwrap();
    assert_eq!(g.members[l].commit, index);
    assert!(g.trace().any(|t| t.kind == "MsgApp" && t.cause == Some(42)));
    assert!(g.trace().any(|t| t.kind == "commit" && t.cause == Some(42)));
}

#[test]
fn a_write_commits_with_one_follower_stopped_but_not_with_two() {
    let mut g = group(1);
    g.advance_to(at(5_000));
    let l = g.leader().unwrap();
    let others: Vec<usize> = (0..3).filter(|&i| i != l).collect();
    g.set_stopped(others[0], true, at(5_000));
    assert!(g.propose(at(5_100), None, 1).is_ok());
    g.set_stopped(others[1], true, at(5_200));
    assert_eq!(g.propose(at(5_300), None, 1), Err(TIMED_OUT));
    assert_eq!(g.read(at(5_300)), Err(TIMED_OUT));
}

#[test]
fn a_stopped_leader_is_replaced_at_a_higher_term() {
    let mut g = group(3);
    g.advance_to(at(5_000));
    let old = g.leader().unwrap();
    let term = g.members[old].term;
    g.set_stopped(old, true, at(5_000));
    g.advance_to(at(10_000));
    let new = g.leader().expect("a new leader");
    assert_ne!(new, old);
    assert!(g.members[new].term > term);
    assert!(g.propose(at(10_000), None, 1).is_ok());
}

#[test]
fn a_lagging_follower_catches_up_when_it_returns() {
    let mut g = group(2);
    g.advance_to(at(5_000));
    let l = g.leader().unwrap();
    let f = (0..3).find(|&i| i != l).unwrap();
    g.set_stopped(f, true, at(5_000));
    for i in 0..10 {
        g.propose(at(5_100 + i), None, 1).unwrap();
    }
    let last = g.members[l].log.last_index();
    assert!(g.members[f].log.last_index() < last);
    g.set_stopped(f, false, at(6_000));
    g.advance_to(at(9_000));
    let l = g.leader().unwrap();
    assert_eq!(g.members[f].log.last_index(), g.members[l].log.last_index());
    assert_eq!(g.members[f].log.last_term(), g.members[l].log.last_term());
}

#[test]
fn a_partitioned_leader_is_superseded_and_steps_down_when_healed() {
    let mut g = group(4);
    g.advance_to(at(5_000));
    let old = g.leader().unwrap();
    let term = g.members[old].term;
    g.set_partitioned(old, true, at(5_000));
    g.advance_to(at(12_000));
    let new = g.leader().expect("the majority elects");
    assert_ne!(new, old);
    assert!(g.members[new].term > term);
    // CheckQuorum: alone, the old leader gave up leading.
    assert_ne!(g.members[old].role, Role::Leader);
    g.set_partitioned(old, false, at(12_000));
    g.advance_to(at(20_000));
    assert_eq!(leaders(&g).len(), 1);
    let l = g.leader().unwrap();
    assert!(g.members.iter().all(|m| m.term == g.members[l].term));
}

#[test]
fn a_member_with_a_stale_log_cannot_win_an_election() {
    let mut g = group(5);
    g.advance_to(at(5_000));
    let l = g.leader().unwrap();
    let stale = (0..3).find(|&i| i != l).unwrap();
    let fresh = (0..3).find(|&i| i != l && i != stale).unwrap();
    g.set_stopped(stale, true, at(5_000));
    for i in 0..5 {
        g.propose(at(5_100 + i), None, 1).unwrap();
    }
    // The leader goes; the stale member returns: only the fresh one can win.
    g.set_stopped(l, true, at(6_000));
    g.set_stopped(stale, false, at(6_000));
    g.advance_to(at(20_000));
    assert_eq!(g.leader(), Some(fresh));
}

#[test]
fn slow_disks_on_a_majority_delay_every_commit() {
    let mut g = group(6);
    g.advance_to(at(5_000));
    let l = g.leader().unwrap();
    let f = (0..3).find(|&i| i != l).unwrap();
    let t0 = g.now();
    g.propose(t0, None, 1).unwrap();
    let fast = g.now().since(t0);
    g.set_slow_disk(f, true, g.now());
    let t = g.now();
    g.propose(t, None, 1).unwrap();
    assert!(g.now().since(t) < Duration::millis(10), "one slow follower is not needed for a quorum");
    g.set_slow_disk(l, true, g.now());
    let t1 = g.now();
    g.propose(t1, None, 1).unwrap();
    let slow = g.now().since(t1);
    assert!(fast < Duration::millis(10), "{fast:?}");
    assert!(slow >= network::SLOW_FSYNC, "{slow:?}");
}

#[test]
fn a_write_sent_to_a_stopped_follower_is_traced_as_lost() {
    let mut g = group(8);
    g.advance_to(at(5_000));
    let l = g.leader().unwrap();
    let f = (0..3).find(|&i| i != l).unwrap();
    g.set_stopped(f, true, at(5_000));
    g.propose(at(5_000), Some(7), 1).unwrap();
    let lost: Vec<_> = g.trace().filter(|t| t.cause == Some(7) && t.kind == "MsgApp" && !t.delivered).collect();
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0].to, f);
    assert!(lost[0].sent < lost[0].at);
}
