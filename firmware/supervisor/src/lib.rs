//! The daemon's code (`routerd serve`, its control API and web UI), a library so that
//! `main.rs` and the control API's fuzz target (`fuzz/fuzz_targets/control.rs`) share it.
//! Named `routerd` like the binary, so `tracing` targets stay `routerd::…`.

// The modules' docs link their private items, as when they were the binary's (whose docs
// include private items).
#![allow(rustdoc::private_intra_doc_links)]

mod aftr;
mod auth;
mod config_task;
pub mod control;
pub mod controllers;
pub mod daemon;
mod dns_view;
mod doctor;
mod gateway;
mod health;
mod http;
mod lockout;
mod metrics;
mod msg;
pub mod ota;
mod report;
pub mod series;
pub mod service;
mod startup;
mod state;
mod status;
mod tls;
pub mod web;
