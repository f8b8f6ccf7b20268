//! When a failing check is tried again. A check declares `retries` and
//! `delay` as Kubespray's `until` loops do; the waits between its tries
//! add up to what they promise (`retries` × `delay` seconds), but the
//! first come sooner — a quarter second, doubling up to `delay` — since
//! most checks wait for something a second or two away (a CNI config
//! written by a pod just started, a member that just joined): a fixed
//! five-second wait spent ~4 s of every such phase. Fewer than
//! `retries` + 1 tries never happen: each wait is at most `delay`.

use std::time::Duration;

/// The first wait after a failed try (unless `delay` is shorter).
const FIRST: Duration = Duration::from_millis(250);

/// The waits between the tries of a check, in order: an iterator that
/// ends when they have added up to `retries` × `delay` seconds (for a
/// `delay` of 0, `retries` waits of nothing).
#[derive(Debug, Clone)]
pub struct Waits {
    /// What is left of `retries` × `delay`.
    left: Duration,
    /// The longest a wait may be: `delay`.
    most: Duration,
    /// The next wait before it is cut to `left`.
    next: Duration,
    /// For `delay` 0: how many waits of nothing are left.
    zero_left: u32,
}

/// The waits of a check with these `retries` and `delay` (seconds).
pub fn waits(retries: u32, delay: u32) -> Waits {
    let most = Duration::from_secs(delay.into());
    Waits { left: most * retries, most, next: FIRST.min(most), zero_left: if delay == 0 { retries } else { 0 } }
}

impl Iterator for Waits {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        if self.most.is_zero() {
            self.zero_left = self.zero_left.checked_sub(1)?;
            return Some(Duration::ZERO);
        }
        if self.left.is_zero() {
            return None;
        }
        let wait = self.next.min(self.left);
        self.left -= wait;
        self.next = (self.next * 2).min(self.most);
        Some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(ws: &[Duration]) -> Vec<f64> {
        ws.iter().map(Duration::as_secs_f64).collect()
    }

    #[test]
    fn first_waits_are_short_then_delay_apart_and_add_up_to_the_promise() {
        let ws: Vec<_> = waits(3, 5).collect();
        assert_eq!(secs(&ws), [0.25, 0.5, 1.0, 2.0, 4.0, 5.0, 2.25]);
        assert_eq!(ws.iter().sum::<Duration>(), Duration::from_secs(15));
    }

    #[test]
    fn never_fewer_tries_nor_a_longer_wait_than_declared() {
        for retries in [0, 1, 2, 10, 60, 1000] {
            for delay in [0, 1, 2, 3, 5, 3600] {
                let ws: Vec<_> = waits(retries, delay).collect();
                assert!(ws.len() >= retries as usize, "{retries} x {delay}: {} waits", ws.len());
                assert!(ws.iter().all(|w| *w <= Duration::from_secs(delay.into())), "{retries} x {delay}");
                assert_eq!(ws.iter().sum::<Duration>(), Duration::from_secs(u64::from(retries) * u64::from(delay)));
            }
        }
    }

    #[test]
    fn a_delay_of_zero_tries_again_at_once_retries_times() {
        assert_eq!(waits(4, 0).collect::<Vec<_>>(), vec![Duration::ZERO; 4]);
        assert_eq!(waits(0, 0).count(), 0);
        assert_eq!(waits(0, 5).count(), 0);
    }

    #[test]
    fn one_second_apart_starts_sooner_too() {
        assert_eq!(secs(&waits(2, 1).collect::<Vec<_>>()), [0.25, 0.5, 1.0, 0.25]);
    }
}
