//! The sandbox's image registry: which images exist, how big they are, and how they behave.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

/// What a container of this image does when started with its default command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// A long-running server that listens on a port.
    Server { port: u16 },
    /// A shell: runs the script it is given; `sh` alone exits at once.
    Shell,
    /// A language runtime whose default command is an interactive prompt (exits at once).
    Interpreter,
    /// The infrastructure "pause" image: sleeps forever.
    Pause,
}

#[derive(Clone, Copy, Debug)]
pub struct ImageInfo {
    /// Repository as users write it, without `docker.io/library/`.
    pub repository: &'static str,
    pub tags: &'static [&'static str],
    /// Compressed size in bytes, which drives the pull time.
    pub size: u64,
    pub behaviour: Behaviour,
}

pub static CATALOG: &[ImageInfo] = &[
    ImageInfo {
        repository: "nginx",
        tags: &[
            "latest", "stable", "alpine", "1.14.2", "1.16.1", "1.19", "1.20", "1.21", "1.22", "1.23", "1.24", "1.25",
            "1.25.3", "1.26", "1.27", "1.28", "1.29", "1.7.9", "mainline",
            // Older tags the docs and courses still name.
            "1.9.1", "1.10", "1.11", "1.12", "1.13", "1.14", "1.15", "1.15.4", "1.16", "1.17", "1.18", "1.23.4",
        ],
        size: 72_099_410,
        behaviour: Behaviour::Server { port: 80 },
    },
    ImageInfo {
        repository: "httpd",
        tags: &["latest", "alpine", "2.4", "2.4.58", "2.4.62"],
        size: 58_213_556,
        behaviour: Behaviour::Server { port: 80 },
    },
    ImageInfo {
        repository: "redis",
        tags: &[
            "latest", "alpine", "6", "6.0.5", "6.2", "7", "7.2", "7.4", "5.0.4", "3.2", "4", "4.0", "5", "5.0", "6.0",
            "7.0", "8",
        ],
        size: 45_417_121,
        behaviour: Behaviour::Server { port: 6379 },
    },
    ImageInfo {
        repository: "busybox",
        tags: &["latest", "stable", "1.28", "1.35", "1.36", "1.36.1", "1.37"],
        size: 2_155_925,
        behaviour: Behaviour::Shell,
    },
    // The Kubernetes docs' probe examples (`exec-liveness.yaml`) use this old busybox.
    ImageInfo {
        repository: "registry.k8s.io/busybox",
        tags: &["latest", "1.27.2"],
        size: 755_808,
        behaviour: Behaviour::Shell,
    },
    ImageInfo {
        repository: "alpine",
        tags: &["latest", "3", "3.18", "3.19", "3.20", "3.21"],
        size: 3_623_807,
        behaviour: Behaviour::Shell,
    },
    ImageInfo {
        repository: "ubuntu",
        tags: &["latest", "18.04", "20.04", "22.04", "24.04", "bionic", "focal", "jammy", "noble"],
        size: 29_754_217,
        behaviour: Behaviour::Shell,
    },
    ImageInfo {
        repository: "debian",
        tags: &[
            "latest",
            "bookworm",
            "bookworm-slim",
            "12",
            "stable",
            "stable-slim",
            "bullseye",
            "bullseye-slim",
            "11",
            "buster",
            "10",
            "trixie",
            "13",
        ],
        size: 48_479_614,
        behaviour: Behaviour::Shell,
    },
    // Alpine with bash: the docs' scripts that need bash (`image: bash`).
    ImageInfo {
        repository: "bash",
        tags: &["latest", "4.4", "5", "5.1", "5.2", "5.3", "devel"],
        size: 6_421_044,
        behaviour: Behaviour::Shell,
    },
    ImageInfo {
        repository: "perl",
        tags: &["latest", "5.34.0", "5.36", "5.38", "5.40"],
        size: 330_127_305,
        behaviour: Behaviour::Interpreter,
    },
    ImageInfo {
        repository: "python",
        tags: &["latest", "3", "3.11", "3.12", "3.13", "3.12-slim", "3.13-slim", "alpine"],
        size: 381_036_210,
        behaviour: Behaviour::Interpreter,
    },
    ImageInfo {
        repository: "fluentd",
        tags: &["latest", "v1.16-1", "v1.17-1"],
        size: 44_961_233,
        behaviour: Behaviour::Server { port: 24224 },
    },
    // The DaemonSet page's log collector (v2.5.2 on older versions of the page).
    ImageInfo {
        repository: "quay.io/fluentd_elasticsearch/fluentd",
        tags: &["v2.5.2", "v3.0.2", "v3.1.0", "v4.4.1", "v5.0.1"],
        size: 73_624_118,
        behaviour: Behaviour::Server { port: 24231 },
    },
    ImageInfo {
        repository: "registry.k8s.io/pause",
        // The docs name old tags (`pause:2.0`) and none (`latest`): the registry keeps them all.
        tags: &[
            "latest", "0.8.0", "1.0", "2.0", "3.0", "3.1", "3.2", "3.3", "3.4.1", "3.5", "3.6", "3.7", "3.8", "3.9",
            "3.10", "3.10.1",
        ],
        size: 320_368,
        behaviour: Behaviour::Pause,
    },
    ImageInfo {
        repository: "registry.k8s.io/coredns/coredns",
        tags: &["v1.11.1", "v1.11.3", "v1.12.0"],
        size: 18_562_039,
        behaviour: Behaviour::Server { port: 53 },
    },
    ImageInfo {
        repository: "registry.k8s.io/ingress-nginx/controller",
        tags: &["v1.12.1"],
        size: 107_839_502,
        behaviour: Behaviour::Server { port: 80 },
    },
    ImageInfo {
        repository: "kindest/local-path-provisioner",
        tags: &["v20250214-acbabc1a"],
        size: 20_136_521,
        behaviour: Behaviour::Pause,
    },
    ImageInfo {
        repository: "registry.k8s.io/metrics-server/metrics-server",
        tags: &["v0.8.0", "v0.7.2"],
        size: 19_519_322,
        behaviour: Behaviour::Server { port: 10250 },
    },
    // The sandbox's own admission webhook server (flags: src/userland/admission_webhook.rs).
    ImageInfo {
        repository: "kubeloop/admission-webhook",
        tags: &["latest", "1.0"],
        size: 9_412_608,
        behaviour: Behaviour::Server { port: 8443 },
    },
    ImageInfo {
        // The operator the lesson on extending the API deploys (its process: a component,
        // see `controllers::website_operator`); listens for health checks.
        repository: "kubeloop/website-operator",
        tags: &["v0.1.0", "latest"],
        size: 14_221_873,
        behaviour: Behaviour::Server { port: 8081 },
    },
    ImageInfo {
        repository: "kindest/local-path-helper",
        tags: &["v20241212-8ac705d0"],
        size: 3_084_725,
        behaviour: Behaviour::Shell,
    },
    ImageInfo {
        repository: "registry.k8s.io/kube-proxy",
        tags: &["v1.35.0"],
        size: 30_231_412,
        behaviour: Behaviour::Server { port: 10256 },
    },
    ImageInfo {
        repository: "calico/node",
        tags: &["v3.29.3"],
        size: 142_554_385,
        behaviour: Behaviour::Server { port: 9099 },
    },
    ImageInfo {
        repository: "registry.k8s.io/etcd",
        tags: &["3.5.1-0", "3.5.21-0"],
        size: 58_938_593,
        behaviour: Behaviour::Server { port: 2379 },
    },
    ImageInfo {
        repository: "registry.k8s.io/kube-apiserver",
        tags: &["v1.35.0"],
        size: 27_066_327,
        behaviour: Behaviour::Server { port: 6443 },
    },
    ImageInfo {
        repository: "registry.k8s.io/kube-controller-manager",
        tags: &["v1.35.0"],
        size: 23_545_815,
        behaviour: Behaviour::Server { port: 10257 },
    },
    ImageInfo {
        repository: "registry.k8s.io/kube-scheduler",
        tags: &["v1.35.0"],
        size: 17_398_016,
        behaviour: Behaviour::Server { port: 10259 },
    },
    ImageInfo {
        repository: "registry.k8s.io/hpa-example",
        tags: &["latest"],
        size: 190_478_211,
        behaviour: Behaviour::Server { port: 80 },
    },
    // The docs' memory-limit examples run `stress` from this image.
    ImageInfo {
        repository: "polinux/stress",
        tags: &["latest", "1.0.4"],
        size: 4_041_374,
        behaviour: Behaviour::Shell,
    },
    // The tutorials' own apps. Learn Kubernetes Basics: the bootcamp app answers every path
    // on 8080 with its pod's name and version (v2 is on Docker Hub; v10 does not exist, which
    // the tutorial's failed rollout relies on).
    ImageInfo {
        repository: "gcr.io/google-samples/kubernetes-bootcamp",
        tags: &["v1"],
        size: 76_421_211,
        behaviour: Behaviour::Server { port: 8080 },
    },
    ImageInfo {
        repository: "jocatalin/kubernetes-bootcamp",
        tags: &["v1", "v2"],
        size: 76_421_380,
        behaviour: Behaviour::Server { port: 8080 },
    },
    // "Hello Kubernetes!" on 8080: the docs' environment-variable and external-IP examples.
    ImageInfo {
        repository: "gcr.io/google-samples/node-hello",
        tags: &["1.0"],
        size: 248_931_032,
        behaviour: Behaviour::Server { port: 8080 },
    },
    // "Hello, world!" with its version and hostname on 8080 (GKE's and the docs' samples).
    ImageInfo {
        repository: "gcr.io/google-samples/hello-app",
        tags: &["1.0", "2.0"],
        size: 10_612_420,
        behaviour: Behaviour::Server { port: 8080 },
    },
    ImageInfo {
        repository: "us-docker.pkg.dev/google-samples/containers/gke/hello-app",
        tags: &["1.0", "2.0"],
        size: 10_612_420,
        behaviour: Behaviour::Server { port: 8080 },
    },
    // Kubernetes' test server: Hello Minikube runs `/agnhost netexec --http-port=8080`, the
    // HTTP liveness example runs it with `liveness` (healthy for its first 10 seconds).
    ImageInfo {
        repository: "registry.k8s.io/e2e-test-images/agnhost",
        tags: &["2.39", "2.40", "2.43", "2.45", "2.47", "2.52", "2.53"],
        size: 51_217_400,
        behaviour: Behaviour::Server { port: 8080 },
    },
    // The TCP probe example's server (listens on 8080, no HTTP of its own).
    ImageInfo {
        repository: "registry.k8s.io/goproxy",
        tags: &["0.1"],
        size: 2_615_123,
        behaviour: Behaviour::Server { port: 8080 },
    },
    // Connect a Frontend to a Backend: the Go backend answers `{"message":"Hello"}` on 80,
    // behind the tutorial's nginx frontend.
    ImageInfo {
        repository: "gcr.io/google-samples/hello-go-gke",
        tags: &["1.0"],
        size: 4_424_412,
        behaviour: Behaviour::Server { port: 80 },
    },
    ImageInfo {
        repository: "gcr.io/google-samples/hello-frontend",
        tags: &["1.0"],
        size: 49_621_405,
        behaviour: Behaviour::Server { port: 80 },
    },
    // The DNS autoscaling page's cluster-proportional-autoscaler: resizes its --target.
    ImageInfo {
        repository: "registry.k8s.io/cpa/cluster-proportional-autoscaler",
        tags: &["1.8.4", "v1.8.9", "v1.9.0"],
        size: 15_334_112,
        behaviour: Behaviour::Server { port: 8080 },
    },
    // Echoes the request it got (older Hello Minikube and Service examples).
    ImageInfo {
        repository: "registry.k8s.io/echoserver",
        tags: &["1.4", "1.10"],
        size: 46_109_344,
        behaviour: Behaviour::Server { port: 8080 },
    },
    // The guestbook tutorial: its PHP frontend on 80 and its Redis followers.
    ImageInfo {
        repository: "us-docker.pkg.dev/google-samples/containers/gke/gb-frontend",
        tags: &["v5"],
        size: 98_334_201,
        behaviour: Behaviour::Server { port: 80 },
    },
    ImageInfo {
        repository: "gcr.io/google_samples/gb-frontend",
        tags: &["v5"],
        size: 98_334_201,
        behaviour: Behaviour::Server { port: 80 },
    },
    ImageInfo {
        repository: "us-docker.pkg.dev/google-samples/containers/gke/gb-redis-follower",
        tags: &["v2"],
        size: 37_212_608,
        behaviour: Behaviour::Server { port: 6379 },
    },
    ImageInfo {
        repository: "gcr.io/google_samples/gb-redis-follower",
        tags: &["v2"],
        size: 37_212_608,
        behaviour: Behaviour::Server { port: 6379 },
    },
    // The docs' and tutorials' other images.
    ImageInfo {
        repository: "curlimages/curl",
        tags: &["latest", "8.5.0", "8.8.0", "8.10.1", "8.11.0"],
        size: 10_231_528,
        behaviour: Behaviour::Shell,
    },
    // BusyBox with curl: the Services page's `kubectl run curl -i --tty`.
    ImageInfo {
        repository: "radial/busyboxplus",
        tags: &["curl", "latest"],
        size: 4_232_177,
        behaviour: Behaviour::Shell,
    },
    // The DNS debugging page's `dnsutils` pod: Debian with BIND's tools, bash as its CMD (so
    // the page's manifest runs `sleep infinity`).
    ImageInfo {
        repository: "registry.k8s.io/e2e-test-images/jessie-dnsutils",
        tags: &["1.3", "1.5", "1.7"],
        size: 111_253_412,
        behaviour: Behaviour::Shell,
    },
    ImageInfo {
        repository: "mysql",
        tags: &["latest", "5.6", "5.7", "8", "8.0", "9"],
        size: 170_613_202,
        behaviour: Behaviour::Server { port: 3306 },
    },
    ImageInfo {
        repository: "postgres",
        tags: &["latest", "13", "14", "15", "16", "17"],
        size: 158_438_571,
        behaviour: Behaviour::Server { port: 5432 },
    },
    ImageInfo {
        repository: "mongo",
        tags: &["latest", "3.6", "4", "4.0", "4.2", "4.4", "5", "5.0", "6", "6.0", "7", "7.0", "8", "8.0"],
        size: 263_842_203,
        behaviour: Behaviour::Server { port: 27017 },
    },
    ImageInfo {
        repository: "memcached",
        tags: &["latest", "1.6", "alpine"],
        size: 33_284_551,
        behaviour: Behaviour::Server { port: 11211 },
    },
    ImageInfo {
        repository: "wordpress",
        tags: &["latest", "6", "6.6", "6.7", "6.2.1-apache", "apache"],
        size: 252_180_633,
        behaviour: Behaviour::Server { port: 80 },
    },
    ImageInfo {
        repository: "hashicorp/http-echo",
        tags: &["latest", "1.0", "1.0.0", "0.2.3"],
        size: 3_478_129,
        behaviour: Behaviour::Server { port: 5678 },
    },
    // The StatefulSet tutorial's nginx.
    ImageInfo {
        repository: "registry.k8s.io/nginx-slim",
        tags: &["0.7", "0.8", "0.9", "0.21", "0.24", "0.27"],
        size: 52_212_402,
        behaviour: Behaviour::Server { port: 80 },
    },
    ImageInfo {
        repository: "nginxdemos/hello",
        tags: &["latest", "plain-text"],
        size: 9_854_211,
        behaviour: Behaviour::Server { port: 80 },
    },
    // The CPU resources example: `args: [-cpus, "2"]` burns CPU until stopped.
    ImageInfo { repository: "vish/stress", tags: &["latest"], size: 1_574_911, behaviour: Behaviour::Shell },
    ImageInfo {
        repository: "centos",
        tags: &["latest", "7", "8", "centos7"],
        size: 75_173_932,
        behaviour: Behaviour::Shell,
    },
    ImageInfo {
        repository: "fedora",
        tags: &["latest", "39", "40", "41"],
        size: 61_592_015,
        behaviour: Behaviour::Shell,
    },
    ImageInfo {
        repository: "rockylinux",
        tags: &["8", "9", "8.9", "9.3"],
        size: 69_843_311,
        behaviour: Behaviour::Shell,
    },
];

