//! What moves on the map: each message where it is now, as a token (close ones on one edge
//! merged with a count), the stages a request has passed and the boxes a message is arriving at.

use super::{Layout, Point};
use crate::record::Stage;
use crate::views::flow::{Message, Place};

/// How near two tokens must be (in both directions) for one label to serve both: about a
/// label's height.
const LABEL_CLEARANCE: f64 = 24.0;

impl Layout {
    /// Where each message is now, as tokens: messages on the same edge, going the same way
    /// and close together, merge into one token with a count.
    pub fn tokens(&self, messages: &[Message], reduced_motion: bool) -> Vec<Token> {
        let mut tokens: Vec<Token> = Vec::new();
        for m in messages.iter().filter(|m| m.from != m.to) {
            let route = self.route(m);
            let progress = if reduced_motion { 1.0 } else { m.progress };
            let Some(at) = along(&route, progress) else { continue };
            let (from, to) = (m.from.name(), m.to.name());
            let class = if m.refused {
                TokenClass::Refused
            } else if matches!(m.from, Place::EtcdMember(_)) {
                TokenClass::Raft
            } else if matches!(m.from, Place::Pod { .. }) || matches!(m.to, Place::Pod { .. }) {
                TokenClass::Webhook
            } else if m.stages > 0 {
                TokenClass::Request
            } else if matches!(m.to, Place::Runtime(_)) {
                TokenClass::Runtime
            } else {
                TokenClass::Watch
            };
            if let Some(t) = tokens
                .iter_mut()
                .find(|t| t.from == from && t.to == to && t.class == class && (t.progress - progress).abs() < 0.12)
            {
                t.count += m.count;
                t.ids.push(m.id);
                if progress > t.progress {
                    (t.at, t.progress) = (at, progress);
                }
                continue;
            }
            tokens.push(Token {
                ids: vec![m.id],
                at,
                progress,
                from,
                to,
                class,
                label: m.label.clone(),
                labelled: true,
                count: m.count,
            });
        }
        for t in &mut tokens {
            if t.ids.len() > 1 {
                t.label = format!("×{} {}", t.count, t.class.plural());
            }
        }
        // Tokens on different edges can sit on one another where the edges share a way (a
        // notification fanning out to every node's kube-proxy and kubelet): the same words
        // there are shown once, on the first, so the labels do not pile up unreadably.
        for i in 1..tokens.len() {
            let (before, rest) = tokens.split_at_mut(i);
            let t = &mut rest[0];
            let near =
                |o: &Token| (o.at.0 - t.at.0).abs() < LABEL_CLEARANCE && (o.at.1 - t.at.1).abs() < LABEL_CLEARANCE;
            // Raft's fan-out (the same entry to every follower) in the small etcd box: once.
            let raft = t.from.starts_with("etcd/");
            if before
                .iter()
                .any(|o| o.labelled && o.label == t.label && (near(o) || raft && o.from.starts_with("etcd/")))
            {
                t.labelled = false;
            }
        }
        tokens
    }

    /// The stages a request token has reached, and whether it was refused at the last; the
    /// boxes whose incoming message is arriving (they pulse).
    pub fn lights(&self, messages: &[Message]) -> Lights {
        let mut lights = Lights::default();
        for m in messages {
            if m.stages > 0 {
                let route = self.route(m);
                let at = along(&route, m.progress).unwrap_or_default();
                let reached = self.stages.iter().take(usize::from(m.stages)).filter(|(_, r)| at.0 >= r.x).count();
                let refused_here = m.refused && reached == usize::from(m.stages);
                if reached > lights.stages_reached || refused_here {
                    lights.stages_reached = reached;
                    lights.refused_at = refused_here.then(|| self.stages[reached - 1].0);
                }
            }
            if m.progress >= 0.85 || m.from == m.to {
                let receiver = match &m.to {
                    Place::Etcd if m.refused => Place::ApiServer,
                    p => p.clone(),
                };
                if !lights.arriving.contains(&receiver) {
                    lights.arriving.push(receiver);
                }
            }
        }
        lights
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenClass {
    Request,
    Refused,
    Watch,
    Runtime,
    /// Between etcd's members.
    Raft,
    /// An admission webhook call or answer.
    Webhook,
}

impl TokenClass {
    pub fn css(self) -> &'static str {
        match self {
            TokenClass::Request => "token request",
            TokenClass::Refused => "token request refused",
            TokenClass::Watch => "token watch",
            TokenClass::Runtime => "token runtime",
            TokenClass::Raft => "token raft",
            TokenClass::Webhook => "token webhook",
        }
    }

    fn plural(self) -> &'static str {
        match self {
            TokenClass::Request | TokenClass::Refused => "requests",
            TokenClass::Watch => "watch events",
            TokenClass::Runtime => "runtime calls",
            TokenClass::Raft => "Raft messages",
            TokenClass::Webhook => "webhook calls",
        }
    }
}

