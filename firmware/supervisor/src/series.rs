//! The daemon's recent history for the web UI's charts (issue 34 §6): per interface the bits
//! per second received and sent and the errors, and each reconcile's duration and phase, over
//! the last [`WINDOW`], in memory only and bounded (at most [`MAX_LINKS`] interfaces of at most
//! one point per sample interval, at most [`MAX_RECONCILES`] reconciles).
//!
//! A sampler task reads every link's counters (`IFLA_STATS64`) once per interval; a point is
//! the difference between two readings, so the first reading of a link makes none, and a
//! counter that went down (the link was made again) starts over without a point.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use routerd_engine::Netns;
use routerd_engine::counters::{CounterReader, LinkCounters};

/// How far back the charts reach.
pub const WINDOW: Duration = Duration::from_secs(3600);

/// Interfaces tracked at most; a link found beyond them is not charted.
pub const MAX_LINKS: usize = 64;

/// Reconciles kept at most within [`WINDOW`] (a burst of host changes can reconcile often).
pub const MAX_RECONCILES: usize = 3600;

// The points are the web UI's: the charts are their only reader.
pub use routerd_webui::{LinkPoint, ReconcilePoint};

/// One interface's points and its last reading.
#[derive(Debug, Default)]
struct LinkTrack {
    last: Option<(u64, LinkCounters)>,
    points: VecDeque<LinkPoint>,
}

/// The recent history, shared between the sampler, the daemon loop and the web UI.
#[derive(Debug)]
pub struct Series {
    /// Time between two counter readings.
    interval: Duration,
    links: BTreeMap<String, LinkTrack>,
    reconciles: VecDeque<ReconcilePoint>,
}

/// [`Series`] behind the lock its three users share (held for microseconds).
pub type SharedSeries = Arc<Mutex<Series>>;

impl Series {
    /// An empty history sampled every `interval`.
    pub fn new(interval: Duration) -> Self {
        Self { interval, links: BTreeMap::new(), reconciles: VecDeque::new() }
    }

    /// An empty history behind its lock.
    pub fn shared(interval: Duration) -> SharedSeries {
        Arc::new(Mutex::new(Self::new(interval)))
    }

    /// The sample interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Adds the points between the last readings and `counters`, read at `at_unix_ms`; drops
    /// what is older than [`WINDOW`]. The loopback link is not charted.
    pub fn record_counters(&mut self, at_unix_ms: u64, counters: Vec<LinkCounters>) {
        for c in counters {
            if c.ifname == "lo" {
                continue;
            }
            if !self.links.contains_key(&c.ifname) && self.links.len() >= MAX_LINKS {
                continue;
            }
            let track = self.links.entry(c.ifname.clone()).or_default();
            if let Some(point) =
                track.last.as_ref().and_then(|(t, old)| point(*t, old, at_unix_ms, &c))
            {
                track.points.push_back(point);
            }
            track.last = Some((at_unix_ms, c));
        }
        let oldest = at_unix_ms.saturating_sub(millis(WINDOW));
        for track in self.links.values_mut() {
            while track.points.front().is_some_and(|p| p.at_unix_ms < oldest) {
                track.points.pop_front();
            }
        }
        // A link gone for the whole window has nothing left to draw.
        self.links.retain(|_, t| t.last.as_ref().is_some_and(|(at, _)| *at >= oldest));
    }

    /// Adds a finished reconcile; drops what is older than [`WINDOW`] or beyond
    /// [`MAX_RECONCILES`].
    pub fn record_reconcile(&mut self, point: ReconcilePoint) {
        let oldest = point.at_unix_ms.saturating_sub(millis(WINDOW));
        self.reconciles.push_back(point);
        while self.reconciles.len() > MAX_RECONCILES
            || self.reconciles.front().is_some_and(|p| p.at_unix_ms < oldest)
        {
            self.reconciles.pop_front();
        }
    }

    /// Every charted interface with its points, oldest first, by name.
    pub fn links(&self) -> impl Iterator<Item = (&str, &VecDeque<LinkPoint>)> {
        self.links.iter().map(|(name, t)| (name.as_str(), &t.points))
    }

    /// The reconciles, oldest first.
    pub fn reconciles(&self) -> &VecDeque<ReconcilePoint> {
        &self.reconciles
    }
}