/// The tutorials' apps, each published under one or more repositories (a registry that
/// moved, a fork): what they answer, print and ship is decided by the app, not the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum App {
    /// Learn Kubernetes Basics: Node, every path on 8080 names its pod and version.
    Bootcamp,
    /// Go, every path on 8080: "Hello, world!", its version and hostname.
    HelloApp,
    /// Node, every path on 8080: "Hello Kubernetes!".
    NodeHello,
    /// Kubernetes' test server: `netexec` paths on 8080, or the liveness demo.
    Agnhost,
    /// nginx echoing the request it got, every path on 8080.
    Echoserver,
    /// The guestbook's PHP frontend on 80.
    GuestbookFrontend,
    /// HashiCorp's http-echo: every path answers its `-text` (on `-listen`, `:5678`).
    HttpEcho,
    /// NGINX's demo: every path on 80 names the server's address and hostname.
    NginxHello,
    /// WordPress (Apache and PHP) on 80: its installer until it is set up.
    WordPress,
}

impl App {
    pub fn of(repository: &str) -> Option<App> {
        Some(match repository {
            "gcr.io/google-samples/kubernetes-bootcamp" | "jocatalin/kubernetes-bootcamp" => App::Bootcamp,
            "gcr.io/google-samples/hello-app" | "us-docker.pkg.dev/google-samples/containers/gke/hello-app" => {
                App::HelloApp
            }
            "gcr.io/google-samples/node-hello" => App::NodeHello,
            "registry.k8s.io/e2e-test-images/agnhost" => App::Agnhost,
            "registry.k8s.io/echoserver" => App::Echoserver,
            "us-docker.pkg.dev/google-samples/containers/gke/gb-frontend" | "gcr.io/google_samples/gb-frontend" => {
                App::GuestbookFrontend
            }
            "hashicorp/http-echo" => App::HttpEcho,
            "nginxdemos/hello" => App::NginxHello,
            "wordpress" => App::WordPress,
            _ => return None,
        })
    }

