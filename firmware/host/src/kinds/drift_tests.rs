//! Unit tests of the drift rules of the kinds ([`super`]).

use super::ArtifactSpec;
use crate::artifact::AttributeDiff;
use crate::kinds::ip6_tunnel::{EncapLimit, Ip6TunnelMode, Ip6TunnelSpec};
use crate::kinds::link::{LinkKind, LinkSpec, VlanProtocol};
use crate::kinds::sysctl::SysctlSpec;

fn drift(desired: &ArtifactSpec, observed: &ArtifactSpec) -> Vec<AttributeDiff> {
    desired.drift(observed)
}

#[test]
fn link_drift_ignores_fields_left_unset() {
    let d = ArtifactSpec::Link(LinkSpec {
        ifname: "lan".into(),
        admin_up: Some(true),
        mtu: None,
        kind: None,
    });
    let o = ArtifactSpec::Link(LinkSpec {
        ifname: "lan".into(),
        admin_up: Some(true),
        mtu: Some(9000),
        kind: Some(LinkKind::Other { name: "veth".into() }),
    });
    assert!(drift(&d, &o).is_empty());
    let down = ArtifactSpec::Link(LinkSpec {
        ifname: "lan".into(),
        admin_up: Some(false),
        mtu: Some(1500),
        kind: None,
    });
    let diffs = drift(&d, &down);
    assert_eq!(diffs.len(), 1);
    assert_eq!(diffs[0].attribute, "adminUp");
}

fn vlan(parent: &str, id: u16) -> Option<LinkKind> {
    Some(LinkKind::Vlan { parent: parent.into(), id, protocol: VlanProtocol::Ieee8021Q })
}

#[test]
fn link_drift_compares_a_declared_kind_with_the_observed_one() {
    let link = |kind| {
        ArtifactSpec::Link(LinkSpec {
            ifname: "eth1.20".into(),
            admin_up: Some(true),
            mtu: None,
            kind,
        })
    };
    assert!(drift(&link(vlan("eth1", 20)), &link(vlan("eth1", 20))).is_empty());
    for other in [vlan("eth1", 30), vlan("eth2", 20), None] {
        let diffs = drift(&link(vlan("eth1", 20)), &link(other));
        assert_eq!(diffs.len(), 1, "{diffs:?}");
        assert_eq!(diffs[0].attribute, "kind");
    }
}

#[test]
fn tunnel_drift_treats_absent_local_and_underlying_as_values() {
    let desired = Ip6TunnelSpec {
        ifname: "dslite0".into(),
        mode: Ip6TunnelMode::Ipip6,
        remote: "2001:db8::1".parse().expect("literal"),
        local: None,
        underlying: None,
        encap_limit: EncapLimit::None,
        mtu: None,
        admin_up: Some(true),
    };
    let same = Ip6TunnelSpec { mtu: Some(1460), ..desired.clone() };
    assert!(
        drift(&ArtifactSpec::Ip6Tunnel(desired.clone()), &ArtifactSpec::Ip6Tunnel(same)).is_empty()
    );
    let bound = Ip6TunnelSpec {
        local: Some("2001:db8::2".parse().expect("literal")),
        underlying: Some("eth0".into()),
        encap_limit: EncapLimit::DEFAULT,
        ..desired.clone()
    };
    let diffs = drift(&ArtifactSpec::Ip6Tunnel(desired), &ArtifactSpec::Ip6Tunnel(bound));
    let names: Vec<&str> = diffs.iter().map(|d| d.attribute.as_str()).collect();
    assert_eq!(names, ["local", "underlying", "encapLimit"]);
    assert_eq!(diffs[2].desired, serde_json::json!("none"));
    assert_eq!(diffs[2].observed, serde_json::json!(4));
}

#[test]
fn sysctl_drift_folds_whitespace() {
    let d = ArtifactSpec::Sysctl(SysctlSpec { key: "k".into(), value: "4096 87380".into() });
    let o = ArtifactSpec::Sysctl(SysctlSpec { key: "k".into(), value: "4096\t87380\n".into() });
    assert!(drift(&d, &o).is_empty());
}

