#!/usr/bin/env bash
# Builds the QEMU test image (`just test-image`): the firmware's disk layout
# (board/x86_64/genimage.cfg: EFI system partition, root slots A and B, data) with the same
# GRUB slot selection (board/common/grub) and rootfs overlay (board/common/rootfs-overlay) as
# the Buildroot image, but a root filesystem made from Debian packages (Debian's kernel and
# systemd) plus our release binaries, since Buildroot cannot download its sources here.
#
# Usage: tests/image/build.sh [OUT]   (root; OUT defaults to target/image)
# Output: OUT/disk.img (raw GPT disk), OUT/rootfs.ext4 (the slot image, for RAUC bundles) and
# OUT/update.raucb (a signed bundle of the same system with VERSION=test-update in
# /etc/routerd-release, which the boot test installs) and OUT/broken.raucb (VERSION=test-broken,
# whose supervisor fails its doctor: tests/image/broken).
# Debian packages are kept in OUT/apt-cache between runs.
# Needs: mmdebstrap genimage grub-efi-amd64-bin grub-common dosfstools mtools e2fsprogs
# (scripts/bootstrap.sh installs them) and target/release/{routerd,routerctl}.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
case ${1:-} in --*-hook) out= ;; *) out=${1:-$top/target/image} ;; esac
suite=bookworm
mirror=http://deb.debian.org/debian

# The guest's packages: systemd as init, the kernel with an initramfs that mounts the root
# slot from virtio-blk, and the libraries routerd links (libnftnl, libmnl). nftables and
# iproute2 are there for reading state on the console, as on the Buildroot image; dnsmasq
# serves DHCP and DNS (routerd-dnsmasq.service, which routerd writes); systemd-networkd (in
# the systemd package) runs the DHCP clients. pppoe (pppoe-server) and isc-dhcp-server
# (dhcpd -6, which delegates prefixes) play the ISP in the boot test, and ndisc6 (rdisc6)
# the LAN host that reads the router advertisements.
packages=(
  systemd systemd-sysv udev dbus kmod
  linux-image-amd64 initramfs-tools zstd
  libnftnl11 libmnl0 nftables iproute2 iputils-ping
  e2fsprogs ca-certificates procps
  rauc grub-common
  dnsmasq-base
  ppp pppoe isc-dhcp-server ndisc6
)

# initramfs-tools inside a chroot cannot see the guest's devices (MODULES=dep fails), so
# list exactly what mounting the root slot needs; this also keeps the initramfs small,
# which matters when QEMU emulates the CPU.
essential_hook() {
  local root=$1
  mkdir -p "$root/etc/initramfs-tools/conf.d"
  printf 'MODULES=list\nCOMPRESS=zstd\n' >"$root/etc/initramfs-tools/conf.d/routerd.conf"
  printf '%s\n' virtio_pci virtio_blk ext4 crc32c_generic >"$root/etc/initramfs-tools/modules"
}

