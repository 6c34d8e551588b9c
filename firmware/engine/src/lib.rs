//! routerd-engine (being written).
