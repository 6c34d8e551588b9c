#!/bin/sh
# Post-image of the NanoPi R2S (BR2_ROOTFS_POST_IMAGE_SCRIPT): compiles boot.cmd and writes
# the SD card image of board/nanopi-r2s/genimage.cfg.
set -eu

board_dir=$(dirname "$0")

# Compiled here rather than by host-uboot-tools' boot script option so that an edit of
# boot.cmd reaches the image on the next "make", without rebuilding host-uboot-tools.
"$HOST_DIR/bin/mkimage" -A arm64 -O linux -T script -C none \
	-n "routerd A/B slot selection" \
	-d "$board_dir/boot.cmd" "$BINARIES_DIR/boot.scr"

# Name a missing input here rather than through genimage.
for file in idbloader.img u-boot.itb rootfs.ext4; do
	if [ ! -e "$BINARIES_DIR/$file" ]; then
		echo "post-image: $BINARIES_DIR/$file missing" >&2
		exit 1
	fi
done

# Buildroot runs post-image scripts from its top directory.
support/scripts/genimage.sh -c "$board_dir/genimage.cfg"
