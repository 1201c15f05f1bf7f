//! `IntOrString`: fields such as `maxSurge` and `targetPort` that take `3` or `"25%"`.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum IntOrString {
    Int(i32),
    String(String),
}

impl IntOrString {
    /// Resolves against `total`: an int as is, a percentage of `total` rounded up or down.
    /// Errors with the API's message for anything else.
    pub fn scaled(&self, total: i32, round_up: bool) -> Result<i32, String> {
        match self {
            IntOrString::Int(n) => Ok(*n),
            IntOrString::String(s) => {
                let pct: i64 = s.strip_suffix('%').and_then(|p| p.parse().ok()).ok_or_else(|| {
                    format!("invalid value for IntOrString: invalid type: string is not a percentage: {s}")
                })?;
                let scaled = pct * total as i64;
                Ok(if round_up { (scaled + 99).div_euclid(100) } else { scaled.div_euclid(100) } as i32)
            }
        }
    }
}

impl fmt::Display for IntOrString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntOrString::Int(n) => write!(f, "{n}"),
            IntOrString::String(s) => f.write_str(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_as_asked() {
        let p = IntOrString::String("25%".into());
        assert_eq!(p.scaled(3, true), Ok(1));
        assert_eq!(p.scaled(3, false), Ok(0));
        assert_eq!(p.scaled(10, true), Ok(3));
        assert_eq!(IntOrString::Int(2).scaled(10, true), Ok(2));
        assert!(IntOrString::String("x".into()).scaled(10, true).is_err());
    }
}
