//! Whether a pod tolerates a node's taint: what the scheduler, the taint-eviction
//! controller and the DaemonSet controller all ask.

use crate::api::{Pod, Taint, Toleration};

/// Whether a toleration matches a taint (key, operator, value and effect).
pub fn tolerates(t: &Toleration, taint: &Taint) -> bool {
    if !t.effect.is_empty() && t.effect != taint.effect {
        return false;
    }
    match t.operator.as_deref().unwrap_or("Equal") {
        "Exists" => t.key.is_empty() || t.key == taint.key,
        _ => t.key == taint.key && t.value == taint.value,
    }
}

pub fn tolerated(pod: &Pod, taint: &Taint) -> bool {
    pod.spec.tolerations.iter().any(|t| tolerates(t, taint))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: &str, effect: &str) -> Taint {
        Taint { key: key.into(), value: value.into(), effect: effect.into(), time_added: None }
    }

    #[test]
    fn exists_with_empty_key_tolerates_everything() {
        let t = Toleration { operator: Some("Exists".into()), ..Default::default() };
        assert!(tolerates(&t, &taint("a", "b", "NoSchedule")));
    }

    #[test]
    fn equal_needs_key_value_and_effect_to_match() {
        let t = Toleration { key: "k".into(), value: "v".into(), effect: "NoSchedule".into(), ..Default::default() };
        assert!(tolerates(&t, &taint("k", "v", "NoSchedule")));
        assert!(!tolerates(&t, &taint("k", "w", "NoSchedule")));
        assert!(!tolerates(&t, &taint("k", "v", "NoExecute")));
    }
}
