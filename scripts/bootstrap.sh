#!/usr/bin/env bash
# Installs what building, the demo and the tests need on a Debian 12 machine (run as root).
# Idempotent and quiet when everything is already there. Assumes a Rust toolchain (rustup).
set -euo pipefail

apt_packages=(
  nftables libnftnl-dev libmnl-dev pkg-config  # nftables userspace (tests read back), libnftnl
  iproute2 iputils-ping                         # lab set-up and independent read-back
  python3 time                                  # benchmark generator and peak RSS, demo web server
  chromium chromium-driver                      # the web UI's browser test (headless, WebDriver)
  mmdebstrap genimage dosfstools mtools e2fsprogs # the QEMU test image (tests/image/build.sh)
  grub-efi-amd64-bin grub-common                #   its boot loader (the board's grub.cfg)
  qemu-system-x86 qemu-utils ovmf               #   booting it (TCG) under UEFI, its disk overlay
  rauc squashfs-tools openssl                   # signed update bundles (scripts/bundle.sh)
  dbus-daemon                                   #   the OTA tests' private bus for rauc service
  dnsmasq-base busybox                          # DHCP/DNS tests: dnsmasq, udhcpc and nslookup
  bind9 bind9-utils bind9-dnsutils              # DNS controller tests: named, named-checkconf,
                                                #   tsig-keygen, dig and nsupdate
  ndisc6                                        #   and rdisc6, which solicits the RAs
  faketime                                      # DNS controller tests: libfaketime skews a remote named
  systemd                                       # DHCP client tests: the real systemd-networkd, busctl
  systemd-timesyncd                             # NTPClient tests: the real timesyncd
)

missing_packages() {
  missing=()
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
}
missing_packages
if ((${#missing[@]})); then
  echo "bootstrap: apt-get install ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # An install can remove a package of the list that conflicts with it (a backported
  # qemu-utils goes when Debian's qemu-system-x86 comes in): install those again, now in
  # versions that fit the rest.
  missing_packages
  if ((${#missing[@]})); then
    echo "bootstrap: apt-get install ${missing[*]} (removed by the first install)" >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  missing_packages
  if ((${#missing[@]})); then
    echo "bootstrap: still not installed: ${missing[*]}" >&2
    exit 69
  fi
fi

export PATH="$HOME/.cargo/bin:$PATH"
command -v cargo >/dev/null || { echo "bootstrap: cargo not found; install Rust with rustup" >&2; exit 69; }
command -v just >/dev/null || { echo "bootstrap: cargo install just" >&2; cargo install --locked -q just; }
cargo nextest --version >/dev/null 2>&1 || { echo "bootstrap: cargo install cargo-nextest" >&2; cargo install --locked -q cargo-nextest; }
