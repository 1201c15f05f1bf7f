//! What the web servers in the sandbox answer: nginx's and httpd's pages and the tutorials'
//! apps, which name the pod that answered.

use crate::kubelet::images::{self, App};

/// The server that answered a request: its pod, image and port.
pub(super) struct Server {
    pub(super) pod: String,
    pub(super) image: images::ImageRef,
    pub(super) port: u16,
    /// Which tutorial app it is, if one.
    pub(super) app: Option<App>,
    /// The pod's address.
    pub(super) ip: String,
    /// Its process's command line (http-echo answers its `-text`).
    pub(super) argv: Vec<String>,
}

/// The server in the pod that answered a `sim curl` request (its one-line summary names the
/// pod and its IP), if a pod answered.
pub(super) fn served_by(world: &dyn super::World, summary: &str) -> Option<Server> {
    let rest = summary.split(" from pod ").nth(1)?;
    let (name, rest) = rest.split_once(" (")?;
    let ip = rest.split(')').next()?;
    // The pod as the kubelet running it knows it, and its process's command line as that
    // kubelet started it.
    let (kubelet, pod) = world.kubelets().into_iter().find_map(|k| {
        let pod = k.pods().find(|p| p.name() == name && p.as_pod().is_some_and(|p| p.status.pod_ip == ip))?;
        Some((k, pod.clone()))
    })?;
    let pod = pod.as_pod()?;
    let objects = kubelet.objects();
    pod.spec.containers.iter().find_map(|c| {
        let image = images::parse_reference(&c.image);
        let info = images::lookup(&image).ok()?;
        let (command, args) = crate::kubelet::env::command_line(&objects, pod, c, None);
        let port = *crate::kubelet::script::listening(info.behaviour, info.repository, &command, &args).first()?;
        let argv = crate::kubelet::entrypoint::argv(info.repository, &command, &args);
        let app = App::of(&image.repository);
        Some(Server { pod: name.to_string(), app, image, port, ip: ip.to_string(), argv })
    })
}

/// The page a tutorial app answers with, if it is one (it names the pod that answered, so a
/// student sees a Service spread requests).
pub(super) fn app_page(
    server: &Server,
    client: &str,
    path: &str,
    query: &str,
    now: crate::sim::Time,
) -> Option<String> {
    let (pod, tag) = (&server.pod, server.image.tag.as_str());
    Some(match server.app? {
        App::Bootcamp => {
            let version = tag.trim_start_matches('v');
            format!("Hello Kubernetes bootcamp! | Running on: {pod} | v={version}\n")
        }
        App::HelloApp => format!("Hello, world!\nVersion: {tag}.0\nHostname: {pod}\n"),
        App::NodeHello => "Hello Kubernetes!".to_string(),
        App::Agnhost => match path {
            "/hostname" => pod.to_string(),
            "/echo" => query.split('&').find_map(|kv| kv.strip_prefix("msg=")).unwrap_or_default().to_string(),
            "/healthz" | "/readyz" => "ok".to_string(),
            _ => format!("NOW: {}", now.rfc3339()),
        },
        App::Echoserver => format!(
            "CLIENT VALUES:\nclient_address={client}\ncommand=GET\nreal path={path}\nquery={}\nrequest_version=1.1\n\n\
             SERVER VALUES:\nserver_version=nginx: 1.10.0 - lua: 10001\n\nHEADERS RECEIVED:\naccept=*/*\n\
             user-agent=curl/8.5.0\nBODY:\n-no body in request-",
            if query.is_empty() { "nil" } else { query }
        ),
        App::GuestbookFrontend => GUESTBOOK_INDEX.to_string(),
        App::HttpEcho => {
            let text = server.argv.iter().find_map(|a| a.strip_prefix("-text=")).unwrap_or_default();
            format!("{text}\n")
        }
        App::NginxHello => nginx_hello(server, path, now),
        App::WordPress => WORDPRESS_INSTALL.to_string(),
    })
}

