//! The gateway monitor: one task that, every probe interval, lists the default routes of the
//! main table (IPv4 and IPv6, `0.0.0.0/0` and `::/0` with a gateway), sends one ICMP echo to
//! each gateway through the route's link and reads the gateway's neighbour cache entry. Each
//! round adds one [`GatewaySample`] to the gateway's [`GatewayHistory`], kept for the last
//! hour; the doctor's `gateway` checks ([`crate::doctor`], code `G001`) and the charts of
//! issue 34 §6 read them through [`GatewayStore`].
//!
//! ```text
//! interval ─▶ GatewayProber: default routes ─▶ per gateway: echo + neighbour cache state
//!                                                 └─▶ GatewayStore (Arc, Mutex) ─▶ doctor, web
//! ```
//!
//! A link whose HealthCheck is paused by its `when` (a metered standby uplink) is not probed
//! either, as long as the check is paused ([`GatewayStore::follow`]).
//!
//! It never changes the host and never asks for a reconcile: a dead gateway is reported, not
//! repaired. It reaches the host only through the engine's
//! [`GatewayProber`](routerd_engine::gateway::GatewayProber) (no `ping` or `ip` processes).

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use routerd_engine::Netns;
use routerd_engine::gateway::GatewayProber;
use routerd_engine::health::probe_plans;
use routerd_engine::state::{StateStore, now_ms};
use routerd_model::Config;
use routerd_model::spec::StateMatchSpec;
use serde::Serialize;
use tokio::task::AbortHandle;

/// One probe round of one gateway.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySample {
    /// When the echo was sent, milliseconds since the Unix epoch.
    pub at_unix_ms: u64,
    /// Round-trip time of the echo in milliseconds; `None` when it was lost.
    pub rtt_ms: Option<f64>,
    /// Share of lost echoes over the last [`LOSS_WINDOW`] rounds (fewer at the start), this one
    /// included, in percent (0.0..=100.0).
    pub loss_percent: f64,
}

/// The probe history of one default route's gateway.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayHistory {
    /// The next hop of the default route (an IPv6 one is usually link-local).
    pub gateway: IpAddr,
    /// The route's output link.
    pub interface: String,
    /// Whether a default route through this gateway and link is in the main table now; a
    /// history whose route went away is kept (for the charts) but not checked.
    pub present: bool,
    /// The neighbour cache state at the last round (`reachable`, `stale`, `incomplete`,
    /// `failed`, `static`); `None` without an entry.
    pub neighbour: Option<String>,
    /// Why the last echo failed, when it did (`no reply within 1s`, `Network is unreachable`).
    pub last_error: Option<String>,
    /// Oldest first, one per probe interval, at most an hour's worth ([`GatewayStore::capacity`]).
    pub samples: Vec<GatewaySample>,
}

impl GatewayHistory {
    fn new(gateway: IpAddr, interface: String) -> Self {
        Self {
            gateway,
            interface,
            present: true,
            neighbour: None,
            last_error: None,
            samples: Vec::new(),
        }
    }

    /// How many of the last rounds in a row lost their echo.
    pub fn lost_in_a_row(&self) -> usize {
        self.samples.iter().rev().take_while(|s| s.rtt_ms.is_none()).count()
    }

    /// Appends a round, computing its loss over the window, and drops what is beyond
    /// `capacity`.
    fn record(&mut self, at_unix_ms: u64, rtt_ms: Option<f64>, capacity: usize) {
        let earlier = self.samples.iter().rev().take(LOSS_WINDOW - 1);
        let (mut lost, mut total) = (usize::from(rtt_ms.is_none()), 1);
        for s in earlier {
            total += 1;
            lost += usize::from(s.rtt_ms.is_none());
        }
        let loss_percent = (lost * 100) as f64 / total as f64;
        self.samples.push(GatewaySample { at_unix_ms, rtt_ms, loss_percent });
        let excess = self.samples.len().saturating_sub(capacity.max(1));
        self.samples.drain(..excess);
    }
}

