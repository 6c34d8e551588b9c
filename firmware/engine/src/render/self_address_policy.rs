//! `SelfAddressPolicy`: which of the router's own addresses services advertise (DNS server,
//! RA), evaluated by the supervisor (a later issue).

use routerd_host::ArtifactKind;
use routerd_model::Resource;
use routerd_model::spec::dhcp::SelfAddressPolicySpec;

use super::Out;
use crate::intent::ApplyWith;

pub(super) fn render(res: &Resource, s: &SelfAddressPolicySpec, out: &mut Out) {
    out.ensure_opaque(
        ArtifactKind::AddressSelection,
        res.name.clone(),
        s,
        ApplyWith::Scheduler,
        Vec::new(),
    );
}
