//! The service account controller and the root CA publisher (two loops of
//! kube-controller-manager, run here as one): every Active namespace gets a `default`
//! ServiceAccount, created when the namespace appears and again whenever it is deleted, and a
//! `kube-root-ca.crt` ConfigMap holding the cluster's CA certificate, which the projected
//! `kube-api-access-*` volume of every pod mounts as `ca.crt`.

use super::{Action, Reconciler, Synced};
use crate::api::{ConfigMap, Kind, Object, ObjectMeta, ServiceAccount};
use crate::apiserver::Request;
use crate::client::component::{Ctx, Delta, Informer};

/// The account every namespace has.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";
/// The ConfigMap the root CA publisher keeps in every namespace.
pub const ROOT_CA_CONFIGMAP: &str = "kube-root-ca.crt";
const ROOT_CA_DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// The cluster's CA certificate (`/etc/kubernetes/pki/ca.crt`, `CN=kubernetes`).
pub const CLUSTER_CA_CERT: &str = "-----BEGIN CERTIFICATE-----
MIIDGzCCAgOgAwIBAgIUL1mWfcWcRGIchEIbKFVuyI/LyEQwDQYJKoZIhvcNAQEL
BQAwFTETMBEGA1UEAwwKa3ViZXJuZXRlczAeFw0yNjExMjExMDA3MDhaFw0zNjEx
MTgxMDA3MDhaMBUxEzARBgNVBAMMCmt1YmVybmV0ZXMwggEiMA0GCSqGSIb3DQEB
AQUAA4IBDwAwggEKAoIBAQDOhqdna62el5Ao4hcgh+ap9X6c2fzI8MFIeZgV+I5b
1lgLeCWtLbk+ZeZwoSHJDkq/K4l6XfX0PR75+WWGzMzH355BgXILxiRJLhTAG577
iKMfZEQ6FsfdCdiL6hiwmJjIEHuRZ/kNu/PsBjDLiiCyuacOXEw1SUgJHbv38QKm
S9Y4gpJz74jCSl2NSIvK1rccUuZ8UvSCfoxiRmj7ADeQXc3AWsQbEOpUoIIw9cCX
QzwTzmhMHEMy+iGV7PoYNNgsOLj1hNf1TkWR4HWj5VW41oGZ/eF41Ie//KhU5Lzi
/LCO6ElRDmP/TMetLPeBSsY1h3euvrVBPqI0p3EDjJQLAgMBAAGjYzBhMB0GA1Ud
DgQWBBTAHElINV7QwdTdfQKWA/x5ZD6qcjAfBgNVHSMEGDAWgBTAHElINV7QwdTd
fQKWA/x5ZD6qcjAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwICpDANBgkq
hkiG9w0BAQsFAAOCAQEAfWFG1WWvdcDRid5sxVK/db0d9JRfx3mW+UqrBbrBpkw5
jSCW7INWaV5C3GoS8ABrlu6X3wHOw7qEBLueOkyO4NvwN2NqP2kfXQXP6zVYEhnK
FnBWXEgTEUIg+UYTe/nMm9cMOiVwy4O/F8NwDHNwZ3j1jvWOx0/KcnKngyDMEyX+
wi3t2KhaoWo7XlD+NyBb2MUzQQ/nIlN3Du3r8cAiLXEVHE/DJzmtMazCLLOFxLsG
ETosmB2E+YO/UoT2T98I+t/OLyM7K06cnt0Y+WUpqL41nsWGFry8+7BOqeEeTgBm
c0575HU3gPBz8LHoYroOIISYQSrIL/rFv4qf/TvuvA==
-----END CERTIFICATE-----
";

pub struct ServiceAccountController {
    namespaces: Informer,
    accounts: Informer,
    config_maps: Informer,
}

impl Default for ServiceAccountController {
    fn default() -> Self {
        ServiceAccountController {
            namespaces: Informer::new(Kind::Namespace),
            accounts: Informer::new(Kind::ServiceAccount),
            config_maps: Informer::new(Kind::ConfigMap),
        }
    }
}

/// The `kube-root-ca.crt` ConfigMap as the publisher writes it into `namespace`.
pub fn root_ca_config_map(namespace: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: ROOT_CA_CONFIGMAP.into(),
            namespace: namespace.into(),
            annotations: [("kubernetes.io/description".to_string(), ROOT_CA_DESCRIPTION.to_string())]
                .into_iter()
                .collect(),
            ..Default::default()
        },
        data: [("ca.crt".to_string(), CLUSTER_CA_CERT.to_string())].into(),
        ..Default::default()
    }
}

impl Reconciler for ServiceAccountController {
    fn informers(&mut self) -> Vec<&mut Informer> {
        vec![&mut self.namespaces, &mut self.accounts, &mut self.config_maps]
    }

