//! The map's geometry: where each box sits, the edges a cluster really has, and the route a
//! message takes along them through the API server's stages.

use crate::record::Stage;
use crate::views::flow::{Message, Place};

/// A point in the map's units.
pub type Point = (f64, f64);

/// The map's width in its own units (the page scales it to fit).
pub const WIDTH: f64 = 1200.0;
/// Up to this many nodes are drawn as boxes with their components; more become tiles.
pub const MAX_BOXES: usize = 8;
/// The most pods a node box lists by name; more are drawn as dots.
pub const LISTED_PODS: usize = 8;
/// Rows of dots a node box shows at most (the rest are counted).
const DOT_ROWS: usize = 6;
const DOT: f64 = 19.0;
/// A listed pod's row height.
const ROW: f64 = 20.0;
const TILE_DOT: f64 = 9.0;
/// The most pod dots all tiles draw together: hundreds of nodes share them (each draws at
/// least a few, and counts the rest), so a big cluster's map stays a few thousand elements.
const TILE_DOTS: usize = 1200;

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub const fn new(x: f64, y: f64, w: f64, h: f64) -> Rect {
        Rect { x, y, w, h }
    }

    pub fn cx(&self) -> f64 {
        self.x + self.w / 2.0
    }

    pub fn cy(&self) -> f64 {
        self.y + self.h / 2.0
    }

    pub fn centre(&self) -> Point {
        (self.cx(), self.cy())
    }

    pub fn right(&self) -> f64 {
        self.x + self.w
    }

    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }

    /// Whether two rectangles share any area.
    pub fn overlaps(&self, other: &Rect) -> bool {
        self.x < other.right() && other.x < self.right() && self.y < other.bottom() && other.y < self.bottom()
    }

    /// The SVG path of a cylinder filling the rectangle (etcd's usual picture); its top
    /// ellipse, 12 units tall, is drawn apart.
    pub fn cylinder_path(&self) -> String {
        let (x, y, w, h) = (self.x, self.y + 12.0, self.w, self.h - 12.0);
        let (bottom, rx, right) = (y + h - 12.0, w / 2.0, x + w);
        format!(
            "M{x:.0} {y:.0} L{x:.0} {bottom:.0} A{rx:.0} 12 0 0 0 {right:.0} {bottom:.0} L{right:.0} {y:.0} A{rx:.0} 12 0 0 0 {x:.0} {y:.0} z"
        )
    }

    pub fn contains(&self, (x, y): Point) -> bool {
        x >= self.x && x <= self.right() && y >= self.y && y <= self.bottom()
    }
}

pub const KUBECTL: Rect = Rect::new(10.0, 314.0, 118.0, 90.0);
/// CoreDNS, kubeadm's DNS add-on: its pods run on the nodes, but it is drawn once, beside the
/// control plane, as a client of the API server like any other; the other add-ons are drawn
/// below it (see [`addon_boxes`]).
pub const COREDNS: Rect = Rect::new(10.0, 8.0, 118.0, 90.0);
/// Where CoreDNS's edge turns down towards the API server, in the control plane's margin; each
/// add-on below it turns a little further left, so no two edges cross.
const COREDNS_TURN_X: f64 = 166.0;
/// Where the add-ons below CoreDNS may be drawn, top and bottom.
const ADDONS_TOP: f64 = 108.0;
const ADDONS_BOTTOM: f64 = 300.0;
/// The tallest an add-on's box is drawn, and the most add-ons drawn (more are not).
const ADDON_H: f64 = 56.0;
pub const MAX_ADDONS: usize = 6;
pub const CONTROL_PLANE: Rect = Rect::new(148.0, 8.0, 1042.0, 396.0);
pub const SCHEDULER: Rect = Rect::new(170.0, 40.0, 252.0, 150.0);
pub const CONTROLLER_MANAGER: Rect = Rect::new(442.0, 40.0, 728.0, 150.0);
pub const API_SERVER: Rect = Rect::new(170.0, 240.0, 692.0, 150.0);
pub const ETCD: Rect = Rect::new(922.0, 240.0, 248.0, 150.0);
/// The horizontal line the nodes' connections run along to the API server.
pub const BUS_Y: f64 = 430.0;
/// Where the nodes' connections enter the API server (its bottom edge).
const NODE_ENTRY_X: f64 = 516.0;
/// Where node boxes start.
pub const NODES_Y: f64 = 456.0;
const MARGIN: f64 = 10.0;
const GAP: f64 = 14.0;
/// Controller lanes: three columns, three rows.
pub const LANE_COLUMNS: usize = 3;
pub const MAX_LANES: usize = 9;

/// A worker (or control-plane) node as the map draws it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodeLayout {
    pub name: String,
    pub rect: Rect,
    /// Drawn as a tile (many nodes): its components are small marks without labels.
    pub tile: bool,
    pub kube_proxy: Rect,
    pub kubelet: Rect,
    pub runtime: Rect,
    /// The CNI plugin's agent (`calico-node`), when the cluster runs one that talks to the API:
    /// a bar under the pods it connects (a mark beside the others on a tile).
    pub cni: Option<Rect>,
    /// Where its title (name and status) is written.
    pub title: Point,
    /// Where its pods are drawn.
    pub pods: Rect,
    /// Pods it can show (by name, or as dots); more are counted.
    pub pod_room: usize,
    /// Pods are listed by name (few pods, boxes) rather than drawn as dots.
    pub listed: bool,
}

