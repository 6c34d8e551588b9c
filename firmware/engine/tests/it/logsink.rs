//! LogSink: the `routerd-log` configurator installs the sinks the config declares into the
//! session, which forwards the events it is handed (as the supervisor's log layer hands them)
//! to real receivers: a UDP and a TCP syslog receiver in the upstream namespace, reachable
//! only from the router's namespace, a unix datagram socket and a plugin program.

use std::time::{Duration, SystemTime};

use routerd_engine::result::OperationResult;
use routerd_engine::{ConfigInput, Phase, ResultDocument, Session};
use routerd_host::Netns;
use routerd_host::artifact::LogSeverity;
use routerd_host::logsink::LogEvent;
use tokio::io::AsyncReadExt;

use crate::support::{LAB, Lab, ops};

const DEADLINE: Duration = Duration::from_secs(10);

fn sink(name: &str, spec: &str) -> String {
    format!(
        "\n    - apiVersion: system.routerd.net/v1alpha1\n      kind: LogSink\n      metadata:\n        name: {name}\n      spec:\n{spec}"
    )
}

fn syslog(network: &str, address: &str, min_level: &str) -> String {
    format!(
        "        type: syslog\n        minLevel: {min_level}\n        syslog:\n          network: {network}\n          address: {address}\n          facility: local3\n          tag: rt-test\n"
    )
}

async fn reconcile(session: &mut Session, yaml: &str) -> ResultDocument {
    let input = ConfigInput::parse(yaml, "router.yaml").expect("config parses");
    session.reconcile(&input, SystemTime::now()).await.expect("reconcile runs")
}

fn event(severity: LogSeverity, message: &str) -> LogEvent {
    LogEvent {
        time: SystemTime::now(),
        severity,
        target: "routerd::test".into(),
        message: message.into(),
    }
}

async fn datagram(socket: &tokio::net::UdpSocket) -> String {
    let mut buf = vec![0u8; 4096];
    let len = tokio::time::timeout(DEADLINE, socket.recv(&mut buf))
        .await
        .expect("a datagram in time")
        .expect("recv");
    String::from_utf8_lossy(&buf[..len]).into_owned()
}