/// How many rounds a sample's loss is computed over.
pub const LOSS_WINDOW: usize = 10;

/// How long the history reaches back.
pub const HISTORY: Duration = Duration::from_secs(3600);

/// The gateways' histories, shared between the monitor task (writer) and its readers.
///
/// [`crate::daemon::serve`] makes one (`let gateways: Arc<GatewayStore>`, before the web
/// options are built; the loop keeps it as `Daemon::gateways`): hand `Arc::clone(&gateways)` to
/// whatever draws. [`GatewayStore::all`] copies the histories out (at most an hour of samples
/// per gateway: 720 at the default 5 s interval), so a reader never holds the lock while it
/// draws.
#[derive(Debug)]
pub struct GatewayStore {
    histories: Mutex<BTreeMap<(String, IpAddr), GatewayHistory>>,
    interval: Duration,
    /// The `when` of each HealthCheck that has one, by the check's link; `None` until the
    /// first [`GatewayStore::follow`] (nothing is probed before the config is known).
    gates: Mutex<Option<Vec<Gate>>>,
    /// The state variables the gates read.
    state: Arc<StateStore>,
}

impl GatewayStore {
    /// An empty store for rounds every `interval`, reading HealthCheck gates from `state`.
    pub fn new(interval: Duration, state: Arc<StateStore>) -> Self {
        Self { histories: Mutex::new(BTreeMap::new()), interval, gates: Mutex::new(None), state }
    }

    /// Takes the HealthChecks' `when` gates of `config`: a link whose check is paused is not
    /// probed here either (the daemon calls this after every reconcile).
    pub fn follow(&self, config: &Config) {
        let gates = probe_plans(config)
            .into_iter()
            .filter(|p| !p.when.is_empty())
            .filter_map(|p| Some((p.ifname?, p.when)))
            .collect();
        if let Ok(mut g) = self.gates.lock() {
            *g = Some(gates);
        }
    }

    /// Whether `ifname` is kept quiet: a HealthCheck on it is paused by its `when`, or no
    /// config was followed yet.
    fn quiet(&self, ifname: &str) -> bool {
        let Ok(gates) = self.gates.lock() else { return false };
        let Some(gates) = gates.as_ref() else { return true };
        gates.iter().filter(|(link, _)| link == ifname).any(|(_, when)| {
            !self.state.gates_holding(when, now_ms()).into_iter().all(|holds| holds)
        })
    }

    /// The probe interval: one sample per gateway per interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Samples kept per gateway: [`HISTORY`] over the interval, at most 3600.
    pub fn capacity(&self) -> usize {
        let per = self.interval.as_millis().max(1);
        (HISTORY.as_millis().div_ceil(per)).clamp(1, 3600) as usize
    }

    /// Every gateway's history, ordered by interface and address; present ones and those whose
    /// route went away within the hour.
    pub fn all(&self) -> Vec<GatewayHistory> {
        self.histories.lock().map(|h| h.values().cloned().collect()).unwrap_or_default()
    }

    /// Marks which gateways are present now; forgets absent ones whose last sample is older
    /// than [`HISTORY`].
    fn present(&self, now: &BTreeSet<(String, IpAddr)>, now_ms: u64) {
        let Ok(mut all) = self.histories.lock() else { return };
        for key in now {
            all.entry(key.clone()).or_insert_with(|| GatewayHistory::new(key.1, key.0.clone()));
        }
        let horizon = now_ms.saturating_sub(HISTORY.as_millis() as u64);
        all.retain(|key, h| {
            h.present = now.contains(key);
            h.present || h.samples.last().is_some_and(|s| s.at_unix_ms >= horizon)
        });
    }

    fn record(&self, key: &(String, IpAddr), round: Round) {
        let capacity = self.capacity();
        let Ok(mut all) = self.histories.lock() else { return };
        if let Some(h) = all.get_mut(key) {
            h.record(round.at_unix_ms, round.rtt_ms, capacity);
            h.neighbour = round.neighbour;
            h.last_error = round.error;
        }
    }
}