    /// The paths it serves on its port, the port, and the status of any other path.
    fn site(self) -> (&'static [&'static str], u16, u16) {
        match self {
            // One handler for every path.
            App::Bootcamp | App::HelloApp | App::NodeHello | App::Echoserver => (&[], 8080, 200),
            App::Agnhost => (AGNHOST_PATHS, 8080, 404),
            App::GuestbookFrontend => (&["/", "/index.html", "/guestbook.php"], 80, 404),
            App::HttpEcho => (&[], 5678, 200),
            App::NginxHello => (&[], 80, 200),
            App::WordPress => (&["/", "/index.php", "/wp-login.php", "/wp-admin/install.php"], 80, 404),
        }
    }
}

/// Whether a server image answers HTTP on its port (the others speak their own protocol, or
/// answer nothing a browser would understand).
pub fn speaks_http(repository: &str) -> bool {
    // python listens only when it runs `-m http.server`.
    matches!(
        repository,
        "nginx" | "httpd" | "registry.k8s.io/hpa-example" | "registry.k8s.io/nginx-slim" | "mongo" | "python"
    ) || App::of(repository).is_some()
}

/// What a kind node image ships in its containerd store: the control plane's images, the
/// add-ons' and the sandbox image, so a new cluster starts without pulling anything.
pub const PRELOADED: &[&str] = &[
    "registry.k8s.io/coredns/coredns:v1.12.0",
    "docker.io/calico/node:v3.29.3",
    "docker.io/kindest/local-path-helper:v20241212-8ac705d0",
    "docker.io/kindest/local-path-provisioner:v20250214-acbabc1a",
    "registry.k8s.io/ingress-nginx/controller:v1.12.1",
    "registry.k8s.io/etcd:3.5.21-0",
    "registry.k8s.io/kube-apiserver:v1.35.0",
    "registry.k8s.io/kube-controller-manager:v1.35.0",
    "registry.k8s.io/kube-proxy:v1.35.0",
    "registry.k8s.io/kube-scheduler:v1.35.0",
    "registry.k8s.io/metrics-server/metrics-server:v0.8.0",
    "registry.k8s.io/pause:3.10",
];