/// The point between reading `old` at `then` and `new` at `now`; `None` when no time passed or
/// a counter went down (the link was made again under the same name).
fn point(then: u64, old: &LinkCounters, now: u64, new: &LinkCounters) -> Option<LinkPoint> {
    let elapsed = now.checked_sub(then).filter(|ms| *ms > 0)? as f64 / 1000.0;
    let rx = new.rx_bytes.checked_sub(old.rx_bytes)?;
    let tx = new.tx_bytes.checked_sub(old.tx_bytes)?;
    Some(LinkPoint {
        at_unix_ms: now,
        rx_bps: rx as f64 * 8.0 / elapsed,
        tx_bps: tx as f64 * 8.0 / elapsed,
        rx_errors: new.rx_errors.checked_sub(old.rx_errors)?,
        tx_errors: new.tx_errors.checked_sub(old.tx_errors)?,
    })
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Reads the counters of every link in `netns` every interval of `series` into it, for the
/// life of the process. A failed reading is logged once and retried at the next interval; the
/// socket is opened again after a failure.
pub fn spawn_sampler(netns: Netns, series: SharedSeries) -> tokio::task::JoinHandle<()> {
    let interval = series.lock().unwrap_or_else(PoisonError::into_inner).interval();
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut reader = CounterReader::new(netns);
        let mut failing = false;
        loop {
            ticks.tick().await;
            let Some(read) = reader.read().await else { continue };
            match read {
                Ok(counters) => {
                    failing = false;
                    let now = routerd_engine::state::now_ms();
                    series
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .record_counters(now, counters);
                }
                Err(e) => {
                    if !failing {
                        tracing::warn!("reading interface counters for the charts: {e}");
                    }
                    failing = true;
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(ifname: &str, rx: u64, tx: u64, rx_errors: u64) -> LinkCounters {
        LinkCounters {
            ifname: ifname.into(),
            up: true,
            rx_bytes: rx,
            tx_bytes: tx,
            rx_errors,
            tx_errors: 0,
        }
    }

    #[test]
    fn a_point_is_the_rate_between_two_readings_and_a_reset_counter_makes_none() {
        let mut s = Series::new(Duration::from_secs(10));
        s.record_counters(0, vec![reading("lan0", 0, 0, 0), reading("lo", 0, 0, 0)]);
        assert_eq!(s.links().next().map(|(_, p)| p.len()), Some(0), "one reading: no point");
        s.record_counters(10_000, vec![reading("lan0", 1_250_000, 125_000, 3)]);
        let (name, points) = s.links().next().expect("lan0");
        assert_eq!(name, "lan0");
        assert_eq!(points[0].rx_bps, 1_000_000.0, "1.25 MB in 10 s is 1 Mbit/s");
        assert_eq!(points[0].tx_bps, 100_000.0);
        assert_eq!(points[0].rx_errors, 3);
        // The link was made again: its counters start from zero.
        s.record_counters(20_000, vec![reading("lan0", 10, 10, 0)]);
        assert_eq!(s.links().next().map(|(_, p)| p.len()), Some(1), "no point across a reset");
        assert_eq!(s.links().count(), 1, "the loopback link is not charted");
    }

    #[test]
    fn points_older_than_the_window_and_links_gone_that_long_are_dropped() {
        let mut s = Series::new(Duration::from_secs(10));
        let hour = millis(WINDOW);
        s.record_counters(0, vec![reading("lan0", 0, 0, 0), reading("gone0", 0, 0, 0)]);
        s.record_counters(10_000, vec![reading("lan0", 1, 1, 0), reading("gone0", 1, 1, 0)]);
        s.record_counters(hour + 20_000, vec![reading("lan0", 2, 2, 0)]);
        let links: Vec<_> = s.links().map(|(n, p)| (n.to_string(), p.len())).collect();
        assert_eq!(links, [("lan0".to_string(), 1)], "the point of 10 s is past the window");
    }

    #[test]
    fn links_and_reconciles_are_bounded() {
        let mut s = Series::new(Duration::from_secs(10));
        let many: Vec<_> =
            (0..MAX_LINKS + 10).map(|i| reading(&format!("v{i}"), 0, 0, 0)).collect();
        s.record_counters(0, many);
        assert_eq!(s.links().count(), MAX_LINKS);
        for i in 0..(MAX_RECONCILES as u64 + 5) {
            s.record_reconcile(ReconcilePoint {
                at_unix_ms: i,
                duration_ms: 1,
                phase: "Healthy".into(),
            });
        }
        assert_eq!(s.reconciles().len(), MAX_RECONCILES);
        assert_eq!(s.reconciles().front().map(|p| p.at_unix_ms), Some(5), "the oldest go first");
    }
}
