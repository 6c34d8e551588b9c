//! A running install as a sequence of [`InstallEvent`]s.
//!
//! RAUC reports progress by changing its `Progress` property (`PropertiesChanged` on
//! `org.freedesktop.DBus.Properties`) and the end by the `Completed` signal. Both arrive on
//! one match rule (every signal RAUC's unique name sends on `/`), so they come out in the
//! order RAUC sent them: the last progress step before `Completed`. The match is added before
//! `InstallBundle` is called, so no step is missed.

use std::collections::HashMap;

use futures::StreamExt;
use zbus::message::{Sequence, Type};
use zbus::zvariant::OwnedValue;
use zbus::{MatchRule, Message, MessageStream};

use crate::error::{Call, OtaError};
use crate::proxy::{INTERFACE, InstallerProxy, PATH, SERVICE};

/// Signals queued per install before the oldest are dropped; RAUC 1.8 sends about 25 for a
/// one-image bundle, and the consumer may be a slow web client.
const MAX_QUEUED: usize = 1024;

/// One step of an install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallEvent {
    /// RAUC's `Progress` property changed.
    Progress {
        /// Overall percentage, 0..=100; only the outermost step reports 100.
        percent: u8,
        /// What RAUC is doing, e.g. `Copying image to rootfs.1`.
        message: String,
        /// Nesting depth of the step, 1 for the install itself.
        depth: u32,
    },
    /// The `Completed` signal: the install finished. Always the last event.
    Completed {
        /// `result == 0`.
        ok: bool,
        /// RAUC's result code: 0 success, anything else failure.
        result: i32,
        /// RAUC's `LastError` when the install failed (its words, for the operator verbatim),
        /// or this client's note when even that could not be read; `None` on success.
        last_error: Option<String>,
    },
}

/// A running install: read it with [`Installation::next_event`] until `None`.
///
/// Dropping it removes the signal match; the install goes on in RAUC regardless (RAUC's D-Bus
/// API has no cancel).
pub struct Installation {
    signals: MessageStream,
    proxy: InstallerProxy<'static>,
    /// Where the `InstallBundle` reply was received. RAUC sends it after every signal of
    /// the operation before (it refuses a second install while one runs), so a signal
    /// received earlier, e.g. the `Completed` of another client's install that ended just
    /// after the match was added, is not about this install.
    started_at: Sequence,
    done: bool,
}

impl Installation {
    /// Subscribes to RAUC's signals; call before `InstallBundle`.
    ///
    /// Errors: [`OtaError::Transport`] (`Subscribe`) when RAUC's name has no owner or the
    /// match cannot be added.
    pub(crate) async fn subscribe(proxy: &InstallerProxy<'static>) -> Result<Self, OtaError> {
        let conn = proxy.inner().connection();
        let fail = |source| OtaError::transport(Call::Subscribe, source);
        let dbus = zbus::fdo::DBusProxy::new(conn).await.map_err(fail)?;
        let service = zbus::names::BusName::try_from(SERVICE).map_err(|e| fail(e.into()))?;
        // The unique name, not the well-known one: zbus cannot match a well-known sender
        // locally, and another client on the same connection must not feed this stream.
        let owner = dbus.get_name_owner(service).await.map_err(|e| fail(e.into()))?;
        let rule = MatchRule::builder()
            .msg_type(Type::Signal)
            .sender(owner)
            .and_then(|b| b.path(PATH))
            .map_err(fail)?
            .build();
        let signals =
            MessageStream::for_match_rule(rule, conn, Some(MAX_QUEUED)).await.map_err(fail)?;
        Ok(Self { signals, proxy: proxy.clone(), started_at: Sequence::default(), done: false })
    }

    /// Records where the `InstallBundle` reply was received.
    pub(crate) fn started(&mut self, reply_at: Sequence) {
        self.started_at = reply_at;
    }