/// An image reference split into the parts a registry cares about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRef {
    /// As the catalog names it: `nginx`, `registry.k8s.io/pause`.
    pub repository: String,
    pub tag: String,
    /// As containerd prints it: `docker.io/library/nginx:1.25`.
    pub canonical: String,
}

pub fn parse_reference(image: &str) -> ImageRef {
    let image = image.trim();
    let (name, tag) = match image.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => (n, t),
        _ => (image, "latest"),
    };
    let name = name.split('@').next().unwrap_or(name);
    let repository = name.strip_prefix("docker.io/").unwrap_or(name);
    let repository = repository.strip_prefix("library/").unwrap_or(repository).to_string();
    let first = name.split('/').next().unwrap_or("");
    let has_registry = name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let canonical = if has_registry {
        format!("{name}:{tag}")
    } else if name.contains('/') {
        format!("docker.io/{}:{tag}", name.strip_prefix("docker.io/").unwrap_or(name))
    } else {
        format!("docker.io/library/{name}:{tag}")
    };
    ImageRef { repository, tag: tag.to_string(), canonical }
}

/// Whether `image` is a reference the runtime can parse (`[host[:port]/]path[:tag][@digest]`,
/// the path in lower case): `gcr.io/<project>/job-wq-1`, with the placeholder the docs leave
/// for the reader, is not, and its container waits as InvalidImageName.
pub fn valid_reference(image: &str) -> bool {
    let (name, digest) = image.split_once('@').map_or((image, None), |(n, d)| (n, Some(d)));
    let (name, tag) = match name.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => (n, Some(t)),
        _ => (name, None),
    };
    let path_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-');
    let mut parts = name.split('/').peekable();
    let host =
        parts.peek().filter(|first| name.contains('/') && (first.contains(['.', ':']) || **first == "localhost"));
    let host_ok = host.is_none_or(|h| h.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':')));
    if host.is_some() {
        parts.next();
    }
    let path_ok = parts.all(|p| !p.is_empty() && p.chars().all(path_char));
    let tag_ok = tag.is_none_or(|t| {
        !t.is_empty() && t.len() <= 128 && t.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    });
    let digest_ok = digest.is_none_or(|d| d.split_once(':').is_some_and(|(a, h)| !a.is_empty() && !h.is_empty()));
    !name.is_empty() && host_ok && path_ok && tag_ok && digest_ok
}

