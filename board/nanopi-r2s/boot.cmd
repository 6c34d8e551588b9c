# NanoPi R2S A/B slot selection. post-image.sh compiles it to boot.scr on the FAT partition
# `boot`, where U-Boot's standard boot finds it. docs/image.md describes the boot flow.
#
# The slot state follows RAUC's U-Boot contract, so `rauc status mark-good/mark-active` drive
# it through fw_setenv (the environment is raw on the SD card, see post-build.sh):
#   BOOT_ORDER    slots to try, in order ("A B")
#   BOOT_x_LEFT   boots slot x has left before it is skipped; RAUC refills it on mark-good
# Partitions: 1 boot, 2 rootfs-a, 3 rootfs-b, 4 data. Each slot carries its kernel and DTB in
# its own /boot, so a slot update changes kernel and root together.

# A fresh card has no saved environment yet.
test -n "${BOOT_ORDER}" || setenv BOOT_ORDER "A B"
test -n "${BOOT_A_LEFT}" || setenv BOOT_A_LEFT 3
test -n "${BOOT_B_LEFT}" || setenv BOOT_B_LEFT 3
# Set by standard boot for the device the script came from; the defaults are the SD slot.
test -n "${devtype}" || setenv devtype mmc
test -n "${devnum}" || setenv devnum 1

setenv rauc_slot
# U-Boot's shell splits the quoted list into words here (RAUC's documented idiom).
for slot in "${BOOT_ORDER}"; do
	if test -z "${rauc_slot}"; then
		if test "${slot}" = "A"; then
			if test ${BOOT_A_LEFT} -gt 0; then
				setexpr BOOT_A_LEFT ${BOOT_A_LEFT} - 1
				setenv rauc_slot A
				setenv rootpart 2
				setenv rootlabel rootfs-a
			fi
		elif test "${slot}" = "B"; then
			if test ${BOOT_B_LEFT} -gt 0; then
				setexpr BOOT_B_LEFT ${BOOT_B_LEFT} - 1
				setenv rauc_slot B
				setenv rootpart 3
				setenv rootlabel rootfs-b
			fi
		fi
	fi
done

if test -z "${rauc_slot}"; then
	# Both slots used up their tries without being marked good. A router must come back on
	# its own: refill both counters and start over rather than stop at the U-Boot prompt.
	echo "routerd: no slot has tries left (BOOT_ORDER=${BOOT_ORDER}); refilling and resetting"
	setenv BOOT_A_LEFT 3
	setenv BOOT_B_LEFT 3
	saveenv
	reset
fi

# The decremented counter must be on the card before the kernel gets a chance to hang.
saveenv

echo "routerd: booting slot ${rauc_slot} (A left ${BOOT_A_LEFT}, B left ${BOOT_B_LEFT})"
setenv bootargs "root=PARTLABEL=${rootlabel} rootwait rw net.ifnames=0 console=ttyS2,1500000 rauc.slot=${rauc_slot}"
load ${devtype} ${devnum}:${rootpart} ${kernel_addr_r} /boot/Image
load ${devtype} ${devnum}:${rootpart} ${fdt_addr_r} /boot/rk3328-nanopi-r2s.dtb
booti ${kernel_addr_r} - ${fdt_addr_r}