    /// The next event; `None` after [`InstallEvent::Completed`].
    ///
    /// Waits as long as RAUC takes: wrap it in a timeout for a deadline (a RAUC that dies or
    /// restarts mid-install never sends `Completed` to this subscription).
    /// Errors: [`OtaError::UnexpectedReply`] for a malformed progress step (the stream goes
    /// on); [`OtaError::Disconnected`] when the connection closes first (the stream ends).
    pub async fn next_event(&mut self) -> Option<Result<InstallEvent, OtaError>> {
        if self.done {
            return None;
        }
        loop {
            let message = match self.signals.next().await {
                Some(Ok(message)) if message.recv_position() < self.started_at => continue,
                Some(Ok(message)) => message,
                Some(Err(source)) => {
                    return Some(Err(OtaError::transport(Call::Completed, source)));
                }
                None => {
                    self.done = true;
                    return Some(Err(OtaError::Disconnected));
                }
            };
            match classify(&message) {
                Signal::Completed => {
                    self.done = true;
                    return Some(self.completed(&message).await);
                }
                Signal::PropertiesChanged => {
                    if let Some(event) = progress(&message).transpose() {
                        return Some(event);
                    }
                }
                Signal::Other => {}
            }
        }
    }

    async fn completed(&self, message: &Message) -> Result<InstallEvent, OtaError> {
        let result: i32 = message
            .body()
            .deserialize()
            .map_err(|e| OtaError::unexpected(Call::Completed, format!("not (i): {e}")))?;
        let last_error = match result {
            0 => None,
            // Read after the signal: RAUC sets LastError in its install thread before it
            // emits Completed, while the PropertiesChanged for it may come in either order.
            _ => Some(match self.proxy.last_error().await {
                Ok(text) if text.is_empty() => format!("rauc reported failure {result}"),
                Ok(text) => text,
                Err(e) => format!("rauc reported failure {result}; reading LastError failed: {e}"),
            }),
        };
        Ok(InstallEvent::Completed { ok: result == 0, result, last_error })
    }
}

enum Signal {
    Completed,
    PropertiesChanged,
    Other,
}

fn classify(message: &Message) -> Signal {
    let header = message.header();
    let interface = header.interface().map(|i| i.as_str());
    match (interface, header.member().map(|m| m.as_str())) {
        (Some(INTERFACE), Some("Completed")) => Signal::Completed,
        (Some("org.freedesktop.DBus.Properties"), Some("PropertiesChanged")) => {
            Signal::PropertiesChanged
        }
        _ => Signal::Other,
    }
}

/// The `Progress` step in a `PropertiesChanged(s, a{sv}, as)`, if it carries one for RAUC's
/// interface.
fn progress(message: &Message) -> Result<Option<InstallEvent>, OtaError> {
    type Changed = (String, HashMap<String, OwnedValue>, Vec<String>);
    let (interface, mut changed, _invalidated): Changed = message
        .body()
        .deserialize()
        .map_err(|e| OtaError::unexpected(Call::Property("Progress"), e.to_string()))?;
    if interface != INTERFACE {
        return Ok(None);
    }
    let Some(value) = changed.remove("Progress") else {
        return Ok(None);
    };
    let step = <(i32, String, i32)>::try_from(value)
        .map_err(|e| OtaError::unexpected(Call::Property("Progress"), format!("not (isi): {e}")))?;
    progress_event(step).map(Some)
}

/// Checks RAUC's `(percentage, message, depth)` against its documented ranges.
pub(crate) fn progress_event(
    (percent, message, depth): (i32, String, i32),
) -> Result<InstallEvent, OtaError> {
    let out_of_range = |what: &str, n: i32| {
        OtaError::unexpected(Call::Property("Progress"), format!("{what} {n} out of range"))
    };
    let percent = u8::try_from(percent)
        .ok()
        .filter(|p| *p <= 100)
        .ok_or_else(|| out_of_range("percentage", percent))?;
    let depth = u32::try_from(depth).map_err(|_| out_of_range("nesting depth", depth))?;
    Ok(InstallEvent::Progress { percent, message, depth })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_in_range_becomes_an_event() {
        let event = progress_event((40, "Checking bundle done.".into(), 2)).expect("valid");
        assert_eq!(
            event,
            InstallEvent::Progress {
                percent: 40,
                message: "Checking bundle done.".into(),
                depth: 2
            }
        );
    }

    #[test]
    fn progress_out_of_range_is_an_unexpected_reply() {
        for step in [(101, String::new(), 1), (-1, String::new(), 1), (5, String::new(), -3)] {
            let result = progress_event(step.clone());
            assert!(
                matches!(result, Err(OtaError::UnexpectedReply { .. })),
                "{step:?}: {result:?}"
            );
        }
    }
}
