################################################################################
#
# routerd
#
################################################################################

# A release is a tag of the project's repository. Buildroot's git backend
# turns it into a reproducible tarball and the cargo download post-process
# vendors every crate into it, so routerd.hash covers our code and all
# dependencies. The URL is a placeholder (.invalid never resolves) until
# the repository is published; buildroot/README.md says how to set it,
# produce the hash, and build a checkout in place instead.
ROUTERD_VERSION = v0.1.0
ROUTERD_SITE = https://git.example.invalid/routerd/routerd.git
ROUTERD_SITE_METHOD = git
ROUTERD_LICENSE = GPL-2.0+
ROUTERD_DEPENDENCIES = host-pkgconf libmnl libnftnl

# The workspace has more members (libraries, the web UI crate, tests):
# build only the two binary packages we ship.
ROUTERD_CARGO_BUILD_OPTS = \
	--package routerd-supervisor \
	--package routerd-routerctl

# Keep the output where the install step looks for it, whatever the
# caller's environment says.
ROUTERD_CARGO_ENV = CARGO_TARGET_DIR=$(@D)/target

ROUTERD_BIN_DIR = \
	$(@D)/target/$(RUSTC_TARGET_NAME)/$(if $(BR2_ENABLE_DEBUG),debug,release)

# ROUTERD_OVERRIDE_SRCDIR builds a checkout (buildroot/README.md): leave
# its cargo and Buildroot output directories behind when copying it.
ROUTERD_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS = --exclude=/target --exclude=/out

# Such a checkout is rsynced, not downloaded, so the download post-process
# never vendors its crates. Vendor them in the build directory the same
# way, again whenever Cargo.lock changed, so that the offline --locked
# build works as is. This needs crates.io (or a warm $(BR_CARGO_HOME)).
ifneq ($(ROUTERD_OVERRIDE_SRCDIR),)
define ROUTERD_VENDOR_CRATES
	if ! cmp -s $(@D)/Cargo.lock $(@D)/.cargo/vendored-Cargo.lock; then \
		mkdir -p $(@D)/.cargo $(BR_CARGO_HOME) && \
		cd $(@D) && \
		$(TARGET_MAKE_ENV) $(PKG_COMMON_CARGO_ENV) \
			flock $(BR_CARGO_HOME)/.br-lock \
			cargo vendor --locked VENDOR > .cargo/config.toml && \
		cp Cargo.lock .cargo/vendored-Cargo.lock; \
	fi
endef
ROUTERD_PRE_BUILD_HOOKS += ROUTERD_VENDOR_CRATES
endif

# cargo install refuses a virtual workspace manifest, and the build step
# already produced both binaries: copy them.
define ROUTERD_INSTALL_TARGET_CMDS
	$(INSTALL) -D -m 0755 $(ROUTERD_BIN_DIR)/routerd \
		$(TARGET_DIR)/usr/bin/routerd
	$(INSTALL) -D -m 0755 $(ROUTERD_BIN_DIR)/routerctl \
		$(TARGET_DIR)/usr/bin/routerctl
endef

# The preset makes the "systemctl preset-all" that Buildroot runs before
# making the root filesystem enable the unit (its [Install] section names
# multi-user.target), whatever the default preset policy is.
define ROUTERD_INSTALL_INIT_SYSTEMD
	$(INSTALL) -D -m 0644 $(@D)/firmware/supervisor/systemd/routerd.service \
		$(TARGET_DIR)/usr/lib/systemd/system/routerd.service
	$(INSTALL) -d $(TARGET_DIR)/usr/lib/systemd/system-preset
	printf 'enable routerd.service\n' \
		> $(TARGET_DIR)/usr/lib/systemd/system-preset/50-routerd.preset
endef

$(eval $(cargo-package))