impl NodeLayout {
    /// Where the `i`th pod is drawn: a dot's centre, or a listed row's left end.
    pub fn pod_at(&self, i: usize) -> Point {
        if self.listed {
            return (self.pods.x + 9.0, self.pods.y + 10.0 + i as f64 * ROW);
        }
        let step = if self.tile { TILE_DOT } else { DOT };
        let per_row = ((self.pods.w / step).floor() as usize).max(1);
        let (row, col) = (i / per_row, i % per_row);
        (self.pods.x + step / 2.0 + col as f64 * step, self.pods.y + step / 2.0 + row as f64 * step)
    }
}

/// One connection that really exists, drawn as a line a message can travel. Requests go from
/// `from` to `to`; answers and watch notifications come back the other way.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub points: Vec<Point>,
}

impl Edge {
    /// The SVG path data.
    pub fn path(&self) -> String {
        let mut d = String::new();
        for (i, (x, y)) in self.points.iter().enumerate() {
            d.push_str(if i == 0 { "M" } else { " L" });
            d.push_str(&format!("{x:.0} {y:.0}"));
        }
        d
    }
}

/// What the map is laid out for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MapSpec {
    /// Each node's name and how many pods it runs.
    pub nodes: Vec<(String, usize)>,
    /// The controllers that have acted, each given a lane in the controller manager.
    pub lanes: Vec<String>,
    /// The add-ons besides CoreDNS that run as pods and talk to the API, each given a box.
    pub addons: Vec<String>,
    /// The name of the CNI plugin's agent on every node, when it talks to the API
    /// (`calico-node`): each node draws it.
    pub cni: Option<String>,
    /// etcd's members when it is a Raft group (empty with one member): each a chip in the etcd
    /// box, which Raft's messages travel between.
    pub members: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Layout {
    pub width: f64,
    pub height: f64,
    /// The API server's request stages, left to right.
    pub stages: Vec<(Stage, Rect)>,
    pub lanes: Vec<(String, Rect)>,
    /// The add-ons' boxes below CoreDNS's.
    pub addons: Vec<(String, Rect)>,
    /// The CNI agent every node draws (`NodeLayout::cni`), by name.
    pub cni: Option<String>,
    /// Controllers that acted but have no lane drawn (more than [`MAX_LANES`]).
    pub more_lanes: usize,
    /// etcd's members, in the group's order (see [`member_chip`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    pub nodes: Vec<NodeLayout>,
    pub edges: Vec<Edge>,
}

/// An add-on's box title and what it does, in a few words.
pub fn addon_title(name: &str) -> String {
    // A box is narrow: the name a course uses, shortened (its tooltip gives the whole name).
    match name {
        "cloud-controller-manager" => "cloud".into(),
        "metrics-server" => "metrics".into(),
        "ingress-nginx-controller" => "ingress".into(),
        "website-operator" => "operator".into(),
        n => n.trim_end_matches("-controller").trim_end_matches("-provisioner").to_string(),
    }
}

/// What an add-on does, as its box says under its title.
pub fn addon_role(name: &str) -> &'static str {
    match name {
        "local-path-provisioner" => "provisions PVs",
        n if n.starts_with("ingress") => "nginx, by host",
        "metrics-server" => "Metrics API",
        "cloud-controller-manager" => "LB addresses",
        "website-operator" => "Website → Deployment",
        _ => "an add-on",
    }
}

/// What a node's CNI bar says: the agent, and what it does.
pub fn cni_label(agent: &str) -> String {
    format!("{agent} · pod network")
}

/// The short name a stage carries in its box.
pub fn stage_short(stage: Stage) -> &'static str {
    match stage {
        Stage::Authentication => "authn",
        Stage::Authorization => "authz",
        Stage::MutatingAdmission => "mutating",
        Stage::Validation => "validation",
        Stage::ValidatingAdmission => "validating",
        Stage::Storage => "→ etcd",
    }
}

