use hickory_proto::rr::TSigResponseContext;

use super::*;
use crate::artifacts::TsigAlgorithm;

const NOW: u64 = 1_700_000_000;

fn name(text: &str) -> Name {
    Name::from_ascii(text).expect("a name")
}

fn key(secret: &[u8]) -> TsigKey {
    TsigKey::new(name("routerd-update"), TsigAlgorithm::HmacSha256, secret.to_vec())
}

fn endpoint(key: Option<TsigKey>) -> Endpoint {
    Endpoint { address: "127.0.0.1:5300".parse().expect("an address"), key }
}

fn a_rrset(owner: &str, addresses: usize) -> RRsetChange {
    let rdata = (0..addresses)
        .map(|i| RData::try_from_str(RecordType::A, &format!("192.0.2.{i}")).expect("an A"))
        .collect();
    RRsetChange { owner: name(owner), rtype: RecordType::A, ttl: 300, rdata, absent_before: false }
}

#[test]
fn many_rrsets_are_split_into_full_messages_that_never_split_an_rrset() {
    let ep = endpoint(Some(key(b"secret")));
    let peer = Peer::new(&ep, &name("lab.example."), Operation::Update);
    let changes: Vec<_> =
        (0..3000).map(|i| a_rrset(&format!("host-{i}.lab.example."), 10)).collect();
    let batches = update_messages(&peer, &changes).expect("batches");
    assert!(batches.len() > 2, "{} messages", batches.len());
    let mut next = 0;
    for batch in &batches {
        assert_eq!(batch.changes.start, next, "contiguous");
        next = batch.changes.end;
        let updates = batch.message.updates();
        assert_eq!(updates.len(), batch.changes.len() * 11, "whole RRsets only");
        assert_eq!(updates[0].dns_class, DNSClass::ANY, "a batch starts with an RRset's delete");
        let mut signed = batch.message.clone();
        signed.finalize(peer.signer.as_ref().expect("a signer"), NOW).expect("signs");
        let len = signed.to_vec().expect("encodes").len();
        assert!(len <= MAX_UPDATE_BYTES, "{len} bytes");
        if next < changes.len() {
            // Exact packing: one more RRset would not have fitted.
            let more = update_messages(&peer, &changes[batch.changes.start..=next]).expect("one");
            assert_eq!(more.len(), 2, "{:?} plus one more fits", batch.changes);
        }
    }
    assert_eq!(next, changes.len());
}

#[test]
fn an_rrset_is_replaced_by_its_delete_and_adds_and_deleted_by_an_empty_one() {
    let ep = endpoint(None);
    let peer = Peer::new(&ep, &name("lab.example"), Operation::Update);
    let mut gone = a_rrset("old.lab.example.", 0);
    gone.rtype = RecordType::TXT;
    let batches = update_messages(&peer, &[a_rrset("www.lab.example.", 2), gone]).expect("one");
    let [batch] = &batches[..] else { panic!("one message: {batches:?}") };
    let message = &batch.message;
    assert_eq!(message.metadata.op_code, OpCode::Update);
    assert_eq!(message.zones(), [Query::query(name("lab.example."), RecordType::SOA)]);
    let shown: Vec<_> =
        message.updates().iter().map(|r| (r.dns_class, r.ttl, r.record_type())).collect();
    assert_eq!(
        shown,
        [
            (DNSClass::ANY, 0, RecordType::A),
            (DNSClass::IN, 300, RecordType::A),
            (DNSClass::IN, 300, RecordType::A),
            (DNSClass::ANY, 0, RecordType::TXT),
        ]
    );
    assert!(matches!(message.updates()[0].data, RData::Update0(RecordType::A)));
    assert!(update_messages(&peer, &[]).expect("none").is_empty());
}

#[test]
fn an_owner_outside_the_zone_or_data_of_another_type_is_an_error_not_a_panic() {
    let ep = endpoint(None);
    let peer = Peer::new(&ep, &name("lab.example."), Operation::Update);
    let err = update_messages(&peer, &[a_rrset("www.other.example.", 1)]).expect_err("outside");
    assert_eq!(
        err.to_string(),
        "RRset www.other.example. A cannot be sent in an UPDATE of zone lab.example.: the owner \
         is outside the zone"
    );
    let mut mixed = a_rrset("www.lab.example.", 1);
    mixed.rtype = RecordType::AAAA;
    let err = update_messages(&peer, &[mixed]).expect_err("mixed");
    assert!(err.to_string().ends_with("a record's data is of another type"), "{err}");
}

