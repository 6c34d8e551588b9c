//! routerd-model (being written).
