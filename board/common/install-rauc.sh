#!/bin/sh
# Installs RAUC's configuration into a root file system: the board's system.conf and the
# keyring the image trusts. Run by each board's post-build (Buildroot) and by
# tests/image/build.sh.
#
# Usage: board/common/install-rauc.sh TARGET_DIR BOARD_DIR
# Keyring: $ROUTERD_RAUC_KEYRING (production: the CA your bundles chain to), else the
# development CA of scripts/rauc-dev-ca.sh, made on first use (docs/ota.md).
set -eu

target_dir=$1
board_dir=$2
top=$(cd "$(dirname "$0")/../.." && pwd)

keyring=${ROUTERD_RAUC_KEYRING:-}
if [ -z "$keyring" ]; then
	dev=${ROUTERD_RAUC_DEV_DIR:-$top/target/rauc-dev}
	"$top/scripts/rauc-dev-ca.sh" "$dev"
	keyring=$dev/ca.cert.pem
	echo "install-rauc: the image trusts the development CA ($keyring), not for production" >&2
fi
[ -s "$keyring" ] || { echo "install-rauc: keyring $keyring missing or empty" >&2; exit 1; }

install -D -m 0644 "$board_dir/rauc/system.conf" "$target_dir/etc/rauc/system.conf"
install -D -m 0644 "$keyring" "$target_dir/etc/rauc/keyring.pem"
