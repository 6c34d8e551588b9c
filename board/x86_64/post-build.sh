#!/bin/sh
# Post-build of the x86_64 PC (BR2_ROOTFS_POST_BUILD_SCRIPT, $1 is TARGET_DIR): the shared
# steps of board/common/post-build.sh, with the kernel GRUB loads (grub-board.cfg).
set -eu

board_dir=$(dirname "$0")
exec "$board_dir/../common/post-build.sh" "$1" "$board_dir" boot/bzImage
