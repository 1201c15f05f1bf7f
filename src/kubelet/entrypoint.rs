//! What an image runs for a container's `command` and `args`: `command` replaces the image's
//! ENTRYPOINT (and drops its CMD); `args` alone replace the CMD and go to the ENTRYPOINT. The
//! images' entrypoints follow docker-library's conventions: a `docker-entrypoint.sh` that
//! sets its server up and execs its arguments (prepending the server when they start with an
//! option; curl's also when they name no program it has), or the program itself as the
//! entrypoint, its arguments being its flags.

use super::images::Behaviour;

/// How an image starts what it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entrypoint {
    /// Only a CMD: args replace it and run as the program (httpd, busybox, centos…).
    Cmd(&'static [&'static str]),
    /// A script that execs its args; with `server`, args starting with `-` are the server's
    /// options, so it runs the server with them (redis, mysql, postgres, curl…). nginx's runs
    /// whatever it is given.
    Script { cmd: &'static [&'static str], server: Option<&'static str> },
    /// The program itself: args are its flags (agnhost, http-echo, stress, the tutorials' apps).
    Program(&'static str),
}

fn entrypoint(repository: &str) -> Entrypoint {
    use Entrypoint::*;
    match repository {
        "nginx" | "nginxdemos/hello" => Script { cmd: &["nginx", "-g", "daemon off;"], server: None },
        "registry.k8s.io/nginx-slim" => Cmd(&["nginx", "-g", "daemon off;"]),
        "httpd" => Cmd(&["httpd-foreground"]),
        "redis" => Script { cmd: &["redis-server"], server: Some("redis-server") },
        "mysql" => Script { cmd: &["mysqld"], server: Some("mysqld") },
        "postgres" => Script { cmd: &["postgres"], server: Some("postgres") },
        "mongo" => Script { cmd: &["mongod"], server: Some("mongod") },
        "memcached" => Script { cmd: &["memcached"], server: Some("memcached") },
        "wordpress" => Script { cmd: &["apache2-foreground"], server: None },
        "curlimages/curl" => Script { cmd: &["curl"], server: Some("curl") },
        "hashicorp/http-echo" => Program("/http-echo"),
        "vish/stress" => Program("/stress"),
        "kubeloop/website-operator" => Program("/manager"),
        "kubeloop/admission-webhook" => Program("/admission-webhook"),
        // The other servers: their program is the entrypoint. Shells and interpreters (busybox,
        // ubuntu, python…) have a CMD only.
        _ => match super::images::CATALOG.iter().find(|i| i.repository == repository).map(|i| i.behaviour) {
            Some(Behaviour::Shell | Behaviour::Interpreter) => Cmd(&[]),
            _ => Program(""),
        },
    }
}

/// The command line the container's process ends up running; empty when the image's default
/// program runs as it is (a server's, or a shell's that exits at once).
pub fn argv(repository: &str, command: &[String], args: &[String]) -> Vec<String> {
    let owned = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    if !command.is_empty() {
        return command.iter().chain(args).cloned().collect();
    }
    match entrypoint(repository) {
        Entrypoint::Cmd(cmd) if args.is_empty() => owned(cmd),
        Entrypoint::Cmd(_) => args.to_vec(),
        Entrypoint::Script { cmd, .. } if args.is_empty() => owned(cmd),
        Entrypoint::Script { server: Some(server), .. }
            if args[0].starts_with('-')
                || (server == "redis-server" && args[0].ends_with(".conf"))
                || (server == "curl" && !ships(repository, &args[0])) =>
        {
            std::iter::once(server.to_string()).chain(args.iter().cloned()).collect()
        }
        Entrypoint::Script { .. } => args.to_vec(),
        Entrypoint::Program("") => Vec::new(),
        Entrypoint::Program(program) => std::iter::once(program.to_string()).chain(args.iter().cloned()).collect(),
    }
}

/// Whether the image has `program` (curl's entrypoint runs `curl URL` for a URL alone).
fn ships(repository: &str, program: &str) -> bool {
    let image = super::images::parse_reference(repository);
    crate::kubelet::image_family::Userland::of(&image).installed(program.rsplit('/').next().unwrap_or(program))
}

