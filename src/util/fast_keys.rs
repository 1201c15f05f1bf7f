//! Short trusted string keys (cache keys, uids, etcd keys): hashed fast, built in one
//! allocation.

use std::hash::{BuildHasherDefault, Hasher};

/// Hash maps keyed by trusted strings (cache keys, uids) that are never iterated in hash
/// order where it could show.
pub type FastKeys = BuildHasherDefault<KeyHasher>;

/// FNV-1a over the key's bytes, eight at a time: cache keys are short, trusted strings, and
/// the default hasher would cost more than the lookup it serves.
#[derive(Clone, Copy, Debug)]
pub struct KeyHasher(u64);

impl Default for KeyHasher {
    fn default() -> Self {
        KeyHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        // Mix the high bits down: the table indexes by the low ones.
        let h = self.0;
        (h ^ (h >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (h >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            self.0 = (self.0 ^ word).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(23);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// The pieces, one after another, in one allocation (hot keys are built this way rather than
/// with `format!`, whose machinery costs more than the copying).
pub fn join(parts: &[&str]) -> String {
    let mut out = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        out.push_str(p);
    }
    out
}
