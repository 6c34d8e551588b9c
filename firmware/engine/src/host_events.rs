//! The host's change notifications, for the supervisor's loop: the rtnetlink multicast groups
//! (links, addresses, routes, rules; [`NetlinkMonitor`]) and the nftables transactions
//! (`NFNLGRP_NFTABLES`; [`NftMonitor`]) of the target namespace. A notification only says that
//! something changed; the reconcile it triggers observes the host itself.

use routerd_host::ROUTERD_NFT_TABLE_PREFIX;
pub use routerd_host::netlink::{Change, NetlinkMonitor};
pub use routerd_host::nftables::{NftChange, NftMonitor};

/// Whether `change` is someone else's transaction that touched one of routerd's tables
/// (`routerd_*`): a table deleted or edited by hand, which a reconcile puts back. The daemon's
/// own commits ([`NftChange::is_own`]) and other tables are not.
pub fn is_foreign_edit(change: &NftChange) -> bool {
    !change.is_own() && change.touches(ROUTERD_NFT_TABLE_PREFIX)
}
