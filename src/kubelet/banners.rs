//! What server images print as they start, as their real entrypoints and servers log it, and
//! what the database images print when they refuse to start. `$HOSTNAME` and the `$…TIME`
//! marks stand for what the process reads when it runs; `script::fill_in` fills them in.

use super::images::App;

/// The version a database image's tag installs.
fn version(repository: &str, tag: &str) -> &'static str {
    match (repository, tag) {
        ("mysql", "5.6") => "5.6.51",
        ("mysql", "5.7") => "5.7.44",
        ("mysql", "8" | "8.0") => "8.0.40",
        ("mysql", _) => "9.1.0",
        ("postgres", "13") => "13.18",
        ("postgres", "14") => "14.15",
        ("postgres", "15") => "15.10",
        ("postgres", "16") => "16.6",
        ("postgres", _) => "17.2",
        ("mongo", "6" | "6.0") => "6.0.19",
        ("mongo", "7" | "7.0") => "7.0.15",
        ("mongo", _) => "8.0.3",
        _ => "",
    }
}

fn mysql_note(text: &str) -> String {
    format!("$DATETIME [Note] [Entrypoint]: {text}")
}

/// Start lines, each with its offset from the start in milliseconds.
pub fn start_lines(repository: &str, tag: &str, argv: &[String]) -> Vec<(u64, String)> {
    let one = |line: &str| vec![(20, line.to_string())];
    match (App::of(repository), repository) {
        (Some(App::Bootcamp), _) => one("Kubernetes Bootcamp App Started At: $STARTED | Running On:  $HOSTNAME \n"),
        (Some(App::HelloApp), _) => one("$LOGTIME Server listening on port 8080"),
        (_, "nginx" | "nginxdemos/hello") => one("/docker-entrypoint.sh: Configuration complete; ready for start up"),
        (_, "httpd") => one("AH00094: Command line: 'httpd -D FOREGROUND'"),
        (_, "redis") => one("* Ready to accept connections tcp"),
        (_, "mysql") => {
            let v = version(repository, tag);
            let mut lines = vec![
                (10, mysql_note(&format!("Entrypoint script for MySQL Server {v}-1.el9 started."))),
                (20, mysql_note("Switching to dedicated user 'mysql'")),
                (30, mysql_note(&format!("Entrypoint script for MySQL Server {v}-1.el9 started."))),
                (40, mysql_note("Initializing database files")),
                (9000, mysql_note("Database files initialized")),
                (12000, mysql_note("MySQL init process done. Ready for start up.")),
            ];
            if v.starts_with('5') {
                lines.push((13000, "$MICROS 0 [Note] mysqld: ready for connections.".into()));
                lines.push((13000, format!("Version: '{v}'  socket: '/var/run/mysqld/mysqld.sock'  port: 3306  MySQL Community Server (GPL)")));
            } else {
                lines.push((13000, format!("$MICROS 0 [System] [MY-010931] [Server] /usr/sbin/mysqld: ready for connections. Version: '{v}'  socket: '/var/run/mysqld/mysqld.sock'  port: 3306  MySQL Community Server - GPL.")));
            }
            lines
        }
        (_, "postgres") => {
            let v = version(repository, tag);
            let major = v.split('.').next().unwrap_or(v);
            vec![
                (10, "The files belonging to this database system will be owned by user \"postgres\".".into()),
                (10, "This user must also own the server process.".into()),
                (2000, "Success. You can now start the database server using:".into()),
                (3000, "PostgreSQL init process complete; ready for start up.".into()),
                (3100, format!("$PGTIME [1] LOG:  starting PostgreSQL {v} (Debian {v}-1.pgdg120+1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit")),
                (3100, "$PGTIME [1] LOG:  listening on IPv4 address \"0.0.0.0\", port 5432".into()),
                (3100, "$PGTIME [1] LOG:  listening on IPv6 address \"::\", port 5432".into()),
                (3100, format!("$PGTIME [1] LOG:  listening on Unix socket \"/var/run/postgresql/.s.PGSQL.5432\" (PostgreSQL {major})")),
                (3200, "$PGTIME [1] LOG:  database system is ready to accept connections".into()),
            ]
        }
        (_, "mongo") => vec![(
            500,
            r#"{"t":{"$date":"$MONGOTIME"},"s":"I",  "c":"NETWORK",  "id":23016,   "ctx":"listener","msg":"Waiting for connections","attr":{"port":27017,"ssl":"off"}}"#.into(),
        )],
        (_, "wordpress") => vec![
            (10, "WordPress not found in /var/www/html - copying now...".into()),
            (500, "Complete! WordPress has been successfully copied to /var/www/html".into()),
            (600, "[$APACHETIME] [mpm_prefork:notice] [pid 1] AH00163: Apache/2.4.62 (Debian) PHP/8.2.26 configured -- resuming normal operations".into()),
            (600, "[$APACHETIME] [core:notice] [pid 1] AH00094: Command line: 'apache2 -D FOREGROUND'".into()),
        ],
        (_, super::admission_webhook::REPOSITORY) => {
            one(&super::admission_webhook::Rules::from_args(argv.get(1..).unwrap_or_default()).banner())
        }
        (_, "hashicorp/http-echo") => {
            let listen = argv.iter().find_map(|a| a.strip_prefix("-listen=")).unwrap_or(":5678");
            one(&format!("$LOGTIME [INFO] server is listening on {listen}"))
        }
        // An operator built on controller-runtime: its manager starts, then its controller's
        // watches and workers.
        (_, "kubeloop/website-operator") => vec![
            (10, "$MONGOTIME\tINFO\tsetup\tstarting manager".into()),
            (20, "$MONGOTIME\tINFO\tStarting EventSource\t{\"controller\": \"website\", \"controllerGroup\": \"example.kubeloop.dev\", \"controllerKind\": \"Website\", \"source\": \"kind source: *v1.Website\"}".into()),
            (20, "$MONGOTIME\tINFO\tStarting EventSource\t{\"controller\": \"website\", \"controllerGroup\": \"example.kubeloop.dev\", \"controllerKind\": \"Website\", \"source\": \"kind source: *v1.Deployment\"}".into()),
            (20, "$MONGOTIME\tINFO\tStarting EventSource\t{\"controller\": \"website\", \"controllerGroup\": \"example.kubeloop.dev\", \"controllerKind\": \"Website\", \"source\": \"kind source: *v1.Service\"}".into()),
            (30, "$MONGOTIME\tINFO\tStarting Controller\t{\"controller\": \"website\", \"controllerGroup\": \"example.kubeloop.dev\", \"controllerKind\": \"Website\"}".into()),
            (40, "$MONGOTIME\tINFO\tStarting workers\t{\"controller\": \"website\", \"controllerGroup\": \"example.kubeloop.dev\", \"controllerKind\": \"Website\", \"worker count\": 1}".into()),
        ],
        // memcached and nginx-slim print nothing as they start.
        (_, "memcached" | "registry.k8s.io/nginx-slim") => Vec::new(),
        _ => one("started"),
    }
}

