#!/usr/bin/env bash
# Makes the development signing keys for RAUC bundles on first use (`just bundle`, the image
# builds, the tests): a CA, which the image trusts as /etc/rauc/keyring.pem, and a signing
# certificate issued by it. Never for production: production bundles are signed with keys
# from $ROUTERD_RAUC_CERT / $ROUTERD_RAUC_KEY and images trust $ROUTERD_RAUC_KEYRING
# (docs/ota.md). Nothing here is committed: the default place is target/rauc-dev.
#
# Usage: scripts/rauc-dev-ca.sh [DIR]   makes DIR/{ca,signing}.{key,cert}.pem if missing
set -euo pipefail

dir=${1:-$(cd "$(dirname "$0")/.." && pwd)/target/rauc-dev}
[[ -s $dir/ca.cert.pem && -s $dir/signing.cert.pem && -s $dir/signing.key.pem ]] && exit 0

mkdir -p "$dir"
chmod 0700 "$dir"
umask 077
subject="/O=routerd development (not for production)"
# EC P-256 keys; the CA lives 20 years, the signing certificate 10 (a router's clock may be
# far off before NTP, and bundles are checked against the signing time only).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7300 \
  -subj "$subject/CN=routerd development CA" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
  -keyout "$dir/ca.key.pem" -out "$dir/ca.cert.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -subj "$subject/CN=routerd development bundle signing" \
  -keyout "$dir/signing.key.pem" -out "$dir/signing.csr.pem" 2>/dev/null
openssl x509 -req -in "$dir/signing.csr.pem" -CA "$dir/ca.cert.pem" -CAkey "$dir/ca.key.pem" \
  -CAcreateserial -days 3650 -out "$dir/signing.cert.pem" \
  -extfile <(printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n') 2>/dev/null
rm -f "$dir/signing.csr.pem"
chmod 0644 "$dir/ca.cert.pem" "$dir/signing.cert.pem"
echo "rauc-dev-ca: made development keys in $dir (not for production)" >&2
