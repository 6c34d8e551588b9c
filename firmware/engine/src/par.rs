//! Data parallelism for the engine's large per-resource passes (render, the report, the JSON
//! of the Result document): contiguous chunks on the calling thread and scoped helpers.
//!
//! Why: a cold reconcile of a large config spends most of its time in passes that run one
//! resource after another while the other cores are idle (`docs/benchmarks.md`, the sixth
//! round of the cold reconcile). Each pass here is pure: the same input gives the same output
//! on any number of threads, in the same order.

use std::sync::{Mutex, OnceLock, PoisonError};

/// How many threads a pass may use: the machine's available parallelism, read once (it is a
/// few system calls, and cgroup limits do not change under a running reconcile).
pub(crate) fn threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Maps `f` over `items` in contiguous chunks and returns the chunks' results in the order
/// of the chunks.
///
/// The calling thread maps the first chunk; one scoped helper thread (named `engine-par`)
/// maps each other. There are at most [`threads`] chunks, each of at least `min_chunk`
/// items, so a small input runs on the calling thread alone, with no thread started. A
/// helper that cannot be started leaves its chunk to the calling thread. A panic in a
/// helper is resumed on the calling thread.
pub(crate) fn map_chunks<T, R>(
    items: &[T],
    min_chunk: usize,
    f: impl Fn(&[T]) -> R + Sync,
) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    let chunks = threads().min(items.len() / min_chunk.max(1)).max(1);
    if chunks == 1 {
        return vec![f(items)];
    }
    let size = items.len().div_ceil(chunks);
    let mut parts = items.chunks(size);
    let Some(first) = parts.next() else { return vec![f(items)] };
    let f = &f;
    std::thread::scope(|scope| {
        let helpers: Vec<_> = parts
            .map(|part| {
                let spawned = std::thread::Builder::new()
                    .name("engine-par".into())
                    .spawn_scoped(scope, move || f(part));
                (part, spawned.ok())
            })
            .collect();
        let mut out = Vec::with_capacity(helpers.len() + 1);
        out.push(f(first));
        for (part, helper) in helpers {
            out.push(match helper {
                Some(h) => h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                None => f(part),
            });
        }
        out
    })
}

/// Sets each `out[i]` to `f(&items[i])`, on the calling thread and up to [`threads`]` - 1`
/// scoped helpers (named `engine-par`) that take chunks of at least `min_chunk` items from a
/// shared queue. Writing into a list the caller sized keeps no second copy of the results
/// alive, as joining chunk lists would. A helper that cannot be started leaves its share to
/// the others; a panic in a helper is resumed on the calling thread.
///
/// Panics if the lengths differ (a caller's bug, never input).
pub(crate) fn fill<T, R>(items: &[T], out: &mut [R], min_chunk: usize, f: impl Fn(&T) -> R + Sync)
where
    T: Sync,
    R: Send,
{
    assert_eq!(items.len(), out.len(), "par::fill: one result per item");
    let chunks = threads().min(items.len() / min_chunk.max(1)).max(1);
    if chunks == 1 {
        for (item, slot) in items.iter().zip(out) {
            *slot = f(item);
        }
        return;
    }
    let size = items.len().div_ceil(chunks);
    let queue = Mutex::new(items.chunks(size).zip(out.chunks_mut(size)).collect::<Vec<_>>());
    let work = || {
        loop {
            // Only `pop` runs under the lock, so it is never poisoned by `f`.
            let next = queue.lock().unwrap_or_else(PoisonError::into_inner).pop();
            let Some((items, out)) = next else { break };
            for (item, slot) in items.iter().zip(out) {
                *slot = f(item);
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..chunks {
            // A helper that does not start leaves its chunk in the queue.
            let _ = std::thread::Builder::new().name("engine-par".into()).spawn_scoped(scope, work);
        }
        work();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_sets_every_slot_from_its_own_item() {
        let items: Vec<u64> = (0..5000).collect();
        for min in [1, 64, 2500, 2501, 10_000] {
            let mut out = vec![0u64; items.len()];
            fill(&items, &mut out, min, |i| i * 3 + 1);
            assert!(out.iter().enumerate().all(|(i, v)| *v == i as u64 * 3 + 1), "min {min}");
        }
        let mut none: Vec<u8> = Vec::new();
        fill(&[] as &[u8], &mut none, 1, |b| *b);
    }

    #[test]
    fn fill_runs_on_helpers_for_a_large_input() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let helper_ran = AtomicBool::new(false);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let items = vec![(); 4096];
        let mut out = vec![None; items.len()];
        fill(&items, &mut out, 64, |_| {
            let name = std::thread::current().name().map(str::to_owned);
            if name.as_deref() == Some("engine-par") {
                helper_ran.store(true, Ordering::Release);
            } else if threads() >= 2 {
                // The calling thread holds its chunk until a helper has taken the other,
                // so the queue cannot be drained before the helper starts.
                while !helper_ran.load(Ordering::Acquire) && std::time::Instant::now() < deadline {
                    std::thread::yield_now();
                }
            }
            name
        });
        let helpers = out.iter().filter(|n| n.as_deref() == Some("engine-par")).count();
        if threads() >= 2 {
            assert!(helpers > 0, "no item ran on a helper");
        } else {
            assert_eq!(helpers, 0);
        }
    }

    #[test]
    fn chunks_cover_the_input_in_order_on_any_machine() {
        let items: Vec<u32> = (0..1000).collect();
        for min in [1, 7, 100, 999, 1000, 5000] {
            let parts = map_chunks(&items, min, |c| c.to_vec());
            assert!(parts.len() <= threads().max(1), "min {min}: {} chunks", parts.len());
            assert!(parts.iter().all(|p| !p.is_empty()), "min {min}: an empty chunk");
            assert_eq!(parts.concat(), items, "min {min}");
        }
    }

    #[test]
    fn a_small_input_stays_on_the_calling_thread() {
        let me = std::thread::current().id();
        let parts = map_chunks(&[1, 2, 3], 4, |_| std::thread::current().id());
        assert_eq!(parts, vec![me]);
        assert_eq!(map_chunks::<u8, usize>(&[], 4, <[u8]>::len), vec![0]);
    }

    #[test]
    fn a_large_input_uses_a_helper_when_the_machine_has_two_cores() {
        let items = vec![0u8; 64];
        let parts = map_chunks(&items, 8, |_| std::thread::current().name().map(str::to_owned));
        if threads() >= 2 {
            assert_eq!(parts.len(), threads().min(8));
            assert_eq!(parts[0].as_deref(), std::thread::current().name());
            assert!(parts[1..].iter().all(|n| n.as_deref() == Some("engine-par")), "{parts:?}");
        } else {
            assert_eq!(parts.len(), 1);
        }
    }
}
