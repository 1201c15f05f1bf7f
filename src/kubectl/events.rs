//! `kubectl events`: the newer events verb — events sorted by time, `--for kind/name`,
//! `--types=Normal,Warning`, `-A` — with its own OBJECT column (`Pod/web-x`).

use super::age::age;
use super::args::Args;
use super::{Output, namespace_flag};
use crate::api::{Event, Kind};
use crate::apiserver::fields::FieldRequirement;
use crate::apiserver::{FieldSelector, Reply, Request};
use crate::cluster::Cluster;
use crate::util::sort::StableSort;

pub fn run(cluster: &mut Cluster, args: &Args) -> Output {
    let types: Vec<String> =
        args.all("types").iter().flat_map(|t| t.split(',')).map(|t| t.trim().to_string()).collect();
    if types.iter().any(|t| !t.eq_ignore_ascii_case("Normal") && !t.eq_ignore_ascii_case("Warning")) {
        return Output::err("error: valid --types are Normal or Warning");
    }
    let output = args.get("output").unwrap_or("");
    if !matches!(output, "" | "name" | "json" | "yaml" | "jsonpath") && !output.starts_with("jsonpath=") {
        return Output::err(format!(
            "error: unable to match a printer suitable for the output format \"{output}\", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,yaml"
        ));
    }
    let all_ns = args.has("all-namespaces");
    let namespace = namespace_flag(args);
    let mut req = Request::list(Kind::Event, if all_ns { "" } else { &namespace });
    // Like kubectl, positional arguments are ignored: only `--for` narrows the list.
    let target = args.get("for");
    if let Some(target) = target {
        let Some((kind, name)) = target.split_once('/') else {
            return Output::err("error: --for must be in resource/name form");
        };
        if name.contains('/') {
            return Output::err("error: arguments in resource/name form may not have more than one slash");
        }
        let Some(kind) = Kind::from_resource_arg(kind) else {
            return Output::err(format!("error: the server doesn't have a resource type \"{kind}\""));
        };
        // kubectl's selector: kind, apiVersion and name of the involved object.
        let mut selector = FieldSelector::equals("involvedObject.kind", kind.info().kind);
        for (field, value) in [("involvedObject.apiVersion", kind.api_version()), ("involvedObject.name", name.into())]
        {
            selector.requirements.push(FieldRequirement { field: field.into(), equals: true, value });
        }
        req = req.with_fields(selector);
    }
    let mut events: Vec<Event> = match cluster.request(req) {
        Ok(Reply::List { items, .. }) => items.iter().filter_map(|o| o.as_event().cloned()).collect(),
        Ok(_) => Vec::new(),
        Err(status) => return Output::err(status.kubectl_message()),
    };
    events.retain(|e| types.is_empty() || types.iter().any(|t| t.eq_ignore_ascii_case(&e.type_)));
    if events.is_empty() {
        let stderr =
            if all_ns { "No events found.\n".into() } else { format!("No events found in {namespace} namespace.\n") };
        return Output { stderr, ..Default::default() };
    }
    events.stable_sort_by_key(|e| e.last_seen());
    match output {
        "" => {}
        "name" => {
            return Output::ok(events.iter().map(|e| format!("event/{}\n", e.metadata.name)).collect());
        }
        o => {
            let items: Vec<serde_json::Value> = events
                .iter()
                .map(|e| {
                    let mut o = crate::api::Object::Event(e.clone());
                    o.set_type_meta();
                    o.to_json_value()
                })
                .collect();
            let list = crate::util::json_macro::json!({"apiVersion": "v1", "items": items, "kind": "EventList", "metadata": {}});
            return match o {
                "json" => Output::ok(super::to_json(&list)),
                "yaml" => Output::ok(super::to_yaml(&list)),
                o => super::output::print_value(o, &list),
            };
        }
    }
    let now = cluster.now();
    let mut rows: Vec<Vec<String>> = Vec::new();
    if !args.has("no-headers") {
        let mut header: Vec<String> = Vec::new();
        if all_ns {
            header.push("NAMESPACE".into());
        }
        header.extend(["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"].map(String::from));
        rows.push(header);
    }
    for e in &events {
        let first = age(e.event_time.map(|t| t.0).or(e.first_timestamp), now);
        let count = e.count.unwrap_or(1);
        let interval =
            if count > 1 { format!("{} (x{count} over {first})", age(e.last_timestamp, now)) } else { first };
        let mut row = Vec::new();
        if all_ns {
            row.push(e.metadata.namespace.clone());
        }
        row.push(interval);
        row.push(e.type_.clone());
        row.push(e.reason.clone());
        row.push(format!("{}/{}", e.involved_object.kind, e.involved_object.name));
        row.push(e.message.trim().to_string());
        rows.push(row);
    }
    Output::ok(super::table::render(&rows))
}