/// Why a pull fails, in containerd's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PullError {
    NoSuchRepository,
    NoSuchTag,
}

pub fn lookup(reference: &ImageRef) -> Result<&'static ImageInfo, PullError> {
    let info = CATALOG.iter().find(|i| i.repository == reference.repository).ok_or(PullError::NoSuchRepository)?;
    if info.tags.contains(&reference.tag.as_str()) { Ok(info) } else { Err(PullError::NoSuchTag) }
}

/// The message of a failed pull, as the kubelet's `Failed` event carries it.
pub fn pull_error_message(image: &str, reference: &ImageRef, err: &PullError) -> String {
    let c = &reference.canonical;
    let detail = match err {
        PullError::NoSuchTag => format!("{c}: not found"),
        PullError::NoSuchRepository => {
            "pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed".to_string()
        }
    };
    format!(
        "Failed to pull image \"{image}\": rpc error: code = NotFound desc = failed to pull and unpack image \"{c}\": failed to resolve reference \"{c}\": {detail}"
    )
}

/// A stable fake digest for an image, as `imageID` shows it.
pub fn digest(reference: &ImageRef) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut out = String::with_capacity(64);
    for round in 0..4u8 {
        for b in reference.canonical.bytes().chain([round]) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        push_hex(&mut out, hash);
    }
    let repo = reference.canonical.rsplit_once(':').map_or(reference.canonical.as_str(), |(r, _)| r);
    [repo, "@sha256:", &out].concat()
}

