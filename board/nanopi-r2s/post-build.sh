#!/bin/sh
# Post-build of the NanoPi R2S (BR2_ROOTFS_POST_BUILD_SCRIPT, $1 is TARGET_DIR).
# boot.cmd loads the kernel and the DTB from the slot's own /boot, so a slot update replaces
# them together with the root: the rootfs must carry both. RAUC's U-Boot backend edits the
# slot counters through fw_setenv, which reads where the environment is from fw_env.config.
# The kernel must also honour the config fragments this board asks for.
set -eu

board_dir=$(dirname "$0")
target_dir=$1

for file in boot/Image boot/rk3328-nanopi-r2s.dtb; do
	if [ ! -f "$target_dir/$file" ]; then
		echo "post-build: $target_dir/$file missing (BR2_LINUX_KERNEL_INSTALL_TARGET)" >&2
		exit 1
	fi
done

# The offsets and size of board/nanopi-r2s/uboot.fragment on the SD card (mmcblk0).
cat >"$target_dir/etc/fw_env.config" <<'CONF'
# device      offset    size
/dev/mmcblk0  0x3F8000  0x8000
/dev/mmcblk0  0x3F0000  0x8000
CONF

# RAUC's system.conf and the keyring of the bundles this image accepts.
"$board_dir/../common/install-rauc.sh" "$target_dir" "$board_dir"

"$board_dir/../common/check-kernel-config.sh" \
	"$board_dir/../common/linux-routerd.fragment" "$board_dir/linux.fragment"
