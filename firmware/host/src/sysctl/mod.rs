//! procfs sysctl backend (stub).