/// Appends `value` as 16 lowercase hex digits, leading zeros kept (written out by hand: every
/// pod status the kubelet builds names its images' digests, and every container its id).
pub(crate) fn push_hex(out: &mut String, value: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..16).rev() {
        out.push(char::from(HEX[((value >> (shift * 4)) & 0xf) as usize]));
    }
}

/// The registry's state the sandbox can change (`sim image break|fix`): the images it has
/// stopped serving, as `repository` (every tag) or `repository:tag`.
///
/// A cluster owns one and gives every kubelet's runtime a handle to it (cloning shares it:
/// `Rc<RefCell<..>>`, as the simulation is single-threaded). A kubelet consults it when it
/// pulls, as a real one asks the registry; images a node already has stay on the node.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    broken: Rc<RefCell<BTreeSet<String>>>,
}

impl Registry {
    /// What a pull of `reference` gets: the image's entry, or the error a registry answers
    /// for an image it does not have.
    pub fn pull(&self, reference: &ImageRef) -> Result<&'static ImageInfo, PullError> {
        let broken = self.broken.borrow();
        if broken.contains(&reference.repository) {
            return Err(PullError::NoSuchRepository);
        }
        // (A registry serving every image, as most runs have it, spells no name out.)
        if !broken.is_empty() && broken.contains(&[&reference.repository, ":", &reference.tag].concat()) {
            return Err(PullError::NoSuchTag);
        }
        lookup(reference)
    }

    /// Stops serving `image` (`nginx:1.25`, or `nginx` for every tag). Returns the name it is
    /// known by, or why it cannot (no such image in the catalog).
    pub fn break_image(&self, image: &str) -> Result<String, String> {
        let key = Self::key(image)?;
        self.broken.borrow_mut().insert(key.clone());
        Ok(key)
    }

    /// Serves `image` again (without a tag: every tag of it). Errors when it was not broken.
    pub fn fix_image(&self, image: &str) -> Result<String, String> {
        let key = Self::key(image)?;
        let mut broken = self.broken.borrow_mut();
        let before = broken.len();
        // Fixing a repository fixes each of its tags too.
        let tags_of = (!key.contains(':')).then(|| format!("{key}:"));
        broken.retain(|b| *b != key && !tags_of.as_ref().is_some_and(|prefix| b.starts_with(prefix.as_str())));
        if broken.len() == before {
            return Err(format!("image {key} is not broken"));
        }
        Ok(key)
    }

    /// The images the registry does not serve, sorted.
    pub fn broken(&self) -> Vec<String> {
        self.broken.borrow().iter().cloned().collect()
    }

    fn key(image: &str) -> Result<String, String> {
        let reference = parse_reference(image);
        let last = image.trim().rsplit('/').next().unwrap_or("");
        let tagged = last.contains(':');
        let known = if tagged {
            lookup(&reference).is_ok()
        } else {
            CATALOG.iter().any(|i| i.repository == reference.repository)
        };
        if !known {
            return Err(format!("the registry has no image \"{}\"", image.trim()));
        }
        Ok(if tagged { format!("{}:{}", reference.repository, reference.tag) } else { reference.repository })
    }
}

/// The ports a server image listens on when it runs its own program: its catalog port, and
/// the health and metrics ports the real image also opens.
pub fn server_ports(repository: &str, port: u16) -> Vec<u16> {
    match repository {
        "registry.k8s.io/coredns/coredns" => vec![53, 8080, 8181, 9153],
        "registry.k8s.io/etcd" => vec![2379, 2380, 2381],
        "registry.k8s.io/kube-proxy" => vec![10249, 10256],
        "registry.k8s.io/ingress-nginx/controller" => vec![80, 443, 10254],
        "kubeloop/website-operator" => vec![8080, 8081],
        _ => vec![port],
    }
}

