#!/usr/bin/env bash
# Builds a signed RAUC bundle (verity format) that updates a board's root slot (`just bundle`).
#
# Usage: scripts/bundle.sh BOARD ROOTFS VERSION [OUT]
#   BOARD    x86_64 | aarch64-virt | nanopi-r2s: the bundle's `compatible` is the one in
#            board/BOARD/rauc/system.conf, so a bundle for one board is refused by another
#   ROOTFS   the root file system image (ext4) to install into the inactive slot
#   VERSION  the bundle's version string (shown before installing)
#   OUT      the bundle file; default target/bundles/routerd-BOARD-VERSION.raucb
# Keys: $ROUTERD_RAUC_CERT and $ROUTERD_RAUC_KEY (and $ROUTERD_RAUC_KEYRING to check the
# chain) for production; without them, the development CA of scripts/rauc-dev-ca.sh in
# $ROUTERD_RAUC_DEV_DIR (default target/rauc-dev), made on first use. docs/ota.md.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 3 ]] || { sed -n '4,13p' "$0" >&2; exit 64; }
board=$1 rootfs=$2 version=$3
out=${4:-$top/target/bundles/routerd-$board-$version.raucb}

conf=$top/board/$board/rauc/system.conf
[[ -f $conf ]] || { echo "bundle: no board $board ($conf missing)" >&2; exit 64; }
[[ -f $rootfs ]] || { echo "bundle: $rootfs: no such root file system image" >&2; exit 66; }
[[ $version =~ ^[0-9A-Za-z.+~-]+$ ]] || { echo "bundle: version $version: use [0-9A-Za-z.+~-]" >&2; exit 64; }
compatible=$(sed -n 's/^compatible=//p' "$conf")

if [[ -n ${ROUTERD_RAUC_CERT:-} || -n ${ROUTERD_RAUC_KEY:-} ]]; then
  cert=${ROUTERD_RAUC_CERT:?set both ROUTERD_RAUC_CERT and ROUTERD_RAUC_KEY}
  key=${ROUTERD_RAUC_KEY:?set both ROUTERD_RAUC_CERT and ROUTERD_RAUC_KEY}
  keyring=${ROUTERD_RAUC_KEYRING:-}
else
  dev=${ROUTERD_RAUC_DEV_DIR:-$top/target/rauc-dev}
  "$top/scripts/rauc-dev-ca.sh" "$dev"
  cert=$dev/signing.cert.pem key=$dev/signing.key.pem keyring=$dev/ca.cert.pem
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# A hard link when it can (the image is hundreds of MiB), a copy across file systems.
ln "$rootfs" "$stage/rootfs.ext4" 2>/dev/null || cp --sparse=always "$rootfs" "$stage/rootfs.ext4"
cat >"$stage/manifest.raucm" <<MANIFEST
[update]
compatible=$compatible
version=$version
description=routerd firmware $version for $board

[bundle]
format=verity

[image.rootfs]
filename=rootfs.ext4
MANIFEST

mkdir -p "$(dirname "$out")"
rm -f "$out"
rauc bundle --cert="$cert" --key="$key" ${keyring:+--keyring="$keyring"} "$stage" "$out" >&2
echo "$out"
