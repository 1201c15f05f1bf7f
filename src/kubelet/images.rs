//! The sandbox's image registry: which images exist, how big they are, and how they behave.

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
        tags: &["latest", "alpine", "6", "6.2", "7", "7.2", "7.4", "5.0.4"],
        size: 45_417_121,
        behaviour: Behaviour::Server { port: 6379 },
    },
    ImageInfo {
        repository: "busybox",
        tags: &["latest", "stable", "1.28", "1.35", "1.36", "1.36.1", "1.37"],
        size: 2_155_925,
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
        tags: &["latest", "22.04", "24.04", "jammy", "noble"],
        size: 29_754_217,
        behaviour: Behaviour::Shell,
    },
    ImageInfo {
        repository: "debian",
        tags: &["latest", "bookworm", "bookworm-slim", "12"],
        size: 48_479_614,
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
    ImageInfo {
        repository: "registry.k8s.io/pause",
        tags: &["3.9", "3.10"],
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
        repository: "registry.k8s.io/kube-proxy",
        tags: &["v1.35.0"],
        size: 30_231_412,
        behaviour: Behaviour::Server { port: 10256 },
    },
    ImageInfo {
        repository: "registry.k8s.io/hpa-example",
        tags: &["latest"],
        size: 190_478_211,
        behaviour: Behaviour::Server { port: 80 },
    },
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
        out.push_str(&format!("{hash:016x}"));
    }
    let repo = reference.canonical.rsplit_once(':').map_or(reference.canonical.as_str(), |(r, _)| r);
    format!("{repo}@sha256:{out}")
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn unknown_images_and_tags_fail_like_a_registry() {
        assert!(lookup(&parse_reference("nginx:1.25")).is_ok());
        assert_eq!(lookup(&parse_reference("nginx:9.9")).unwrap_err(), PullError::NoSuchTag);
        assert_eq!(lookup(&parse_reference("nginxx")).unwrap_err(), PullError::NoSuchRepository);
    }
}