/// What `agnhost netexec` serves.
pub const AGNHOST_PATHS: &[&str] = &["/", "/hostname", "/echo", "/clientip", "/header", "/healthz", "/readyz"];

/// What a server of `repository` answers to `GET path` on `port` (over TLS with `tls`): a
/// status code, or the error Go's HTTP client reports after `Get "<url>": `.
///
/// Web servers serve their default site: nginx `/`, `/index.html` and `/50x.html`, httpd `/`
/// and `/index.html`; every other path is `404`. The control plane's components answer their
/// health endpoints (`/livez`, `/readyz`, `/healthz`) over HTTPS, CoreDNS `/health` on 8080
/// and `/ready` on 8181. The tutorials' apps answer as they do (bootcamp, hello-app and
/// echoserver every path; agnhost its netexec paths; the guestbook frontend its page). Redis
/// answers an HTTP request with a Redis error; other servers do not answer HTTP at all (the
/// request times out).
pub fn http_answer(repository: &str, port: u16, tls: bool, path: &str) -> Result<u16, String> {
    const KUBE_HEALTH: &[&str] = &["/livez", "/readyz", "/healthz"];
    // (paths served, over TLS, status for other paths)
    // http-echo answers on whichever port `-listen` gave it.
    let app = App::of(repository).map(App::site).filter(|(_, p, _)| *p == port || repository == "hashicorp/http-echo");
    let site: (&[&str], bool, u16) = match (repository, port) {
        _ if let Some((paths, _, other)) = app => (paths, false, other),
        ("nginx" | "registry.k8s.io/nginx-slim", 80) => (&["/", "/index.html", "/50x.html"], false, 404),
        ("httpd", 80) => (&["/", "/index.html"], false, 404),
        // `python -m http.server` lists its directory (the image's root) on whatever port.
        ("python", _) => (&["/"], false, 404),
        ("registry.k8s.io/hpa-example", 80) => (&["/", "/index.php"], false, 404),
        ("registry.k8s.io/coredns/coredns", 8080) => (&["/health"], false, 404),
        ("registry.k8s.io/coredns/coredns", 8181) => (&["/ready"], false, 404),
        ("registry.k8s.io/coredns/coredns", 9153) => (&["/metrics"], false, 404),
        ("registry.k8s.io/etcd", 2381) => (&["/health", "/livez", "/readyz", "/metrics"], false, 404),
        ("registry.k8s.io/etcd", 2379) => (&["/health", "/livez", "/readyz", "/version"], true, 404),
        ("registry.k8s.io/kube-proxy", 10256) => (&["/healthz", "/livez"], false, 404),
        ("registry.k8s.io/kube-proxy", 10249) => (&["/healthz", "/metrics"], false, 404),
        ("registry.k8s.io/kube-apiserver", 6443)
        | ("registry.k8s.io/kube-controller-manager", 10257)
        | ("registry.k8s.io/kube-scheduler", 10259) => (KUBE_HEALTH, true, 403),
        // mongod answers HTTP on its driver port with a one-line hint.
        ("mongo", 27017) => (&[], false, 200),
        // mysqld greets first (its packet's protocol version byte is a newline); memcached
        // answers `ERROR`; postgres hangs up.
        ("mysql", 3306) => {
            return Err(
                "net/http: HTTP/1.x transport connection broken: malformed HTTP response \"J\\x00\\x00\\x00\"".into()
            );
        }
        ("memcached", 11211) => {
            return Err("net/http: HTTP/1.x transport connection broken: malformed HTTP response \"ERROR\"".into());
        }
        ("postgres", 5432) => return Err("EOF".into()),
        ("redis", 6379) => {
            return Err("net/http: HTTP/1.x transport connection broken: malformed HTTP response \"-ERR wrong number of arguments for 'get' command\"".into());
        }
        _ => return Err("context deadline exceeded (Client.Timeout exceeded while awaiting headers)".into()),
    };
    let (paths, over_tls, other) = site;
    match (tls, over_tls) {
        (true, false) => return Err("http: server gave HTTP response to HTTPS client".into()),
        // A TLS server answers a plain request with 400 ("Client sent an HTTP request to an HTTPS server.").
        (false, true) => return Ok(400),
        _ => {}
    }
    let path = path.split(['?', '#']).next().unwrap_or("");
    Ok(if paths.contains(&path) { 200 } else { other })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_written_by_hand_is_the_formatted_hex() {
        for v in [0, 1, 0xabc, 0x0123_4567_89ab_cdef, u64::MAX] {
            let mut out = String::new();
            push_hex(&mut out, v);
            assert_eq!(out, format!("{v:016x}"));
        }
    }

    #[test]
    fn short_names_expand_to_docker_hub_library() {
        let r = parse_reference("nginx");
        assert_eq!((r.repository.as_str(), r.tag.as_str()), ("nginx", "latest"));
        assert_eq!(r.canonical, "docker.io/library/nginx:latest");
        let r = parse_reference("registry.k8s.io/pause:3.10");
        assert_eq!(
            (r.repository.as_str(), r.canonical.as_str()),
            ("registry.k8s.io/pause", "registry.k8s.io/pause:3.10")
        );
    }

    #[test]
    fn every_preloaded_image_is_in_the_catalog() {
        for image in PRELOADED {
            let reference = parse_reference(image);
            assert_eq!(reference.canonical, *image);
            assert!(lookup(&reference).is_ok(), "{image}");
        }
    }

    #[test]
    fn a_broken_image_is_refused_until_it_is_fixed() {
        let registry = Registry::default();
        let shared = registry.clone();
        assert_eq!(registry.break_image("nginx:1.25"), Ok("nginx:1.25".to_string()));
        assert_eq!(shared.pull(&parse_reference("docker.io/library/nginx:1.25")).unwrap_err(), PullError::NoSuchTag);
        assert!(shared.pull(&parse_reference("nginx:1.27")).is_ok());
        assert_eq!(registry.fix_image("nginx:1.25"), Ok("nginx:1.25".to_string()));
        assert!(shared.pull(&parse_reference("nginx:1.25")).is_ok());
        assert!(registry.fix_image("nginx:1.25").is_err());
    }

    #[test]
    fn breaking_a_repository_breaks_every_tag_and_fixing_it_fixes_them() {
        let registry = Registry::default();
        registry.break_image("nginx:1.25").unwrap();
        registry.break_image("nginx").unwrap();
        assert_eq!(registry.pull(&parse_reference("nginx:1.27")).unwrap_err(), PullError::NoSuchRepository);
        registry.fix_image("nginx").unwrap();
        assert!(registry.broken().is_empty());
        assert_eq!(registry.break_image("nginx:9.9"), Err("the registry has no image \"nginx:9.9\"".to_string()));
    }

    #[test]
    fn web_servers_answer_their_site_over_plain_http_and_the_control_plane_over_https() {
        assert_eq!(http_answer("nginx", 80, false, "/index.html"), Ok(200));
        assert_eq!(http_answer("nginx", 80, false, "/healthz"), Ok(404));
        assert!(http_answer("nginx", 80, true, "/").is_err());
        assert_eq!(http_answer("registry.k8s.io/kube-apiserver", 6443, true, "/livez"), Ok(200));
        assert_eq!(http_answer("registry.k8s.io/kube-apiserver", 6443, false, "/livez"), Ok(400));
        assert_eq!(http_answer("registry.k8s.io/etcd", 2381, false, "/readyz"), Ok(200));
    }

    #[test]
    fn databases_answer_an_http_request_as_their_own_protocols_do() {
        assert_eq!(http_answer("mongo", 27017, false, "/"), Ok(200));
        assert!(http_answer("mysql", 3306, false, "/").is_err_and(|e| e.contains("malformed HTTP response")));
        assert_eq!(http_answer("postgres", 5432, false, "/"), Err("EOF".to_string()));
    }

    #[test]
    fn unknown_images_and_tags_fail_like_a_registry() {
        assert!(lookup(&parse_reference("nginx:1.25")).is_ok());
        assert_eq!(lookup(&parse_reference("nginx:9.9")).unwrap_err(), PullError::NoSuchTag);
        assert_eq!(lookup(&parse_reference("nginxx")).unwrap_err(), PullError::NoSuchRepository);
    }

    #[test]
    fn a_reference_with_the_docs_placeholder_or_capitals_in_its_path_cannot_be_parsed() {
        for good in [
            "nginx",
            "nginx:1.14.2",
            "registry.k8s.io/pause:3.9",
            "localhost:5000/app:v1",
            "docker.io/library/busybox",
            "quay.io/fluentd_elasticsearch/fluentd:v5.0.1",
            "busybox@sha256:abc123",
        ] {
            assert!(valid_reference(good), "{good}");
        }
        for bad in ["gcr.io/<project>/job-wq-1", "Nginx", "nginx:", "nginx:bad tag", "registry.k8s.io//pause", ""] {
            assert!(!valid_reference(bad), "{bad}");
        }
    }
}
