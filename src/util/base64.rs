//! Base64, as Secrets hold their values, etcd's JSON output shows keys and values, the
//! `base64` command reads and writes them, and share links carry a session (URL-safe).

/// The standard alphabet (RFC 4648 §4).
pub const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// The URL- and filename-safe alphabet (RFC 4648 §5).
pub const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// `bytes` in `alphabet`, padded with `=` to a multiple of four when `pad`.
pub fn encode_with(bytes: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(alphabet[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

/// Standard, padded base64.
pub fn encode(bytes: &[u8]) -> String {
    encode_with(bytes, STANDARD, true)
}

/// Decodes `text` in `alphabet`, with or without padding; None when it holds anything else
/// (whitespace aside, as `base64 -d` skips line breaks).
pub fn decode_with(text: &str, alphabet: &[u8; 64]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    let body = text.trim_end_matches(|c: char| c == '=' || c.is_ascii_whitespace());
    for c in body.bytes().filter(|c| !c.is_ascii_whitespace()) {
        let v = alphabet.iter().position(|a| *a == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Standard base64, padded or not.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    decode_with(text, STANDARD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_pads_like_the_standard_alphabet() {
        assert_eq!(encode(b""), "");
        assert_eq!(encode(b"f"), "Zg==");
        assert_eq!(encode(b"fo"), "Zm8=");
        assert_eq!(encode(b"foo"), "Zm9v");
        assert_eq!(encode_with(b"\xfb\xff", URL_SAFE, false), "-_8");
    }

    #[test]
    fn decoding_takes_padding_or_none_and_refuses_other_characters() {
        assert_eq!(decode("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode("aGVsbG8").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode("aGVs\nbG8=\n").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode("a*b"), None);
    }

    #[test]
    fn every_length_round_trips_in_both_alphabets() {
        let bytes: Vec<u8> = (0..=255).collect();
        for n in 0..bytes.len() {
            assert_eq!(decode(&encode(&bytes[..n])).as_deref(), Some(&bytes[..n]));
            let url = encode_with(&bytes[..n], URL_SAFE, false);
            assert_eq!(decode_with(&url, URL_SAFE).as_deref(), Some(&bytes[..n]));
        }
    }
}
