//! `kubectl create poddisruptionbudget|priorityclass`: a disruption budget or a priority class
//! from flags, with kubectl's own checks of them.

use super::Output;
use super::args::Args;
use serde_json::{Value, json};

/// `10` or `30%`, as kubectl's check of `--min-available` and `--max-unavailable` accepts.
fn int_or_percent(text: &str) -> Option<Value> {
    let digits = text.strip_suffix('%').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(if text.ends_with('%') { json!(text) } else { json!(digits.parse::<i64>().ok()?) })
}

/// `create pdb NAME --selector=SELECTOR (--min-available=N | --max-unavailable=N)`.
pub fn pdb(args: &Args, name: &str) -> Result<Value, Output> {
    let selector = args.get("selector").unwrap_or_default();
    if selector.is_empty() {
        return Err(Output::err("error: a selector must be specified"));
    }
    let (min, max) = (args.get("min-available").unwrap_or_default(), args.get("max-unavailable").unwrap_or_default());
    match (min.is_empty(), max.is_empty()) {
        (true, true) => return Err(Output::err("error: one of min-available or max-unavailable must be specified")),
        (false, false) => return Err(Output::err("error: min-available and max-unavailable cannot be both specified")),
        _ => {}
    }
    let selector = crate::api::meta::parse_selector(selector).map_err(|e| Output::err(format!("error: {e}")))?;
    let mut spec = json!({"selector": selector});
    if !min.is_empty() {
        let v = int_or_percent(min).ok_or_else(|| Output::err("error: invalid format specified for min-available"))?;
        spec["minAvailable"] = v;
    } else {
        let v =
            int_or_percent(max).ok_or_else(|| Output::err("error: invalid format specified for max-unavailable"))?;
        spec["maxUnavailable"] = v;
    }
    Ok(
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name}, "spec": spec, "status": {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0}}),
    )
}

/// `create priorityclass NAME --value=N [--global-default] [--description=TEXT]
/// [--preemption-policy=PreemptLowerPriority|Never]`.
pub fn priority_class(args: &Args, name: &str) -> Result<Value, Output> {
    let value = match args.get("value") {
        None => 0,
        Some(v) => v.parse::<i32>().map_err(|_| {
            Output::err(format!("error: invalid argument \"{v}\" for \"--value\" flag: strconv.ParseInt: parsing \"{v}\": invalid syntax"))
        })?,
    };
    let global = args.has("global-default");
    Ok(json!({
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": global,
        "description": args.get("description").unwrap_or_default(),
        "preemptionPolicy": args.get("preemption-policy").unwrap_or("PreemptLowerPriority"),
    }))
}
