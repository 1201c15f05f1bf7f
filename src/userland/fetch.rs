//! `curl`, `wget` and `nslookup` in a container: cluster DNS (CoreDNS, reached through the
//! node's kube-proxy rules for the resolv.conf nameserver; when none answers, the resolver
//! times out and the command takes that long), then the node's kube-proxy rules to a ready
//! endpoint, and what the server there answers.

use super::pages::{HTTPD_404, HTTPD_INDEX, NGINX_50X, NGINX_404, NGINX_INDEX, app_page, served_by};
use super::{Container, Run};
use crate::kubelet::images::{self, App};
use crate::sim::Duration;
use std::fmt::Write;

impl Container<'_> {
    /// `curl URL` / `wget -qO- URL`: through cluster DNS and this node's kube-proxy rules.
    pub(super) fn fetch(&mut self, args: &[&str], wget: bool) -> Run {
        let Some(url) = url_argument(args, wget) else {
            return if wget {
                Run::fail(
                    1,
                    "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: wget [-cqS] [-O FILE] URL"
                        .into(),
                )
            } else {
                Run::fail(2, "curl: try 'curl --help' or 'curl --manual' for more information".into())
            };
        };
        let quiet_body = !wget || args.iter().any(|a| a.contains("O-") || *a == "-O" || a.starts_with("-qO"));
        let (host, port, path) = match crate::proxy::parse_url(url) {
            Ok((_, host, port)) => (host, port, url_path(url)),
            Err(e) => return Run::fail(3, e),
        };
        // The container's own loopback is its pod's network namespace: the pod itself.
        let own = if matches!(host.as_str(), "localhost" | "127.0.0.1") && !self.pod.status.pod_ip.is_empty() {
            Some(url.replacen(host.as_str(), &self.pod.status.pod_ip, 1))
        } else {
            None
        };
        let url = own.as_deref().unwrap_or(url);
        let seq = self.world.last_seq();
        let mut rng = crate::sim::Rng::stream(self.world.seed(), &format!("exec {seq} {url}"));
        // TLS is accepted with -k, or with the cluster's CA (the service account's ca.crt).
        let ca = option_value(args, &["--cacert"]);
        if let Some(ca) = ca.filter(|path| !path.ends_with("/serviceaccount/ca.crt")) {
            return Run::fail(77, format!("curl: (77) error setting certificate file: {ca}"));
        }
        let insecure = ca.is_some() || args.contains(&"--insecure") || short_flag(args, 'k');
        let host_header = if wget { None } else { header_value(args, "Host") };
        let result = self.world.curl_from_pod(self.pod, url, host_header, insecure, &mut rng);
        if result.code != 0 {
            let slept = result.waited;
            let message = result.stderr.trim_end().to_string();
            if !wget {
                // Unanswered packets: curl's own timeout may come first.
                if let Some(limit) = curl_time_limit(args).filter(|l| slept != Duration::ZERO && *l < slept) {
                    let waited = limit + Duration::millis(1);
                    let phase = if result.code == 6 { "Resolving" } else { "Connection" };
                    let text = format!("curl: (28) {phase} timed out after {} milliseconds", waited.as_millis());
                    return Run { slept: waited, ..Run::fail(28, text) };
                }
                return match message.strip_prefix("sim curl: ") {
                    Some(_) => Run::fail(56, "curl: (56) Recv failure: Connection reset by peer".into()),
                    None => Run { slept, ..Run::fail(result.code, message) },
                };
            }
            let limit = wget_time_limit(args);
            let text = match result.code {
                6 => format!("wget: bad address '{host}'"),
                7 => format!(
                    "wget: can't connect to remote host ({}): Connection refused",
                    resolve_for_wget(self, &host)
                ),
                28 if slept == Duration::ZERO => "wget: download timed out".to_string(),
                28 if limit < slept => return Run { slept: limit, ..Run::fail(1, "wget: download timed out".into()) },
                28 => format!(
                    "wget: can't connect to remote host ({}): Connection timed out",
                    resolve_for_wget(self, &host)
                ),
                _ => "wget: error getting response: Connection reset by peer".to_string(),
            };
            return Run { slept, ..Run::fail(1, text) };
        }
        // nginx of an ingress controller answering itself (no rule, no endpoints).
        if let Some((code, status, body)) = super::pages::nginx_page(&result.stdout) {
            if wget {
                return Run::fail(1, format!("wget: server returned error: HTTP/1.1 {status}"));
            }
            let _ = code;
            return Run::ok(if quiet_body { body } else { String::new() });
        }
        // Which server answered: the pod the sim request reached.
        let Some(server) = served_by(self.world, &result.stdout) else {
            // The API server over TLS answers as it would the pod's service account (with its
            // token) or an anonymous caller; over plain HTTP it says it wants TLS.
            if !wget && result.stdout.starts_with("HTTP/2") {
                let header = |name: &str| {
                    let prefix = format!("{name}:");
                    option_values(args, &["-H", "--header"]).find_map(|h| {
                        let head = h.get(..prefix.len())?;
                        head.eq_ignore_ascii_case(&prefix).then(|| h[prefix.len()..].trim())
                    })
                };
                let token = header("Authorization").and_then(|v| v.strip_prefix("Bearer ")).map(str::trim);
                let posts = option_value(args, &["-d", "--data", "--data-raw", "--data-binary"]).is_some();
                let method = option_value(args, &["-X", "--request"]).unwrap_or(if posts { "POST" } else { "GET" });
                let answer = self.world.answer_http(method, &path, token);
                return Run::ok(answer.body);
            }
            return Run::ok(result.stdout);
        };
        let repository = server.image.repository.as_str();
        let code = images::http_answer(repository, server.port, false, &path).unwrap_or(404);
        let query = url.split_once('?').map_or("", |(_, q)| q);
        // The StatefulSet tutorial's nginx-slim serves nginx's pages.
        let repository = if repository == "registry.k8s.io/nginx-slim" { "nginx" } else { repository };
        let body = match (repository, code) {
            ("nginx", 200) if path == "/50x.html" => NGINX_50X.to_string(),
            ("nginx", 200) => NGINX_INDEX.to_string(),
            ("httpd", 200) => HTTPD_INDEX.to_string(),
            ("python", 200) => python_listing(&path),
            ("python", _) => PYTHON_404.to_string(),
            ("registry.k8s.io/hpa-example", 200) => "OK!".to_string(),
            ("mongo", 200) => {
                "It looks like you are trying to access MongoDB over HTTP on the native driver port.\n".to_string()
            }
            ("nginx", _) => NGINX_404.to_string(),
            (_, 200) => app_page(&server, &self.pod.status.pod_ip, &path, query, self.world.now()).unwrap_or_default(),
            _ if server.app == Some(App::Agnhost) => "404 page not found\n".to_string(),
            (_, _) => HTTPD_404.replace("PATH", &path),
        };
        if code != 200 && wget {
            return Run::fail(1, format!("wget: server returned error: HTTP/1.1 {code} Not Found"));
        }
        if wget && args.contains(&"--spider") {
            // It asks whether the page is there, and fetches nothing.
            let mut run = Run::ok(String::new());
            if !args.iter().any(|a| a.starts_with("-q")) {
                let ip = resolve_for_wget(self, &host);
                run.stderr = format!("Connecting to {host} ({ip}:{port})\nremote file exists\n");
            }
            return run;
        }
        let size = body.len();
        let mut run = Run::ok(if quiet_body { body } else { String::new() });
        if wget && !args.iter().any(|a| a.starts_with("-q")) {
            // BusyBox wget's progress, on stderr; without -O- the page goes to a file.
            let ip = resolve_for_wget(self, &host);
            let file = if quiet_body { "-".to_string() } else { file_name(&path) };
            let (start, end) = if quiet_body {
                ("writing to stdout\n".to_string(), "written to stdout\n".to_string())
            } else {
                (format!("saving to '{file}'\n"), format!("'{file}' saved\n"))
            };
            run.stderr = format!(
                "Connecting to {host} ({ip}:{port})\n{start}{file:<20} 100% |{}| {size:>5}  0:00:00 ETA\n{end}",
                "*".repeat(32)
            );
        }
        run
    }

    /// The name server the container's resolv.conf names.
    pub(super) fn nameserver(&self) -> String {
        let files = self.files();
        files
            .get("/etc/resolv.conf")
            .and_then(|r| r.lines().find_map(|l| l.strip_prefix("nameserver ")).map(String::from))
            .unwrap_or_default()
    }

    pub(super) fn nslookup(&self, args: &[&str]) -> Run {
        let Some(name) = args.iter().copied().find(|a| !a.starts_with('-')) else {
            return Run::fail(1, "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]".into());
        };
        let files = self.files();
        let server = files
            .get("/etc/resolv.conf")
            .and_then(|r| r.lines().find_map(|l| l.strip_prefix("nameserver ")).map(String::from))
            .unwrap_or_default();
        if self.old_busybox() {
            return self.nslookup_busybox_1_28(name, &server);
        }
        // BIND's nslookup names the server's port after `#`, BusyBox's after `:`.
        let sep = if self.userland() == super::Userland::DnsUtils { '#' } else { ':' };
        let ns = &self.pod.metadata.namespace;
        let found = match self.dns_ask(&server, |zone| crate::dns::first_known(zone, crate::dns::candidates(name, ns)))
        {
            Ok(found) => found,
            Err(_) => {
                // No server answered: BIND's and BusyBox's nslookup say so after their tries.
                let timeout = if self.userland() == super::Userland::DnsUtils {
                    super::dns_tools::BIND_TIMEOUT
                } else {
                    crate::dns::network::RESOLVER_TIMEOUT
                };
                let stdout = ";; connection timed out; no servers could be reached\n\n".to_string();
                return Run { stdout, code: 1, slept: timeout, ..Default::default() };
            }
        };
        let mut out = format!("Server:\t\t{server}\nAddress:\t{server}{sep}53\n\n");
        match found {
            Some((fqdn, addresses)) => {
                for a in addresses {
                    let _ = writeln!(out, "Name:\t{fqdn}\nAddress: {a}\n");
                }
                Run::ok(out)
            }
            None => {
                let _ = writeln!(out, "** server can't find {name}: NXDOMAIN\n");
                Run { stdout: out, code: 1, ..Default::default() }
            }
        }
    }

    /// What CoreDNS answers `ask`, when this container's query to `server` reaches it
    /// through its node's rules.
    pub(super) fn dns_ask<R>(
        &self,
        server: &str,
        ask: impl FnOnce(&crate::dns::Index) -> R,
    ) -> Result<R, crate::dns::DnsError> {
        if !self.world.dns_allowed(self.pod, server) {
            return Err(crate::dns::DnsError::Timeout);
        }
        self.world.dns().ask(&self.pod.spec.node_name, server, ask)
    }
}

