//! kubeloop: Kubernetes' control plane and worker nodes, simulated in memory.

pub mod api;
pub mod apiserver;
pub mod client;
pub mod cluster;
pub mod cni;
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
