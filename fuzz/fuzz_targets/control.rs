//! The control API's JSON requests on arbitrary bytes: the first byte picks the endpoint (method
//! and path of `control::fuzzing::SEEDS`), the rest is the body. Every input gets an answer
//! that is not a 500, with a body that reads to its end; a panic or an abort is a find
//! (issue 33 §1). The reconcile loop is a stand-in that drops every message, so what is fuzzed
//! is the handlers' own reading of the request.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use routerd::control::fuzzing;
use tokio::runtime::{Builder, Runtime};

/// One runtime and one router for the whole run: building them per input would dominate it.
fn api() -> &'static (Runtime, axum::Router) {
    static API: OnceLock<(Runtime, axum::Router)> = OnceLock::new();
    API.get_or_init(|| {
        let runtime = Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
        // The stand-in loop is spawned on this runtime and runs while an input is sent.
        let router = runtime.block_on(async { fuzzing::api() });
        (runtime, router)
    })
}

fuzz_target!(|data: &[u8]| {
    let (runtime, router) = api();
    if let Err(what) = runtime.block_on(fuzzing::check(router, data)) {
        panic!("{what}");
    }
});
