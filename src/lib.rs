//! kubeloop: Kubernetes' control plane and worker nodes, simulated in memory.

pub mod api;
pub mod apiserver;
pub mod client;
pub mod cluster;
pub mod controllers;
pub mod dns;
pub mod editor;
pub mod etcd;
pub mod etcdctl;
pub mod kubectl;
pub mod kubelet;
pub mod lessons;
pub mod page;
pub mod proxy;
pub mod record;
pub mod scheduler;
pub mod shell;
pub mod sim;
pub mod userland;
pub mod util;
pub mod views;
pub mod yaml;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(target_arch = "wasm32")]
pub mod ui;

// Old paths of moved modules, kept while branches written against them land.
#[allow(unused_imports)]
pub use client::component;
#[allow(unused_imports)]
pub use client::event_recorder;
#[allow(unused_imports)]
pub use client::object_cache;
#[allow(unused_imports)]
pub use cluster::bootstrap;
#[allow(unused_imports)]
pub use cluster::rbac_policy;
#[allow(unused_imports)]
pub use etcd::keys as etcd_keys;
#[allow(unused_imports)]
pub use etcd::lookup_key;
#[allow(unused_imports)]
pub use etcd::resources as etcd_resources;
#[allow(unused_imports)]
pub use etcdctl::snapshot as etcd_snapshot;
#[allow(unused_imports)]
pub use etcdctl::watch as etcdctl_watch;
#[allow(unused_imports)]
pub use page::journal;
#[allow(unused_imports)]
pub use proxy as kube_proxy;
#[allow(unused_imports)]
pub use shell::chaos;
#[allow(unused_imports)]
pub use shell::completion;
#[allow(unused_imports)]
pub use shell::export;
#[allow(unused_imports)]
pub use sim::limits;
#[cfg(not(target_arch = "wasm32"))]
#[allow(unused_imports)]
pub use util::background;
#[allow(unused_imports)]
pub use util::base64;
#[allow(unused_imports)]
pub use util::cron;
#[allow(unused_imports)]
pub use util::json_macro;
#[allow(unused_imports)]
pub use util::pipes;
#[allow(unused_imports)]
pub use util::sort;
#[allow(unused_imports)]
pub use util::sorted_keys;
#[allow(unused_imports)]
pub use views::examples;
#[allow(unused_imports)]
pub use views::flow;
#[allow(unused_imports)]
pub use views::overview;