#[inline(never)] // a part of the board, compiled on its own (see `board::acted`)
pub fn layout(spec: &MapSpec) -> Layout {
    let stage_w = (API_SERVER.w - 28.0 - 5.0 * 8.0) / 6.0;
    let stages = Stage::ALL
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (*s, Rect::new(API_SERVER.x + 14.0 + i as f64 * (stage_w + 8.0), API_SERVER.y + 42.0, stage_w, 46.0))
        })
        .collect();
    let lane_w = (CONTROLLER_MANAGER.w - 24.0 - (LANE_COLUMNS as f64 - 1.0) * 8.0) / LANE_COLUMNS as f64;
    let lanes = spec
        .lanes
        .iter()
        .take(MAX_LANES)
        .enumerate()
        .map(|(i, name)| {
            let (row, col) = (i / LANE_COLUMNS, i % LANE_COLUMNS);
            let r = Rect::new(
                CONTROLLER_MANAGER.x + 12.0 + col as f64 * (lane_w + 8.0),
                CONTROLLER_MANAGER.y + 32.0 + row as f64 * 38.0,
                lane_w,
                34.0,
            );
            (name.clone(), r)
        })
        .collect();
    let addons = addon_boxes(&spec.addons);
    let nodes = node_boxes(&spec.nodes, spec.cni.is_some());
    let height = nodes.iter().map(|n| n.rect.bottom()).fold(NODES_Y + 40.0, f64::max) + MARGIN;
    let mut edges = vec![
        Edge {
            from: "kubectl".into(),
            to: "kube-apiserver".into(),
            points: vec![(KUBECTL.right(), KUBECTL.cy()), (API_SERVER.x, KUBECTL.cy())],
        },
        Edge {
            from: "kube-apiserver".into(),
            to: "etcd".into(),
            points: vec![(API_SERVER.right(), ETCD.cy() - 14.0), (ETCD.x, ETCD.cy() - 14.0)],
        },
        Edge {
            from: "kube-scheduler".into(),
            to: "kube-apiserver".into(),
            points: vec![(SCHEDULER.cx(), SCHEDULER.bottom()), (SCHEDULER.cx(), API_SERVER.y)],
        },
        Edge {
            from: "coredns".into(),
            to: "kube-apiserver".into(),
            points: vec![
                (COREDNS.right(), COREDNS.cy()),
                (COREDNS_TURN_X, COREDNS.cy()),
                (COREDNS_TURN_X, API_SERVER.y + 12.0),
                (API_SERVER.x, API_SERVER.y + 12.0),
            ],
        },
        Edge {
            from: "kube-controller-manager".into(),
            to: "kube-apiserver".into(),
            points: vec![
                (API_SERVER.right() - 90.0, CONTROLLER_MANAGER.bottom()),
                (API_SERVER.right() - 90.0, API_SERVER.y),
            ],
        },
    ];
    // Each add-on lower down turns further left and enters the API server lower, so its edge
    // passes under the ones above it.
    for (i, (name, r)) in addons.iter().enumerate() {
        let (turn, entry) = (COREDNS_TURN_X - 4.0 * (i + 1) as f64, API_SERVER.y + 12.0 + 11.0 * (i + 1) as f64);
        edges.push(Edge {
            from: name.clone(),
            to: "kube-apiserver".into(),
            points: vec![(r.right(), r.cy()), (turn, r.cy()), (turn, entry), (API_SERVER.x, entry)],
        });
    }
    for n in &nodes {
        for (k, (component, r)) in [("kube-proxy", n.kube_proxy), ("kubelet", n.kubelet)].into_iter().enumerate() {
            // Nodes below the first row reach the bus through the gap to their left, never
            // across another node's box.
            let mut points = vec![(r.cx(), r.y)];
            if n.rect.y > NODES_Y {
                let above = n.rect.y - 4.0 - 3.0 * k as f64;
                let gap = n.rect.x - if n.tile { 4.0 } else { GAP / 2.0 } + k as f64 * 2.0;
                points.extend([(r.cx(), above), (gap, above)]);
                points.push((gap, BUS_Y));
            } else {
                points.push((r.cx(), BUS_Y));
            }
            points.extend([(NODE_ENTRY_X, BUS_Y), (NODE_ENTRY_X, API_SERVER.bottom())]);
            edges.push(Edge { from: format!("{component}/{}", n.name), to: "kube-apiserver".into(), points });
        }
        if let Some(r) = n.cni {
            // A tile's mark goes up as the others do; a box's bar, under the pods, leaves by its
            // right end and climbs the gap beside the node (the gap's other lines keep left).
            let points = if n.tile {
                let mut points = vec![(r.cx(), r.y)];
                if n.rect.y > NODES_Y {
                    // Between the kube-proxy's and the kubelet's lines, left of both.
                    let (above, gap) = (n.rect.y - 5.5, n.rect.x - 6.0);
                    points.extend([(r.cx(), above), (gap, above)]);
                }
                let x = points.last().map_or(r.cx(), |p| p.0);
                points.extend([(x, BUS_Y), (NODE_ENTRY_X, BUS_Y), (NODE_ENTRY_X, API_SERVER.bottom())]);
                points
            } else {
                let side = n.rect.right() + 3.0;
                vec![
                    (r.right(), r.cy()),
                    (side, r.cy()),
                    (side, BUS_Y),
                    (NODE_ENTRY_X, BUS_Y),
                    (NODE_ENTRY_X, API_SERVER.bottom()),
                ]
            };
            edges.push(Edge { from: format!("cni/{}", n.name), to: "kube-apiserver".into(), points });
        }
        edges.push(Edge {
            from: format!("kubelet/{}", n.name),
            to: format!("containerd/{}", n.name),
            points: vec![(n.kubelet.right(), n.kubelet.cy()), (n.runtime.x, n.runtime.cy())],
        });
        if !n.tile {
            edges.push(Edge {
                from: format!("containerd/{}", n.name),
                to: format!("pods/{}", n.name),
                points: vec![(n.runtime.cx(), n.runtime.bottom()), (n.runtime.cx(), n.pods.y - 2.0)],
            });
        }
    }
    let more_lanes = spec.lanes.len().saturating_sub(MAX_LANES);
    Layout {
        width: WIDTH,
        height,
        stages,
        lanes,
        addons,
        cni: spec.cni.clone(),
        more_lanes,
        members: spec.members.clone(),
        nodes,
        edges,
    }
}

