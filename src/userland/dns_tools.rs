//! BIND's `dig` and `host`, as the DNS debugging pod (jessie-dnsutils) ships them: `host`
//! tries the resolv.conf search list as `nslookup` does; `dig` asks for the name as given
//! (no search list unless `+search`), printing the answer section, or only the addresses
//! with `+short`. Their queries go to the resolv.conf nameserver (or dig's `@server`) through
//! the node's kube-proxy rules to CoreDNS; when none answers, each says so after its tries.

use super::{Container, Run};
use std::fmt::Write;

/// The version line jessie's BIND prints.
const DIG_VERSION: &str = "9.9.5-9+deb8u19-Debian";
/// How long BIND's tools wait for a server that never answers: dig's `+time=5`, `+tries=3`.
pub(super) const BIND_TIMEOUT: crate::sim::Duration = crate::sim::Duration::seconds(15);
/// What BIND's tools print when no server answered.
const TIMED_OUT: &str = ";; connection timed out; no servers could be reached\n";

impl Container<'_> {
    /// The first of `names` CoreDNS knows, with its addresses, asked of `server`: None when
    /// every name is NXDOMAIN, an error when no server answered.
    fn first_known(&self, server: &str, names: Vec<String>) -> Result<Option<(String, Vec<String>)>, Run> {
        self.dns_ask(server, |zone| crate::dns::first_known(zone, names)).map_err(|_| Run {
            stdout: TIMED_OUT.into(),
            code: 1,
            slept: BIND_TIMEOUT,
            ..Default::default()
        })
    }

    pub(super) fn host(&self, args: &[&str]) -> Run {
        let Some(name) = args.iter().copied().find(|a| !a.starts_with('-')) else {
            return Run::fail(1, "Usage: host [-aCdlriTwv] [-c class] [-N ndots] [-t type] [-W time]\n            [-R number] [-m flag] hostname [server]".into());
        };
        let name = name.trim_end_matches('.');
        let server = self.nameserver();
        let found = match self.first_known(&server, crate::dns::candidates(name, &self.pod.metadata.namespace)) {
            Ok(found) => found,
            Err(timed_out) => return timed_out,
        };
        match found {
            Some((fqdn, addresses)) => Run::ok(addresses.iter().map(|a| format!("{fqdn} has address {a}\n")).collect()),
            None => Run { stdout: format!("Host {name} not found: 3(NXDOMAIN)\n"), code: 1, ..Default::default() },
        }
    }

    pub(super) fn dig(&self, args: &[&str]) -> Run {
        let short = args.contains(&"+short");
        let search = args.contains(&"+search");
        let name = args.iter().copied().find(|a| !a.starts_with(['+', '-', '@'])).unwrap_or(".");
        let server =
            args.iter().find_map(|a| a.strip_prefix('@')).map(String::from).unwrap_or_else(|| self.nameserver());
        let bare = name.trim_end_matches('.');
        let candidates = if search && !name.ends_with('.') {
            crate::dns::candidates(bare, &self.pod.metadata.namespace)
        } else {
            vec![bare.to_string()]
        };
        let found = match self.first_known(&server, candidates) {
            Ok(found) => found,
            // dig exits 9 when no reply came.
            Err(timed_out) if short => return Run { code: 9, ..timed_out },
            Err(timed_out) => {
                let head = format!("\n; <<>> DiG {DIG_VERSION} <<>> {}\n;; global options: +cmd\n", args.join(" "));
                return Run { stdout: head + &timed_out.stdout, code: 9, ..timed_out };
            }
        };
        if short {
            let addresses = found.map(|(_, a)| a).unwrap_or_default();
            return Run::ok(addresses.iter().map(|a| format!("{a}\n")).collect());
        }
        let (status, asked, answers) = match &found {
            Some((fqdn, addresses)) => ("NOERROR", fqdn.clone(), addresses.clone()),
            None => ("NXDOMAIN", bare.to_string(), Vec::new()),
        };
        let authority = usize::from(found.is_none());
        let mut out = String::new();
        let _ = writeln!(out, "\n; <<>> DiG {DIG_VERSION} <<>> {}", args.join(" "));
        out.push_str(";; global options: +cmd\n;; Got answer:\n");
        let _ = writeln!(out, ";; ->>HEADER<<- opcode: QUERY, status: {status}, id: 4661");
        let _ = writeln!(
            out,
            ";; flags: qr aa rd; QUERY: 1, ANSWER: {}, AUTHORITY: {authority}, ADDITIONAL: 1",
            answers.len()
        );
        out.push_str(";; WARNING: recursion requested but not available\n\n");
        out.push_str(";; OPT PSEUDOSECTION:\n; EDNS: version: 0, flags:; udp: 4096\n");
        let _ = writeln!(out, ";; QUESTION SECTION:\n;{asked}.\t\t\tIN\tA\n");
        if answers.is_empty() {
            out.push_str(";; AUTHORITY SECTION:\n");
            let _ = writeln!(
                out,
                "cluster.local.\t\t30\tIN\tSOA\tns.dns.cluster.local. hostmaster.cluster.local. 1763752214 7200 1800 86400 30\n"
            );
        } else {
            out.push_str(";; ANSWER SECTION:\n");
            for a in &answers {
                let _ = writeln!(out, "{asked}.\t30\tIN\tA\t{a}");
            }
            out.push('\n');
        }
        let when = self.world.now().ctime(true);
        let _ = writeln!(out, ";; Query time: 0 msec\n;; SERVER: {server}#53({server})\n;; WHEN: {when}");
        let _ = writeln!(out, ";; MSG SIZE  rcvd: {}\n", 60 + asked.len() * 2 + answers.len() * 16);
        Run::ok(out)
    }
}
