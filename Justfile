# Every routine task. `just --list` shows them.

set shell := ["bash", "-euo", "pipefail", "-c"]

routerd := "target/debug/routerd"

# The main job: build, make the lab, reconcile examples/lab-router.yaml, prove it with traffic.
demo: build
    scripts/demo.sh {{routerd}}

# Build every crate (debug).
build:
    cargo build --workspace --locked

# Every test: formatting, lints, layering, unit, reconciler scenarios, namespace integration,
# the browser test and the QEMU image boot test (root).
test: lint test-image
    # The daemon tests run the routerctl binary next to routerd.
    cargo build --workspace --bins --locked
    cargo nextest run --workspace --locked --no-fail-fast

# The QEMU test image (root): release binaries and Debian's kernel and systemd on the
# firmware's disk layout, in target/image/disk.img (tests/image/build.sh, docs/image.md).
test-image:
    cargo build --release --locked -p routerd-supervisor -p routerd-routerctl
    tests/image/build.sh

# A signed RAUC bundle (verity) of a root file system image for BOARD, into target/bundles;
# development keys in target/rauc-dev unless $ROUTERD_RAUC_CERT/_KEY are set (docs/ota.md).
bundle board="x86_64" rootfs="target/image/rootfs.ext4" version="0.1.0":
    scripts/bundle.sh {{board}} {{rootfs}} {{version}}

# Static checks.
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets --locked -- -D warnings
    scripts/check-layering.sh

# check-package and savedefconfig round trips against a Buildroot source tree (not in CI).
check-buildroot BUILDROOT_DIR:
    scripts/check-buildroot.sh {{BUILDROOT_DIR}}

# The daemon benchmark of docs/benchmarks.md: idle RSS, notification to repair, binary size.
bench-daemon *args:
    cargo build --release --locked -p routerd-supervisor -p routerd-routerctl
    scripts/bench/daemon.py target/release --markdown {{args}}

# The benchmark of docs/benchmarks.md (root; release; nmstatectl cached in target/bench-tools).
bench *args:
    cargo build --release --locked -p routerd-supervisor
    [[ -x target/bench-tools/bin/nmstatectl ]] || cargo install nmstatectl --locked --version 2.2.62 --root target/bench-tools
    scripts/bench/run.py target/release/routerd --nmstatectl target/bench-tools/bin/nmstatectl --markdown {{args}}

# The DNS benchmark of docs/benchmarks.md (root; release): 10,000 records on a real named,
# routerd beside nsupdate. `--records N`, `--repeat N`.
bench-dns *args:
    cargo build --release --locked -p routerd-dns --example bench
    target/release/examples/bench {{args}}

# Remove the demo lab namespaces.
clean-lab:
    scripts/lab.sh down rd-demo

# Many more generated variants of the example configs than CI parses (issue 33 §1); any seed.
fuzz-variants cases="1000000" seed="1":
    ROUTERD_VARIANTS={{cases}} ROUTERD_VARIANTS_SEED={{seed}} cargo nextest run --locked -p routerd-model variants::ten_thousand

# The ownership property on the real kernel with more cases than CI (root; issue 33 §2).
property-ownership cases="200" seed="1":
    ROUTERD_OWNERSHIP_CASES={{cases}} ROUTERD_OWNERSHIP_SEED={{seed}} cargo nextest run --locked -p routerd-engine ownership

# Coverage-guided fuzzing of the config parser (cargo-fuzz, libFuzzer; needs the nightly toolchain),
# seeded from examples/ and the model's fixtures. New inputs stay in target/fuzz-corpus/config; a
# crash lands in fuzz/artifacts/config, and once fixed its input goes to fuzz/corpus/config, which
# CI replays (firmware/model/tests/it/variants.rs).
fuzz-config seconds="600":
    cargo fuzz --version >/dev/null 2>&1 || cargo install --locked cargo-fuzz
    mkdir -p target/fuzz-corpus/config && cp examples/*.yaml firmware/model/tests/fixtures/*.yaml target/fuzz-corpus/config/
    cd fuzz && cargo +nightly fuzz run config ../target/fuzz-corpus/config corpus/config -- -max_total_time={{seconds}} -max_len=65536

# Coverage-guided fuzzing of the control API's JSON requests (cargo-fuzz, libFuzzer; needs the
# nightly toolchain), seeded from one input per endpoint; a crash lands in fuzz/artifacts/control.
# Finds go to fuzz/corpus/control, which CI replays (firmware/supervisor/src/control_tests.rs).
fuzz-control seconds="600":
    cargo fuzz --version >/dev/null 2>&1 || cargo install --locked cargo-fuzz
    cd fuzz && cargo +nightly fuzz run control corpus/control -- -max_total_time={{seconds}} -max_len=65536

# The web UI's screenshots in webui/screenshots (every page at 1280 and 390 px wide), taken by
# the Chromium test (root); review them as a diff before committing.
screenshots:
    cargo build --locked -p routerd-supervisor -p routerd-routerctl
    cargo nextest run --locked -p routerd-supervisor --test it an_operator_edits
    mkdir -p webui/screenshots
    for f in target/tmp/browser/*-1280-*.png target/tmp/browser/*-390-*.png; do cp "$f" "webui/screenshots/$(basename "$f" | sed 's/^[0-9]*-//')"; done