/// The chip of the `i`th of `count` etcd members, along the bottom of the etcd box.
pub fn member_chip(i: usize, count: usize) -> Rect {
    let gap = 6.0;
    let count = count.max(1);
    let w = (ETCD.w - 28.0 - gap * (count as f64 - 1.0)) / count as f64;
    Rect::new(ETCD.x + 14.0 + i as f64 * (w + gap), ETCD.y + 112.0, w, 30.0)
}

/// How far above the chips a Raft message arcs: one way high, the other way low, so a message
/// and its answer never share a line.
const RAFT_ARC: (f64, f64) = (14.0, 6.0);

/// The add-ons' boxes, stacked under CoreDNS's and sharing the room above kubectl's.
fn addon_boxes(addons: &[String]) -> Vec<(String, Rect)> {
    let shown = addons.len().min(MAX_ADDONS);
    if shown == 0 {
        return Vec::new();
    }
    let room = ADDONS_BOTTOM - ADDONS_TOP;
    let h = ((room - 8.0 * (shown as f64 - 1.0)) / shown as f64).min(ADDON_H);
    addons
        .iter()
        .take(shown)
        .enumerate()
        .map(|(i, name)| (name.clone(), Rect::new(COREDNS.x, ADDONS_TOP + i as f64 * (h + 8.0), COREDNS.w, h)))
        .collect()
}

/// The height of a node box's CNI bar, under its pods.
const CNI_BAR: f64 = 16.0;

fn node_boxes(nodes: &[(String, usize)], cni: bool) -> Vec<NodeLayout> {
    let usable = WIDTH - 2.0 * MARGIN;
    if nodes.len() > MAX_BOXES {
        let (w, h, gap) = (136.0, 76.0, 8.0);
        let columns = (((usable + gap) / (w + gap)).floor() as usize).max(1);
        return nodes
            .iter()
            .enumerate()
            .map(|(i, (name, _))| {
                let (row, col) = (i / columns, i % columns);
                let rect = Rect::new(MARGIN + col as f64 * (w + gap), NODES_Y + row as f64 * (h + gap), w, h);
                let mark = |k: f64| Rect::new(rect.x + 6.0 + k * 20.0, rect.y + 5.0, 16.0, 10.0);
                let pods = Rect::new(rect.x + 6.0, rect.y + 34.0, w - 12.0, h - 38.0);
                let per_row = (pods.w / TILE_DOT).floor() as usize;
                let rows = (pods.h / TILE_DOT).floor() as usize;
                let share = (TILE_DOTS / nodes.len()).max(4);
                NodeLayout {
                    name: name.clone(),
                    rect,
                    tile: true,
                    kube_proxy: mark(0.0),
                    kubelet: mark(1.0),
                    runtime: mark(2.0),
                    cni: cni.then(|| mark(3.0)),
                    title: (rect.x + 6.0, rect.y + 28.0),
                    pods,
                    pod_room: (per_row * rows).min(share),
                    listed: false,
                }
            })
            .collect();
    }
    let columns = nodes.len().clamp(1, 4);
    let w = (usable - (columns as f64 - 1.0) * GAP) / columns as f64;
    let most = nodes.iter().map(|(_, pods)| *pods).max().unwrap_or(0);
    let listed = most <= LISTED_PODS;
    let per_row = (((w - 20.0) / DOT).floor() as usize).max(1);
    let (pods_h, room) = if listed {
        (LISTED_PODS as f64 * ROW + 2.0, LISTED_PODS)
    } else {
        let rows = most.div_ceil(per_row).clamp(1, DOT_ROWS);
        (rows as f64 * DOT + 4.0, rows * per_row)
    };
    let bar = if cni { CNI_BAR + 6.0 } else { 0.0 };
    let h = 72.0 + pods_h + 8.0 + bar;
    nodes
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            let (row, col) = (i / columns, i % columns);
            let rect = Rect::new(MARGIN + col as f64 * (w + GAP), NODES_Y + row as f64 * (h + GAP), w, h);
            let part = (w - 16.0 - 2.0 * 8.0) / 3.0;
            let component = |k: f64| Rect::new(rect.x + 8.0 + k * (part + 8.0), rect.y + 8.0, part, 28.0);
            NodeLayout {
                name: name.clone(),
                rect,
                tile: false,
                kube_proxy: component(0.0),
                kubelet: component(1.0),
                runtime: component(2.0),
                cni: cni.then(|| Rect::new(rect.x + 8.0, rect.bottom() - 8.0 - CNI_BAR, w - 16.0, CNI_BAR)),
                title: (rect.x + 10.0, rect.y + 57.0),
                pods: Rect::new(rect.x + 10.0, rect.y + 68.0, w - 20.0, pods_h),
                pod_room: room,
                listed,
            }
        })
        .collect()
}

