#!/bin/sh
# Post-build shared by every board, run by the board's post-build.sh:
#   board/common/post-build.sh TARGET_DIR BOARD_DIR FILE...
# The boot loader loads the kernel (and DTB) from the slot's own /boot, so a slot update
# replaces them together with the root: each FILE (relative to TARGET_DIR) must be there.
# Then RAUC's configuration, and the check that the kernel honours the config fragments the
# board asks for.
set -eu

target_dir=$1
board_dir=$2
shift 2
common_dir=$(dirname "$0")

for file in "$@"; do
	if [ ! -f "$target_dir/$file" ]; then
		echo "post-build: $target_dir/$file missing (BR2_LINUX_KERNEL_INSTALL_TARGET)" >&2
		exit 1
	fi
done

# RAUC's system.conf and the keyring of the bundles this image accepts.
"$common_dir/install-rauc.sh" "$target_dir" "$board_dir"

"$common_dir/check-kernel-config.sh" \
	"$common_dir/linux-routerd.fragment" "$board_dir/linux.fragment"
