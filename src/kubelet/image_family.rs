//! An image's family — BusyBox, Debian with or without curl, BIND's DNS tools, distroless —
//! which decides what programs it ships: what a container's command can run.

use super::images::{self, App};

/// The image family, which decides what is installed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Userland {
    /// busybox and alpine: BusyBox applets (wget, nslookup, ps…).
    Busybox,
    /// Alpine with curl installed (curlimages/curl).
    BusyboxCurl,
    /// glibc based with bash and curl: Debian or Ubuntu (nginx, full python and perl images,
    /// WordPress) and the RHEL family (centos, fedora, rockylinux).
    DebianCurl,
    /// Debian or Ubuntu based, without network tools.
    Debian,
    /// Debian with BIND's DNS tools: `nslookup`, `dig`, `host` (the DNS debugging pod).
    DnsUtils,
    /// No shell, no tools: distroless images and pause.
    Distroless,
}

impl Userland {
    /// The family an image belongs to.
    pub fn of(image: &images::ImageRef) -> Userland {
        let (repo, tag) = (image.repository.as_str(), image.tag.as_str());
        // The tutorials' apps: the Node apps and the guestbook frontend (PHP) on Debian with
        // curl, hello-app on Alpine, agnhost and echoserver on Debian.
        if let Some(app) = App::of(repo) {
            return match app {
                App::HelloApp | App::NginxHello => Userland::Busybox,
                App::Agnhost | App::Echoserver => Userland::Debian,
                App::Bootcamp | App::NodeHello | App::GuestbookFrontend | App::WordPress => Userland::DebianCurl,
                // A static Go binary in an empty image.
                App::HttpEcho => Userland::Distroless,
            };
        }
        match repo {
            "busybox" | "registry.k8s.io/busybox" | "alpine" | "polinux/stress" => Userland::Busybox,
            "curlimages/curl" | "radial/busyboxplus" => Userland::BusyboxCurl,
            "registry.k8s.io/e2e-test-images/jessie-dnsutils" => Userland::DnsUtils,
            "vish/stress" => Userland::Distroless,
            _ if tag.contains("alpine") => Userland::Busybox,
            // The StatefulSet tutorial curls nginx-slim's page from inside its pods.
            "nginx" | "registry.k8s.io/nginx-slim" | "registry.k8s.io/hpa-example" => Userland::DebianCurl,
            "centos" | "fedora" | "rockylinux" => Userland::DebianCurl,
            "python" | "perl" if !tag.contains("slim") => Userland::DebianCurl,
            // Alpine with bash installed: what its users need is bash.
            "bash" => Userland::Debian,
            r if r.starts_with("registry.k8s.io/") => Userland::Distroless,
            _ => Userland::Debian,
        }
    }

    /// Whether the family's images ship `program`.
    pub fn installed(self, program: &str) -> bool {
        let basic = [
            "sh", "ls", "cat", "env", "printenv", "echo", "printf", "hostname", "true", "false", "pwd", "whoami", "id",
            "sleep", "uname", "date",
        ];
        match self {
            Userland::Distroless => false,
            Userland::Busybox => {
                basic.contains(&program) || matches!(program, "wget" | "nslookup" | "ps" | "ash" | "rev")
            }
            Userland::BusyboxCurl => {
                basic.contains(&program) || matches!(program, "wget" | "nslookup" | "ps" | "ash" | "curl" | "rev")
            }
            Userland::DebianCurl => basic.contains(&program) || matches!(program, "bash" | "curl"),
            Userland::Debian => basic.contains(&program) || program == "bash",
            Userland::DnsUtils => basic.contains(&program) || matches!(program, "bash" | "nslookup" | "dig" | "host"),
        }
    }
}