/// A HealthCheck's link and its `when` (state variable, match), all of which must hold.
type Gate = (String, Vec<(String, StateMatchSpec)>);

/// The outcome of one gateway's round.
struct Round {
    at_unix_ms: u64,
    rtt_ms: Option<f64>,
    neighbour: Option<String>,
    error: Option<String>,
}

/// The probe interval `asked` (`routerd serve --gateway-interval`) clamped to 100 ms..=60 s.
pub fn interval(asked: Duration) -> Duration {
    asked.clamp(Duration::from_millis(100), Duration::from_secs(60))
}

/// Starts the monitor task in `netns`, writing to `store`. Abort the handle to stop it.
pub fn spawn(netns: Netns, store: Arc<GatewayStore>) -> AbortHandle {
    tokio::spawn(run(netns, store)).abort_handle()
}

async fn run(netns: Netns, store: Arc<GatewayStore>) {
    let interval = store.interval();
    // Lost echoes wait out their timeout; all gateways are probed at once, so a round takes at
    // most this long.
    let timeout = interval.min(Duration::from_secs(1));
    let mut prober = GatewayProber::new(netns);
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let gateways = match prober.default_gateways().await {
            Ok(mut g) => {
                g.retain(|(ifname, _)| !store.quiet(ifname));
                g
            }
            Err(e) => {
                tracing::debug!("gateway monitor: listing default routes: {e}");
                continue;
            }
        };
        let now_ms = routerd_engine::state::now_ms();
        store.present(&gateways, now_ms);
        let probed = prober.probe(&gateways, timeout).await;
        for e in &probed.socket_errors {
            tracing::debug!("gateway monitor: {e}");
        }
        for ((ifname, gateway), probe) in gateways.iter().zip(probed.probes) {
            let round = Round {
                at_unix_ms: now_ms,
                rtt_ms: probe.rtt.as_ref().ok().map(|rtt| rtt.as_secs_f64() * 1000.0),
                neighbour: probe.neighbour,
                error: probe.rtt.err(),
            };
            store.record(&(ifname.clone(), *gateway), round);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_is_over_the_last_rounds_and_the_history_is_bounded() {
        let gw: IpAddr = "192.0.2.1".parse().expect("ip");
        let mut h = GatewayHistory::new(gw, "wan0".into());
        h.record(0, Some(1.0), 5);
        assert_eq!(h.samples[0].loss_percent, 0.0);
        h.record(1, None, 5);
        assert_eq!(h.samples[1].loss_percent, 50.0);
        assert_eq!(h.lost_in_a_row(), 1);
        for at in 2..20 {
            h.record(at, None, 5);
        }
        assert_eq!(h.samples.len(), 5, "bounded");
        assert_eq!(h.samples[0].at_unix_ms, 15, "oldest first, the oldest dropped");
        assert_eq!(h.samples[4].loss_percent, 100.0);
        h.record(20, Some(2.0), 5);
        // Over what was kept before it: five lost, then one answered.
        assert!((h.samples[4].loss_percent - 500.0 / 6.0).abs() < 1e-9);
        assert_eq!(h.lost_in_a_row(), 0);
        let mut long = GatewayHistory::new(gw, "wan0".into());
        for at in 0..15 {
            long.record(at, None, 720);
        }
        long.record(15, Some(0.5), 720);
        // Nine lost and one answered over the window of ten.
        assert_eq!(long.samples[15].loss_percent, 90.0);

        let state = Arc::new(StateStore::default());
        let store = GatewayStore::new(Duration::from_secs(5), Arc::clone(&state));
        assert_eq!(store.capacity(), 720, "an hour at 5 s");
        assert_eq!(GatewayStore::new(Duration::from_millis(100), state).capacity(), 3600);
    }
}