impl Layout {
    /// The edge between two places, whichever way it is drawn.
    pub fn edge(&self, a: &str, b: &str) -> Option<&Edge> {
        self.edges.iter().find(|e| (e.from == a && e.to == b) || (e.from == b && e.to == a))
    }

    pub fn node(&self, name: &str) -> Option<&NodeLayout> {
        self.nodes.iter().find(|n| n.name == name)
    }

    pub fn addon(&self, name: &str) -> Option<Rect> {
        self.addons.iter().find(|(n, _)| n == name).map(|(_, r)| *r)
    }

    pub fn lane(&self, controller: &str) -> Option<Rect> {
        self.lanes.iter().find(|(n, _)| n == controller).map(|(_, r)| *r)
    }

    /// The box a place is drawn as (a controller: its lane, or the controller manager).
    pub fn place_rect(&self, place: &Place) -> Option<Rect> {
        match place {
            Place::Kubectl => Some(KUBECTL),
            Place::ApiServer => Some(API_SERVER),
            Place::Etcd => Some(ETCD),
            Place::Scheduler => Some(SCHEDULER),
            Place::Controller(name) => self.lane(name).or(Some(CONTROLLER_MANAGER)),
            Place::Kubelet(node) => self.node(node).map(|n| n.kubelet),
            Place::KubeProxy(node) => self.node(node).map(|n| n.kube_proxy),
            Place::Runtime(node) => self.node(node).map(|n| n.runtime),
            Place::Cni(node) => self.node(node).and_then(|n| n.cni),
            Place::CoreDns => Some(COREDNS),
            Place::AddOn(name) => self.addon(name),
            Place::Nodes => None,
            Place::EtcdMember(name) => self.member(name),
            Place::Pod { node, slot, .. } => {
                let (x, y) = self.pod_point(node, *slot)?;
                Some(Rect::new(x - 9.0, y - 9.0, 18.0, 18.0))
            }
        }
    }

    /// An etcd member's chip.
    pub fn member(&self, name: &str) -> Option<Rect> {
        let i = self.members.iter().position(|m| m == name)?;
        Some(member_chip(i, self.members.len()))
    }

    /// Where a pod of a node is drawn (its dot, or a listed row's circle); the top of the
    /// node's pods when it is not drawn.
    fn pod_point(&self, node: &str, slot: u32) -> Option<Point> {
        let n = self.node(node)?;
        let slot = usize::try_from(slot).unwrap_or(usize::MAX);
        Some(if slot < n.pod_room { n.pod_at(slot) } else { (n.pods.x + 6.0, n.pods.y + 6.0) })
    }

    /// A webhook call's way from the admission stage (`stage`, 1-based) down to the bus and
    /// along the pod's kubelet's way to its node, then to the pod.
    fn pod_route(&self, node: &str, slot: u32, stage: u8) -> Vec<Point> {
        let (Some(edge), Some(pod)) =
            (self.edge(&format!("kubelet/{node}"), "kube-apiserver"), self.pod_point(node, slot))
        else {
            return Vec::new();
        };
        let start = match usize::from(stage).checked_sub(1).and_then(|i| self.stages.get(i)) {
            Some((_, r)) => r.centre(),
            None => (NODE_ENTRY_X, API_SERVER.bottom()),
        };
        let mut points = vec![start, (start.0, BUS_Y)];
        // The kubelet's way from the node to the API server ends along the bus and up into
        // it: the call takes it from the bus on, the other way.
        let mut way = edge.points.clone();
        way.truncate(way.len().saturating_sub(2));
        way.reverse();
        points.extend(way);
        points.push(pod);
        points
    }

    /// A Raft message's way between two members' chips: up from the sender, across above the
    /// chips, down into the receiver.
    fn raft_route(&self, from: &str, to: &str) -> Vec<Point> {
        let (Some(a), Some(b)) = (self.member(from), self.member(to)) else { return Vec::new() };
        let lift = if a.x < b.x { RAFT_ARC.0 } else { RAFT_ARC.1 };
        let (ax, bx) = (a.cx() + if a.x < b.x { 8.0 } else { -8.0 }, b.cx() + if a.x < b.x { -8.0 } else { 8.0 });
        vec![(ax, a.y + 4.0), (ax, a.y - lift), (bx, b.y - lift), (bx, b.y + 4.0)]
    }

    /// The name of the edge end a place is on (`kube-controller-manager` for a controller).
    fn edge_end(place: &Place) -> String {
        match place {
            Place::Controller(_) => "kube-controller-manager".into(),
            Place::Runtime(node) => format!("containerd/{node}"),
            p => p.name(),
        }
    }