    fn keys_for(&mut self, informer: usize, delta: &Delta) -> Vec<String> {
        let o = &delta.object;
        match informer {
            0 => vec![o.name().to_string()],
            1 if o.name() == DEFAULT_SERVICE_ACCOUNT => vec![o.namespace().to_string()],
            2 if o.name() == ROOT_CA_CONFIGMAP => vec![o.namespace().to_string()],
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, namespace: &str, ctx: &mut Ctx) -> Synced {
        // Nothing is created in a namespace that is not Active (one being deleted refuses it).
        let active = self.namespaces.get("", namespace).and_then(|o| match &**o {
            Object::Namespace(ns) => Some(ns.status.phase == "Active" && ns.metadata.deletion_timestamp.is_none()),
            _ => None,
        });
        if active != Some(true) {
            return Ok(Action::AwaitChange);
        }
        if self.accounts.get(namespace, DEFAULT_SERVICE_ACCOUNT).is_none() {
            let account = ServiceAccount {
                metadata: ObjectMeta {
                    name: DEFAULT_SERVICE_ACCOUNT.into(),
                    namespace: namespace.into(),
                    ..Default::default()
                },
                ..Default::default()
            };
            // Made meanwhile by someone else is as good as made.
            match ctx.call_object(Request::create(Object::ServiceAccount(account))) {
                Ok(stored) => self.accounts.assume(stored),
                Err(status) if status.code == 409 => {}
                Err(status) => return Err(status),
            }
        }
        let wanted = root_ca_config_map(namespace);
        let current = self.config_maps.get(namespace, ROOT_CA_CONFIGMAP).cloned();
        let request = match current.as_deref() {
            None => Some(Request::create(Object::ConfigMap(wanted))),
            Some(Object::ConfigMap(cm)) if cm.data != wanted.data => {
                let mut fixed = cm.clone();
                fixed.data = wanted.data;
                Some(Request::update(Object::ConfigMap(fixed)))
            }
            _ => None,
        };
        if let Some(request) = request {
            match ctx.call_object(request) {
                Ok(stored) => self.config_maps.assume(stored),
                Err(status) if status.code == 409 => {}
                Err(status) => return Err(status),
            }
        }
        Ok(Action::AwaitChange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Cluster, ClusterConfig};
    use crate::sim::Duration;

    fn cluster() -> Cluster {
        let mut cluster = Cluster::new(ClusterConfig::default());
        cluster.settle(Duration::seconds(30));
        cluster
    }

    fn namespace(name: &str) -> Request {
        Request::create(Object::Namespace(crate::api::Namespace {
            metadata: ObjectMeta { name: name.into(), ..Default::default() },
            ..Default::default()
        }))
    }

    #[test]
    fn every_namespace_has_a_default_service_account_and_the_root_ca() {
        let mut cluster = cluster();
        cluster.request(namespace("team-a")).unwrap();
        cluster.settle(Duration::seconds(5));
        for ns in ["default", "kube-node-lease", "kube-public", "kube-system", "team-a"] {
            assert!(cluster.inspect().get(Kind::ServiceAccount, ns, "default").is_some(), "no default SA in {ns}");
            let cm = cluster.inspect().get(Kind::ConfigMap, ns, ROOT_CA_CONFIGMAP);
            let Some(Object::ConfigMap(cm)) = cm.as_deref() else { panic!("no {ROOT_CA_CONFIGMAP} in {ns}") };
            assert!(cm.data["ca.crt"].starts_with("-----BEGIN CERTIFICATE-----\n"));
        }
    }

    #[test]
    fn a_pod_naming_a_missing_service_account_is_refused() {
        let mut cluster = cluster();
        let pod = |account: &str| {
            let yaml = format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  namespace: default\nspec:\n  serviceAccountName: {account}\n  containers:\n  - name: c\n    image: nginx\n"
            );
            let value: serde_json::Value = crate::yaml::from_str(&yaml).unwrap();
            Request::create(Object::decode(Kind::Pod, &value).unwrap())
        };
        let err = cluster.request(pod("nosuch")).unwrap_err();
        assert_eq!((err.code, err.reason), (403, "Forbidden"));
        assert_eq!(
            err.message,
            "pods \"x\" is forbidden: error looking up service account default/nosuch: serviceaccount \"nosuch\" not found"
        );
        let account = ServiceAccount {
            metadata: ObjectMeta { name: "builder".into(), namespace: "default".into(), ..Default::default() },
            ..Default::default()
        };
        cluster.request(Request::create(Object::ServiceAccount(account))).unwrap();
        assert!(cluster.request(pod("builder")).is_ok());
    }

    #[test]
    fn a_deleted_default_service_account_comes_back() {
        let mut cluster = cluster();
        let before = cluster.inspect().get(Kind::ServiceAccount, "default", "default").unwrap().meta().uid.clone();
        cluster.request(Request::delete(Kind::ServiceAccount, "default", "default")).unwrap();
        cluster.settle(Duration::seconds(5));
        let after = cluster.inspect().get(Kind::ServiceAccount, "default", "default").expect("re-created");
        assert_ne!(after.meta().uid, before);
    }

    #[test]
    fn an_edited_root_ca_config_map_is_put_back() {
        let mut cluster = cluster();
        let Some(Object::ConfigMap(mut cm)) =
            cluster.inspect().get(Kind::ConfigMap, "default", ROOT_CA_CONFIGMAP).as_deref().cloned()
        else {
            panic!("no root CA ConfigMap")
        };
        cm.data.insert("ca.crt".into(), "tampered".into());
        cluster.request(Request::update(Object::ConfigMap(cm))).unwrap();
        cluster.settle(Duration::seconds(5));
        let Some(Object::ConfigMap(cm)) =
            cluster.inspect().get(Kind::ConfigMap, "default", ROOT_CA_CONFIGMAP).as_deref().cloned()
        else {
            panic!("no root CA ConfigMap")
        };
        assert_eq!(cm.data["ca.crt"], CLUSTER_CA_CERT);
    }
}