#[test]
fn an_rrset_larger_than_a_message_is_too_large() {
    let ep = endpoint(None);
    let peer = Peer::new(&ep, &name("lab.example."), Operation::Update);
    let rdata = (0..300)
        .map(|i| RData::try_from_str(RecordType::TXT, &format!("{i:0>250}")).expect("a TXT"))
        .collect();
    let huge = RRsetChange {
        owner: name("big.lab.example."),
        rtype: RecordType::TXT,
        ttl: 1,
        rdata,
        absent_before: false,
    };
    let err = update_messages(&peer, &[a_rrset("a.lab.example.", 1), huge]).expect_err("large");
    assert!(matches!(err, WireError::TooLarge { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "RRset big.lab.example. TXT does not fit in one UPDATE message (60000 bytes) to server \
         127.0.0.1#5300"
    );
}

/// A signed request of `op` about `lab.example.` and the peer that sent it.
fn signed_request(ep: &Endpoint, op: Operation) -> (Peer<'_>, Message, TSigVerifier) {
    let peer = Peer::new(ep, &name("lab.example."), op);
    let mut query = peer.query(RecordType::SOA);
    query.metadata.op_code = OpCode::Update;
    let (_, verifier) = peer.seal(&mut query, NOW).expect("signs");
    (peer, query, verifier.expect("a verifier"))
}

/// The encoded reply to `query` with `rcode`, with the TSIG record `context` makes, if any.
fn reply(query: &Message, rcode: ResponseCode, context: Option<TSigResponseContext>) -> Vec<u8> {
    let mut reply = Message::error_msg(query.metadata.id, query.metadata.op_code, rcode);
    reply.add_queries(query.queries.clone());
    if let Some(context) = context {
        let unsigned = reply.to_vec().expect("encodes");
        reply.set_signature(context.sign(&unsigned).expect("signs"));
    }
    reply.to_vec().expect("encodes")
}

/// The server's signed response context for `query` (RFC 8945 §5.3), with `error`.
fn signed_by(signer: &TSigner, query: &Message, error: Option<TsigError>) -> TSigResponseContext {
    let mac = query.signature().expect("signed").data.mac.clone();
    TSigResponseContext::new(query.metadata.id, NOW, signer.clone(), mac, error)
}

#[test]
fn tsig_errors_of_replies_map_to_their_conditions_naming_key_and_server() {
    let ep = endpoint(Some(key(b"secret")));
    let signer = ep.key.as_ref().expect("a key").signer();
    let cases = [
        (
            Some(TSigResponseContext::unknown_key(0, NOW, name("routerd-update."))),
            "TsigBadKey",
            "server 127.0.0.1#5300 does not know TSIG key \"routerd-update\" (BADKEY)",
        ),
        (
            Some(TSigResponseContext::bad_signature(0, NOW, signer.clone())),
            "TsigBadSig",
            "server 127.0.0.1#5300 rejected the signature of TSIG key \"routerd-update\": the \
             secrets differ (BADSIG)",
        ),
        (
            None, // replaced below: a BADTIME reply is signed and needs the request's MAC
            "TsigBadTime",
            "server 127.0.0.1#5300 rejected the signing time of TSIG key \"routerd-update\": the \
             clocks differ by more than the fudge (BADTIME)",
        ),
    ];
    for (context, reason, message) in cases {
        let (peer, query, mut verifier) = signed_request(&ep, Operation::Update);
        let context =
            context.unwrap_or_else(|| signed_by(&signer, &query, Some(TsigError::BadTime)));
        let bytes = reply(&query, ResponseCode::NotAuth, Some(context));
        let err = peer.check(query.metadata.id, &bytes, Some(&mut verifier)).expect_err(reason);
        assert_eq!((err.reason().as_str(), err.to_string().as_str()), (reason, message));
    }
}

#[test]
fn rcodes_of_replies_map_to_their_conditions() {
    let ep = endpoint(Some(key(b"secret")));
    let signer = ep.key.as_ref().expect("a key").signer();
    let cases = [
        (
            Operation::Update,
            ResponseCode::Refused,
            "UpdateRefused",
            "server 127.0.0.1#5300 refused the UPDATE of zone lab.example. signed with TSIG key \
             \"routerd-update\" (REFUSED: the update-policy does not grant it, or named's checks \
             reject it)",
        ),
        (
            Operation::Update,
            ResponseCode::NotAuth,
            "NotAuthoritative",
            "server 127.0.0.1#5300 answered NOTAUTH to the UPDATE of zone lab.example. with TSIG \
             key \"routerd-update\": it is not authoritative for the zone",
        ),
        (
            Operation::Transfer,
            ResponseCode::Refused,
            "UpdateFailed",
            "server 127.0.0.1#5300 refused the zone transfer of lab.example. with TSIG key \
             \"routerd-update\" (REFUSED: allow-transfer does not grant it)",
        ),
        (
            Operation::Update,
            ResponseCode::ServFail,
            "UpdateFailed",
            "server 127.0.0.1#5300 answered Server Failure (rcode 2) to the UPDATE of zone \
             lab.example. with TSIG key \"routerd-update\"",
        ),
    ];
    for (op, rcode, reason, message) in cases {
        let (peer, query, mut verifier) = signed_request(&ep, op);
        let bytes = reply(&query, rcode, Some(signed_by(&signer, &query, None)));
        let err = peer.check(query.metadata.id, &bytes, Some(&mut verifier)).expect_err(reason);
        assert_eq!((err.reason().as_str(), err.to_string().as_str()), (reason, message));
    }

    let (peer, query, mut verifier) = signed_request(&ep, Operation::Update);
    let bytes = reply(&query, ResponseCode::NoError, Some(signed_by(&signer, &query, None)));
    peer.check(query.metadata.id, &bytes, Some(&mut verifier)).expect("a verified success");
}

#[test]
fn an_unsigned_refusal_means_tsig_is_required() {
    let ep = endpoint(None);
    let peer = Peer::new(&ep, &name("lab.example."), Operation::Update);
    let query = peer.query(RecordType::SOA);
    let bytes = reply(&query, ResponseCode::Refused, None);
    let err = peer.check(query.metadata.id, &bytes, None).expect_err("refused");
    assert_eq!(err.reason().as_str(), "UpdateRefused");
    assert_eq!(
        err.to_string(),
        "server 127.0.0.1#5300 refused the unsigned UPDATE of zone lab.example. (REFUSED: it \
         requires a TSIG key)"
    );
    peer.check(query.metadata.id, &reply(&query, ResponseCode::NoError, None), None)
        .expect("an unsigned success");
}

#[test]
fn a_success_that_is_unsigned_forged_or_for_another_request_is_malformed() {
    let ep = endpoint(Some(key(b"secret")));
    let forger = key(b"another secret").signer();
    let malformed = |query: &Message, bytes: &[u8], verifier: &mut TSigVerifier| {
        let peer = Peer::new(&ep, &name("lab.example."), Operation::Update);
        let err = peer.check(query.metadata.id, bytes, Some(verifier)).expect_err("malformed");
        assert_eq!(err.reason().as_str(), "UpdateFailed");
        err.to_string()
    };

    let (_, query, mut verifier) = signed_request(&ep, Operation::Update);
    let bytes = reply(&query, ResponseCode::NoError, None);
    assert_eq!(
        malformed(&query, &bytes, &mut verifier),
        "server 127.0.0.1#5300 (TSIG key \"routerd-update\") sent a bad reply: it is not signed"
    );

    let (_, query, mut verifier) = signed_request(&ep, Operation::Update);
    let bytes = reply(&query, ResponseCode::NoError, Some(signed_by(&forger, &query, None)));
    let message = malformed(&query, &bytes, &mut verifier);
    assert!(message.contains("sent a bad reply: its TSIG does not verify"), "{message}");

    let (_, mut query, mut verifier) = signed_request(&ep, Operation::Update);
    let bytes = reply(&query, ResponseCode::NoError, None);
    query.metadata.id = query.metadata.id.wrapping_add(1);
    let message = malformed(&query, &bytes, &mut verifier);
    assert!(message.contains("it is not a response to request"), "{message}");

    let (_, query, mut verifier) = signed_request(&ep, Operation::Update);
    let message = malformed(&query, &[0, 1, 2], &mut verifier);
    assert!(message.contains("it does not decode"), "{message}");
}
