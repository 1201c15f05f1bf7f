//! Native memory for the allocator, faulted in ahead of use on another core.
//!
//! At upstream's size limits the simulation touches about 6.5 GiB, and on this project's
//! machines the kernel spends 10–18 s faulting in and zeroing it, on the one core the simulation
//! runs on. This hands mimalloc one large reserved region and lets a background thread fault
//! in (`MADV_POPULATE_WRITE`) the part just past what the allocator has committed, so the zeroing
//! happens on the second core while the first simulates. It is HotSpot's `AlwaysPreTouch` done
//! lazily. Nothing the simulation computes depends on it: it only changes where page faults land.
//! mimalloc fills the arena it reserves at its first allocation (1 GiB unless told otherwise)
//! before any other, and the simulation would fault that one in itself; [`small_first_arena`],
//! run before Rust's runtime allocates anything, makes it 32 MiB, so nearly everything comes
//! from this region. The scale benchmark calls both (`--no-prefault` leaves out [`start`]);
//! the page (wasm) and the CLI, whose clusters are small, have no such thing.

use std::ffi::{c_int, c_long, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How far ahead of the allocator's committed memory the background thread faults pages in.
const AHEAD: usize = 256 << 20;
/// The granule of commit bookkeeping (mimalloc's arena slice) and of each populate call.
const SLICE: usize = 64 << 10;
const STEP: usize = 8 << 20;

type CommitFun = unsafe extern "C" fn(bool, *mut c_void, usize, *mut bool, *mut c_void) -> bool;

/// mimalloc's `mi_option_arena_reserve`: how much address space it reserves for an arena when
/// it needs a new one, in KiB.
const ARENA_RESERVE_OPTION: c_int = 23;
/// Its default, 1 GiB: what the option reads as on the mimalloc this was written for (another
/// numbering would read as something else, and then nothing is changed).
const DEFAULT_ARENA_RESERVE_KIB: c_long = 1 << 20;
/// The first arena this makes it reserve instead.
const FIRST_ARENA_KIB: c_long = 32 << 10;

unsafe extern "C" {
    fn mi_option_get(option: c_int) -> c_long;
    fn mi_option_set(option: c_int, value: c_long);
    /// mimalloc (linked through the `mimalloc` crate): use `start..start+size` as an arena,
    /// committing through `commit_fun`.
    fn mi_manage_memory(
        start: *mut c_void,
        size: usize,
        is_committed: bool,
        is_pinned: bool,
        is_zero: bool,
        numa_node: c_int,
        exclusive: bool,
        commit_fun: Option<CommitFun>,
        commit_fun_arg: *mut c_void,
        arena_id: *mut *mut c_void,
    ) -> bool;
}

/// The region and how far into it the allocator has committed.
struct Region {
    base: usize,
    size: usize,
    /// One past the highest byte (offset) the allocator has committed.
    committed_end: AtomicUsize,
    /// Slices committed at least once: memory committed for the first time is still zero.
    ever_committed: Vec<AtomicBool>,
    /// What registering committed: the arena's own bookkeeping at the region's start.
    bookkeeping: AtomicUsize,
}

/// mimalloc asks for memory to be committed or decommitted (purged). The region stays mapped
/// read-write throughout, so this only keeps the books: memory committed again after a purge
/// still holds what it held, and is reported as not zero.
unsafe extern "C" fn commit(
    commit: bool,
    start: *mut c_void,
    size: usize,
    is_zero: *mut bool,
    arg: *mut c_void,
) -> bool {
    // SAFETY: `arg` is the leaked `Region` passed to `mi_manage_memory`.
    let region = unsafe { &*(arg as *const Region) };
    let from = (start as usize).saturating_sub(region.base);
    let to = (from + size).min(region.size);
    // Only ranges of the region are ever asked for; anything else is left alone (a panic
    // here, called from C, would abort).
    if commit && from < to {
        let mut fresh = true;
        for slice in &region.ever_committed[from / SLICE..to.div_ceil(SLICE)] {
            fresh &= !slice.swap(true, Ordering::Relaxed);
        }
        if !is_zero.is_null() {
            // SAFETY: mimalloc passes a valid out-pointer or null.
            unsafe { *is_zero = fresh };
        }
        region.committed_end.fetch_max(to, Ordering::Relaxed);
    }
    true
}

static REGION: std::sync::OnceLock<&'static Region> = std::sync::OnceLock::new();

/// Makes the arena mimalloc reserves at its first allocation small (32 MiB instead of 1 GiB),
/// so that once [`start`] has handed it the region, the simulation's memory comes from there.
/// It must run before anything allocates: a program calls it from a constructor (the scale
/// benchmark's `.init_array` entry), which runs before Rust's runtime starts.
pub extern "C" fn small_first_arena() {
    // SAFETY: reading and setting one of mimalloc's options, which it allows at any time;
    // the option is only changed where it reads as the default it is known to have.
    unsafe {
        if mi_option_get(ARENA_RESERVE_OPTION) == DEFAULT_ARENA_RESERVE_KIB {
            mi_option_set(ARENA_RESERVE_OPTION, FIRST_ARENA_KIB);
        }
    }
}

/// How much of the region the allocator has taken for its objects, in bytes (None: no region).
pub fn used() -> Option<usize> {
    let region = REGION.get()?;
    Some(region.committed_end.load(Ordering::Relaxed).saturating_sub(region.bookkeeping.load(Ordering::Relaxed)))
}

/// Reserves `size` bytes of address space for the allocator and starts the thread that
/// faults it in ahead of use. Does nothing (the allocator asks the OS as usual) where any
/// step is refused.
pub fn start(size: usize) {
    let size = size / SLICE * SLICE;
    // SAFETY: an anonymous private mapping with no address hint; checked for failure.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return;
    }
    // SAFETY: advice on the mapping just made; a refusal is harmless.
    unsafe { libc::madvise(base, size, libc::MADV_HUGEPAGE) };
    let region: &'static Region = Box::leak(Box::new(Region {
        base: base as usize,
        size,
        committed_end: AtomicUsize::new(0),
        ever_committed: (0..size / SLICE).map(|_| AtomicBool::new(false)).collect(),
        bookkeeping: AtomicUsize::new(0),
    }));
    // SAFETY: the region is mapped, read-write and zero, and never unmapped (`commit` ignores
    // decommits); `commit` only reads the leaked `Region`. Not pinned: mimalloc only allocates
    // from pinned arenas when it may use large OS pages.
    let managed = unsafe {
        mi_manage_memory(
            base,
            size,
            false,
            false,
            true,
            -1,
            false,
            Some(commit),
            region as *const Region as *mut c_void,
            std::ptr::null_mut(),
        )
    };
    if !managed {
        return;
    }
    let _ = REGION.set(region);
    // What registering committed (the arena's own bookkeeping): faulting ahead starts once the
    // allocator commits past it, so a run that never needs the region pays nothing for it.
    let bookkeeping = region.committed_end.load(Ordering::Relaxed);
    region.bookkeeping.store(bookkeeping, Ordering::Relaxed);
    let _ = std::thread::Builder::new().name("prefault".into()).spawn(move || {
        kubeloop::util::background::take(kubeloop::util::background::Standing::Prefault);
        let mut done = 0;
        while done < region.size {
            let committed = region.committed_end.load(Ordering::Relaxed);
            let target = if committed > bookkeeping { (committed + AHEAD).min(region.size) } else { 0 };
            if target <= done {
                std::thread::sleep(std::time::Duration::from_millis(1));
                continue;
            }
            let len = (target - done).min(STEP);
            // SAFETY: populating (faulting in as zero pages, never changing contents) part of
            // the mapping made above.
            let refused = unsafe { libc::madvise((region.base + done) as *mut c_void, len, libc::MADV_POPULATE_WRITE) };
            if refused != 0 {
                return; // An older kernel: faults land where they fall.
            }
            done += len;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    // Links mimalloc into the test binary (which allocates with Rust's default allocator).
    use mimalloc as _;

    fn region(slices: usize) -> Region {
        Region {
            base: 1 << 30,
            size: slices * SLICE,
            committed_end: AtomicUsize::new(0),
            ever_committed: (0..slices).map(|_| AtomicBool::new(false)).collect(),
            bookkeeping: AtomicUsize::new(0),
        }
    }

    fn commit_at(r: &Region, commit_it: bool, offset: usize, len: usize) -> bool {
        let mut zero = false;
        let arg = r as *const Region as *mut c_void;
        // SAFETY: `arg` points at a live Region; `zero` outlives the call.
        assert!(unsafe { commit(commit_it, (r.base + offset) as *mut c_void, len, &mut zero, arg) });
        zero
    }

    #[test]
    fn the_first_arena_option_is_mimallocs_arena_reserve_and_becomes_32_mib() {
        // The tests allocate with Rust's default allocator, so mimalloc's options are free to
        // read and change here. Another numbering of mimalloc's options would read otherwise.
        if std::env::var_os("MIMALLOC_ARENA_RESERVE").is_none() {
            // SAFETY: reading an option.
            assert_eq!(unsafe { mi_option_get(ARENA_RESERVE_OPTION) }, DEFAULT_ARENA_RESERVE_KIB);
        }
        small_first_arena();
        // SAFETY: as above.
        let now = unsafe { mi_option_get(ARENA_RESERVE_OPTION) };
        assert!(now == FIRST_ARENA_KIB || std::env::var_os("MIMALLOC_ARENA_RESERVE").is_some());
    }

    #[test]
    fn memory_committed_for_the_first_time_is_zero_and_again_after_a_purge_is_not() {
        let r = region(8);
        assert!(commit_at(&r, true, 0, 2 * SLICE), "never written");
        assert_eq!(r.committed_end.load(Ordering::Relaxed), 2 * SLICE);
        commit_at(&r, false, 0, 2 * SLICE);
        assert!(!commit_at(&r, true, 0, SLICE), "still holds what it held before the purge");
        // A range that overlaps a used slice is not zero as a whole.
        assert!(!commit_at(&r, true, SLICE, 2 * SLICE));
        assert!(commit_at(&r, true, 5 * SLICE + 100, 10), "an untouched slice, partly");
        assert_eq!(r.committed_end.load(Ordering::Relaxed), 5 * SLICE + 110);
        commit_at(&r, true, 9 * SLICE, SLICE);
        assert_eq!(r.committed_end.load(Ordering::Relaxed), 5 * SLICE + 110, "outside the region: ignored");
    }
}
