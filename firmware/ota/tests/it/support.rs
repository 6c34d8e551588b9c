//! The fixture lives in the crate (`routerd_ota::testing`, feature `test-support`) so the
//! supervisor's tests use the same one; this module starts it under the test target directory.

use std::path::Path;

pub use routerd_ota::testing::*;

/// A fixture under `CARGO_TARGET_TMPDIR`.
pub async fn start() -> RaucFixture {
    RaucFixture::start_in(Path::new(env!("CARGO_TARGET_TMPDIR"))).await
}
