//! Config snippets the engine's unit tests share.

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