/// nginxdemos/hello's page: the address and name of the server that answered, the time and
/// the URI (as plain text with the `plain-text` tag).
fn nginx_hello(server: &Server, path: &str, now: crate::sim::Time) -> String {
    let stamp = now.rfc1123z();
    let p: Vec<&str> = stamp.split([' ', ',']).filter(|w| !w.is_empty()).collect();
    let date = match p.as_slice() {
        [_, day, month, year, hms, zone] => format!("{day}/{month}/{year}:{hms} {zone}"),
        _ => stamp.clone(),
    };
    let (address, name) = (format!("{}:{}", server.ip, server.port), &server.pod);
    if server.image.tag == "plain-text" {
        return format!("Server address: {address}\nServer name: {name}\nDate: {date}\nURI: {path}\n");
    }
    format!(
        "<!DOCTYPE html>\n<html>\n<head>\n<title>Hello World</title>\n</head>\n<body>\n\
         <p><span>Server&nbsp;address:</span> <span>{address}</span></p>\n\
         <p><span>Server&nbsp;name:</span> <span>{name}</span></p>\n\
         <p class=\"smaller\"><span>Date:</span> <span>{date}</span></p>\n\
         <p class=\"smaller\"><span>URI:</span> <span>{path}</span></p>\n</body>\n</html>\n"
    )
}

/// WordPress before it is set up: its installer's first page.
const WORDPRESS_INSTALL: &str = "<!DOCTYPE html>\n<html lang=\"en-US\">\n<head>\n<title>WordPress &rsaquo; Installation</title>\n</head>\n<body class=\"wp-core-ui language-chooser\">\n<p id=\"logo\">WordPress</p>\n<form id=\"setup\" method=\"post\" action=\"?step=1\"><label class=\"screen-reader-text\" for=\"language\">Select a default language</label>\n</form>\n</body>\n</html>\n";

pub(super) const NGINX_INDEX: &str = "<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href=\"http://nginx.org/\">nginx.org</a>.<br/>
Commercial support is available at
<a href=\"http://nginx.com/\">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
";

pub(super) const NGINX_50X: &str = "<!DOCTYPE html>
<html>
<head>
<title>Error</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>An error occurred.</h1>
<p>Sorry, the page you are looking for is currently unavailable.<br/>
Please try again later.</p>
<p>If you are the system administrator of this resource then you should check
the error log for details.</p>
<p><em>Faithfully yours, nginx.</em></p>
</body>
</html>
";

pub(super) const NGINX_404: &str = "<html>
<head><title>404 Not Found</title></head>
<body>
<center><h1>404 Not Found</h1></center>
<hr><center>nginx</center>
</body>
</html>
";

/// The guestbook frontend's page (its script then talks to Redis through guestbook.php).
pub(super) const GUESTBOOK_INDEX: &str = "<html ng-app=\"redis\">\n  <head>\n    <title>Guestbook</title>\n  </head>\n  <body ng-controller=\"RedisCtrl\">\n    <div style=\"width: 50%; margin-left: 20px\">\n      <h2>Guestbook</h2>\n    <form>\n    <fieldset>\n    <input ng-model=\"msg\" placeholder=\"Messages\" class=\"form-control\" type=\"text\" name=\"input\"><br>\n    <button type=\"button\" class=\"btn btn-primary\" ng-click=\"controller.onRedis()\">Submit</button>\n    </fieldset>\n    </form>\n    </div>\n  </body>\n</html>\n";

pub(super) const HTTPD_INDEX: &str = "<html><body><h1>It works!</h1></body></html>\n";

pub(super) const HTTPD_404: &str = "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">
<html><head>
<title>404 Not Found</title>
</head><body>
<h1>Not Found</h1>
<p>The requested URL was not found on this server.</p>
</body></html>
";

/// The page nginx answers with itself, for an ingress-nginx summary line (see `cluster::ingress`) that is not a
/// backend's answer: (status code, status text, body).
pub(super) fn nginx_page(summary: &str) -> Option<(u16, String, String)> {
    let rest = summary.strip_prefix("HTTP/1.1 ")?;
    if !rest.contains(" from ingress-nginx pod ") || rest.contains(" from pod ") {
        return None;
    }
    let (status, _) = rest.split_once(" from ingress-nginx pod ")?;
    let code: u16 = status.split(' ').next()?.parse().ok()?;
    let body = format!(
        "<html>\n<head><title>{status}</title></head>\n<body>\n<center><h1>{status}</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>\n"
    );
    Some((code, status.to_string(), body))
}
