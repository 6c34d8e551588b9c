#!/bin/sh
# Post-image of the GRUB boards (x86_64, aarch64-virt), run by their post-image.sh with the
# board directory as $1. Buildroot's grub2 package leaves the EFI loader in
# $BINARIES_DIR/efi-part/EFI/BOOT; this completes that tree and writes the disk image:
#   grub.cfg   board/common/grub/grub.cfg, the A/B slot selection
#   board.cfg  the board's grub-board.cfg (console, kernel file, extra arguments)
#   grubenv    the slot state RAUC's GRUB backend edits: both slots good, A first
set -eu

board_dir=$1
common_dir=$(dirname "$0")
efi_boot="$BINARIES_DIR/efi-part/EFI/BOOT"
editenv="$HOST_DIR/bin/grub-editenv"

fail() {
	echo "post-image: $*" >&2
	exit 1
}

[ -d "$efi_boot" ] || fail "$efi_boot missing: BR2_TARGET_GRUB2 with an EFI platform makes it"
[ -x "$editenv" ] || fail "$editenv missing: host-grub2 (a dependency of grub2) installs it"

install -m 0644 "$common_dir/grub/grub.cfg" "$efi_boot/grub.cfg"
install -m 0644 "$board_dir/grub-board.cfg" "$efi_boot/board.cfg"

# Start from a blank block on every build: a rebuild must not inherit a test's slot state.
rm -f "$efi_boot/grubenv"
"$editenv" "$efi_boot/grubenv" create
"$editenv" "$efi_boot/grubenv" set "ORDER=A B" A_OK=1 A_TRY=0 B_OK=1 B_TRY=0

# Buildroot runs post-image scripts from its top directory.
support/scripts/genimage.sh -c "$board_dir/genimage.cfg"
