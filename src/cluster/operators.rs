//! Operators' processes: a component comes into being the first time a pod runs a container
//! of an operator's image (`kubeloop/website-operator`), acting as that pod's service account;
//! from then on it works while one of its pods runs (see
//! [`crate::controllers::website_operator`]). Looked for only while the API serves custom
//! resources: an operator has nothing to do before.

use super::{Cluster, Role};
use crate::controllers::ControllerLoop;
use crate::controllers::website_operator::{self, WebsiteOperator};

impl Cluster {
    #[inline(never)] // seldom run: kept out of its hot caller's body (docs/architecture.md, "What the page compiles")
    pub(super) fn operators_due(&mut self) {
        if self.api.served_custom().is_empty() || self.slots.iter().any(|s| s.name == website_operator::MANAGER) {
            return;
        }
        let mut found: Option<(String, String)> = None;
        for kubelet in self.kubelets() {
            for running in crate::kubelet::usage::running(kubelet) {
                let image = crate::kubelet::images::parse_reference(&running.container.image);
                if image.repository.trim_start_matches("docker.io/") == website_operator::IMAGE {
                    let pod = &running.pod;
                    let account = pod.spec.service_account_name.clone().unwrap_or_else(|| "default".into());
                    found = Some((pod.metadata.namespace.clone(), account));
                    break;
                }
            }
            if found.is_some() {
                break;
            }
        }
        let Some((namespace, account)) = found else { return };
        let user = format!("system:serviceaccount:{namespace}:{account}");
        let operator = Box::new(ControllerLoop::new(WebsiteOperator::new(&namespace)));
        let role = Role::AddOn { name: website_operator::MANAGER.into() };
        let idx = self.add_component(website_operator::MANAGER, &user, role, operator, website_operator::MANAGER, "");
        self.slots[idx as usize].judged = true;
    }
}
