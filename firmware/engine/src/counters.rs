//! Every link's traffic counters (`IFLA_STATS64`), read over rtnetlink for the daemon's
//! charts. The supervisor's sampler decides when and turns two readings into a rate.

use routerd_host::Netns;
pub use routerd_host::netlink::LinkCounters;
use routerd_host::netlink::NetlinkBackend;

/// The counter reads of one namespace; the socket is opened on first use and again after a
/// failure.
pub struct CounterReader {
    netns: Netns,
    backend: Option<NetlinkBackend>,
}

impl CounterReader {
    /// A reader inside `netns`; no socket is opened before the first reading.
    pub fn new(netns: Netns) -> Self {
        Self { netns, backend: None }
    }

    /// Every link's counters now: `None` while the socket cannot be opened (tried again at
    /// the next reading), `Err` when the reading fails (the socket is opened again next time).
    pub async fn read(&mut self) -> Option<Result<Vec<LinkCounters>, String>> {
        if self.backend.is_none() {
            self.backend = NetlinkBackend::new(&self.netns).ok();
        }
        let backend = self.backend.as_ref()?;
        match backend.link_counters().await {
            Ok(counters) => Some(Ok(counters)),
            Err(e) => {
                self.backend = None;
                Some(Err(e.to_string()))
            }
        }
    }
}