impl Container<'_> {
    /// BusyBox before 1.29 (the `busybox:1.28` the DNS debugging guide uses) had its own
    /// nslookup: the name as asked, and each address with the name its PTR record gives.
    fn old_busybox(&self) -> bool {
        matches!(self.image.repository.as_str(), "busybox" | "registry.k8s.io/busybox")
            && matches!(self.image.tag.as_str(), "1.28" | "1.27.2")
    }

    fn nslookup_busybox_1_28(&self, name: &str, server: &str) -> Run {
        let ns = &self.pod.metadata.namespace;
        // Two lookups through the C library: the server's name (PTR), then the name asked.
        let answered = self.dns_ask(server, |zone| {
            let named = |ip: &str| match crate::dns::reverse(zone, ip) {
                Some(ptr) => format!("{ip} {ptr}"),
                None => ip.to_string(),
            };
            let found = crate::dns::resolve(zone, name, ns).map(|a| a.iter().map(|a| named(a)).collect::<Vec<_>>());
            (named(server), found)
        });
        let (server_named, found, slept) = match answered {
            Ok((server_named, found)) => (server_named, found, Duration::ZERO),
            // Neither answers: each waits out the resolver's timeout.
            Err(e) => (
                server.to_string(),
                Err(e),
                crate::dns::network::RESOLVER_TIMEOUT + crate::dns::network::RESOLVER_TIMEOUT,
            ),
        };
        let mut out = format!("Server:    {server}\nAddress 1: {server_named}\n\n");
        match found {
            Ok(addresses) => {
                let _ = writeln!(out, "Name:      {name}");
                for (i, a) in addresses.iter().enumerate() {
                    let _ = writeln!(out, "Address {}: {a}", i + 1);
                }
                Run::ok(out)
            }
            Err(_) => Run {
                stdout: out,
                stderr: format!("nslookup: can't resolve '{name}'\n"),
                code: 1,
                slept,
                ..Default::default()
            },
        }
    }
}

