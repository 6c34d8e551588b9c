//! routerd-ledger (being written).
