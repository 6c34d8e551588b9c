//! `LogSink`: a log forwarding sink (journald forwarding or remote syslog), configured by the
//! supervisor; configurator in a later issue.

use routerd_host::ArtifactKind;
use routerd_model::Resource;
use routerd_model::spec::system::LogSinkSpec;

use super::Out;
use crate::intent::ApplyWith;

pub(super) fn render(res: &Resource, s: &LogSinkSpec, out: &mut Out) {
    out.ensure_opaque(ArtifactKind::LogSink, res.name.clone(), s, ApplyWith::Journald, Vec::new());
}
