//! The AFTR of a DS-Lite tunnel resolved from `aftrFQDN` (RFC 6333; RFC 6334 names the AFTR by
//! its FQDN): an external item the supervisor's scheduler produces, and a runtime value the
//! tunnel is rendered from (ADR 0008).
//!
//! The scheduler looks the name up ([`lookup`]) through the tunnel's resolvers
//! (`aftrDNSServers`, else the system's) and writes the AAAA records into the session's
//! [`AftrStore`]; the [`backend`] lists them as `routerd.aftrAddress/<tunnel>`. The tunnel
//! depends on that item having addresses, so it waits for the first answer, and its remote end
//! follows a changed answer at the next resync. A failed lookup keeps the previous answer: a
//! resolver that is briefly unreachable must not take the router's IPv4 service down.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv6Addr;
use std::sync::RwLock;
use std::time::Duration;

pub use routerd_host::artifact::AftrAddressSpec;
use routerd_host::{Artifact, ArtifactKind, ArtifactSpec, Netns};
use routerd_model::spec::net::AftrAddressSelection;
use routerd_model::{Config, ResourceSpec};

use crate::scheduled::ScheduledBackend;
use crate::state::Resolvers;

/// Time between two lookups of a name that was answered.
pub const RESOLVE_INTERVAL: Duration = Duration::from_secs(60);
/// Time between two lookups while a name has no answer yet, or the last lookup failed.
pub const RETRY_INTERVAL: Duration = Duration::from_secs(5);

/// What the scheduler resolves for one tunnel, from the config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AftrPlan {
    /// The tunnel's link name (the item's name).
    pub ifname: String,
    /// `aftrFQDN`.
    pub fqdn: String,
    /// `aftrDNSServers` on port 53, in order; else the system's resolver.
    pub resolvers: Resolvers,
}

/// The lookups of every `DSLiteTunnel` with `aftrFQDN` and no `remoteAddress`, in config order.
pub fn aftr_plans(config: &Config) -> Vec<AftrPlan> {
    config
        .spec
        .resources
        .iter()
        .filter_map(|r| match &r.spec {
            ResourceSpec::DsLiteTunnel(s) if s.remote_address.is_none() => {
                let fqdn = s.aftr_fqdn.clone()?;
                let resolvers =
                    Resolvers::servers(&s.aftr_dns_servers).unwrap_or(Resolvers::System);
                let ifname = s.tunnel_name.clone().unwrap_or_else(|| r.name.clone());
                Some(AftrPlan { ifname, fqdn, resolvers })
            }
            _ => None,
        })
        .collect()
}

/// The AFTR address `ordinal` (1-based, default 1) picks from `addresses`: the n-th, or with
/// `ordinalModulo` the n-th counting round (so several routers given different ordinals spread
/// over the AFTRs a name has); `None` when there are fewer with `ordinal`, or none.
pub fn pick(
    addresses: &[Ipv6Addr],
    ordinal: Option<u32>,
    selection: Option<AftrAddressSelection>,
) -> Option<Ipv6Addr> {
    let n = usize::try_from(ordinal.unwrap_or(1).max(1)).ok()? - 1;
    match selection {
        Some(AftrAddressSelection::OrdinalModulo) if !addresses.is_empty() => {
            addresses.get(n % addresses.len()).copied()
        }
        _ => addresses.get(n).copied(),
    }
}

/// Looks up `plan`'s AFTR from inside `netns` (AAAA records, through the plan's resolvers):
/// what to record for the tunnel, given what `store` holds for it now, and whether the name was
/// answered with records (the scheduler asks again sooner when not). A failed lookup keeps the
/// previous records; an answer without records replaces them.
pub async fn lookup(netns: &Netns, plan: &AftrPlan, store: &AftrStore) -> (AftrAddressSpec, bool) {
    let looked_up = crate::state::resolve_aaaa(netns, &plan.fqdn, &plan.resolvers).await;
    answer_of(plan, looked_up, store.get(&plan.ifname))
}

/// What to record for `plan` after a lookup that gave `looked_up` (the AAAA records and who
/// answered, or the error), `previous` being what is recorded now; and whether the name was
/// answered with records. A failed lookup keeps the previous records.
fn answer_of(
    plan: &AftrPlan,
    looked_up: Result<(Vec<Ipv6Addr>, String), String>,
    previous: Option<AftrAddressSpec>,
) -> (AftrAddressSpec, bool) {
    let (addresses, detail, answered) = match looked_up {
        Ok((addresses, by)) => {
            let detail = match addresses.len() {
                0 => format!("{by} has no AAAA record for {}", plan.fqdn),
                n => format!("{n} AAAA record(s) from {by}"),
            };
            let answered = !addresses.is_empty();
            (addresses, detail, answered)
        }
        Err(e) => {
            let kept = previous.map(|p| p.addresses).unwrap_or_default();
            let detail =
                if kept.is_empty() { e } else { format!("{e}; the previous answer is kept") };
            (kept, detail, false)
        }
    };
    let spec = AftrAddressSpec {
        ifname: plan.ifname.clone(),
        fqdn: plan.fqdn.clone(),
        addresses,
        detail: Some(detail),
    };
    (spec, answered)
}

/// The latest answer per tunnel, shared by the scheduler (writer) and the session's inventory
/// (reader).
#[derive(Debug, Default)]
pub struct AftrStore {
    answers: RwLock<BTreeMap<String, AftrAddressSpec>>,
}

