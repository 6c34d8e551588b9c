//! `dnsmasq.config`: sections of routerd's dnsmasq configuration. Configurator and
//! inventory: [`crate::dnsmasq`].

use serde::{Deserialize, Serialize};

use super::orphans::OrphanRule;
use super::{ArtifactType, Diffs, observed_as_self};
use crate::artifact::{ArtifactKey, ArtifactKind};
use crate::dnsmasq::DnsmasqOption;

/// `dnsmasq.config`: one section of routerd's dnsmasq configuration file, named
/// `section/name` (`dhcpv4-range/lan-pool`). Every section of that file is routerd's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DnsmasqSectionSpec {
    /// The section name, the artifact's name.
    pub section: String,
    /// Option lines in dnsmasq's configuration-file form (dnsmasq(8): long options without the
    /// leading `--`, `dhcp-range=…`), in order. Text, as the file holds them: desired sections
    /// are made from [`DnsmasqOption`]s ([`DnsmasqSectionSpec::from_options`]), observed ones
    /// are read back.
    pub lines: Vec<String>,
}

impl DnsmasqSectionSpec {
    /// The section `section` made of `options`, in order, each written as its line.
    pub fn from_options(
        section: impl Into<String>,
        options: impl IntoIterator<Item = DnsmasqOption>,
    ) -> Self {
        Self { section: section.into(), lines: options.into_iter().map(|o| o.line()).collect() }
    }
}

impl ArtifactType for DnsmasqSectionSpec {
    type Observed = Self;

    fn key(&self) -> ArtifactKey {
        ArtifactKey::new(ArtifactKind::DnsmasqConfig, self.section.clone())
    }

    observed_as_self!(DnsmasqSection);

    fn drift(&self, o: &Self, diffs: &mut Diffs) {
        diffs.compare("lines", &self.lines, &o.lines);
    }

    fn in_routerd_namespace(&self) -> bool {
        // The whole file is routerd's; a section in it was written by routerd.
        true
    }
}

/// Orphans (ADR 0002): a section of routerd's own file, deleted when the ledger records it.
pub const ORPHANS: OrphanRule = OrphanRule::RecordedInNamespace {
    deleted: "section of routerd's dnsmasq file recorded in the ledger",
    unrecorded: None,
};
