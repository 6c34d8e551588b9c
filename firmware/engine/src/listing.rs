//! Listing the host on a helper thread while the engine goes on with work that does not touch
//! it: the backends whose observe needs no async runtime
//! ([`Backend::observe_is_synchronous`]: rtnetlink, nftables) are listed there, kind after
//! kind, and the snapshot collects the result after observing the other backends itself.
//!
//! A cold reconcile of the benchmark starts the listing for its verification right after
//! apply, while it commits the ledger and builds the operation records: the IPv4 route dump of
//! 10,200 routes alone takes about 10 ms (`docs/benchmarks.md`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use routerd_host::{Artifact, ArtifactKey, ArtifactKind, Backend, HostError};
use tokio::sync::oneshot;

/// What a helper thread lists: the artifacts of some backends, in registry order.
pub(crate) struct Listing {
    /// Positions, in the registry's backend list, of the backends being listed (ascending).
    pub(crate) backends: Vec<usize>,
    /// One list per backend of `backends`, each kind after kind in [`Backend::kinds`] order;
    /// or the first error. Closed without a value when the thread died.
    result: oneshot::Receiver<Result<Vec<Vec<Arc<Artifact>>>, HostError>>,
}

impl Listing {
    /// Starts listing every backend of `backends` whose observe is synchronous and reads no
    /// wanted keys (those need the desired state) on a new thread.
    ///
    /// Shape: `None` when no backend qualifies or the thread cannot start; the caller then
    /// lists everything itself.
    pub(crate) fn start(backends: &[Arc<dyn Backend>]) -> Option<Self> {
        let (positions, listed): (Vec<usize>, Vec<Arc<dyn Backend>>) = backends
            .iter()
            .enumerate()
            .filter(|(_, b)| b.observe_is_synchronous() && !b.observes_wanted_only())
            .map(|(i, b)| (i, Arc::clone(b)))
            .unzip();
        if positions.is_empty() {
            return None;
        }
        let (send, result) = oneshot::channel();
        std::thread::Builder::new()
            .name("observe".into())
            .spawn(move || {
                let lists = listed.iter().map(|b| list_all(b.as_ref())).collect();
                // The receiver is gone when the reconcile stopped early: nothing to hand over.
                let _ = send.send(lists);
            })
            .ok()?;
        Some(Self { backends: positions, result })
    }

    /// The lists, once the thread is done.
    ///
    /// Errors: the first [`HostError`] of the listing. `Ok(None)` when the thread died without
    /// a result (the caller lists those backends itself).
    pub(crate) async fn finish(self) -> Result<Option<Vec<Vec<Arc<Artifact>>>>, HostError> {
        match self.result.await {
            Ok(lists) => lists.map(Some),
            Err(_) => Ok(None),
        }
    }
}

/// Every artifact of every kind of `backend`, driven without a runtime.
fn list_all(backend: &dyn Backend) -> Result<Vec<Arc<Artifact>>, HostError> {
    let mut all = Vec::new();
    futures::executor::block_on(observe_kinds(backend, &BTreeMap::new(), &mut all))?;
    Ok(all)
}