/// A message (or several merged) where it is now.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// The record entries it stands for (the first is its key).
    pub ids: Vec<u64>,
    pub at: Point,
    pub progress: f64,
    pub from: String,
    pub to: String,
    pub class: TokenClass,
    pub label: String,
    /// Whether its label is shown (not when a token just beside it shows the same words).
    pub labelled: bool,
    pub count: u32,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lights {
    /// How many of the API server's stages the furthest request has passed.
    pub stages_reached: usize,
    pub refused_at: Option<Stage>,
    /// Places a message is arriving at (they pulse).
    pub arriving: Vec<Place>,
}

/// The point `progress` (0..1) of the way along a path, by length.
pub fn along(points: &[Point], progress: f64) -> Option<Point> {
    let first = *points.first()?;
    let dist = |a: Point, b: Point| ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
    let length: f64 = points.windows(2).map(|w| dist(w[0], w[1])).sum();
    let mut left = length * progress.clamp(0.0, 1.0);
    for w in points.windows(2) {
        let d = dist(w[0], w[1]);
        if d > 0.0 && left <= d {
            let t = left / d;
            return Some((w[0].0 + (w[1].0 - w[0].0) * t, w[0].1 + (w[1].1 - w[0].1) * t));
        }
        left -= d;
    }
    points.last().copied().or(Some(first))
}

#[cfg(test)]
mod tests {
    use crate::record::Stage;
    use crate::views::flow::Place;
    use crate::views::map::fixtures::{message, spec};
    use crate::views::map::*;

    #[test]
    fn a_refused_request_stops_at_the_stage_that_refused_it() {
        let map = layout(&spec(3, 0));
        let validation = map.stages.iter().position(|(s, _)| *s == Stage::Validation).unwrap();
        let m = message(Place::Kubectl, Place::ApiServer, validation as u8 + 1, true, 1.0);
        assert_eq!(map.route(&m).last(), Some(&map.stages[validation].1.centre()));
        let lights = map.lights(&[m]);
        assert_eq!((lights.refused_at, lights.stages_reached), (Some(Stage::Validation), validation + 1));
    }

    #[test]
    fn messages_close_together_on_one_edge_merge_into_one_counted_token() {
        let map = layout(&spec(3, 0));
        let mut a = message(Place::Controller("replicaset-controller".into()), Place::Etcd, 6, false, 0.30);
        let mut b = a.clone();
        b.id = 2;
        b.progress = 0.35;
        let mut far = a.clone();
        far.id = 3;
        far.progress = 0.9;
        a.label = "POST pods".into();
        let tokens = map.tokens(&[a, b, far], false);
        assert_eq!(tokens.len(), 2, "{tokens:#?}");
        assert_eq!((tokens[0].count, tokens[0].label.as_str(), tokens[0].ids.clone()), (2, "×2 requests", vec![1, 2]));
    }

    #[test]
    fn the_leaders_append_entries_to_every_follower_are_labelled_once_even_when_one_is_lost() {
        let mut spec = spec(3, 0);
        spec.members = ["control-plane", "control-plane2", "control-plane3"].map(String::from).to_vec();
        let map = layout(&spec);
        let send = |id: u64, to: &str, lost: bool| {
            let mut m = message(Place::EtcdMember("control-plane".into()), Place::EtcdMember(to.into()), 0, lost, 0.5);
            (m.id, m.label) = (id, "append 9".into());
            m
        };
        let tokens = map.tokens(&[send(1, "control-plane2", true), send(2, "control-plane3", false)], false);
        assert_eq!((tokens[0].class, tokens[1].class), (TokenClass::Refused, TokenClass::Raft));
        assert_eq!(tokens.iter().filter(|t| t.labelled).count(), 1, "{tokens:#?}");
    }

    #[test]
    fn one_notification_fanning_out_to_every_node_is_labelled_once_where_its_tokens_meet() {
        let map = layout(&spec(3, 0));
        let to = |id: u64, place: Place| {
            let mut m = message(Place::ApiServer, place, 0, false, 0.02);
            m.id = id;
            m.label = "watch: ADDED service/web".into();
            m
        };
        let nodes = ["worker-0", "worker-1", "worker-2"];
        let messages: Vec<_> =
            nodes.iter().enumerate().map(|(i, n)| to(i as u64 + 1, Place::Kubelet(n.to_string()))).collect();
        let tokens = map.tokens(&messages, false);
        assert_eq!(tokens.len(), 3, "one token for each receiver: {tokens:#?}");
        let labelled: Vec<_> = tokens.iter().filter(|t| t.labelled).collect();
        assert_eq!(labelled.len(), 1, "still on their shared way out of the API server: {tokens:#?}");
        let arrived: Vec<_> = messages
            .into_iter()
            .map(|mut m| {
                m.progress = 1.0;
                m
            })
            .collect();
        assert!(
            map.tokens(&arrived, false).iter().all(|t| !t.label.is_empty()),
            "apart at their nodes, each is labelled"
        );
    }
}