/// `python -m http.server`'s page for a directory: its entries, directories with a `/`.
fn python_listing(path: &str) -> String {
    let items: String = super::files::ROOT.iter().map(|d| format!("<li><a href=\"{d}/\">{d}/</a></li>\n")).collect();
    format!(
        "<!DOCTYPE HTML>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Directory listing for {path}</title>\n</head>\n<body>\n<h1>Directory listing for {path}</h1>\n<hr>\n<ul>\n{items}</ul>\n<hr>\n</body>\n</html>\n"
    )
}

/// `python -m http.server`'s answer for a path it does not have.
const PYTHON_404: &str = "<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <meta charset=\"utf-8\">\n        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n        <p>Error code: 404</p>\n        <p>Message: File not found.</p>\n        <p>Error code explanation: 404 - Nothing matches the given URI.</p>\n    </body>\n</html>\n";

/// Options that take the next word as their value (`--header "Authorization: …"`, `-o FILE`),
/// so that word is not the URL.
#[rustfmt::skip]
const CURL_VALUED: &[&str] = &[
    "-H", "--header", "-X", "--request", "-o", "--output", "-d", "--data", "--data-raw", "--data-binary",
    "--data-urlencode", "--cacert", "--capath", "--cert", "--key", "-E", "-u", "--user", "-A", "--user-agent",
    "-e", "--referer", "-m", "--max-time", "--connect-timeout", "-w", "--write-out", "-b", "--cookie", "-c",
    "--cookie-jar", "--resolve", "-T", "--upload-file", "-F", "--form", "-x", "--proxy", "--retry",
    "--retry-delay", "-K", "--config",
];
/// The same for BusyBox wget.
const WGET_VALUED: &[&str] = &["-O", "-o", "-T", "-U", "--header", "-Y", "-P", "-t"];

