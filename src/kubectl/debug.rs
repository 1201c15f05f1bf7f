//! `kubectl debug node/NAME --image=IMAGE [-it]`: a pod on the node in its host namespaces,
//! with the node's filesystem at /host, attached to when asked — how the docs debug a node
//! without logging in to it.

use super::Output;
use super::args::Args;
use super::object_watch::ObjectWatch;
use super::session::Attach;
use crate::api::{Kind, Object};
use crate::apiserver::{Body, Request, Subresource, Verb};
use crate::cluster::Cluster;
use crate::sim::Duration;
use crate::util::json_macro::json;

/// How long kubectl waits for the debugging pod to start before it gives up attaching.
const POD_RUNNING_TIMEOUT: Duration = Duration::seconds(60);

pub fn debug(cluster: &mut Cluster, args: &Args) -> Output {
    let Some(target) = args.positionals.first() else {
        return Output::err("error: debugging target must be specified\nSee 'kubectl debug -h' for help and examples");
    };
    let Some(node) = target.strip_prefix("node/").or_else(|| target.strip_prefix("nodes/")) else {
        return Output::err(format!(
            "error: debugging {target} is not supported in this sandbox: it debugs nodes (kubectl debug node/NAME -it --image=busybox)"
        ));
    };
    let Some(image) = args.get("image") else {
        return Output::err("error: --image is required for node debugging");
    };
    match cluster.request(Request::get(Kind::Node, "", node)) {
        Ok(_) => {}
        Err(status) => return Output::err(status.kubectl_message()),
    }
    let namespace = super::namespace_flag(args);
    let interactive = args.has("stdin");
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": format!("node-debugger-{node}-"), "namespace": namespace.clone()},
        "spec": {
            "containers": [{
                "name": "debugger",
                "image": image,
                "stdin": interactive,
                "tty": args.has("tty"),
                "terminationMessagePolicy": "FallbackToLogsOnError",
                "volumeMounts": [{"mountPath": "/host", "name": "host-root"}],
            }],
            "hostIPC": true,
            "hostNetwork": true,
            "hostPID": true,
            "nodeName": node,
            "restartPolicy": "Never",
            "tolerations": [{"operator": "Exists"}],
            "volumes": [{"name": "host-root", "hostPath": {"path": "/"}}],
        },
    });
    let mut req = Request::new(Verb::Create, Kind::Pod, &namespace, "");
    req.body = Some(Body::Json(pod));
    let created = match cluster.request(req) {
        Ok(reply) => reply.object(),
        Err(status) => return Output::err(status.kubectl_message()),
    };
    let name = created.as_deref().map(|o| o.name().to_string()).unwrap_or_default();
    let mut out = Output::ok(format!("Creating debugging pod {name} with container debugger on node {node}.\n"));
    if !interactive {
        return out;
    }
    // Attach once the shell runs, as `kubectl run -it` does.
    let deadline = cluster.now() + POD_RUNNING_TIMEOUT;
    let mut watch = match ObjectWatch::open(cluster, Kind::Pod, &namespace, &name) {
        Ok(watch) => watch,
        Err(status) => return Output { stderr: status.kubectl_message() + "\n", code: 1, ..out },
    };
    let pod = loop {
        let pod = watch.current.clone();
        let running = pod.as_deref().is_some_and(|o| matches!(o, Object::Pod(p) if p.status.phase != "Pending"));
        if running || cluster.now() >= deadline {
            break pod;
        }
        cluster.step_toward(deadline);
        watch.poll(cluster);
    };
    watch.close(cluster);
    let shell =
        pod.as_deref().and_then(|o| o.as_pod()).and_then(|p| super::run::interactive(p).map(|s| (p.clone(), s)));
    match shell {
        Some((p, shell)) if p.status.phase == "Running" => {
            let options = super::attach::stream_options("debugger", true, args.has("tty"));
            match cluster.connect_stream(Subresource::Attach, &namespace, &name, &options) {
                Ok(stream) => {
                    out.stderr.push_str("If you don't see a command prompt, try pressing enter.\n");
                    out.attach = Some(Box::new(Attach::main(&p, stream, &shell, None, args.has("tty"), false)));
                }
                Err(status) => {
                    out.stderr.push_str(&(status.kubectl_message() + "\n"));
                    out.code = 1;
                }
            }
        }
        Some(_) | None => {
            out.stderr.push_str("error: timed out waiting for the condition\n");
            out.code = 1;
        }
    }
    out
}
