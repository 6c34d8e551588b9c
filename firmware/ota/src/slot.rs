//! Slots as RAUC reports them (`GetSlotStatus`) and the words of `Mark`.

use std::collections::HashMap;
use std::fmt;

use zbus::zvariant::OwnedValue;

use crate::dict::take;
use crate::error::{Call, OtaError};

/// One slot of `system.conf` with its status, from `GetSlotStatus`.
///
/// Source: RAUC's reference, "GetSlotStatus() Method", and RAUC 1.8's `service.c`
/// (`convert_slot_status_to_dict`), which inserts a key only when it has a value: every field
/// but `name` is `None` when RAUC sent no such key. Keys not listed here are dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlotStatus {
    /// The slot's name from `system.conf`, e.g. `rootfs.1` (section `[slot.rootfs.1]`).
    pub name: String,
    /// `class`: the slot class, e.g. `rootfs`.
    pub class: Option<String>,
    /// `device`: the block device or file the slot lives on.
    pub device: Option<String>,
    /// `type`: the slot type, e.g. `ext4`, `raw`.
    pub slot_type: Option<String>,
    /// `bootname`: the boot loader's name for the slot (`A`, `B`).
    pub bootname: Option<String>,
    /// `state`: whether the system runs from this slot.
    pub state: Option<SlotState>,
    /// `boot-status`: the boot loader's verdict (only for slots with a `bootname`).
    pub boot_status: Option<BootStatus>,
    /// `description` from `system.conf`.
    pub description: Option<String>,
    /// `parent`: the slot this one is installed together with.
    pub parent: Option<String>,
    /// `mountpoint`: where the slot is mounted, when it is.
    pub mountpoint: Option<String>,
    /// `bundle.compatible`: the compatible of the bundle last installed into the slot.
    pub bundle_compatible: Option<String>,
    /// `bundle.version`: the version of the bundle last installed into the slot.
    pub installed_version: Option<String>,
    /// `bundle.description` of the bundle last installed.
    pub bundle_description: Option<String>,
    /// `bundle.build` of the bundle last installed.
    pub bundle_build: Option<String>,
    /// `status`: the result of the last install into the slot, e.g. `ok`, `failed`.
    pub install_status: Option<String>,
    /// `sha256`: hex SHA-256 of the image written to the slot.
    pub sha256: Option<String>,
    /// `size`: the image's size in bytes.
    pub size_bytes: Option<u64>,
    /// `installed.timestamp`: when the slot was last written, RFC 3339 UTC as RAUC writes it
    /// (`2026-11-21T05:48:22Z`).
    pub installed_timestamp: Option<String>,
    /// `installed.count`: how many times the slot was written.
    pub installed_count: Option<u32>,
    /// `activated.timestamp`: when the slot was last made primary, RFC 3339 UTC.
    pub activated_timestamp: Option<String>,
    /// `activated.count`: how many times the slot was made primary.
    pub activated_count: Option<u32>,
}

/// A slot's `state` in `GetSlotStatus` (RAUC's `r_slot_slotstate_to_str`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotState {
    /// `booted`: the system runs from this slot.
    Booted,
    /// `active`: a slot of the booted group that is not the booted one (e.g. its appfs).
    Active,
    /// `inactive`: not in use; an install writes into such a slot.
    Inactive,
    /// Any other word a later RAUC may use, kept as sent.
    Other(String),
}

/// A slot's `boot-status`: what the boot loader's state says about the slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootStatus {
    /// `good`: the boot loader will boot it (GRUB: listed in ORDER, `x_OK=1`, `x_TRY=0`).
    Good,
    /// `bad`: the boot loader will not boot it.
    Bad,
    /// Any other word, kept as sent.
    Other(String),
}

/// The state `Mark` sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkState {
    /// `good`: the slot booted and works; the boot loader keeps booting it.
    Good,
    /// `bad`: never boot this slot again until it is reinstalled or marked good.
    Bad,
    /// `active`: boot this slot next (make it primary), without changing its good/bad state.
    Active,
}

/// The slot `Mark` acts on: RAUC's `slot_identifier`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotRef {
    /// `booted`: the slot the system runs from.
    Booted,
    /// `other`: the other bootable slot of the booted slot's class (the A/B partner).
    Other,
    /// A slot name from `system.conf`, e.g. `rootfs.1`.
    Named(String),
}

/// What `Mark` answered: the slot it resolved the identifier to, and RAUC's message
/// (e.g. `marked slot rootfs.0 as good`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marked {
    /// The slot's name, e.g. `rootfs.0`.
    pub slot: String,
    /// RAUC's message, for the log and the operator.
    pub message: String,
}