/// The value every `name VALUE` option among `args` gives, in order.
fn option_values<'a, 'n>(args: &'n [&'a str], names: &'n [&str]) -> impl Iterator<Item = &'a str> + 'n {
    args.windows(2).filter(move |w| names.contains(&w[0])).map(|w| w[1])
}

/// The value the first `name VALUE` option among `args` gives.
fn option_value<'a>(args: &[&'a str], names: &[&str]) -> Option<&'a str> {
    option_values(args, names).next()
}

/// How long curl waits at most (`--connect-timeout`, `-m`/`--max-time`, in seconds, possibly
/// fractional): the shorter of those given.
fn curl_time_limit(args: &[&str]) -> Option<Duration> {
    option_values(args, &["--connect-timeout", "-m", "--max-time"])
        .filter_map(|v| v.parse::<f64>().ok().filter(|s| *s > 0.0 && s.is_finite()))
        .map(|s| Duration::millis((s * 1000.0).min(1e12) as u64))
        .min()
}

/// BusyBox wget's network timeout (`-T SEC`, `--timeout=SEC`): 900 s unless given.
fn wget_time_limit(args: &[&str]) -> Duration {
    let given = option_value(args, &["-T", "--timeout"]).or_else(|| {
        args.iter()
            .find_map(|a| a.strip_prefix("--timeout=").or_else(|| a.strip_prefix("-T").filter(|v| !v.is_empty())))
    });
    let seconds = given.and_then(|v| v.parse::<u64>().ok()).unwrap_or(900);
    Duration::seconds(seconds.min(1 << 30))
}

