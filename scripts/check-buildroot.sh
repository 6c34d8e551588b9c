#!/usr/bin/env bash
# Checks the Buildroot external tree against a Buildroot source tree, offline:
#   1. utils/check-package passes over buildroot/ and board/ with zero warnings;
#   2. every defconfig survives `make <name>_defconfig` + `make savedefconfig`: no line of it is
#      lost from the resulting .config (Kconfig silently drops misspelled or unmet symbols), the
#      packages the image needs are enabled, and savedefconfig writes the committed file back
#      byte for byte.
# Usage: scripts/check-buildroot.sh /path/to/buildroot   (a 2026.05.1 tree; see buildroot/README.md)
# Not in CI: CI has no Buildroot tree. Installs python3-magic, python3-flake8 and shellcheck
# (check-package needs them) with apt when they are missing and we are root.
set -euo pipefail

target_release=2026.05.1

die() {
  echo "check-buildroot: $*" >&2
  exit 1
}

(($# == 1)) || die "usage: $0 BUILDROOT_DIR"
br=$(cd "$1" 2>/dev/null && pwd) || die "$1: no such directory"
[[ -f $br/Makefile && -x $br/utils/check-package ]] || die "$br is not a Buildroot source tree"
repo=$(cd "$(dirname "$0")/.." && pwd)
external=$repo/buildroot

release=$(sed -n 's/^export BR2_VERSION := //p' "$br/Makefile")
if [[ $release != "$target_release" ]]; then
  echo "check-buildroot: warning: $br is Buildroot $release, the tree targets $target_release;" \
    "symbols and savedefconfig output may differ" >&2
fi

# The first python3 that can import what check-package imports (python-magic, flake8): the
# one on PATH may be a pyenv or venv interpreter that lacks the Debian packages.
find_python() {
  local py
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c 'import magic, flake8' 2>/dev/null; then
      command -v "$py"
      return 0
    fi
  done
  return 1
}

# check-package also runs shellcheck on shell scripts; Kconfig's conf is built with gcc.
ensure_tools() {
  local missing=()
  if ! find_python >/dev/null; then
    /usr/bin/python3 -c 'import magic' 2>/dev/null || missing+=(python3-magic)
    /usr/bin/python3 -c 'import flake8' 2>/dev/null || missing+=(python3-flake8)
  fi
  command -v shellcheck >/dev/null || missing+=(shellcheck)
  command -v gcc >/dev/null || missing+=(gcc)
  command -v make >/dev/null || missing+=(make)
  ((${#missing[@]})) || return 0
  if ((EUID != 0)) || ! command -v apt-get >/dev/null; then
    die "missing ${missing[*]}: install them (Debian: apt-get install ${missing[*]})"
  fi
  echo "check-buildroot: apt-get install ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Symbols each image needs at run time or to build its disk image. Some are only selected
# (by systemd, RAUC's D-Bus support, the ext4 rootfs, ...), so savedefconfig leaves them out
# of the defconfig; this list proves they are still on.
required_common=(
  BR2_INIT_SYSTEMD BR2_PACKAGE_SYSTEMD BR2_PACKAGE_DBUS BR2_PACKAGE_ROUTERD
  BR2_PACKAGE_LIBNFTNL BR2_PACKAGE_LIBMNL BR2_PACKAGE_DNSMASQ BR2_PACKAGE_NFTABLES
  BR2_PACKAGE_FRR BR2_PACKAGE_RAUC BR2_PACKAGE_RAUC_DBUS BR2_PACKAGE_IPROUTE2
  BR2_PACKAGE_SYSTEMD_NETWORKD BR2_PACKAGE_BIND BR2_PACKAGE_BIND_SERVER BR2_PACKAGE_BIND_TOOLS
  BR2_PACKAGE_CA_CERTIFICATES BR2_PACKAGE_E2FSPROGS BR2_PACKAGE_HOST_RAUC
  BR2_PACKAGE_HOST_GENIMAGE BR2_PACKAGE_HOST_MTOOLS BR2_PACKAGE_HOST_DOSFSTOOLS
  BR2_PACKAGE_HOST_E2FSPROGS BR2_TARGET_ROOTFS_EXT2_4 BR2_LINUX_KERNEL
  BR2_LINUX_KERNEL_INSTALL_TARGET BR2_DOWNLOAD_FORCE_CHECK_HASHES
)
required_grub=(BR2_TARGET_GRUB2 BR2_TARGET_GRUB2_INSTALL_TOOLS)
required_uboot=(
  BR2_TARGET_UBOOT BR2_TARGET_ARM_TRUSTED_FIRMWARE BR2_PACKAGE_HOST_UBOOT_TOOLS
  BR2_PACKAGE_UBOOT_TOOLS BR2_PACKAGE_UBOOT_TOOLS_FWPRINTENV
)
declare -A required_board=(
  [routerd_x86_64_defconfig]="${required_grub[*]} BR2_TARGET_GRUB2_X86_64_EFI"
  [routerd_aarch64_virt_defconfig]="${required_grub[*]} BR2_TARGET_GRUB2_ARM64_EFI"
  [routerd_nanopi_r2s_defconfig]="${required_uboot[*]}"
)

# Prints the lines of DEFCONFIG that the resulting .config does not honour.
lost_lines() {
  local defconfig=$1 dotconfig=$2 line symbol
  while IFS= read -r line; do
    case $line in
      BR2_*=*)
        grep -qxF -- "$line" "$dotconfig" || echo "  $line"
        ;;
      "# BR2_"*" is not set")
        symbol=${line#"# "}
        symbol=${symbol%% *}
        if grep -q "^$symbol=" "$dotconfig"; then echo "  $line"; fi
        ;;
    esac
  done <"$defconfig"
}

# Runs the round trip of one defconfig in WORK; returns non-zero on any failure.
check_defconfig() {
  local defconfig=$1 work=$2 name out saved log failed=0 symbol missing=()
  name=$(basename "$defconfig")
  out=$work/$name
  saved=$work/$name.saved
  log=$work/$name.log
  if ! make -s -C "$br" BR2_EXTERNAL="$external" O="$out" "$name" >"$log" 2>&1 ||
    ! make -s -C "$br" O="$out" savedefconfig BR2_DEFCONFIG="$saved" >>"$log" 2>&1; then
    cat "$log"
    echo "FAIL $name: Kconfig failed (log above)"
    return 1
  fi

  local lost
  lost=$(lost_lines "$defconfig" "$out/.config")
  if [[ -n $lost ]]; then
    echo "FAIL $name: lines lost by Kconfig (unknown symbol, unmet dependency or choice):"
    echo "$lost"
    failed=1
  fi

  local board_symbols
  read -ra board_symbols <<<"${required_board[$name]:-}"
  for symbol in "${required_common[@]}" "${board_symbols[@]}"; do
    grep -qx "$symbol=y" "$out/.config" || missing+=("$symbol")
  done
  if ((${#missing[@]})); then
    echo "FAIL $name: required but not enabled: ${missing[*]}"
    failed=1
  fi

  if ! diff -u --label "$name (committed)" --label "$name (savedefconfig)" \
    "$defconfig" "$saved" >"$work/$name.diff"; then
    cat "$work/$name.diff"
    echo "FAIL $name: savedefconfig writes it differently (above); its output: $saved"
    failed=1
  fi

  ((failed == 0)) && echo "ok   $name: savedefconfig round trip identical, nothing lost"
  return "$failed"
}

ensure_tools
python=$(find_python) || die "no python3 with the magic and flake8 modules"

work=$(mktemp -d "${TMPDIR:-/tmp}/check-buildroot.XXXXXX")
# Keep Buildroot from creating its download directory inside the checkout given to us.
export BR2_DL_DIR=$work/dl

status=0

echo "== check-package ($br/utils/check-package -v -b)"
mapfile -t files < <(cd "$repo" && find buildroot board -type f | sort)
if (cd "$repo" && "$python" "$br/utils/check-package" -v -b "${files[@]}"); then
  echo "ok   check-package: ${#files[@]} files, no warnings"
else
  echo "FAIL check-package: warnings above"
  status=1
fi

echo "== defconfig round trips (Buildroot $release)"
shopt -s nullglob
defconfigs=("$external"/configs/*_defconfig)
((${#defconfigs[@]})) || die "no defconfig in $external/configs"
for defconfig in "${defconfigs[@]}"; do
  check_defconfig "$defconfig" "$work" || status=1
done

if ((status != 0)); then
  # Kept for the Kconfig logs and savedefconfig outputs named above.
  echo "check-buildroot: FAILED (work files kept in $work)" >&2
else
  rm -rf "$work"
  echo "check-buildroot: all checks passed"
fi
exit "$status"