/// mysql's entrypoint finding no password variable (it exits 1).
pub fn mysql_refusal(tag: &str) -> Vec<String> {
    let v = version("mysql", tag);
    vec![
        mysql_note(&format!("Entrypoint script for MySQL Server {v}-1.el9 started.")),
        mysql_note("Switching to dedicated user 'mysql'"),
        mysql_note(&format!("Entrypoint script for MySQL Server {v}-1.el9 started.")),
        "$DATETIME [ERROR] [Entrypoint]: Database is uninitialized and password option is not specified".into(),
        "    You need to specify one of the following as an environment variable:".into(),
        "    - MYSQL_ROOT_PASSWORD".into(),
        "    - MYSQL_ALLOW_EMPTY_PASSWORD".into(),
        "    - MYSQL_RANDOM_ROOT_PASSWORD".into(),
    ]
}

/// postgres's entrypoint finding no superuser password (it exits 1).
pub fn postgres_refusal() -> Vec<String> {
    [
        "Error: Database is uninitialized and superuser password is not specified.",
        "       You must specify POSTGRES_PASSWORD to a non-empty value for the",
        "       superuser. For example, \"-e POSTGRES_PASSWORD=password\" on \"docker run\".",
        "",
        "       You may also use \"POSTGRES_HOST_AUTH_METHOD=trust\" to allow all",
        "       connections without a password. This is *not* recommended.",
        "",
        "       See PostgreSQL documentation about \"trust\":",
        "       https://www.postgresql.org/docs/current/auth-trust.html",
    ]
    .iter()
    .map(|l| l.to_string())
    .collect()
}

/// The CPU example's `stress` (glog to stderr): what it allocates, and a thread per CPU.
pub fn vish_stress(argv: &[String]) -> Vec<(crate::sim::Duration, String)> {
    let flag = |name: &str| {
        argv.iter().enumerate().find_map(|(i, a)| {
            let a = a.trim_start_matches('-');
            match a.split_once('=') {
                Some((k, v)) if k == name => Some(v.to_string()),
                None if a == name => argv.get(i + 1).cloned(),
                _ => None,
            }
        })
    };
    let cpus: u32 = flag("cpus").and_then(|c| c.parse().ok()).unwrap_or(0);
    let memory = flag("mem-total").unwrap_or_else(|| "0".into());
    let mut lines = vec![format!(
        "$GLOG main.go:26] Allocating \"{memory}\" memory, in \"4Ki\" chunks, with a 1ms sleep between allocations"
    )];
    lines.extend((0..cpus.min(64)).map(|_| "$GLOG main.go:39] Spawning a thread to consume CPU".to_string()));
    lines.into_iter().map(|l| (crate::sim::Duration::ZERO, l)).collect()
}
