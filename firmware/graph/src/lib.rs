//! routerd-graph (being written).
