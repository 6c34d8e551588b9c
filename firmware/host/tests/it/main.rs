//! Integration tests of routerd-host against the real kernel, one binary (STYLE.md §6).
//!
//! Every test needs root and creates its own network namespace ([`support::TestNetns`]); when
//! not root the tests fail loudly ("needs root"), they never skip.

mod link_kinds;
mod netlink;
mod nftables;
mod probe;
mod services;
mod support;
mod sysctl;
