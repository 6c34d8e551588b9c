#!/bin/sh
# Post-image of the x86_64 PC (BR2_ROOTFS_POST_IMAGE_SCRIPT): the GRUB boards share
# board/common/post-image-efi.sh; this board brings its grub-board.cfg and genimage.cfg.
set -eu

board_dir=$(dirname "$0")
exec "$board_dir/../common/post-image-efi.sh" "$board_dir"
