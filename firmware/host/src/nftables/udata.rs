//! The userdata TLV nft stores comments in (`NFTA_TABLE_USERDATA`, `NFTA_RULE_USERDATA`).
//!
//! libnftnl's `nftnl_udata` format: a sequence of attributes, each one byte of type, one byte of
//! value length, then the value. A comment is type 0 (`NFTNL_UDATA_TABLE_COMMENT`,
//! `NFTNL_UDATA_RULE_COMMENT`) holding a NUL-terminated string; nft refuses comments longer than
//! 128 bytes (`NFTNL_UDATA_COMMENT_MAXLEN`). Pure: no FFI.

/// Attribute type of a comment, for tables and rules alike.
pub(crate) const UDATA_COMMENT: u8 = 0;

/// Longest comment nft accepts, in bytes without the NUL.
pub(crate) const COMMENT_MAXLEN: usize = 128;

/// Why a comment cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CommentError {
    /// Longer than [`COMMENT_MAXLEN`].
    TooLong(usize),
    /// Holds a NUL byte.
    Nul,
}

impl std::fmt::Display for CommentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooLong(n) => {
                write!(f, "comment is {n} bytes, nftables allows at most {COMMENT_MAXLEN}")
            }
            Self::Nul => f.write_str("comment contains a NUL byte"),
        }
    }
}

/// Encodes `comment` as a userdata blob holding one comment attribute.
pub(crate) fn encode_comment(comment: &str) -> Result<Vec<u8>, CommentError> {
    let bytes = comment.as_bytes();
    if bytes.contains(&0) {
        return Err(CommentError::Nul);
    }
    if bytes.len() > COMMENT_MAXLEN {
        return Err(CommentError::TooLong(bytes.len()));
    }
    let value_len =
        u8::try_from(bytes.len() + 1).map_err(|_| CommentError::TooLong(bytes.len()))?;
    let mut out = Vec::with_capacity(bytes.len() + 3);
    out.push(UDATA_COMMENT);
    out.push(value_len);
    out.extend_from_slice(bytes);
    out.push(0);
    Ok(out)
}

/// The comment in a userdata blob: `None` when there is no comment attribute, the blob is
/// malformed, or the value is not a NUL-terminated UTF-8 string.
pub(crate) fn decode_comment(udata: &[u8]) -> Option<String> {
    let mut rest = udata;
    while let [kind, len, tail @ ..] = rest {
        let len = usize::from(*len);
        if tail.len() < len {
            return None;
        }
        let (value, next) = tail.split_at(len);
        if *kind == UDATA_COMMENT {
            let (nul, text) = value.split_last()?;
            if *nul != 0 || text.contains(&0) {
                return None;
            }
            return String::from_utf8(text.to_vec()).ok();
        }
        rest = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_round_trips() {
        for c in ["", "routerd owner=routerd.net/v1alpha1/IPv4SourceNAT/wan", "routerd:0123abcd"] {
            let blob = encode_comment(c).expect("encodes");
            assert_eq!(blob[0], UDATA_COMMENT);
            assert_eq!(usize::from(blob[1]), c.len() + 1);
            assert_eq!(blob.last(), Some(&0));
            assert_eq!(decode_comment(&blob).as_deref(), Some(c));
        }
    }

    #[test]
    fn encoding_matches_nft() {
        // `nft --debug=netlink add rule ... comment "hello"` prints `userdata = { \x00\x06hello\x00 }`.
        assert_eq!(encode_comment("hello").expect("encodes"), b"\x00\x06hello\x00");
    }

    #[test]
    fn comment_found_after_other_attributes() {
        let mut blob = vec![1, 2, 0xaa, 0xbb];
        blob.extend(encode_comment("x").expect("encodes"));
        assert_eq!(decode_comment(&blob).as_deref(), Some("x"));
    }

    #[test]
    fn malformed_blobs_decode_to_none() {
        assert_eq!(decode_comment(b""), None);
        assert_eq!(decode_comment(b"\x00"), None);
        assert_eq!(decode_comment(b"\x00\x05abc"), None, "truncated value");
        assert_eq!(decode_comment(b"\x00\x03abc"), None, "no NUL terminator");
        assert_eq!(decode_comment(b"\x00\x00"), None, "empty value");
        assert_eq!(decode_comment(b"\x01\x02ab"), None, "no comment attribute");
        assert_eq!(decode_comment(b"\x00\x03\xff\xfe\x00"), None, "not UTF-8");
    }

    #[test]
    fn bad_comments_are_refused() {
        assert_eq!(encode_comment("a\0b"), Err(CommentError::Nul));
        let long = "x".repeat(COMMENT_MAXLEN + 1);
        assert_eq!(encode_comment(&long), Err(CommentError::TooLong(COMMENT_MAXLEN + 1)));
        assert!(encode_comment(&"x".repeat(COMMENT_MAXLEN)).is_ok());
    }
}
