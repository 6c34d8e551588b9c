//! The supervisor's RAUC client: inspect a signed update bundle, install it into the other
//! slot with live progress, read both slots' status, and mark slots good, bad or active.
//!
//! It talks to RAUC's `de.pengutronix.rauc.Installer` at `/` on the system bus with `zbus`
//! (tokio), following RAUC's D-Bus API reference
//! (<https://rauc.readthedocs.io/en/latest/reference.html#d-bus-api>) and what a RAUC 1.8
//! service really exports (checked by `tests/it`). It never sets `ignore-compatible` and
//! depends on nothing else of routerd's (`scripts/check-layering.sh`). [`gate`] is the health
//! gate that confirms a boot (`Mark(good)`) or falls back (`Mark(bad)` and a reboot); what
//! "healthy" means (routerd's doctor) and how to reboot are the supervisor's, passed in.
//!
//! ```no_run
//! # async fn demo() -> Result<(), routerd_ota::OtaError> {
//! use std::path::Path;
//! use routerd_ota::{InstallEvent, Rauc};
//!
//! let rauc = Rauc::connect(None).await?;
//! let bundle = Path::new("/data/updates/routerd-x86_64-0.2.0.raucb");
//! let info = rauc.inspect(bundle).await?; // shown to the operator, who confirms
//! let mut install = rauc.install(bundle, &info.digest).await?;
//! while let Some(event) = install.next_event().await {
//!     match event? {
//!         InstallEvent::Progress { percent, message, .. } => println!("{percent:3}% {message}"),
//!         InstallEvent::Completed { ok, last_error, .. } => println!("{ok} {last_error:?}"),
//!     }
//! }
//! # Ok(()) }
//! ```

mod bundle;
mod dict;
mod error;
pub mod fetch;
pub mod gate;
mod install;
mod proxy;
mod rauc;
pub mod signer;
mod slot;
#[cfg(feature = "test-support")]
pub mod testing;

pub use bundle::{BundleDigest, BundleInfo, DigestParseError};
pub use error::{Call, OtaError};
pub use install::{InstallEvent, Installation};
pub use rauc::Rauc;
pub use slot::{BootStatus, MarkState, Marked, SlotRef, SlotState, SlotStatus};
