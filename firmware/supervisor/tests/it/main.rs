//! `routerd` command-line tests: exit codes, error locations, output shapes. The namespace
//! tests need root and make their own namespace, removed on drop.

mod cli;
