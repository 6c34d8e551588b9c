//! Config snippets the engine's unit tests share.

use routerd_test_kit::router::RouterDoc;

/// The config of Router `test` holding `resources` (list items indented for `spec.resources`).
///
/// Panics when it does not parse: a test's own config is wrong.
pub(crate) fn router(resources: &str) -> routerd_model::Config {
    let text = RouterDoc::new("test").raw(resources).to_string();
    routerd_model::parse_config(&text, "router.yaml")
        .unwrap_or_else(|e| panic!("test config does not parse: {e:?}"))
}

/// Interface `wan` on link `wan0`, managed.
pub(crate) const WAN0: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata:
        name: wan
      spec:
        ifname: wan0
        managed: true
";

/// Resource list items (indented for `spec.resources` of `examples/vlan-dslite.yaml`): a prefix
/// delegation on interface `wan` and delegated address `lan-v6` on interface `lan` (subnet
/// `2a`, suffix `::1`).
pub(crate) const WAN_PD_LAN_V6: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6PrefixDelegation
      metadata:
        name: wan-pd
      spec:
        interface: wan
    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv6DelegatedAddress
      metadata:
        name: lan-v6
      spec:
        prefixDelegation: wan-pd
        interface: lan
        subnetID: \"2a\"
        addressSuffix: \"::1\"
";

/// Interface `lan` on link `lan0`, managed.
pub(crate) const LAN0: &str = "    - apiVersion: net.routerd.net/v1alpha1
      kind: Interface
      metadata:
        name: lan
      spec:
        ifname: lan0
        managed: true
";

/// The intent with key `key` (`kind/name`) in `rendered`; panics when there is none.
pub(crate) fn intent<'a>(
    rendered: &'a crate::render::Rendered,
    key: &str,
) -> &'a crate::intent::Intent {
    rendered
        .intents
        .iter()
        .find(|i| i.key().to_string() == key)
        .unwrap_or_else(|| panic!("no intent {key}"))
}

/// `count` `IPv4StaticRoute` list items `r0`, `r1`, … on interface `wan`: route `i` to
/// `100.(64 + i / 256).(i % 256).0/24` in table `1000 + i % tables`, through `via` if given.
/// The routes of the tests of large configs.
pub(crate) fn static_routes(count: usize, tables: usize, via: Option<&str>) -> String {
    let via = via.map(|v| format!("        via: {v}\n")).unwrap_or_default();
    (0..count)
        .map(|i| {
            format!(
                "    - apiVersion: net.routerd.net/v1alpha1
      kind: IPv4StaticRoute
      metadata:
        name: r{i}
      spec:
        interface: wan
        destination: 100.{}.{}.0/24
{via}        table: {}
",
                64 + i / 256,
                i % 256,
                1000 + i % tables.max(1),
            )
        })
        .collect()
}
