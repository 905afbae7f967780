//! The one thread pool of the core: scoped workers over a slice.
//!
//! Workers claim items one at a time from a shared counter (texts and blobs
//! differ in size by orders of magnitude, so fixed chunks would leave cores
//! idle), results keep the input order, and the answer never depends on the
//! thread count. No pool of threads outlives a call.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// `0` means one thread per available core.
pub fn resolve_threads(requested: usize) -> usize {
    if requested > 0 {
        return requested;
    }
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Maps `work` over `items` on up to `threads` threads (`0` = every core),
/// keeping order.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let all = try_map_with(
        items,
        threads,
        || (),
        |(), item| Ok::<_, Infallible>(work(item)),
    );
    match all {
        Ok(results) => results,
        Err(never) => match never {},
    }
}

/// Maps `work` over `items` on up to `threads` threads (`0` = every core),
/// each worker with its own state from `init` (e.g. a repository handle
/// with its own caches). The first error stops every worker and is
/// returned; otherwise the results keep the input order. One thread runs
/// on the caller's thread.
pub fn try_map_with<T: Sync, S, R: Send, E: Send>(
    items: &[T],
    threads: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, &T) -> Result<R, E> + Sync,
) -> Result<Vec<R>, E> {
    let threads = resolve_threads(threads).clamp(1, items.len().max(1));
    if threads == 1 {
        let mut state = init();
        return items.iter().map(|item| work(&mut state, item)).collect();
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let run = || -> Result<Vec<(usize, R)>, E> {
        let mut state = init();
        let mut mine = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            match work(&mut state, item) {
                Ok(value) => mine.push((i, value)),
                Err(err) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(err);
                }
            }
        }
        Ok(mine)
    };
    let parts: Vec<Result<Vec<(usize, R)>, E>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads).map(|_| scope.spawn(run)).collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    for part in parts {
        for (i, value) in part? {
            slots[i] = Some(value);
        }
    }
    // Every index was claimed by exactly one worker and none failed.
    Ok(slots.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_on_any_thread_count() {
        let items: Vec<u32> = (0..1000).collect();
        for threads in [0, 1, 2, 7] {
            assert_eq!(
                parallel_map(&items, threads, |&n| n * 2),
                (0..1000).map(|n| n * 2).collect::<Vec<_>>()
            );
        }
        assert!(parallel_map(&[] as &[u32], 4, |&n| n).is_empty());
    }

    #[test]
    fn the_first_error_is_returned_and_state_is_per_worker() {
        let items: Vec<u32> = (0..100).collect();
        for threads in [1, 3] {
            let got = try_map_with(
                &items,
                threads,
                || 0u32,
                |seen, &n| {
                    *seen += 1;
                    if n == 50 {
                        Err("fifty")
                    } else {
                        Ok(n)
                    }
                },
            );
            assert_eq!(got, Err("fifty"));
            let ok = try_map_with(&items, threads, Vec::new, |mine: &mut Vec<u32>, &n| {
                mine.push(n);
                Ok::<_, ()>(mine.len())
            });
            assert_eq!(ok.unwrap().len(), 100);
        }
    }
}
