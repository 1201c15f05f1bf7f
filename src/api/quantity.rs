//! Resource quantities (`500m`, `128Mi`, `2`), as `resource.Quantity` parses them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

pub const QUANTITY_ERROR: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// A quantity as written, with its value in thousandths of a unit (milli-cores, milli-bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantity {
    text: String,
    milli: i128,
}

impl Quantity {
    pub fn parse(text: &str) -> Result<Quantity, String> {
        let milli = parse_milli(text.trim()).ok_or_else(|| QUANTITY_ERROR.to_string())?;
        Ok(Quantity { text: text.trim().to_string(), milli })
    }

    /// A quantity of whole units, e.g. a node's `pods: 110` or `cpu: 4`.
    pub fn units(n: i64) -> Quantity {
        Quantity { text: n.to_string(), milli: n as i128 * 1000 }
    }

    /// A quantity from bytes, printed with the largest exact binary suffix (`8Gi`).
    pub fn bytes(n: i64) -> Quantity {
        let suffixes = [("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)];
        let text = suffixes
            .iter()
            .find(|(_, shift)| n != 0 && n % (1i64 << shift) == 0)
            .map(|(s, shift)| format!("{}{s}", n >> shift))
            .unwrap_or_else(|| n.to_string());
        Quantity { text, milli: n as i128 * 1000 }
    }

    /// A quantity from thousandths of a unit, printed as kubectl would (`250m`, `2`).
    pub fn from_milli(milli: i64) -> Quantity {
        let text = if milli % 1000 == 0 { (milli / 1000).to_string() } else { format!("{milli}m") };
        Quantity { text, milli: milli as i128 }
    }

    /// Thousandths of a unit, rounded up as Kubernetes rounds requests.
    pub fn milli(&self) -> i64 {
        self.milli.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// Whole units, rounded up (`500m` cpu is 1; `1.5` is 2).
    pub fn value(&self) -> i64 {
        (self.milli.div_euclid(1000) + i128::from(self.milli.rem_euclid(1000) != 0)) as i64
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn parse_milli(text: &str) -> Option<i128> {
    let (sign, body) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => (1, text),
    };
    let num_len = body.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(body.len());
    let (number, suffix) = body.split_at(num_len);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return None;
    }
    let (int_part, frac_part) = number.split_once('.').unwrap_or((number, ""));
    // Value scaled by 10^frac_digits, then by the suffix.
    let digits = format!("{int_part}{frac_part}");
    let mantissa: i128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    let frac_digits = frac_part.len() as i32;
    let (base, exp): (i128, i32) = match suffix {
        "" => (10, 0),
        "n" => (10, -9),
        "u" => (10, -6),
        "m" => (10, -3),
        "k" => (10, 3),
        "M" => (10, 6),
        "G" => (10, 9),
        "T" => (10, 12),
        "P" => (10, 15),
        "E" => (10, 18),
        "Ki" => (2, 10),
        "Mi" => (2, 20),
        "Gi" => (2, 30),
        "Ti" => (2, 40),
        "Pi" => (2, 50),
        "Ei" => (2, 60),
        s if s.starts_with(['e', 'E']) => (10, s[1..].parse().ok()?),
        _ => return None,
    };
    // milli = mantissa * base^exp * 1000 / 10^frac_digits, rounded up.
    let mut numerator = mantissa.checked_mul(1000)?;
    let mut denominator: i128 = 10i128.checked_pow(frac_digits as u32)?;
    if exp >= 0 {
        numerator = numerator.checked_mul(base.checked_pow(exp as u32)?)?;
    } else {
        denominator = denominator.checked_mul(base.checked_pow((-exp) as u32)?)?;
    }
    let value = numerator / denominator + i128::from(numerator % denominator != 0);
    Some(sign * value)
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Int(i64),
            Float(f64),
        }
        let text = match Raw::deserialize(d)? {
            Raw::Text(t) => t,
            Raw::Int(i) => i.to_string(),
            Raw::Float(f) => f.to_string(),
        };
        Quantity::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_quantities_parse_to_millicores() {
        assert_eq!(Quantity::parse("500m").unwrap().milli(), 500);
        assert_eq!(Quantity::parse("2").unwrap().milli(), 2000);
        assert_eq!(Quantity::parse("0.25").unwrap().milli(), 250);
        assert_eq!(Quantity::parse("1.5").unwrap().value(), 2);
    }

    #[test]
    fn memory_quantities_use_binary_and_decimal_suffixes() {
        assert_eq!(Quantity::parse("128Mi").unwrap().value(), 128 << 20);
        assert_eq!(Quantity::parse("1G").unwrap().value(), 1_000_000_000);
        assert_eq!(Quantity::parse("1e3").unwrap().value(), 1000);
        assert_eq!(Quantity::bytes(8 << 30).as_str(), "8Gi");
    }

    #[test]
    fn malformed_quantities_get_the_api_servers_message() {
        for bad in ["", "abc", "12Q", "1..2", "Mi"] {
            assert_eq!(Quantity::parse(bad).unwrap_err(), QUANTITY_ERROR, "{bad}");
        }
    }
}
