//! `routerd` command-line tests: exit codes, error locations, output shapes, and the daemon
//! (`routerd serve`) with `routerctl`. The namespace tests need root and make their own
//! namespace, removed on drop.

mod browser;
mod cli;
mod daemon;
mod health;
mod ota;
mod state;
mod support;