/// Appends what `backend` lists of each of its kinds, in [`Backend::kinds`] order, to `list`,
/// asking about the `wanted` keys of each kind (none for a kind missing from `wanted`).
///
/// Errors: the first [`HostError`] of an observe.
pub(crate) async fn observe_kinds(
    backend: &dyn Backend,
    wanted: &BTreeMap<ArtifactKind, BTreeSet<ArtifactKey>>,
    list: &mut Vec<Arc<Artifact>>,
) -> Result<(), HostError> {
    for kind in backend.kinds() {
        let keys: Vec<ArtifactKey> =
            wanted.get(kind).map(|k| k.iter().cloned().collect()).unwrap_or_default();
        list.extend(backend.observe_shared(*kind, &keys).await?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::thread::ThreadId;

    use futures::future::BoxFuture;
    use routerd_host::artifact::LinkSpec;
    use routerd_host::{ArtifactKey, ArtifactKind, ArtifactSpec};

    use super::*;

    /// A backend listing fixed links, recording the thread each observe ran on.
    struct Links {
        synchronous: bool,
        wanted_only: bool,
        /// `Some("panic")` panics, any other message fails the observe with it.
        fail: Option<&'static str>,
        ifnames: Vec<&'static str>,
        threads: Mutex<Vec<ThreadId>>,
    }

    impl Links {
        fn new(synchronous: bool, ifnames: &[&'static str]) -> Arc<Self> {
            Arc::new(Self {
                synchronous,
                wanted_only: false,
                fail: None,
                ifnames: ifnames.to_vec(),
                threads: Mutex::new(Vec::new()),
            })
        }

        fn threads(&self) -> Vec<ThreadId> {
            self.threads.lock().expect("threads").clone()
        }
    }

    fn link(ifname: &str) -> Artifact {
        let spec = LinkSpec { ifname: ifname.into(), admin_up: Some(true), mtu: None, kind: None };
        Artifact::new(ArtifactSpec::Link(spec))
    }

    impl Backend for Links {
        fn apply_with(&self) -> routerd_host::ApplyWith {
            routerd_host::ApplyWith::Rtnetlink
        }

        fn kinds(&self) -> &'static [ArtifactKind] {
            &[ArtifactKind::Link, ArtifactKind::Ipv4Address]
        }

        fn observe<'a>(
            &'a self,
            kind: ArtifactKind,
            _wanted: &'a [ArtifactKey],
        ) -> BoxFuture<'a, Result<Vec<Artifact>, HostError>> {
            self.threads.lock().expect("threads").push(std::thread::current().id());
            let listed = match (kind, self.fail) {
                (_, Some("panic")) => panic!("the listing thread dies"),
                (_, Some(message)) => {
                    Err(HostError::Dump { what: "links".into(), message: message.into() })
                }
                (ArtifactKind::Link, None) => Ok(self.ifnames.iter().map(|n| link(n)).collect()),
                (_, None) => Ok(Vec::new()),
            };
            Box::pin(async move { listed })
        }

        fn observes_wanted_only(&self) -> bool {
            self.wanted_only
        }

        fn observe_is_synchronous(&self) -> bool {
            self.synchronous
        }

        fn create<'a>(&'a self, _desired: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
            Box::pin(async { Ok(()) })
        }

        fn modify<'a>(
            &'a self,
            _observed: &'a Artifact,
            _desired: &'a Artifact,
        ) -> BoxFuture<'a, Result<(), HostError>> {
            Box::pin(async { Ok(()) })
        }

        fn delete<'a>(&'a self, _observed: &'a Artifact) -> BoxFuture<'a, Result<(), HostError>> {
            Box::pin(async { Ok(()) })
        }
    }

    fn names(list: &[Arc<Artifact>]) -> Vec<String> {
        list.iter().map(|a| a.key.name.clone()).collect()
    }

    #[tokio::test]
    async fn only_the_synchronous_backends_are_listed_on_another_thread() {
        let slow = Links::new(false, &["eth0"]);
        let first = Links::new(true, &["wan", "lan"]);
        let second = Links::new(true, &["vb0a"]);
        let backends: Vec<Arc<dyn Backend>> = vec![slow.clone(), first.clone(), second.clone()];

        let listing = Listing::start(&backends).expect("two backends qualify");
        assert_eq!(listing.backends, vec![1, 2]);
        let lists = listing.finish().await.expect("no error").expect("the thread finished");

        assert_eq!(lists.len(), 2);
        assert_eq!(names(&lists[0]), ["wan", "lan"]);
        assert_eq!(names(&lists[1]), ["vb0a"]);
        assert!(slow.threads().is_empty(), "the async backend is left to the snapshot");
        let here = std::thread::current().id();
        let ran = [first.threads(), second.threads()].concat();
        assert_eq!(ran.len(), 4, "each kind of each backend is observed once: {ran:?}");
        assert!(ran.iter().all(|t| *t != here && *t == ran[0]), "one helper thread: {ran:?}");
    }

    #[tokio::test]
    async fn nothing_starts_without_a_backend_to_list() {
        let slow = Links::new(false, &["eth0"]);
        let wanted = Arc::new(Links {
            synchronous: true,
            wanted_only: true,
            fail: None,
            ifnames: vec!["eth1"],
            threads: Mutex::new(Vec::new()),
        });
        let backends: Vec<Arc<dyn Backend>> = vec![slow, wanted.clone()];
        assert!(Listing::start(&backends).is_none());
        assert!(
            wanted.threads().is_empty(),
            "a backend reading wanted keys needs the desired state"
        );
    }

    #[tokio::test]
    async fn a_failed_listing_returns_its_error_and_a_dead_thread_returns_nothing() {
        let failing = |fail| {
            Arc::new(Links {
                synchronous: true,
                wanted_only: false,
                fail: Some(fail),
                ifnames: vec![],
                threads: Mutex::new(Vec::new()),
            }) as Arc<dyn Backend>
        };
        let listing = Listing::start(&[failing("dump refused")]).expect("started");
        match listing.finish().await {
            Err(HostError::Dump { message, .. }) => assert_eq!(message, "dump refused"),
            other => panic!("expected the dump error, got {other:?}"),
        }
        let listing = Listing::start(&[failing("panic")]).expect("started");
        assert!(matches!(listing.finish().await, Ok(None)));
    }
}