#[test]
fn every_kind_serialises_as_its_string_and_parses_back() {
    for kind in super::ArtifactKind::ALL {
        let json = serde_json::to_string(&kind).expect("serialises");
        assert_eq!(json, format!("\"{}\"", kind.as_str()));
        assert_eq!(super::ArtifactKind::parse(kind.as_str()), Some(kind));
        assert!(super::ApplyWith::kinds(kind.apply_with()).any(|k| k == kind));
        // Every family reads back from its name (the built-in list is complete).
        let family = kind.apply_with();
        let json = serde_json::to_string(&family).expect("serialises");
        assert_eq!(serde_json::from_str::<super::ApplyWith>(&json).expect("parses"), family);
    }
    assert_eq!(super::ArtifactKind::parse("linux.vlan"), None);
    assert!(serde_json::from_str::<super::ArtifactKind>("\"linux.vlan\"").is_err());
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Banner {
    text: String,
    lines: u32,
}

impl super::external::ExternalArtifactType for Banner {
    fn drift(&self, observed: &Self, diffs: &mut super::Diffs) {
        diffs.compare("text", &self.text, &observed.text);
    }

    fn needs_recreate(&self, observed: &Self) -> bool {
        self.lines != observed.lines
    }
}

static BANNER: super::external::ExternalArtifactKind =
    super::external::ExternalArtifactKind::of::<Banner>("test.banner", "test-banner");

#[test]
fn a_registered_kind_reads_back_and_drifts_by_its_own_rules() {
    use super::external::{ExternalArtifactSpec, RegisterError, register};
    assert_eq!(super::ArtifactKind::parse("test.banner"), None, "not registered yet");
    register(&BANNER).expect("free");
    register(&BANNER).expect("the same descriptor again is a no-op");
    let kind = super::ArtifactKind::parse("test.banner").expect("registered");
    assert_eq!(kind.apply_with().as_str(), "test-banner");
    assert!(kind.is_remembered());

    let spec = |text: &str, lines| {
        let attrs = Banner { text: text.into(), lines };
        ArtifactSpec::External(ExternalArtifactSpec::new(&BANNER, "motd", &attrs).expect("json"))
    };
    let json = serde_json::to_value(spec("hi", 1)).expect("serialises");
    assert_eq!(
        json,
        serde_json::json!({"type": "external", "kind": "test.banner", "name": "motd",
            "attributes": {"text": "hi", "lines": 1}})
    );
    assert_eq!(serde_json::from_value::<ArtifactSpec>(json).expect("reads"), spec("hi", 1));
    assert_eq!(spec("hi", 1).key().to_string(), "test.banner/motd");

    let diffs = drift(&spec("new", 1), &spec("old", 1));
    assert_eq!(diffs.len(), 1);
    assert_eq!(diffs[0].attribute, "text");
    assert!(spec("hi", 2).needs_recreate(&spec("hi", 1)));
    assert!(!spec("new", 1).needs_recreate(&spec("old", 1)));

    static CLASH: super::external::ExternalArtifactKind =
        super::external::ExternalArtifactKind::of::<Banner>("linux.sysctl", "test-banner");
    assert_eq!(register(&CLASH), Err(RegisterError::BuiltIn("linux.sysctl")));
    static FAMILY: super::external::ExternalArtifactKind =
        super::external::ExternalArtifactKind::of::<Banner>("test.other", "rtnetlink");
    assert_eq!(register(&FAMILY), Err(RegisterError::BuiltInFamily("rtnetlink")));
}

#[test]
fn a_spec_of_another_type_differs_in_type() {
    let sysctl = ArtifactSpec::Sysctl(SysctlSpec { key: "k".into(), value: "1".into() });
    let link =
        ArtifactSpec::Link(LinkSpec { ifname: "k".into(), admin_up: None, mtu: None, kind: None });
    let diffs = drift(&sysctl, &link);
    assert_eq!(diffs.len(), 1);
    assert_eq!(
        (diffs[0].attribute.as_str(), &diffs[0].desired, &diffs[0].observed),
        ("type", &serde_json::json!("sysctl"), &serde_json::json!("link"))
    );
    assert!(!sysctl.needs_recreate(&link));
}