/// Whether a one-letter flag is given, alone (`-k`) or among others (`-sk`).
fn short_flag(args: &[&str], flag: char) -> bool {
    args.iter().any(|a| a.len() > 1 && a.starts_with('-') && !a.starts_with("--") && a[1..].contains(flag))
}

/// The URL among curl's or wget's arguments: the first word that is neither an option nor an
/// option's value.
fn url_argument<'a>(args: &[&'a str], wget: bool) -> Option<&'a str> {
    let valued = if wget { WGET_VALUED } else { CURL_VALUED };
    let mut words = args.iter().copied();
    while let Some(word) = words.next() {
        if valued.contains(&word) {
            words.next();
        } else if word == "-" || !word.starts_with('-') {
            return (word != "-").then_some(word);
        }
    }
    None
}

/// What curl adds when its output is not a terminal (as under `kubectl exec` without `-t`):
/// the progress meter on stderr unless `-s`; with `-s`, errors only with `-S`. Writing to a
/// terminal (`-t`), it shows no meter.
pub(super) fn curl_output(mut run: Run, args: &[&str], tty: bool) -> Run {
    let short = |c: char| args.iter().any(|a| !a.starts_with("--") && a.starts_with('-') && a.contains(c));
    let silent = short('s') || args.contains(&"--silent");
    let show_error = short('S') || args.contains(&"--show-error");
    if tty && !silent {
        return run;
    }
    if silent {
        if !show_error {
            run.stderr.clear();
        }
        return run;
    }
    let size = run.stdout.len();
    let progress = if run.code == 0 {
        let speed = format!("{}k", (size * 1000 / 1024).max(1));
        format!("100 {size:>5}  100 {size:>5}    0     0  {speed:>5}      0 --:--:-- --:--:-- --:--:-- {speed:>5}\n")
    } else {
        "  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0\n".to_string()
    };
    run.stderr = format!(
        "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n{progress}{}",
        run.stderr
    );
    run
}

/// The file wget saves a path to: its last segment, `index.html` for a directory.
pub(super) fn file_name(path: &str) -> String {
    match path.rsplit('/').next() {
        Some(last) if !last.is_empty() => last.to_string(),
        _ => "index.html".to_string(),
    }
}

/// The value of curl's `-H 'Name: value'` header `name`, if given.
fn header_value<'a>(args: &[&'a str], name: &str) -> Option<&'a str> {
    option_values(args, &["-H", "--header"]).find_map(|h| {
        let (key, value) = h.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// The path of a URL (`/` when it has none).
pub fn url_path(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    match rest.find('/') {
        Some(i) => rest[i..].split(['?', '#']).next().unwrap_or("/").to_string(),
        None => "/".to_string(),
    }
}

/// The address wget names when a connection is refused: the resolved one.
pub(super) fn resolve_for_wget(container: &Container, host: &str) -> String {
    if host.parse::<std::net::Ipv4Addr>().is_ok() {
        return host.to_string();
    }
    let ns = &container.pod.metadata.namespace;
    container
        .dns_ask(&container.nameserver(), |zone| crate::dns::resolve(zone, host, ns).ok())
        .ok()
        .flatten()
        .and_then(|a| a.into_iter().next())
        .unwrap_or_else(|| host.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_is_the_first_word_that_is_no_option_or_option_value() {
        let args = ["--cacert", "/ca.crt", "--header", "Authorization: Bearer x", "-X", "GET", "https://a/api"];
        assert_eq!(url_argument(&args, false), Some("https://a/api"));
        assert_eq!(url_argument(&["-sS", "-o", "/dev/null", "http://web"], false), Some("http://web"));
        assert_eq!(url_argument(&["-qO-", "http://web"], true), Some("http://web"));
        assert_eq!(url_argument(&["-O", "page.html", "http://web"], true), Some("http://web"));
        assert_eq!(url_argument(&["-H", "x"], false), None);
    }
}
