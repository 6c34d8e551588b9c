//! RAUC bundles as `just bundle` makes them (scripts/bundle.sh): signed with the development
//! CA, in the verity format, with the board's `compatible`, accepted by the real `rauc` with
//! that CA as keyring and each board's system.conf, and refused when signed by another CA,
//! truncated or tampered with.
//!
//! Installing needs dm-verity, which this host's kernel lacks: installs are the QEMU image's.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn top() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh directory under the test's target tmp dir.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("bundle-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

/// A small ext4 root file system image with `etc/routerd-release` saying `version` (and
/// enough incompressible bytes that the squashfs is over RAUC's 4 KiB minimum).
fn rootfs(dir: &Path, version: &str) -> PathBuf {
    let root = dir.join("root");
    fs::create_dir_all(root.join("etc")).expect("root/etc");
    fs::write(root.join("etc/routerd-release"), format!("VERSION={version}\n")).expect("release");
    let noise: Vec<u8> = (0u32..65536).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    fs::write(root.join("etc/noise"), noise).expect("noise");
    let image = dir.join("rootfs.ext4");
    let out = run(Command::new("mkfs.ext4").arg("-q").arg("-d").arg(&root).arg(&image).arg("8M"));
    assert!(out.status.success(), "mkfs.ext4: {}", String::from_utf8_lossy(&out.stderr));
    image
}

/// `scripts/bundle.sh BOARD ROOTFS VERSION OUT` with the development CA in `ca`.
fn bundle(ca: &Path, board: &str, rootfs: &Path, version: &str, out: &Path) {
    let made = run(Command::new(top().join("scripts/bundle.sh"))
        .args([board, &rootfs.to_string_lossy(), version, &out.to_string_lossy()])
        .env("ROUTERD_RAUC_DEV_DIR", ca)
        .env_remove("ROUTERD_RAUC_CERT")
        .env_remove("ROUTERD_RAUC_KEY"));
    assert!(made.status.success(), "bundle.sh: {}", String::from_utf8_lossy(&made.stderr));
    assert_eq!(String::from_utf8_lossy(&made.stdout).trim(), out.to_string_lossy());
}

/// `rauc [--conf CONF] --keyring KEYRING info --output-format=json BUNDLE`.
fn info(conf: Option<&Path>, keyring: &Path, bundle: &Path) -> Output {
    let mut cmd = Command::new("rauc");
    if let Some(conf) = conf {
        cmd.arg("--conf").arg(conf);
    }
    cmd.arg("--keyring").arg(keyring).args(["info", "--output-format=json"]).arg(bundle);
    run(&mut cmd)
}

#[test]
fn a_bundle_names_its_board_and_version_and_only_the_trusted_ca_opens_it_whole() {
    let dir = scratch("main");
    let ca = dir.join("ca");
    let image = rootfs(&dir, "1.2.3");
    let good = dir.join("good.raucb");
    bundle(&ca, "x86_64", &image, "1.2.3", &good);

    // Accepted with the CA the image trusts, under every board's system.conf (which must
    // parse); the manifest carries the board's compatible and the version.
    let keyring = ca.join("ca.cert.pem");
    for board in ["x86_64", "aarch64-virt", "nanopi-r2s"] {
        let conf = top().join(format!("board/{board}/rauc/system.conf"));
        let out = info(Some(&conf), &keyring, &good);
        assert!(out.status.success(), "{board}: {}", String::from_utf8_lossy(&out.stderr));
        let manifest: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("rauc info JSON");
        assert_eq!(manifest["compatible"], "routerd-x86_64", "{manifest}");
        assert_eq!(manifest["version"], "1.2.3", "{manifest}");
    }
    let stderr = String::from_utf8_lossy(&info(None, &keyring, &good).stderr).into_owned();
    assert!(stderr.contains("Verified inline signature"), "{stderr}");

    // Signed by a CA the image does not trust: refused.
    let other_ca = dir.join("other-ca");
    let foreign = dir.join("foreign.raucb");
    bundle(&other_ca, "x86_64", &image, "1.2.3", &foreign);
    let out = info(None, &keyring, &foreign);
    assert!(!out.status.success(), "a bundle of another CA was accepted");
    assert!(String::from_utf8_lossy(&out.stderr).contains("signature"), "{out:?}");

    // Truncated (a download cut short): refused.
    let bytes = fs::read(&good).expect("bundle");
    let truncated = dir.join("truncated.raucb");
    fs::write(&truncated, &bytes[..bytes.len() - 512]).expect("write");
    assert!(!info(None, &keyring, &truncated).status.success(), "a truncated bundle was accepted");

    // One byte changed in the signed part at the end (manifest and signature): refused.
    let mut tampered_bytes = bytes.clone();
    let at = tampered_bytes.len() - 700;
    tampered_bytes[at] ^= 0x20;
    let tampered = dir.join("tampered.raucb");
    fs::write(&tampered, &tampered_bytes).expect("write");
    assert!(!info(None, &keyring, &tampered).status.success(), "a tampered bundle was accepted");
}

#[test]
fn each_board_gets_its_own_compatible_and_bad_arguments_change_nothing() {
    let dir = scratch("boards");
    let ca = dir.join("ca");
    let image = rootfs(&dir, "2.0.0");
    for (board, compatible) in
        [("aarch64-virt", "routerd-aarch64-virt"), ("nanopi-r2s", "routerd-nanopi-r2s")]
    {
        let out = dir.join(format!("{board}.raucb"));
        bundle(&ca, board, &image, "2.0.0", &out);
        let shown = info(None, &ca.join("ca.cert.pem"), &out);
        let manifest: serde_json::Value = serde_json::from_slice(&shown.stdout).expect("JSON");
        assert_eq!(manifest["compatible"], compatible, "{manifest}");
    }
    // An unknown board, a missing image and a version with spaces are refused, no file made.
    for (board, image, version) in [
        ("pdp11", image.clone(), "1"),
        ("x86_64", dir.join("missing.ext4"), "1"),
        ("x86_64", image.clone(), "1 2"),
    ] {
        let out = dir.join("refused.raucb");
        let made = run(Command::new(top().join("scripts/bundle.sh"))
            .args([board, &image.to_string_lossy(), version, &out.to_string_lossy()])
            .env("ROUTERD_RAUC_DEV_DIR", &ca));
        assert!(!made.status.success(), "{board} {image:?} {version:?} was accepted");
        assert!(!out.exists(), "{board} {version:?}: a bundle was written");
    }
}
