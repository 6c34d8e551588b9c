//! rtnetlink backend (stub).
