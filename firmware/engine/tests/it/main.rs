//! Engine integration tests: the whole pipeline against the real kernel in network namespaces
//! (root required; each test builds and removes its own namespaces).

mod adoption;
mod dnsmasq;
mod drawing;
mod golden;
mod health;
mod hostnamed;
mod logsink;
mod networkd;
mod ownership;
mod readme;
mod reconcile;
mod state;
mod support;
mod timesyncd;
