//! etcd, drawn: the revision counter, the `/registry` key tree folded by resource and
//! namespace, and the latest writes with who made them.

use crate::views::etcd::{EtcdView, ResourceGroup, Write};
use yew::prelude::*;

#[derive(Properties, PartialEq, Clone)]
pub struct EtcdPanelProps {
    pub view: EtcdView,
}

#[function_component(EtcdPanel)]
pub fn etcd_panel(props: &EtcdPanelProps) -> Html {
    let view = &props.view;
    html! {
        <section class="etcd-panel" aria-label="etcd">
            <div class="etcd-counter">
                <span class="etcd-label">{"revision"}</span>
                <span id="etcd-rev" class="etcd-rev" aria-live="polite">{view.revision}</span>
            </div>
            <p class="etcd-meta">
                {format!("{} keys", view.keys)}
                if view.compacted > 1 {
                    {format!(" · history compacted up to revision {}", view.compacted)}
                }
            </p>
            <h4 class="etcd-heading">{"/registry"}</h4>
            <ul class="etcd-tree">
                { for view.tree.iter().map(group) }
            </ul>
            if !view.writes.is_empty() {
                <h4 class="etcd-heading">{"latest writes"}</h4>
                <ol class="etcd-writes" aria-label="Latest writes, newest first">
                    { for view.writes.iter().map(write) }
                </ol>
            }
        </section>
    }
}

fn group(g: &ResourceGroup) -> Html {
    let summary = html! {
        <summary>
            <code>{g.prefix()}</code>
            <span class="etcd-count">{format!("{} {}", g.count, if g.count == 1 { "key" } else { "keys" })}</span>
        </summary>
    };
    html! {
        <li>
            <details data-resource={g.resource.clone()}>
                {summary}
                if g.namespaces.is_empty() {
                    <p class="etcd-scope">{format!("cluster-scoped: {}<name>", g.prefix())}</p>
                } else {
                    <ul class="etcd-namespaces">
                        { for g.namespaces.iter().map(|(ns, n)| html! {
                            <li data-namespace={ns.clone()}>
                                <code>{format!("{ns}/")}</code>
                                <span class="etcd-count">{n}</span>
                            </li>
                        }) }
                    </ul>
                }
            </details>
        </li>
    }
}

fn write(w: &Write) -> Html {
    html! {
        <li data-revision={w.revision.to_string()}>
            <span class="etcd-write-rev">{w.revision}</span>
            <span class={classes!("etcd-op", w.op.to_lowercase())}>{w.op.to_string()}</span>
            <code class="etcd-key">{&w.key}</code>
            <span class="etcd-by">{format!("by {}", w.by)}</span>
        </li>
    }
}
