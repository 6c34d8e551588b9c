#!/bin/sh
# Post-build of QEMU virt, aarch64 (BR2_ROOTFS_POST_BUILD_SCRIPT, $1 is TARGET_DIR).
# GRUB loads the kernel from the slot's own /boot (grub-board.cfg names it), so a slot update
# replaces kernel and root together: the rootfs must carry it. The kernel must also honour
# the config fragments this board asks for.
set -eu

board_dir=$(dirname "$0")
target_dir=$1

if [ ! -f "$target_dir/boot/Image" ]; then
	echo "post-build: $target_dir/boot/Image missing (BR2_LINUX_KERNEL_INSTALL_TARGET)" >&2
	exit 1
fi

# RAUC's system.conf and the keyring of the bundles this image accepts.
"$board_dir/../common/install-rauc.sh" "$target_dir" "$board_dir"

"$board_dir/../common/check-kernel-config.sh" \
	"$board_dir/../common/linux-routerd.fragment" "$board_dir/linux.fragment"
