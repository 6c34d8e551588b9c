//! The C allocator's settings this process changes: fixed mmap and trim thresholds.
//!
//! glibc serves a block of at least `M_MMAP_THRESHOLD` bytes with its own `mmap` and unmaps it
//! when it is freed, so its pages go back to the kernel at once. By default the threshold is
//! dynamic: it starts at 128 KiB, and each such block freed raises it to the block's size (up
//! to 32 MiB); from then on smaller blocks come from the heap, whose freed pages mostly stay
//! resident. A reconcile of a large config frees megabyte-sized lists (the plan's operations,
//! the operation log, the pending ledger entries) while the next phase allocates, so its peak
//! RSS moved by one or two MiB with the order of unrelated allocations (`docs/benchmarks.md`,
//! the seventh round of the cold reconcile). Setting the thresholds explicitly turns the
//! adjustment off (mallopt(3)): a block of 1 MiB or more is always mapped on its own and
//! always leaves when freed. Smaller blocks stay on the heap, as the dynamic threshold would
//! have them after the first large free, without a mapping and its page faults each time (a
//! 128 KiB threshold made the JSON output and the verification several milliseconds slower).
//!
//! Other C libraries (musl, uClibc-ng) have no such adjustment; this is a no-op there.

#![allow(unsafe_code)]

/// Blocks of at least this many bytes are mapped on their own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: nix::libc::c_int = 1024 * 1024;

/// Fixes glibc's mmap threshold at [`MMAP_THRESHOLD`] and its trim threshold (the free space at
/// the top of the heap kept instead of returned) at twice that, as the dynamic adjustment
/// would pair them. Call first thing in `main`, before any thread starts. Returns whether the
/// allocator took both settings (always `true` off glibc).
pub(crate) fn fix_mmap_threshold() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt(3) only changes the allocator's parameters; it is called before
        // any other thread exists, and both values are within glibc's documented ranges.
        unsafe {
            nix::libc::mallopt(nix::libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
                && nix::libc::mallopt(nix::libc::M_TRIM_THRESHOLD, 2 * MMAP_THRESHOLD) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        true
    }
}

#[cfg(test)]
mod tests {
    /// glibc takes both settings (mallopt returns 0 for a value out of range or an unknown
    /// parameter, which a changed constant could cause).
    #[test]
    fn the_allocator_takes_the_thresholds() {
        assert!(super::fix_mmap_threshold());
    }
}