impl SlotStatus {
    /// Reads one `(sa{sv})` of `GetSlotStatus`, dropping keys this type does not know.
    pub(crate) fn from_dbus(
        name: String,
        mut dict: HashMap<String, OwnedValue>,
    ) -> Result<Self, OtaError> {
        const CALL: Call = Call::GetSlotStatus;
        let d = &mut dict;
        let state: Option<String> = take(CALL, d, "state")?;
        let boot_status: Option<String> = take(CALL, d, "boot-status")?;
        Ok(Self {
            class: take(CALL, d, "class")?,
            device: take(CALL, d, "device")?,
            slot_type: take(CALL, d, "type")?,
            bootname: take(CALL, d, "bootname")?,
            state: state.map(|s| SlotState::from_word(&s)),
            boot_status: boot_status.map(|s| BootStatus::from_word(&s)),
            description: take(CALL, d, "description")?,
            parent: take(CALL, d, "parent")?,
            mountpoint: take(CALL, d, "mountpoint")?,
            bundle_compatible: take(CALL, d, "bundle.compatible")?,
            installed_version: take(CALL, d, "bundle.version")?,
            bundle_description: take(CALL, d, "bundle.description")?,
            bundle_build: take(CALL, d, "bundle.build")?,
            install_status: take(CALL, d, "status")?,
            sha256: take(CALL, d, "sha256")?,
            size_bytes: take(CALL, d, "size")?,
            installed_timestamp: take(CALL, d, "installed.timestamp")?,
            installed_count: take(CALL, d, "installed.count")?,
            activated_timestamp: take(CALL, d, "activated.timestamp")?,
            activated_count: take(CALL, d, "activated.count")?,
            name,
        })
    }
}

impl SlotState {
    /// RAUC's word for the state (`booted`, `active`, `inactive`, or the word as sent).
    pub fn as_str(&self) -> &str {
        match self {
            Self::Booted => "booted",
            Self::Active => "active",
            Self::Inactive => "inactive",
            Self::Other(word) => word,
        }
    }

    fn from_word(word: &str) -> Self {
        match word {
            "booted" => Self::Booted,
            "active" => Self::Active,
            "inactive" => Self::Inactive,
            other => Self::Other(other.into()),
        }
    }
}

impl BootStatus {
    /// RAUC's word for the status (`good`, `bad`, or the word as sent).
    pub fn as_str(&self) -> &str {
        match self {
            Self::Good => "good",
            Self::Bad => "bad",
            Self::Other(word) => word,
        }
    }

    fn from_word(word: &str) -> Self {
        match word {
            "good" => Self::Good,
            "bad" => Self::Bad,
            other => Self::Other(other.into()),
        }
    }
}

impl MarkState {
    /// RAUC's word for the state (`good`, `bad`, `active`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Good => "good",
            Self::Bad => "bad",
            Self::Active => "active",
        }
    }
}

impl fmt::Display for SlotRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Booted => f.write_str("booted"),
            Self::Other => f.write_str("other"),
            Self::Named(name) => f.write_str(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use zbus::zvariant::Value;

    use super::*;

    fn dict(pairs: Vec<(&str, Value<'_>)>) -> HashMap<String, OwnedValue> {
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.try_to_owned().expect("no file descriptors")))
            .collect()
    }

    #[test]
    fn slot_status_reads_known_keys_and_leaves_missing_ones_none() {
        let status = SlotStatus::from_dbus(
            "rootfs.1".into(),
            dict(vec![
                ("class", Value::from("rootfs")),
                ("state", Value::from("inactive")),
                ("boot-status", Value::from("good")),
                ("bundle.version", Value::from("1.2.3")),
                ("size", Value::U64(3_145_728)),
                ("installed.count", Value::U32(2)),
                ("some-future-key", Value::Bool(true)),
            ]),
        )
        .expect("parses");
        assert_eq!(status.name, "rootfs.1");
        assert_eq!(status.class.as_deref(), Some("rootfs"));
        assert_eq!(status.state, Some(SlotState::Inactive));
        assert_eq!(status.boot_status, Some(BootStatus::Good));
        assert_eq!(status.installed_version.as_deref(), Some("1.2.3"));
        assert_eq!(status.size_bytes, Some(3_145_728));
        assert_eq!(status.installed_count, Some(2));
        assert_eq!(status.device, None);
        assert_eq!(status.installed_timestamp, None);
    }

    #[test]
    fn slot_status_with_a_mistyped_key_is_an_error_naming_the_key() {
        let err = SlotStatus::from_dbus("rootfs.0".into(), dict(vec![("size", Value::from("3"))]))
            .expect_err("size must be t");
        assert!(
            matches!(&err, OtaError::UnexpectedReply { call: Call::GetSlotStatus, detail } if detail.starts_with("size: s:")),
            "{err}"
        );
    }

    #[test]
    fn unknown_state_words_are_kept_as_sent() {
        assert_eq!(SlotState::from_word("booted"), SlotState::Booted);
        assert_eq!(SlotState::from_word("shiny"), SlotState::Other("shiny".into()));
        assert_eq!(BootStatus::from_word("bad"), BootStatus::Bad);
    }

    #[test]
    fn slot_refs_and_mark_states_use_raucs_words() {
        assert_eq!(SlotRef::Booted.to_string(), "booted");
        assert_eq!(SlotRef::Other.to_string(), "other");
        assert_eq!(SlotRef::Named("rootfs.1".into()).to_string(), "rootfs.1");
        let words: Vec<_> =
            [MarkState::Good, MarkState::Bad, MarkState::Active].map(MarkState::as_str).into();
        assert_eq!(words, ["good", "bad", "active"]);
    }
}
