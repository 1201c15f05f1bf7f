//! kubeloop: Kubernetes' control plane and worker nodes, simulated in memory.

pub mod api;
pub mod apiserver;
pub mod bootstrap;
pub mod chaos;
pub mod cluster;
pub mod completion;
pub mod component;
pub mod controllers;
pub mod dns;
pub mod editor;
pub mod etcd;
pub mod etcd_snapshot;
pub mod etcdctl;
pub mod etcdctl_watch;
pub mod export;
pub mod flow;
pub mod journal;
pub mod json_macro;
pub mod kube_proxy;
pub mod kubectl;
pub mod kubelet;
pub mod lessons;
pub mod object_cache;
pub mod overview;
pub mod pipes;
pub mod record;
pub mod scheduler;
pub mod shell;
pub mod sim;
pub mod sort;
pub mod yaml;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(target_arch = "wasm32")]
pub mod ui;
