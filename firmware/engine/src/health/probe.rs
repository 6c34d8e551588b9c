//! One HealthCheck's probes, sent from inside the target namespace: the round's target
//! resolved ([`ProbeTarget`]: a literal, a host name, the link's default gateway read from the
//! kernel, the AFTR the scheduler resolved) and the probe sent to it ([`ProbeKind`]: ICMP echo,
//! TCP connection, DNS query), bound to the check's link. The supervisor's scheduler decides
//! when to probe and turns the outcomes into verdicts.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use routerd_host::netlink::NetlinkBackend;
use routerd_host::probe::{self, Pinger, ProbeError};
use routerd_host::{ArtifactKind, Netns};

use super::{ProbeKind, ProbePlan, ProbeTarget};
use crate::aftr::AftrStore;

/// The sockets of one check's probes, opened on first use and again after a failure (the
/// link may not exist yet).
pub struct Prober {
    netns: Netns,
    pinger: Option<Pinger>,
    routes: Option<NetlinkBackend>,
}

impl Prober {
    /// A prober inside `netns`; no socket is opened before the first probe.
    pub fn new(netns: Netns) -> Self {
        Self { netns, pinger: None, routes: None }
    }

    /// One probe of `plan`, reading the AFTR answers of `aftr` for a DS-Lite tunnel's remote
    /// end: the target it went to (if resolved) and its round-trip time or why it failed.
    ///
    /// A failure other than a timeout (a refused connection, no route) still takes the whole
    /// `plan.timeout`, so the probe rate stays what the interval says.
    pub async fn once(
        &mut self,
        plan: &ProbePlan,
        aftr: &AftrStore,
    ) -> (Option<IpAddr>, Result<Duration, String>) {
        let target = match self.target(plan, aftr).await {
            Ok(t) => t,
            Err(e) => return (None, Err(e)),
        };
        let port = match plan.kind {
            ProbeKind::Ping => None,
            ProbeKind::Tcp { port } | ProbeKind::Dns { port } => Some(port),
        };
        let started = Instant::now();
        if let Some(port) = port {
            let peer = SocketAddr::new(target, port);
            let (ifname, timeout) = (plan.ifname.as_deref(), plan.timeout);
            let outcome = match plan.kind {
                ProbeKind::Dns { .. } => probe::dns_query(&self.netns, ifname, peer, timeout).await,
                _ => probe::tcp_connect(&self.netns, ifname, peer, timeout).await,
            };
            return (Some(target), paced(plan, started, outcome).await);
        }
        // Opened on first use and again after a failure: the link may not exist yet.
        if self.pinger.is_none() {
            match Pinger::open(&self.netns, plan.ipv6, plan.ifname.as_deref()) {
                Ok(p) => self.pinger = Some(p),
                Err(e) => return (Some(target), Err(format!("opening the probe socket: {e}"))),
            }
        }
        let Some(p) = self.pinger.as_ref() else {
            return (Some(target), Err("no socket".into()));
        };
        let outcome = p.ping(target, plan.timeout).await;
        if matches!(outcome, Err(ProbeError::Failed(_))) {
            // The socket may be bound to a link that went away: open it again next time.
            self.pinger = None;
        }
        (Some(target), paced(plan, started, outcome).await)
    }

    /// Resolves the probe's target for this round.
    async fn target(&mut self, plan: &ProbePlan, aftr: &AftrStore) -> Result<IpAddr, String> {
        match &plan.target {
            ProbeTarget::Address(a) => Ok(*a),
            ProbeTarget::Unsupported(why) => Err(why.clone()),
            ProbeTarget::Aftr { tunnel, ordinal, selection } => {
                let answer = aftr.get(tunnel).map(|a| a.addresses).unwrap_or_default();
                crate::aftr::pick(&answer, *ordinal, *selection)
                    .map(IpAddr::V6)
                    .ok_or_else(|| format!("no AFTR resolved for {tunnel} yet"))
            }
            ProbeTarget::Host(name) => {
                let found = tokio::net::lookup_host((name.as_str(), 0))
                    .await
                    .map_err(|e| format!("resolving {name}: {e}"))?;
                found
                    .map(|s| s.ip())
                    .find(|ip| ip.is_ipv6() == plan.ipv6)
                    .ok_or_else(|| format!("{name} has no address of the check's family"))
            }
            ProbeTarget::DefaultGateway => {
                let Some(ifname) = plan.ifname.as_deref() else {
                    return Err("no interface to take the default gateway of".into());
                };
                if self.routes.is_none() {
                    self.routes =
                        Some(NetlinkBackend::new(&self.netns).map_err(|e| e.to_string())?);
                }
                let Some(backend) = self.routes.as_ref() else {
                    return Err("no netlink".into());
                };
                let kind =
                    if plan.ipv6 { ArtifactKind::Ipv6Route } else { ArtifactKind::Ipv4Route };
                let listed = crate::gateway::default_routes(backend, &[kind]).await?;
                listed
                    .into_iter()
                    .filter(|r| r.oif.as_deref() == Some(ifname))
                    .map(|r| (r.metric, r.gateway))
                    .min()
                    .map(|(_, g)| g)
                    .ok_or_else(|| format!("no default route with a gateway through {ifname}"))
            }
        }
    }
}

/// A probe's outcome as the scheduler's tally records it. A failure other than a timeout (a
/// refused connection, no route) returns at once; waiting out the rest of the timeout keeps the
/// probe rate what the interval says.
async fn paced(
    plan: &ProbePlan,
    started: Instant,
    outcome: Result<Duration, ProbeError>,
) -> Result<Duration, String> {
    match outcome {
        Ok(rtt) => Ok(rtt),
        Err(e) => {
            if let ProbeError::Failed(_) = e {
                let spent = started.elapsed();
                tokio::time::sleep(plan.timeout.saturating_sub(spent)).await;
            }
            Err(e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use routerd_host::artifact::AftrAddressSpec;
    use routerd_model::spec::net::AftrAddressSelection;

    use super::*;

    fn plan(target: ProbeTarget) -> ProbePlan {
        ProbePlan {
            name: "wan".into(),
            kind: ProbeKind::Ping,
            ipv6: true,
            ifname: None,
            target,
            interval: Duration::from_secs(1),
            timeout: Duration::from_secs(1),
            healthy_threshold: 1,
            unhealthy_threshold: 1,
            when: Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_dslite_remote_check_probes_the_aftr_the_tunnel_uses_once_resolved() {
        let aftr = AftrStore::default();
        let plan = plan(ProbeTarget::Aftr {
            tunnel: "ds0".into(),
            ordinal: Some(2),
            selection: Some(AftrAddressSelection::OrdinalModulo),
        });
        let mut prober = Prober::new(Netns::current());
        let err = prober.target(&plan, &aftr).await.expect_err("nothing resolved yet");
        assert!(err.contains("no AFTR resolved for ds0"), "{err}");
        aftr.set(AftrAddressSpec {
            ifname: "ds0".into(),
            fqdn: "aftr.example.test".into(),
            addresses: vec!["2001:db8::1".parse().expect("ip"), "2001:db8::2".parse().expect("ip")],
            detail: None,
        });
        // The second record, as the tunnel's aftrAddressOrdinal picks it.
        let target = prober.target(&plan, &aftr).await.expect("resolved");
        assert_eq!(target, "2001:db8::2".parse::<IpAddr>().expect("ip"));
    }
}
