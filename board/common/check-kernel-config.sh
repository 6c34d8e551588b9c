#!/bin/sh
# Fails when the kernel Buildroot configured does not honour a line of the given config
# fragments: merge_config.sh only warns when a dependency is missing or a symbol was renamed,
# and the option then silently disappears from the image. Run by the boards' post-build
# scripts (BR2_CONFIG and BUILD_DIR come from Buildroot's environment).
# Usage: check-kernel-config.sh FRAGMENT...
set -eu

version=$(sed -n 's/^BR2_LINUX_KERNEL_VERSION="\(.*\)"$/\1/p' "$BR2_CONFIG")
dotconfig="$BUILD_DIR/linux-$version/.config"
# LINUX_OVERRIDE_SRCDIR builds in linux-custom.
[ -f "$dotconfig" ] || dotconfig="$BUILD_DIR/linux-custom/.config"
if [ ! -f "$dotconfig" ]; then
	echo "check-kernel-config: no kernel .config under $BUILD_DIR (linux-$version)" >&2
	exit 1
fi

status=0
for fragment in "$@"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			symbol=${line%%=*}
			grep -qxF "$line" "$dotconfig" && continue
			;;
		"# CONFIG_"*" is not set")
			# Also honoured when the symbol is invisible (absent from .config).
			symbol=${line#"# "}
			symbol=${symbol%% *}
			grep -q "^$symbol=" "$dotconfig" || continue
			;;
		*)
			continue
			;;
		esac
		actual=$(grep -E "^(# )?${symbol}[= ]" "$dotconfig" || echo "$symbol absent")
		echo "check-kernel-config: $fragment asks for '$line', the kernel has '$actual'" >&2
		status=1
	done <"$fragment"
done
exit "$status"
