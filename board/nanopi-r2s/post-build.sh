#!/bin/sh
# Post-build of the NanoPi R2S (BR2_ROOTFS_POST_BUILD_SCRIPT, $1 is TARGET_DIR).
# RAUC's U-Boot backend edits the slot counters through fw_setenv, which reads where the
# environment is from fw_env.config; then the shared steps of board/common/post-build.sh, with
# the kernel and the DTB that boot.cmd loads from the slot's /boot.
set -eu

board_dir=$(dirname "$0")
target_dir=$1

# The offsets and size of board/nanopi-r2s/uboot.fragment on the SD card (mmcblk0).
cat >"$target_dir/etc/fw_env.config" <<'CONF'
# device      offset    size
/dev/mmcblk0  0x3F8000  0x8000
/dev/mmcblk0  0x3F0000  0x8000
CONF

exec "$board_dir/../common/post-build.sh" "$target_dir" "$board_dir" \
	boot/Image boot/rk3328-nanopi-r2s.dtb
