//! DNS controller integration tests, one binary (one link, one copy of the dependencies on
//! disk): the kinds through the registry, the wire client and the `bind` backend against a
//! real BIND 9, and the controller end to end, in network namespaces of each test's own (root).

mod bind;
mod common;
mod e2e;
mod examples;
mod external;
mod kinds;
mod leases;
mod ownership;
mod secondary;
mod wire;