customize_hook() {
  local root=$1
  # What the Buildroot image gets from the routerd package ...
  install -D -m 0755 "$top/target/release/routerd" "$root/usr/bin/routerd"
  install -D -m 0755 "$top/target/release/routerctl" "$root/usr/bin/routerctl"
  install -D -m 0644 "$top/firmware/supervisor/systemd/routerd.service" \
    "$root/usr/lib/systemd/system/routerd.service"
  # ... and from the shared overlay (symlinks into /data included).
  rm -rf "$root/etc/routerd" "$root/var/lib/routerd"
  cp -a "$top/board/common/rootfs-overlay/." "$root/"
  systemctl --root="$root" enable routerd.service 2>/dev/null
  # systemd-networkd runs the DHCP clients routerd configures (as the Buildroot image's preset
  # says); nothing waits for network-online.target, so neither does boot.
  systemctl --root="$root" enable systemd-networkd.service 2>/dev/null
  systemctl --root="$root" disable systemd-networkd-wait-online.service 2>/dev/null
  # RAUC's system.conf and keyring, as the boards' post-build installs them.
  "$top/board/common/install-rauc.sh" "$root" "$top/board/x86_64"
  # What Buildroot's rauc package brings and Debian's does not (tests/image/rootfs).
  cp -a "$top/tests/image/rootfs/." "$root/"
  systemctl --root="$root" enable rauc.service 2>/dev/null
  # dhcpd runs only where the boot test starts it, never as the router's own service.
  systemctl --root="$root" mask isc-dhcp-server.service isc-dhcp-server6.service 2>/dev/null
  # Buildroot's pppd is 2.5, whose PPPoE plugin is pppoe.so (routerd's peer files load it by
  # that name); Debian 12's pppd 2.4.9 calls the same plugin rp-pppoe.so.
  local plugin
  for plugin in "$root"/usr/lib/pppd/*/rp-pppoe.so; do
    [[ -e ${plugin%/*}/pppoe.so ]] || ln -s rp-pppoe.so "${plugin%/*}/pppoe.so"
  done
  # Buildroot installs the kernel into the slot's /boot under a fixed name; do the same.
  cp "$root"/boot/vmlinuz-* "$root/boot/bzImage"
  cp "$root"/boot/initrd.img-* "$root/boot/initrd.img"
  # The guest needs networking, netfilter, tunnels, virtio, ext4 and device-mapper (dm-verity,
  # for RAUC bundles) modules; drop the hardware drivers and file systems a router VM never
  # loads (most of the 400 MB).
  local mods
  mods=$(echo "$root"/lib/modules/*)
  rm -rf "$mods"/kernel/{sound,drivers/gpu,drivers/media,drivers/net/wireless,drivers/infiniband,drivers/staging,drivers/scsi,drivers/usb,drivers/hid,drivers/iio,drivers/input,drivers/bluetooth,drivers/isdn,drivers/mtd,drivers/platform,drivers/hwmon,drivers/edac,drivers/nvme,drivers/ata,drivers/thunderbolt,net/wireless,net/mac80211,net/bluetooth,fs/btrfs,fs/xfs,fs/ocfs2,fs/gfs2,fs/nfs,fs/nfsd,fs/ceph,fs/smb,fs/f2fs,fs/reiserfs,fs/jfs,fs/ntfs3,fs/nilfs2,fs/ubifs,fs/dlm}
  chroot "$root" depmod "$(basename "$mods")"
  rm -rf "$root"/usr/share/{doc,man,info,locale}/* "$root"/var/cache/apt/*.bin
  # systemd makes a machine ID on first boot (the root slot is writable).
  : >"$root/etc/machine-id"
}

# mmdebstrap runs its hooks with sh: they come back into this script.
case ${1:-} in
--essential-hook) essential_hook "$2"; exit ;;
--customize-hook) customize_hook "$2"; exit ;;
esac

for b in routerd routerctl; do
  [[ -x $top/target/release/$b ]] || { echo "build.sh: target/release/$b missing (cargo build --release)" >&2; exit 66; }
done

work=$out/work
rm -rf "$work" "$out/disk.img"
mkdir -p "$work/efi-part/EFI/BOOT" "$work/empty" "$out/apt-cache"

echo "build.sh: root filesystem from Debian $suite" >&2
self=$top/tests/image/build.sh
# The single-quoted $1 is for mmdebstrap to expand (the hook's root directory).
# shellcheck disable=SC2016
mmdebstrap --quiet --mode=root --variant=essential \
  --include="$(IFS=,; echo "${packages[*]}")" \
  --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
  --setup-hook="sync-in '$out/apt-cache' /var/cache/apt/archives" \
  --essential-hook="'$self' --essential-hook \"\$1\"" \
  --customize-hook="sync-out /var/cache/apt/archives '$out/apt-cache'" \
  --customize-hook="'$self' --customize-hook \"\$1\"" \
  "$suite" "$work/rootfs" "$mirror"

echo "build.sh: rootfs.ext4, update.ext4, broken.ext4" >&2
# The image's version, and the one of the update the tests install (the same root file
# system with another /etc/routerd-release).
echo "VERSION=test-image" >"$work/rootfs/etc/routerd-release"
mkfs.ext4 -q -L rootfs -d "$work/rootfs" "$work/rootfs.ext4" 512M
echo "VERSION=test-update" >"$work/rootfs/etc/routerd-release"
mkfs.ext4 -q -L rootfs -d "$work/rootfs" "$work/update.ext4" 512M
# A broken update: its supervisor applies a config whose static route the kernel refuses, so
# its doctor fails (R002) and the health gate marks the slot bad within 20 s and reboots.
echo "VERSION=test-broken" >"$work/rootfs/etc/routerd-release"
cat "$top/board/common/rootfs-overlay/usr/share/routerd/router.yaml" \
  "$top/tests/image/broken/unreachable-route.yaml" >"$work/rootfs/usr/share/routerd/broken.yaml"
mkdir -p "$work/rootfs/etc/systemd/system/routerd.service.d"
cp "$top/tests/image/broken/routerd-broken.conf" "$work/rootfs/etc/systemd/system/routerd.service.d/"
mkfs.ext4 -q -L rootfs -d "$work/rootfs" "$work/broken.ext4" 512M

echo "build.sh: EFI system partition" >&2
boot=$work/efi-part/EFI/BOOT
# The GRUB modules grub.cfg uses; -p makes GRUB read grub.cfg and grubenv from EFI/BOOT of
# the partition it was loaded from.
grub-mkimage -O x86_64-efi -p /EFI/BOOT -o "$boot/bootx64.efi" \
  part_gpt fat ext2 normal configfile linux loadenv echo test regexp serial terminal \
  search halt reboot efi_gop all_video gzio cat ls
cp "$top/board/common/grub/grub.cfg" "$boot/grub.cfg"
cp "$top/board/x86_64/grub-board.cfg" "$boot/board.cfg"
grub-editenv "$boot/grubenv" create
grub-editenv "$boot/grubenv" set ORDER="A B" A_OK=1 A_TRY=0 B_OK=1 B_TRY=0

echo "build.sh: disk.img" >&2
genimage --config "$top/board/x86_64/genimage.cfg" --inputpath "$work" --outputpath "$out" \
  --rootpath "$work/empty" --tmppath "$work/genimage-tmp" >"$work/genimage.log" 2>&1 \
  || { cat "$work/genimage.log" >&2; exit 1; }
# The root file system image stays for bundles: just bundle x86_64 target/image/rootfs.ext4 V.
mv "$work/rootfs.ext4" "$out/rootfs.ext4"
rm -rf "$work/rootfs"

echo "build.sh: update.raucb" >&2
"$top/scripts/bundle.sh" x86_64 "$work/update.ext4" test-update "$out/update.raucb" >/dev/null 2>"$work/bundle.log" \
  || { cat "$work/bundle.log" >&2; exit 1; }
rm -f "$work/update.ext4"
echo "build.sh: broken.raucb" >&2
"$top/scripts/bundle.sh" x86_64 "$work/broken.ext4" test-broken "$out/broken.raucb" >/dev/null 2>"$work/bundle.log" \
  || { cat "$work/bundle.log" >&2; exit 1; }
rm -f "$work/broken.ext4"
echo "build.sh: $out/disk.img" >&2
