//! kubeloop: Kubernetes' control plane and worker nodes, simulated in memory.

pub mod api;
pub mod apiserver;
pub mod bootstrap;
pub mod chaos;
pub mod cluster;
pub mod component;
pub mod controllers;
pub mod dns;
pub mod etcd;
pub mod etcdctl;
pub mod kube_proxy;
pub mod kubectl;
pub mod kubelet;
pub mod object_cache;
pub mod pipes;
pub mod record;
pub mod scheduler;
pub mod shell;
pub mod sim;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
#[cfg(target_arch = "wasm32")]
pub mod ui;
