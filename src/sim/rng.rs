//! The simulation's one source of chance: a small seeded generator (SplitMix64).
//!
//! Every random choice — generated names, tie-breaks, jitter, faults — draws from here, so the
//! same seed and the same actions replay the same cluster on any platform.

#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// An independent stream for one named user of chance (a component, the API server):
    /// adding a component never changes the draws of the others.
    pub fn stream(seed: u64, name: &str) -> Self {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        let mut mixer = Rng::new(seed ^ h);
        Rng::new(mixer.next_u64())
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        // Lemire's multiply-shift; the bias is negligible for the small ranges used here.
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A uniform integer in `lo..=hi`.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo { lo } else { lo + self.below(hi - lo + 1) }
    }

    /// A random string of `len` characters drawn from `alphabet`.
    pub fn string(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len).map(|_| alphabet[self.below(alphabet.len() as u64) as usize] as char).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_gives_same_sequence() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
    }

    #[test]
    fn named_streams_are_independent_and_reproducible() {
        assert_eq!(Rng::stream(1, "a").next_u64(), Rng::stream(1, "a").next_u64());
        assert_ne!(Rng::stream(1, "a").next_u64(), Rng::stream(1, "b").next_u64());
        assert_ne!(Rng::stream(1, "a").next_u64(), Rng::stream(2, "a").next_u64());
    }

    #[test]
    fn below_stays_in_range() {
        let mut rng = Rng::new(1);
        for n in 1..50 {
            assert!(rng.below(n) < n);
        }
        assert_eq!(rng.between(5, 5), 5);
    }
}
