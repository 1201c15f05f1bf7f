//! The page's shell: the architecture map's outline for the default cluster, as static SVG that
//! `index.html` carries inline, so something true is on screen before the simulator has loaded.
//!
//! Drawn from the same geometry as the live map ([`crate::views::map::layout`]) with the same
//! class names as `src/ui/map.rs`, so `web/style.css` styles both alike and the app's first
//! frame lands exactly on it: boxes, titles, stage labels and edges, but no pods, no tokens and
//! no numbers (a "starting…" note where etcd's revision goes). `tests/shell.rs` fails when the
//! copy in `index.html` differs from [`shell_map_svg`]; `UPDATE_SHELL=1 cargo test --test shell`
//! rewrites it.

use crate::views::map::{self as geo, Layout, MapSpec, Rect, fit};
use std::fmt::Write;

/// The nodes a fresh cluster has (`Session::new`): what the shell lays out.
pub const DEFAULT_NODES: [&str; 4] = ["control-plane", "worker-1", "worker-2", "worker-3"];

/// The add-ons besides CoreDNS a fresh cluster runs, each with its box.
pub const DEFAULT_ADDONS: [&str; 4] =
    ["local-path-provisioner", "metrics-server", "cloud-controller-manager", "ingress-nginx-controller"];

/// The map's layout for the default cluster with no pods and no controller lanes.
pub fn shell_layout() -> Layout {
    geo::layout(&MapSpec {
        nodes: DEFAULT_NODES.iter().map(|n| (n.to_string(), 0)).collect(),
        lanes: Vec::new(),
        addons: DEFAULT_ADDONS.iter().map(|n| n.to_string()).collect(),
        cni: Some(crate::cni::NAME.to_string()),
        members: Vec::new(),
    })
}

