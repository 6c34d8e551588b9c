//! Unit tests of the artifact types ([`super`]).

use super::*;

#[test]
fn link_documents_written_before_kinds_existed_still_parse() {
    let old = r#"{"type":"link","ifname":"lan0","adminUp":true}"#;
    let spec: ArtifactSpec = serde_json::from_str(old).expect("old link document");
    let ArtifactSpec::Link(link) = &spec else { panic!("not a link: {spec:?}") };
    assert_eq!(link.kind, None);
    // And a link without a kind serializes exactly as before.
    assert_eq!(serde_json::to_string(&spec).expect("serializes"), old);
}

#[test]
fn vlan_kind_and_encap_limit_serialize_in_iproute2_words() {
    let kind = LinkKind::Vlan { parent: "eth1".into(), id: 20, protocol: VlanProtocol::Ieee8021Ad };
    let json = serde_json::to_value(&kind).expect("serializes");
    assert_eq!(
        json,
        serde_json::json!({"type": "vlan", "parent": "eth1", "id": 20, "protocol": "802.1ad"})
    );
    assert_eq!(serde_json::from_value::<LinkKind>(json).expect("parses"), kind);
    for (limit, text) in [(EncapLimit::None, "\"none\""), (EncapLimit::Limit(4), "4")] {
        assert_eq!(serde_json::to_string(&limit).expect("serializes"), text);
        assert_eq!(serde_json::from_str::<EncapLimit>(text).expect("parses"), limit);
    }
    assert!(serde_json::from_str::<EncapLimit>("\"some\"").is_err());
}

#[test]
fn tunnel_key_is_the_stable_ipip6_kind_and_the_ifname() {
    let spec = ArtifactSpec::Ip6Tunnel(Ip6TunnelSpec {
        ifname: "dslite0".into(),
        mode: Ip6TunnelMode::Ipip6,
        remote: "2001:db8::1".parse().expect("literal"),
        local: None,
        underlying: None,
        encap_limit: EncapLimit::DEFAULT,
        mtu: None,
        admin_up: None,
    });
    assert_eq!(spec.key().to_string(), "linux.ipip6.tunnel/dslite0");
}