#[tokio::test]
async fn log_sinks_forward_events_to_syslog_receivers_and_a_plugin_and_go_with_their_resources() {
    let lab = Lab::new();
    let upstream = Netns::named(lab.upstream.name()).expect("upstream namespace");
    // The receivers listen on the upstream side of the WAN cable: only a socket opened in the
    // router's namespace reaches 198.51.100.1.
    let (udp, tcp) = upstream
        .run(|| {
            let udp = std::net::UdpSocket::bind("198.51.100.1:5514")?;
            let tcp = std::net::TcpListener::bind("198.51.100.1:5514")?;
            udp.set_nonblocking(true)?;
            tcp.set_nonblocking(true)?;
            std::io::Result::Ok((udp, tcp))
        })
        .expect("enter upstream")
        .expect("receivers bind");
    let udp = tokio::net::UdpSocket::from_std(udp).expect("udp");
    let tcp = tokio::net::TcpListener::from_std(tcp).expect("tcp");
    let gram_path = lab.dir().join("log.sock");
    let gram = tokio::net::UnixDatagram::bind(&gram_path).expect("unix datagram socket");
    let plugin_out = lab.dir().join("plugin.out");
    let plugin = lab.dir().join("plugin.sh");
    std::fs::write(&plugin, format!("#!/bin/sh\ncat >> {}\n", plugin_out.display()))
        .expect("plugin");
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");

    let config = format!(
        "{LAB}{}{}{}{}",
        sink("remote", &syslog("udp", "198.51.100.1:5514", "warning")),
        sink("stream", &syslog("tcp", "198.51.100.1:5514", "info")),
        sink("local", &syslog("unixgram", &gram_path.display().to_string(), "info")),
        sink(
            "hook",
            &format!(
                "        type: plugin\n        minLevel: error\n        plugin:\n          path: {}\n          timeout: 2s\n",
                plugin.display()
            )
        ),
    );
    let mut session = lab.session(false).await;
    let doc = reconcile(&mut session, &config).await;
    let created: Vec<String> = ops(&doc, OperationResult::Done)
        .into_iter()
        .filter(|o| o.contains("routerd.logSink"))
        .collect();
    assert_eq!(
        created,
        [
            "create routerd.logSink/hook",
            "create routerd.logSink/local",
            "create routerd.logSink/remote",
            "create routerd.logSink/stream"
        ],
        "{:?}",
        doc.operations
    );
    for name in ["remote", "stream", "local", "hook"] {
        let res = doc.resources.iter().find(|r| r.id.ends_with(&format!("/LogSink/{name}")));
        assert_eq!(res.map(|r| r.phase), Some(Phase::Healthy), "{name}: {res:?}");
    }

    let sinks = session.log_sinks();
    sinks.emit(event(LogSeverity::Info, "below the remote minimum"));
    sinks.emit(event(LogSeverity::Error, "uplink wan lost"));
    // local3 (19) * 8 + error (3) = 155; the info event never reached the UDP sink.
    let got = datagram(&udp).await;
    assert!(got.starts_with("<155>1 "), "{got}");
    assert!(got.contains(&format!(" rt-test {} - - uplink wan lost", std::process::id())), "{got}");

    // TCP: both events, octet-counted, in order.
    let (mut conn, _) = tokio::time::timeout(DEADLINE, tcp.accept())
        .await
        .expect("connect in time")
        .expect("accept");
    let mut stream = String::new();
    let mut buf = [0u8; 4096];
    while !stream.contains("uplink wan lost") {
        let n = tokio::time::timeout(DEADLINE, conn.read(&mut buf))
            .await
            .expect("frames in time")
            .expect("read");
        assert!(n > 0, "connection closed: {stream}");
        stream.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let (len, rest) = stream.split_once(' ').expect("octet count");
    let first = &rest[..len.parse::<usize>().expect("count")];
    assert!(
        first.starts_with("<158>1 ") && first.ends_with("below the remote minimum"),
        "{stream}"
    );

    // The local datagram socket: syslog(3)'s form.
    let mut buf = vec![0u8; 4096];
    let len =
        tokio::time::timeout(DEADLINE, gram.recv(&mut buf)).await.expect("in time").expect("recv");
    let local = String::from_utf8_lossy(&buf[..len]).into_owned();
    assert_eq!(local, format!("<158>rt-test[{}]: below the remote minimum", std::process::id()));

    // The plugin: only the error, as JSON on its standard input.
    let started = std::time::Instant::now();
    let line = loop {
        if let Ok(text) = std::fs::read_to_string(&plugin_out)
            && text.ends_with('\n')
        {
            break text;
        }
        assert!(started.elapsed() < DEADLINE, "the plugin did not run");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let json: serde_json::Value = serde_json::from_str(line.trim()).expect("one JSON object");
    assert_eq!(json["sink"], "hook");
    assert_eq!(json["level"], "error");
    assert_eq!(json["message"], "uplink wan lost");

    // Delivery counters are a report: nothing to do on the next reconcile.
    let again = reconcile(&mut session, &config).await;
    assert!(again.operations.is_empty(), "{:?}", again.operations);

    // A changed minimum is a modify; a removed sink is deleted and gets nothing more.
    let changed = config
        .replace(
            "network: udp\n          address: 198.51.100.1:5514\n          facility: local3",
            "network: udp\n          address: 198.51.100.1:5514\n          facility: local4",
        )
        .replace(&sink("stream", &syslog("tcp", "198.51.100.1:5514", "info")), "");
    let doc = reconcile(&mut session, &changed).await;
    let mut changes: Vec<String> = ops(&doc, OperationResult::Done)
        .into_iter()
        .filter(|o| o.contains("routerd.logSink"))
        .collect();
    changes.sort();
    assert_eq!(changes, ["delete routerd.logSink/stream", "modify routerd.logSink/remote"]);
    sinks.emit(event(LogSeverity::Warning, "after the change"));
    let got = datagram(&udp).await;
    // local4 (20) * 8 + warning (4) = 164.
    assert!(got.starts_with("<164>1 ") && got.ends_with("after the change"), "{got}");
    let n = tokio::time::timeout(DEADLINE, conn.read(&mut buf)).await.expect("closed in time");
    assert_eq!(n.ok(), Some(0), "the deleted sink closed its connection and sent nothing more");
}

#[tokio::test]
async fn a_sink_that_cannot_be_opened_fails_with_the_reason_and_the_rest_apply() {
    let lab = Lab::new();
    let missing = lab.dir().join("no-such-plugin");
    let config = format!(
        "{LAB}{}{}",
        sink(
            "hook",
            &format!(
                "        type: plugin\n        plugin:\n          path: {}\n",
                missing.display()
            )
        ),
        sink(
            "nosock",
            &syslog("unixgram", &lab.dir().join("nothing.sock").display().to_string(), "info")
        ),
    );
    let mut session = lab.session(false).await;
    let doc = reconcile(&mut session, &config).await;
    let failed: Vec<_> =
        doc.operations.iter().filter(|o| o.result == OperationResult::Failed).collect();
    assert_eq!(failed.len(), 2, "{:?}", doc.operations);
    let text = format!("{failed:?}");
    assert!(text.contains("no-such-plugin"), "{text}");
    assert!(text.contains("no syslog socket at"), "{text}");
    for name in ["hook", "nosock"] {
        let res = doc.resources.iter().find(|r| r.id.ends_with(&format!("/LogSink/{name}")));
        assert_ne!(res.map(|r| r.phase), Some(Phase::Healthy), "{name}: {res:?}");
    }
    // The kernel side of the lab still applied.
    assert!(lab.client.exec_ok(&["ping", "-c", "1", "-W", "3", "198.51.100.1"]));
}