    /// The points a message passes: along its sender's edge to the API server, through the
    /// stages it reaches, on to etcd when stored; or, for a watch notification, from the API
    /// server back along the receiver's edge.
    pub fn route(&self, m: &Message) -> Vec<Point> {
        let api = "kube-apiserver";
        let towards = |place: &Place| -> Vec<Point> {
            match place {
                // Many nodes at once: the bus.
                Place::Nodes => vec![
                    (WIDTH / 2.0, NODES_Y - 4.0),
                    (WIDTH / 2.0, BUS_Y),
                    (NODE_ENTRY_X, BUS_Y),
                    (NODE_ENTRY_X, API_SERVER.bottom()),
                ],
                p => self.edge(&Self::edge_end(p), api).map(|e| e.points.clone()).unwrap_or_default(),
            }
        };
        match (&m.from, &m.to) {
            // A decision: it happens at the component.
            (a, b) if a == b => self.place_rect(a).map(|r| vec![r.centre(), r.centre()]).unwrap_or_default(),
            (Place::EtcdMember(a), Place::EtcdMember(b)) => self.raft_route(a, b),
            (Place::ApiServer, Place::Pod { node, slot, .. }) => self.pod_route(node, *slot, m.from_stage),
            (Place::Pod { node, slot, .. }, Place::ApiServer) => {
                let mut points = self.pod_route(node, *slot, m.from_stage);
                points.reverse();
                points
            }
            (Place::Kubelet(a), Place::Runtime(b)) if a == b => self
                .edge(&format!("kubelet/{a}"), &format!("containerd/{a}"))
                .map(|e| e.points.clone())
                .unwrap_or_default(),
            (Place::ApiServer, to) => {
                let mut points = towards(to);
                points.reverse();
                points
            }
            (from, to) => {
                // A later leg of a request starts at the stage where a webhook let it go on.
                let mut points = if m.from_stage == 0 { towards(from) } else { Vec::new() };
                let reached = usize::from(m.stages).min(self.stages.len());
                let first = usize::from(m.from_stage).saturating_sub(1);
                for (_, r) in self.stages.iter().take(reached).skip(first) {
                    points.push(r.centre());
                }
                if *to == Place::Etcd && !m.refused {
                    if let Some(e) = self.edge(api, "etcd") {
                        points.extend(e.points.iter().copied());
                    }
                    points.push(ETCD.centre());
                }
                points
            }
        }
    }
}

