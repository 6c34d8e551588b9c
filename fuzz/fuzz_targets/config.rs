//! The config parser and validator on arbitrary bytes: any input gives a config or errors that
//! each name `file:line:column`; a panic or an abort is a find (issue 33 §1).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parsed = routerd_model::source_from_bytes(data.to_vec(), "fuzz.yaml")
        .and_then(|text| routerd_model::parse_config(&text, "fuzz.yaml"));
    if let Err(errors) = parsed {
        assert!(!errors.is_empty(), "an empty error list");
        for e in errors.iter() {
            assert!(e.line > 0 && e.column > 0, "an error without a position: {e}");
        }
    }
});