impl AftrStore {
    /// Records `answer` for tunnel `answer.ifname`. Returns whether the addresses changed (or
    /// the tunnel had none recorded): the caller then asks for a reconcile.
    pub fn set(&self, answer: AftrAddressSpec) -> bool {
        let Ok(mut map) = self.answers.write() else { return false };
        let changed = map.get(&answer.ifname).is_none_or(|old| old.addresses != answer.addresses);
        map.insert(answer.ifname.clone(), answer);
        changed
    }

    /// Drops the answers of tunnels not in `ifnames` (resources removed from the config).
    pub fn retain(&self, ifnames: &BTreeSet<String>) {
        if let Ok(mut map) = self.answers.write() {
            map.retain(|name, _| ifnames.contains(name));
        }
    }

    /// The answer recorded for tunnel `ifname`.
    pub fn get(&self, ifname: &str) -> Option<AftrAddressSpec> {
        self.answers.read().ok().and_then(|m| m.get(ifname).cloned())
    }

    fn all(&self) -> Vec<AftrAddressSpec> {
        self.answers.read().map(|m| m.values().cloned().collect()).unwrap_or_default()
    }
}

/// Inventory of `routerd.aftrAddress`: the answers in `store`. Nothing to create or delete: the
/// scheduler, not a configurator, produces them.
pub fn backend(store: std::sync::Arc<AftrStore>) -> ScheduledBackend {
    ScheduledBackend::new(&[ArtifactKind::AftrAddress], "the scheduler's AFTR lookups", move || {
        store.all().into_iter().map(|a| Artifact::new(ArtifactSpec::Aftr(a))).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{WAN0, router};

    #[test]
    fn an_ordinal_picks_the_nth_answer_or_counts_round_with_modulo() {
        let a: Vec<Ipv6Addr> = ["2001:db8::1", "2001:db8::2", "2001:db8::3"]
            .iter()
            .map(|t| t.parse().expect("address"))
            .collect();
        assert_eq!(pick(&a, None, None), Some(a[0]));
        assert_eq!(pick(&a, Some(2), None), Some(a[1]));
        assert_eq!(pick(&a, Some(4), None), None);
        assert_eq!(pick(&a, Some(4), Some(AftrAddressSelection::OrdinalModulo)), Some(a[0]));
        assert_eq!(pick(&a, Some(6), Some(AftrAddressSelection::OrdinalModulo)), Some(a[2]));
        assert_eq!(pick(&[], Some(1), Some(AftrAddressSelection::OrdinalModulo)), None);
    }

    #[test]
    fn tunnels_naming_an_aftr_are_looked_up_through_their_servers() {
        let config = router(&format!(
            "{WAN0}    - apiVersion: net.routerd.net/v1alpha1
      kind: DSLiteTunnel
      metadata: {{name: ds}}
      spec:
        interface: wan
        tunnelName: ds-lite0
        aftrFQDN: aftr.example.test
        aftrDNSServers: [\"2001:db8::53\"]
    - apiVersion: net.routerd.net/v1alpha1
      kind: DSLiteTunnel
      metadata: {{name: fixed}}
      spec: {{interface: wan, aftrFQDN: ignored.example.test, remoteAddress: \"2001:db8::1\"}}
"
        ));
        let plans = aftr_plans(&config);
        assert_eq!(
            plans,
            [AftrPlan {
                ifname: "ds-lite0".into(),
                fqdn: "aftr.example.test".into(),
                resolvers: Resolvers::Static(vec!["[2001:db8::53]:53".parse().expect("addr")]),
            }]
        );
    }

    #[test]
    fn a_failed_lookup_keeps_the_previous_answer_and_an_empty_one_replaces_it() {
        let plan = AftrPlan {
            ifname: "ds-lite0".into(),
            fqdn: "aftr.example.test".into(),
            resolvers: Resolvers::System,
        };
        let aftr: Ipv6Addr = "2001:db8::1".parse().expect("address");
        let (first, answered) =
            answer_of(&plan, Ok((vec![aftr], "[2001:db8::53]:53".into())), None);
        assert!(answered);
        assert_eq!(first.addresses, [aftr]);
        assert_eq!(first.detail.as_deref(), Some("1 AAAA record(s) from [2001:db8::53]:53"));

        let (kept, answered) = answer_of(&plan, Err("timed out".into()), Some(first.clone()));
        assert!(!answered, "asked again soon");
        assert_eq!(kept.addresses, [aftr]);
        assert!(kept.detail.is_some_and(|d| d.contains("previous answer is kept")));

        let (empty, answered) = answer_of(&plan, Ok((Vec::new(), "x".into())), Some(first));
        assert!(!answered);
        assert!(empty.addresses.is_empty(), "an answer without records withdraws the tunnel");
    }

    #[test]
    fn a_failed_lookup_is_no_change_and_a_new_answer_is() {
        let store = AftrStore::default();
        let answer = |addresses: &[&str]| AftrAddressSpec {
            ifname: "ds-lite0".into(),
            fqdn: "aftr.example.test".into(),
            addresses: addresses.iter().map(|a| a.parse().expect("address")).collect(),
            detail: None,
        };
        assert!(store.set(answer(&["2001:db8::1"])));
        assert!(!store.set(answer(&["2001:db8::1"])));
        assert!(store.set(answer(&["2001:db8::2"])));
        store.retain(&BTreeSet::new());
        assert!(store.get("ds-lite0").is_none());
    }
}