/// A number for an SVG attribute, written as `src/ui/map.rs` writes it.
fn n(v: f64) -> String {
    format!("{v:.1}")
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn rect(out: &mut String, class: &str, r: Rect, rx: f64) {
    let class = if class.is_empty() { String::new() } else { format!(" class=\"{class}\"") };
    let _ = writeln!(
        out,
        "<rect{class} x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"{}\"/>",
        n(r.x),
        n(r.y),
        n(r.w),
        n(r.h),
        n(rx)
    );
}

fn text(out: &mut String, class: &str, x: f64, y: f64, content: &str) {
    let _ = writeln!(out, "<text class=\"{class}\" x=\"{}\" y=\"{}\">{}</text>", n(x), n(y), esc(content));
}

/// The map's outline as the SVG `index.html` shows until the app replaces it: one element a
/// line. Its ids are its own (`shell-…`), so none clashes with the app's.
pub fn shell_map_svg() -> String {
    let l = shell_layout();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg class=\"map\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"The cluster's architecture (starting): kubectl, the control plane and the nodes\" preserveAspectRatio=\"xMidYMin meet\">",
        geo::WIDTH,
        n(l.height)
    );
    s.push_str("<defs>\n<marker id=\"shell-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">\n<path d=\"M0 0 L10 5 L0 10 z\" class=\"arrowhead\"/>\n</marker>\n</defs>\n");
    s.push_str("<g class=\"board\">\n");
    let cp = geo::CONTROL_PLANE;
    rect(&mut s, "frame", cp, 14.0);
    text(&mut s, "frame-label", cp.x + 14.0, cp.y + 20.0, "control plane (the control-plane node's static pods)");
    s.push_str("<g class=\"edges\">\n");
    for e in &l.edges {
        let local = e.to.starts_with("containerd/") || e.to.starts_with("pods/");
        let _ = writeln!(
            s,
            "<path class=\"edge{}\" d=\"{}\" marker-end=\"url(#shell-arrow)\"/>",
            if local { " local" } else { "" },
            e.path()
        );
    }
    s.push_str("</g>\n");

    let kubectl = geo::KUBECTL;
    s.push_str("<g class=\"component kubectl\">\n");
    rect(&mut s, "box you", kubectl, 10.0);
    let _ =
        writeln!(s, "<circle class=\"person\" cx=\"{}\" cy=\"{}\" r=\"8\"/>", n(kubectl.x + 24.0), n(kubectl.y + 30.0));
    let _ = writeln!(s, "<path class=\"person\" d=\"M{:.0} {:.0} q12 -16 24 0\"/>", kubectl.x + 12.0, kubectl.y + 56.0);
    text(&mut s, "title", kubectl.x + 44.0, kubectl.y + 32.0, "you");
    text(&mut s, "sub", kubectl.x + 44.0, kubectl.y + 52.0, "kubectl");
    text(&mut s, "sub muted", kubectl.x + 8.0, kubectl.y + 80.0, "terminal, editor");
    s.push_str("</g>\n");

    let coredns = geo::COREDNS;
    s.push_str("<g class=\"component coredns\">\n");
    rect(&mut s, "box coredns", coredns, 10.0);
    text(&mut s, "title", coredns.x + 10.0, coredns.y + 24.0, "CoreDNS");
    text(&mut s, "sub", coredns.x + 10.0, coredns.y + 44.0, "cluster DNS");
    text(&mut s, "sub muted", coredns.x + 10.0, coredns.y + 80.0, "behind kube-dns");
    s.push_str("</g>\n");
    for (name, r) in &l.addons {
        s.push_str("<g class=\"component addon\">\n");
        rect(&mut s, "box addon", *r, 10.0);
        text(&mut s, "title", r.x + 10.0, r.y + 22.0, &fit(&geo::addon_title(name), r.w - 20.0, 13.0));
        text(&mut s, "sub muted", r.x + 10.0, r.y + 40.0, &fit(geo::addon_role(name), r.w - 20.0, 11.0));
        s.push_str("</g>\n");
    }

    let api = geo::API_SERVER;
    s.push_str("<g class=\"component api\">\n");
    rect(&mut s, "box api", api, 10.0);
    text(&mut s, "title", api.x + 12.0, api.y + 26.0, "kube-apiserver");
    text(
        &mut s,
        "sub muted",
        api.x + 180.0,
        api.y + 26.0,
        "every request passes these stages; every watch starts here",
    );
    for (stage, r) in &l.stages {
        s.push_str("<g class=\"stage\">\n");
        rect(&mut s, "", *r, 6.0);
        text(&mut s, "stage-label", r.cx(), r.cy() + 4.0, geo::stage_short(*stage));
        s.push_str("</g>\n");
    }
    s.push_str("</g>\n");

    let etcd = geo::ETCD;
    s.push_str("<g class=\"component etcd\">\n");
    let _ = writeln!(s, "<path class=\"box cylinder\" d=\"{}\"/>", etcd.cylinder_path());
    let _ = writeln!(
        s,
        "<ellipse class=\"cylinder-top\" cx=\"{}\" cy=\"{}\" rx=\"{}\" ry=\"12\"/>",
        n(etcd.cx()),
        n(etcd.y + 12.0),
        n(etcd.w / 2.0)
    );
    text(&mut s, "title", etcd.x + 14.0, etcd.y + 50.0, "etcd");
    text(&mut s, "sub muted", etcd.x + 14.0, etcd.y + 86.0, "starting…");
    text(&mut s, "sub muted", etcd.x + 14.0, etcd.y + 132.0, "only the API server talks to it");
    s.push_str("</g>\n");

    let sched = geo::SCHEDULER;
    s.push_str("<g class=\"component scheduler\">\n");
    rect(&mut s, "box sched", sched, 10.0);
    text(&mut s, "title", sched.x + 12.0, sched.y + 26.0, "kube-scheduler");
    text(&mut s, "sub muted", sched.x + 12.0, sched.y + 134.0, "watches pods without a node");
    s.push_str("</g>\n");

    let cm = geo::CONTROLLER_MANAGER;
    s.push_str("<g class=\"component controllers\">\n");
    rect(&mut s, "box cm", cm, 10.0);
    text(&mut s, "title", cm.x + 12.0, cm.y + 22.0, "kube-controller-manager");
    s.push_str("</g>\n");

    s.push_str("<g class=\"nodes\">\n");
    for nl in &l.nodes {
        let r = nl.rect;
        s.push_str("<g class=\"node\">\n");
        rect(&mut s, "node-box", r, 10.0);
        for (class, part, label) in [
            ("proxy", nl.kube_proxy, "kube-proxy"),
            ("kubelet", nl.kubelet, "kubelet"),
            ("runtime", nl.runtime, "containerd"),
        ] {
            let _ = writeln!(s, "<g class=\"part {class}\">");
            rect(&mut s, "", part, 5.0);
            text(&mut s, "", part.cx(), part.cy() + 4.5, &fit(label, part.w - 6.0, 12.0));
            s.push_str("</g>\n");
        }
        if let Some(bar) = nl.cni {
            s.push_str("<g class=\"part cni\">\n");
            rect(&mut s, "", bar, 5.0);
            let label = geo::cni_label(l.cni.as_deref().unwrap_or_default());
            text(&mut s, "", bar.cx(), bar.cy() + 4.5, &fit(&label, bar.w - 6.0, 12.0));
            s.push_str("</g>\n");
        }
        text(&mut s, "node-title", nl.title.0, nl.title.1, &nl.name);
        s.push_str("</g>\n");
    }
    s.push_str("</g>\n</g>\n</svg>");
    s.replace("<text class=\"\" ", "<text ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_map_draws_every_box_stage_and_edge_and_no_pods() {
        let svg = shell_map_svg();
        let l = shell_layout();
        assert_eq!(svg.matches("<path class=\"edge").count(), l.edges.len());
        assert_eq!(svg.matches("<g class=\"stage\">").count(), l.stages.len());
        assert_eq!(svg.matches("<g class=\"node\">").count(), DEFAULT_NODES.len());
        for name in ["kube-apiserver", "etcd", "kube-scheduler", "kube-controller-manager", "CoreDNS", "starting…"] {
            assert!(svg.contains(&format!(">{name}</text>")), "{name} missing");
        }
        assert!(!svg.contains("class=\"pod") && !svg.contains("token") && !svg.contains(" id=\"map"));
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<g").count(), svg.matches("</g>").count());
    }
}