/// The names of the image's own server program (what `ps` would show as PID 1).
fn server_programs(repository: &str) -> &'static [&'static str] {
    match repository {
        "nginx" | "nginxdemos/hello" | "registry.k8s.io/nginx-slim" => &["nginx", "nginx-debug"],
        "httpd" => &["httpd-foreground", "httpd"],
        "redis" => &["redis-server"],
        "mysql" => &["mysqld"],
        "postgres" => &["postgres"],
        "mongo" => &["mongod"],
        "memcached" => &["memcached"],
        "wordpress" => &["apache2-foreground"],
        "fluentd" => &["fluentd"],
        "hashicorp/http-echo" => &["http-echo"],
        "kubeloop/admission-webhook" => &["admission-webhook"],
        "registry.k8s.io/ingress-nginx/controller" => &["nginx-ingress-controller", "nginx"],
        "kubeloop/website-operator" => &["manager"],
        _ => &[],
    }
}

/// Whether the process is the image's own server: its default program, or its server binary
/// named (`nginx -g …`, `redis-server --maxmemory 2mb`, `etcd` in `registry.k8s.io/etcd`).
pub fn serves(repository: &str, argv: &[String]) -> bool {
    let Some(first) = argv.first() else { return true };
    let program = first.rsplit('/').next().unwrap_or("");
    // `nginx -t` / `-T` test (and print) the configuration, `-v` / `-V` the version: then exit.
    if program == "nginx" && argv[1..].iter().any(|a| matches!(a.as_str(), "-t" | "-T" | "-v" | "-V" | "-h" | "-?")) {
        return false;
    }
    match server_programs(repository) {
        // An image named after its server's binary (`etcd`, `kube-proxy`).
        [] => !program.is_empty() && repository.rsplit('/').next() == Some(program),
        // The others ship clients too: `mysql` in the mysql image is not its server.
        programs => programs.contains(&program),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn nginx_runs_a_program_given_as_args_and_serves_when_given_nothing() {
        assert_eq!(argv("nginx", &[], &words("curl -s http://web")), words("curl -s http://web"));
        assert!(!serves("nginx", &argv("nginx", &[], &words("curl -s http://web"))));
        assert!(serves("nginx", &argv("nginx", &[], &[])));
    }

    #[test]
    fn redis_and_the_databases_take_options_as_their_servers_flags() {
        assert_eq!(argv("redis", &[], &words("--maxmemory 2mb")), words("redis-server --maxmemory 2mb"));
        assert_eq!(argv("redis", &[], &words("/etc/redis.conf")), words("redis-server /etc/redis.conf"));
        assert_eq!(argv("redis", &[], &words("redis-cli ping")), words("redis-cli ping"));
        assert!(serves("mysql", &argv("mysql", &[], &words("--default-authentication-plugin=mysql_native_password"))));
        assert_eq!(argv("curlimages/curl", &[], &words("-s http://web")), words("curl -s http://web"));
        assert_eq!(argv("curlimages/curl", &[], &words("http://web")), words("curl http://web"));
        assert_eq!(argv("curlimages/curl", &[], &words("sh -c date")), words("sh -c date"));
        assert!(!serves("mysql", &argv("mysql", &[], &words("mysql -h mysql -ppassword"))));
    }

    #[test]
    fn args_replace_a_cmd_and_are_the_flags_of_a_program_entrypoint() {
        assert_eq!(argv("httpd", &[], &words("echo hi")), words("echo hi"));
        assert_eq!(argv("hashicorp/http-echo", &[], &words("-text=hi")), words("/http-echo -text=hi"));
        assert!(serves("hashicorp/http-echo", &argv("hashicorp/http-echo", &[], &words("-text=hi"))));
        assert_eq!(argv("busybox", &words("sh -c"), &words("date")), words("sh -c date"));
        assert!(argv("busybox", &[], &[]).is_empty());
        assert_eq!(argv("ubuntu", &[], &words("sleep 10")), words("sleep 10"));
        assert!(argv("registry.k8s.io/e2e-test-images/agnhost", &[], &words("netexec --http-port=8080")).is_empty());
    }

    #[test]
    fn nginx_asked_to_test_its_configuration_or_print_its_version_does_not_serve() {
        assert!(!serves("nginx", &argv("nginx", &[], &words("nginx -T"))));
        assert!(!serves("nginx", &argv("nginx", &[], &words("nginx -v"))));
        assert!(serves("nginx", &argv("nginx", &[], &words("nginx -g daemon\\ off;"))));
    }
}
