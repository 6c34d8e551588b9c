//! Integration tests of routerd-model, built as one binary (STYLE.md section 6).

mod errors;
mod fixture;
mod hostile;
mod long;
mod lookups;
mod schema;
mod support;
mod validation;
mod variants;
mod vlan;