/// `text` cut with `…` to about `width` units at `font` size (an average glyph is 0.6 em).
pub fn fit(text: &str, width: f64, font: f64) -> String {
    let room = ((width / (font * 0.6)).floor() as usize).max(2);
    match text.char_indices().nth(room - 1) {
        Some((at, _)) if text.chars().count() > room => format!("{}…", &text[..at]),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::NODE_ENTRY_X;
    use crate::shell::{Command, Session};
    use crate::views::flow::{Flow, Pace, Place};
    use crate::views::map::fixtures::{message, spec};
    use crate::views::map::*;

    #[test]
    fn hundreds_of_tiles_share_a_bounded_number_of_pod_dots_and_a_few_nodes_draw_all_of_theirs() {
        let big = layout(&spec(300, 30));
        let dots: usize = big.nodes.iter().map(|n| n.pod_room).sum();
        assert!(dots <= super::TILE_DOTS + 300, "{dots} dots for 300 nodes");
        assert!(big.nodes.iter().all(|n| n.pod_room >= 4), "each tile still shows a few");
        let mid = layout(&spec(50, 20));
        assert!(mid.nodes.iter().all(|n| n.pod_room >= 20), "50 nodes of 20 pods: every pod a dot");
    }

    #[test]
    fn every_component_has_an_edge_to_the_api_server_and_only_the_api_server_reaches_etcd() {
        let map = layout(&spec(4, 3));
        let mut components =
            vec!["kubectl".to_string(), "kube-scheduler".into(), "kube-controller-manager".into(), "coredns".into()];
        for n in &map.nodes {
            components.push(format!("kubelet/{}", n.name));
            components.push(format!("kube-proxy/{}", n.name));
        }
        for c in &components {
            assert!(map.edge(c, "kube-apiserver").is_some(), "{c} has no edge to the API server");
            assert!(map.edge(c, "etcd").is_none(), "{c} must not reach etcd");
        }
        let to_etcd: Vec<&Edge> = map.edges.iter().filter(|e| e.from == "etcd" || e.to == "etcd").collect();
        assert_eq!(to_etcd.len(), 1);
        assert_eq!((to_etcd[0].from.as_str(), to_etcd[0].to.as_str()), ("kube-apiserver", "etcd"));
    }

    #[test]
    fn no_two_boxes_overlap_and_every_node_sits_below_the_control_plane() {
        for nodes in [1, 4, 8, 9, 50] {
            let map = layout(&spec(nodes, 20));
            let mut boxes = vec![KUBECTL, COREDNS, SCHEDULER, CONTROLLER_MANAGER, API_SERVER, ETCD];
            boxes.extend(map.nodes.iter().map(|n| n.rect));
            for (i, a) in boxes.iter().enumerate() {
                for b in &boxes[i + 1..] {
                    assert!(!a.overlaps(b), "{nodes} nodes: {a:?} overlaps {b:?}");
                }
                assert!(a.right() <= WIDTH && a.bottom() <= map.height, "{a:?} leaves the map");
            }
            assert!(map.nodes.iter().all(|n| n.rect.y > CONTROL_PLANE.bottom() && n.rect.y > BUS_Y));
            assert_eq!(map.nodes.iter().all(|n| n.tile), nodes > MAX_BOXES, "{nodes} nodes");
        }
    }

    #[test]
    fn a_stored_request_travels_kubectl_then_every_stage_then_etcd() {
        let map = layout(&spec(3, 0));
        let route = map.route(&message(Place::Kubectl, Place::Etcd, 6, false, 0.0));
        assert_eq!(route.first(), Some(&(KUBECTL.right(), KUBECTL.cy())));
        assert_eq!(route.last(), Some(&ETCD.centre()));
        for (_, stage) in &map.stages {
            assert!(route.contains(&stage.centre()));
        }
    }

    #[test]
    fn a_watch_notification_travels_from_the_api_server_down_to_a_kubelet() {
        let map = layout(&spec(3, 0));
        let to = Place::Kubelet("worker-1".into());
        let route = map.route(&message(Place::ApiServer, to.clone(), 0, false, 0.0));
        assert_eq!(route.first(), Some(&(NODE_ENTRY_X, API_SERVER.bottom())));
        let kubelet = map.place_rect(&to).unwrap();
        assert_eq!(route.last(), Some(&(kubelet.cx(), kubelet.y)));
    }

    #[test]
    fn coredns_and_each_add_on_hear_their_watches_along_their_own_edges_which_cross_no_other_box() {
        let mut spec = spec(3, 0);
        // The four a cluster boots with, an operator a student deploys, and one more: all six drawn.
        spec.addons = [
            "local-path-provisioner",
            "metrics-server",
            "cloud-controller-manager",
            "ingress-nginx-controller",
            "website-operator",
            "another-add-on",
        ]
        .map(String::from)
        .to_vec();
        let map = layout(&spec);
        assert_eq!(map.addons.len(), 6);
        let mut places = vec![(Place::CoreDns, COREDNS)];
        places.extend(map.addons.iter().map(|(name, r)| (Place::AddOn(name.clone()), *r)));
        let boxes: Vec<Rect> =
            [KUBECTL, SCHEDULER, CONTROLLER_MANAGER, ETCD].into_iter().chain(places.iter().map(|p| p.1)).collect();
        let mut legs = Vec::new();
        for (place, own) in &places {
            let route = map.route(&message(Place::ApiServer, place.clone(), 0, false, 0.0));
            assert_eq!(route.first().map(|p| p.0), Some(API_SERVER.x), "{place:?} enters the API server's side");
            assert_eq!(route.last(), Some(&(own.right(), own.cy())));
            // Each leg is straight (horizontal or vertical): it enters only its own box.
            for leg in route.windows(2) {
                let ((x0, y0), (x1, y1)) = (leg[0], leg[1]);
                let span = Rect::new(x0.min(x1), y0.min(y1), (x1 - x0).abs().max(0.5), (y1 - y0).abs().max(0.5));
                for other in boxes.iter().filter(|b| *b != own) {
                    assert!(!span.overlaps(other), "{place:?}: {leg:?} crosses {other:?}");
                }
                legs.push((place.clone(), span));
            }
        }
        // No two of these edges cross (they may only meet where both reach the API server).
        for (a, sa) in &legs {
            for (b, sb) in legs.iter().filter(|(b, _)| b != a) {
                let inside = Rect::new(sa.x, sa.y, sa.w, sa.h);
                let touches_api = sa.right() >= API_SERVER.x && sb.right() >= API_SERVER.x;
                assert!(!inside.overlaps(sb) || touches_api && sa.y == sb.y, "{a:?} {sa:?} crosses {b:?} {sb:?}");
            }
        }
    }

    #[test]
    fn the_default_cluster_draws_four_node_boxes_with_their_components() {
        let s = Session::new(1);
        let nodes: Vec<(String, usize)> =
            s.cluster.objects(crate::api::Kind::Node, "").iter().map(|n| (n.name().to_string(), 2)).collect();
        let map = layout(&MapSpec { nodes, ..Default::default() });
        assert_eq!(map.nodes.len(), 4);
        for n in &map.nodes {
            assert!(!n.tile && n.listed);
            assert!(n.rect.contains(n.kubelet.centre()) && n.rect.contains(n.runtime.centre()));
            assert!(map.edge(&format!("kubelet/{}", n.name), &format!("containerd/{}", n.name)).is_some());
        }
    }

    #[test]
    fn every_message_of_an_apply_has_a_route_on_the_map() {
        let mut s = Session::new(1);
        let mut flow = Flow::new(s.cluster.record.last_seq());
        s.execute(&Command::new("kubectl create deployment web --image=nginx:1.25 --replicas=2"));
        s.cluster.advance(crate::sim::Duration::seconds(5));
        let nodes: Vec<(String, usize)> =
            s.cluster.objects(crate::api::Kind::Node, "").iter().map(|n| (n.name().to_string(), 2)).collect();
        let lanes = vec!["deployment-controller".into(), "replicaset-controller".into()];
        let map = layout(&MapSpec { nodes, lanes, ..Default::default() });
        let mut now = 0.0;
        let mut seen = 0;
        while !flow.idle() || seen == 0 {
            now += 16.0;
            for m in flow.frame(&s.cluster, now, Pace::new(100.0, false)) {
                assert!(map.route(m).len() >= 2, "no route for {m:?}");
                seen += 1;
            }
            assert!(now < 600_000.0);
        }
    }

    #[test]
    fn raft_messages_travel_between_the_member_chips_inside_the_etcd_box_one_way_above_the_other() {
        let mut spec = spec(3, 0);
        spec.members = ["control-plane", "control-plane2", "control-plane3"].map(String::from).to_vec();
        let map = layout(&spec);
        let member = |n: &str| Place::EtcdMember(n.to_string());
        let there = map.route(&message(member("control-plane2"), member("control-plane3"), 0, false, 0.0));
        let back = map.route(&message(member("control-plane3"), member("control-plane2"), 0, false, 0.0));
        for route in [&there, &back] {
            assert!(route.iter().all(|p| ETCD.contains(*p)), "{route:?}");
        }
        let (chip2, chip3) = (map.member("control-plane2").unwrap(), map.member("control-plane3").unwrap());
        assert!(chip2.contains(there[0]) && chip3.contains(*there.last().unwrap()));
        assert!(there[1].1 != back[1].1, "a message and its answer keep apart");
        assert!(!chip2.overlaps(&chip3));
        assert_eq!(map.place_rect(&member("control-plane3")), Some(chip3));
    }

    #[test]
    fn a_webhook_call_leaves_its_admission_stage_for_the_pod_in_its_node_and_the_answer_comes_back() {
        let map = layout(&spec(3, 4));
        let pod = Place::Pod { node: "worker-1".into(), pod: "policy-1".into(), slot: 2 };
        let mut call = message(Place::ApiServer, pod.clone(), 0, false, 0.0);
        call.from_stage = 5;
        let route = map.route(&call);
        assert_eq!(route.first(), Some(&map.stages[4].1.centre()));
        let node = map.node("worker-1").unwrap();
        assert_eq!(route.last(), Some(&node.pod_at(2)));
        assert!(route.iter().any(|p| p.1 == BUS_Y), "by the bus, as the node's own connections: {route:?}");
        let answer = message(pod.clone(), Place::ApiServer, 0, false, 0.0);
        let mut answer = answer;
        answer.from_stage = 5;
        let mut back = map.route(&answer);
        back.reverse();
        assert_eq!(back, route);
        // The request's later leg starts where the webhook let it go on.
        let mut leg = message(Place::Kubectl, Place::Etcd, 6, false, 0.0);
        leg.from_stage = 5;
        let route = map.route(&leg);
        assert_eq!(route.first(), Some(&map.stages[4].1.centre()));
        assert_eq!(route.last(), Some(&ETCD.centre()));
    }

    #[test]
    fn long_text_is_cut_to_fit_its_box() {
        assert_eq!(fit("replicaset-controller", 60.0, 10.0), "replicase…");
        assert_eq!(fit("etcd", 60.0, 10.0), "etcd");
    }

    #[test]
    fn no_edge_from_a_node_crosses_another_nodes_box() {
        for (nodes, cni) in [(6, false), (8, false), (30, false), (3, true), (6, true), (8, true), (30, true)] {
            let mut spec = spec(nodes, 20);
            spec.cni = cni.then(|| "calico-node".to_string());
            let map = layout(&spec);
            assert_eq!(map.edges.iter().filter(|e| e.from.starts_with("cni/")).count(), if cni { nodes } else { 0 });
            for n in map.nodes.iter().filter(|n| !n.tile) {
                if let Some(bar) = n.cni {
                    // The bar is inside its node, under its pods.
                    assert!(n.rect.contains((bar.x, bar.y)) && n.rect.contains((bar.right(), bar.bottom())));
                    assert!(bar.y >= n.pods.bottom(), "{}: the bar overlaps the pods", n.name);
                }
            }
            for e in map.edges.iter().filter(|e| e.to == "kube-apiserver" && e.from.contains('/')) {
                let own = e.from.split_once('/').map(|(_, n)| n).unwrap();
                for other in map.nodes.iter().filter(|n| n.name != own) {
                    for w in e.points.windows(2) {
                        // Sample each segment finely: no point may fall inside another node.
                        for i in 0..=20 {
                            let t = f64::from(i) / 20.0;
                            let p = (w[0].0 + (w[1].0 - w[0].0) * t, w[0].1 + (w[1].1 - w[0].1) * t);
                            assert!(
                                !other.rect.contains(p),
                                "{nodes} nodes (cni: {cni}): {} crosses {} at {p:?}",
                                e.from,
                                other.name
                            );
                        }
                    }
                }
            }
        }
    }
}
