//! The workspace's test kit: what the tests of several crates need, in one place, never in a
//! release build (a dev-dependency, or behind a crate's `test-support` feature).
//!
//! - [`netns`]: a uniquely named network namespace, deleted on drop (also when the test
//!   panics), with helpers to run `ip`, `nft` and other commands inside it and to cable veth
//!   pairs.
//! - [`router`]: a builder of `router.yaml` text (the `Router` document and its resources).
//! - [`daemon`]: a process killed and reaped on drop, and polling with a deadline.
//! - [`command`]: set-up commands that must succeed.
//! - [`bus`]: a private D-Bus system bus.
//!
//! The kit depends on no crate of ours (the firmware crates' tests depend on it) and on no
//! third-party crate. Fixtures panic with what failed: a failing fixture fails its test.

pub mod bus;
pub mod command;
pub mod daemon;
pub mod netns;
pub mod router;
