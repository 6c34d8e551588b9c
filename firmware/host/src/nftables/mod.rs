//! nftnl backend for `nft.table`.

pub mod ir;
