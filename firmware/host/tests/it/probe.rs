//! Health probes against real peers: ICMP echo, a TCP listener and dnsmasq in a second
//! namespace, two links between them. A probe bound to the link without a route to the peer
//! fails, which is what lets a HealthCheck test one uplink while the default route uses
//! another.

use std::time::Duration;

use routerd_test_kit::daemon::Daemon;

use routerd_host::probe::{self, Pinger, ProbeError};

use crate::support::TestNetns;

const TIMEOUT: Duration = Duration::from_millis(500);

/// The prober's namespace with two links: `a0` to the peer (10.77.0.2, whose namespace is
/// returned second) and `a1` to a third namespace on 10.77.1.0/24, where nobody has the peer's
/// address (returned last, to keep it alive).
fn pair() -> (TestNetns, TestNetns, TestNetns) {
    let (a, b, c) = (TestNetns::new(), TestNetns::new(), TestNetns::new());
    for (i, other) in [&b, &c].iter().enumerate() {
        let (here, there) = (format!("a{i}"), format!("p{i}"));
        a.veth_to(&here, other, &there);
        a.ip(&["addr", "add", &format!("10.77.{i}.1/24"), "dev", &here]);
        other.ip(&["addr", "add", &format!("10.77.{i}.2/24"), "dev", &there]);
        a.ip(&["link", "set", &here, "up"]);
        other.ip(&["link", "set", &there, "up"]);
    }
    (a, b, c)
}

/// Retries `probe` while it times out (the server may still be starting).
async fn answered<F, Fut>(mut probe: F) -> Result<Duration, ProbeError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Duration, ProbeError>>,
{
    let mut outcome = probe().await;
    for _ in 0..20 {
        if !matches!(outcome, Err(ProbeError::Timeout(_))) {
            break;
        }
        outcome = probe().await;
    }
    outcome
}

#[tokio::test]
async fn icmp_probes_are_answered_through_their_link_only() {
    let (a, _b, _c) = pair();
    let peer = "10.77.0.2".parse().expect("address");
    let through = Pinger::open(&a.netns(), false, Some("a0")).expect("socket on a0");
    let rtt = through.ping(peer, TIMEOUT).await.expect("the peer answers on a0");
    assert!(rtt < TIMEOUT);
    let unbound = Pinger::open(&a.netns(), false, None).expect("unbound socket");
    unbound.ping(peer, TIMEOUT).await.expect("the route through a0 is used");
    let wrong = Pinger::open(&a.netns(), false, Some("a1")).expect("socket on a1");
    let err = wrong.ping(peer, TIMEOUT).await.expect_err("no route to the peer through a1");
    assert!(matches!(err, ProbeError::Timeout(_) | ProbeError::Failed(_)), "{err}");
    let absent = "10.77.0.9".parse().expect("address");
    let err = through.ping(absent, TIMEOUT).await.expect_err("nobody has 10.77.0.9");
    assert!(matches!(err, ProbeError::Timeout(_) | ProbeError::Failed(_)), "{err}");
}

#[tokio::test]
async fn tcp_probes_need_an_accepting_listener() {
    let (a, b, _c) = pair();
    // The listener's socket belongs to the peer namespace; the kernel completes handshakes
    // into its backlog without an accept.
    let _listener = b
        .netns()
        .run(|| std::net::TcpListener::bind("10.77.0.2:8443"))
        .expect("peer namespace")
        .expect("listener");
    let open = "10.77.0.2:8443".parse().expect("socket address");
    probe::tcp_connect(&a.netns(), Some("a0"), open, TIMEOUT).await.expect("connect to a listener");
    let closed = "10.77.0.2:8444".parse().expect("socket address");
    let err = probe::tcp_connect(&a.netns(), Some("a0"), closed, TIMEOUT)
        .await
        .expect_err("a closed port refuses");
    assert!(err.to_string().contains("refused"), "{err}");
    let err = probe::tcp_connect(&a.netns(), Some("a1"), open, TIMEOUT)
        .await
        .expect_err("no route to the peer through a1");
    assert!(matches!(err, ProbeError::Timeout(_) | ProbeError::Failed(_)), "{err}");
}

#[tokio::test]
async fn dns_probes_accept_an_answer_and_refuse_a_server_that_cannot_resolve() {
    let (a, b, _c) = pair();
    let dnsmasq = |port: &str, extra: &[&str]| {
        // dnsmasq in the peer namespace (apt install dnsmasq), killed on drop.
        Daemon::spawn(
            b.command("dnsmasq")
                .args(["--no-daemon", "--conf-file=/dev/null"])
                .args(["--no-resolv", "--no-hosts", "--bind-interfaces"])
                .args(["--listen-address", "10.77.0.2", "--port", port])
                .args(extra),
        )
    };
    // Answers every name itself (NXDOMAIN): a working resolver for the probe.
    let _local = dnsmasq("5353", &["--local=/#/"]);
    // No upstream servers: REFUSED.
    let _refusing = dnsmasq("5354", &[]);
    let netns = a.netns();
    let answering = "10.77.0.2:5353".parse().expect("socket address");
    answered(|| probe::dns_query(&netns, Some("a0"), answering, TIMEOUT))
        .await
        .expect("NXDOMAIN is an answer");
    let refusing = "10.77.0.2:5354".parse().expect("socket address");
    let err = answered(|| probe::dns_query(&netns, Some("a0"), refusing, TIMEOUT))
        .await
        .expect_err("REFUSED is a failure");
    assert!(err.to_string().contains("Refused"), "{err}");
    let err = probe::dns_query(&a.netns(), Some("a1"), answering, TIMEOUT)
        .await
        .expect_err("no route to the server through a1");
    assert!(matches!(err, ProbeError::Timeout(_) | ProbeError::Failed(_)), "{err}");
}
