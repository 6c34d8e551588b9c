//! Test fixture (feature `test-support`, for this crate's tests and the supervisor's): a real
//! `rauc service` on a private D-Bus bus with file-backed slots, the way RAUC's own test suite
//! runs it, plus bundles made with `rauc bundle`. Everything lives in a temporary directory;
//! both daemons are killed and the directory removed on drop, also when the test panics.
//! Panics on any failure: it is test code.
//!
//! Boot loader: RAUC's `grub` backend (the x86_64 board's) on a grubenv file made with
//! `grub-editenv`, because the `noop` backend cannot answer `GetPrimary` or report boot status.
//! Bundles are `plain`: the test system.conf allows it because this host has no device mapper
//! to mount `verity` bundles (the boards' configs stay verity-only). Mounting a plain bundle
//! needs a loop device, so inspecting and installing need root ([`require_root`]).

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::Rauc;
use futures::StreamExt;
use routerd_test_kit::bus::PrivateBus;
use tempfile::TempDir;
use zbus::fdo::DBusProxy;
use zbus::names::BusName;

/// How long a daemon may take to come up.
const START_DEADLINE: Duration = Duration::from_secs(20);
/// Size of each slot file.
pub const SLOT_BYTES: usize = 8 << 20;
/// The compatible of the test system.conf.
pub const COMPATIBLE: &str = "routerd-test";

/// A private bus with RAUC on it. Slot `rootfs.0` (boot name A) is the booted one, so
/// installs go to `rootfs.1` (B).
pub struct RaucFixture {
    dir: TempDir,
    bus: PrivateBus,
    rauc: Option<Child>,
}

/// A bundle to make with [`RaucFixture::bundle`].
pub struct BundleSpec<'a> {
    /// File name inside the fixture's directory.
    pub name: &'a str,
    /// `[update] compatible`.
    pub compatible: &'a str,
    /// `[update] version`.
    pub version: &'a str,
    /// The CA directory (from `scripts/rauc-dev-ca.sh`) whose signing key signs it.
    pub ca: &'a Path,
}

impl<'a> BundleSpec<'a> {
    /// A bundle for the test system ([`COMPATIBLE`]) signed under `ca`.
    pub fn for_test_system(name: &'a str, version: &'a str, ca: &'a Path) -> Self {
        Self { name, compatible: COMPATIBLE, version, ca }
    }
}

impl RaucFixture {
    /// Starts `dbus-daemon` and `rauc service` in a new directory under `base` (keep it
    /// short: the bus socket's path must fit `sun_path`) and waits (deadline) until RAUC owns
    /// its name.
    pub async fn start_in(base: &Path) -> Self {
        let dir =
            tempfile::Builder::new().prefix("ota-").tempdir_in(base).expect("temporary directory");
        let bus = PrivateBus::start(dir.path());
        let mut fixture = Self { dir, bus, rauc: None };
        fixture.write_system();
        fixture.rauc = Some(fixture.start_rauc());
        fixture.wait_for_rauc().await;
        fixture
    }

    /// The private bus's address (`unix:path=…`).
    pub fn address(&self) -> &str {
        self.bus.address()
    }

    /// A client connected to the private bus.
    pub async fn client(&self) -> Rauc {
        Rauc::connect(Some(self.bus.address())).await.expect("connect to the private bus")
    }

    /// The file backing a slot: `A` (`rootfs.0`) or `B` (`rootfs.1`).
    pub fn slot_file(&self, bootname: &str) -> PathBuf {
        self.path(&format!("rootfs-{bootname}.img"))
    }

    /// What the slot file held before any test touched it.
    pub fn initial_slot_bytes(bootname: &str) -> Vec<u8> {
        pattern(&format!("slot {bootname} as made by the fixture\n"), SLOT_BYTES)
    }

    /// The image a bundle of `version` carries: 3 MiB of recognisable text.
    pub fn image_bytes(version: &str) -> Vec<u8> {
        pattern(&format!("routerd test image {version}\n"), 3 << 20)
    }

    /// The development CA made once per fixture (`scripts/rauc-dev-ca.sh`); RAUC trusts it.
    pub fn ca(&self) -> PathBuf {
        self.make_ca("ca")
    }

    /// Another CA, which RAUC does not trust.
    pub fn other_ca(&self) -> PathBuf {
        self.make_ca("other-ca")
    }

    /// Makes a signed plain bundle with one `rootfs` image ([`Self::image_bytes`]).
    pub fn bundle(&self, spec: &BundleSpec<'_>) -> PathBuf {
        require_root();
        let content = self.path(&format!("{}.d", spec.name));
        fs::create_dir_all(&content).expect("bundle content directory");
        let manifest = format!(
            "[update]\ncompatible={}\nversion={}\n\n[bundle]\nformat=plain\n\n\
             [image.rootfs]\nfilename=rootfs.img\n",
            spec.compatible, spec.version
        );
        fs::write(content.join("manifest.raucm"), manifest).expect("manifest");
        fs::write(content.join("rootfs.img"), Self::image_bytes(spec.version)).expect("image");
        let out = self.path(spec.name);
        run(Command::new("rauc")
            .arg("bundle")
            .arg(format!("--cert={}", spec.ca.join("signing.cert.pem").display()))
            .arg(format!("--key={}", spec.ca.join("signing.key.pem").display()))
            .arg(&content)
            .arg(&out));
        out
    }

    /// A path inside the fixture's directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// RAUC's log so far (stdout and stderr, debug level), for failure messages.
    pub fn rauc_log(&self) -> String {
        fs::read_to_string(self.path("rauc.log")).unwrap_or_default()
    }

    /// The grubenv as `grub-editenv list` prints it (`ORDER=B A`, `B_OK=1`, …).
    pub fn grubenv(&self) -> String {
        run(Command::new("grub-editenv").arg(self.path("grubenv")).arg("list"))
    }

    /// Sets grubenv variables the way the boot loader does (`A_TRY=1` for a boot of A).
    pub fn set_grubenv(&self, assignments: &[&str]) {
        run(Command::new("grub-editenv").arg(self.path("grubenv")).arg("set").args(assignments));
    }

    /// Kills RAUC, leaving the bus up (for "RAUC not running" tests).
    pub fn stop_rauc(&mut self) {
        if let Some(mut rauc) = self.rauc.take() {
            let _ = rauc.kill();
            let _ = rauc.wait();
        }
    }

    /// [`Self::stop_rauc`], then waits (deadline) until the bus has dropped RAUC's name: the
    /// bus notices a dead connection on its own time, and a call routed before then gets
    /// another error than "no such service".
    pub async fn stop_rauc_and_wait(&mut self) {
        self.stop_rauc();
        let dbus = self.bus_proxy().await;
        let deadline = tokio::time::Instant::now() + START_DEADLINE;
        loop {
            let name = BusName::try_from("de.pengutronix.rauc").expect("valid name");
            if !dbus.name_has_owner(name).await.expect("NameHasOwner") {
                return;
            }
            assert!(tokio::time::Instant::now() < deadline, "RAUC's name outlived it");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    fn make_ca(&self, name: &str) -> PathBuf {
        let dir = self.path(name);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/rauc-dev-ca.sh");
        run(Command::new(script).arg(&dir));
        dir
    }

    /// Slot files, grubenv (A first, both good), keys and system.conf.
    fn write_system(&self) {
        for bootname in ["A", "B"] {
            fs::write(self.slot_file(bootname), Self::initial_slot_bytes(bootname)).expect("slot");
        }
        let grubenv = self.path("grubenv");
        run(Command::new("grub-editenv").arg(&grubenv).arg("create"));
        run(Command::new("grub-editenv").arg(&grubenv).args([
            "set",
            "ORDER=A B",
            "A_OK=1",
            "A_TRY=0",
            "B_OK=1",
            "B_TRY=0",
        ]));
        let keyring = self.ca().join("ca.cert.pem");
        let conf = format!(
            "[system]\ncompatible={COMPATIBLE}\nbootloader=grub\ngrubenv={grubenv}\n\
             statusfile={status}\nbundle-formats=plain verity\n\n\
             [keyring]\npath={keyring}\n\n\
             [slot.rootfs.0]\ndevice={a}\ntype=raw\nbootname=A\n\n\
             [slot.rootfs.1]\ndevice={b}\ntype=raw\nbootname=B\n",
            grubenv = grubenv.display(),
            status = self.path("status.raucs").display(),
            keyring = keyring.display(),
            a = self.slot_file("A").display(),
            b = self.slot_file("B").display(),
        );
        fs::write(self.path("system.conf"), conf).expect("system.conf");
        fs::create_dir_all(self.path("mnt")).expect("mount prefix");
    }

    /// `rauc service` on the private bus; its own mount prefix, so parallel tests' RAUCs do
    /// not mount bundles over each other in /mnt/rauc.
    fn start_rauc(&self) -> Child {
        let log = fs::File::create(self.path("rauc.log")).expect("rauc.log");
        let log2 = log.try_clone().expect("rauc.log");
        Command::new("rauc")
            .arg("--debug")
            .arg(format!("--conf={}", self.path("system.conf").display()))
            .arg(format!("--mount={}", self.path("mnt").display()))
            .args(["service", "--override-boot-slot=A"])
            .env("DBUS_SYSTEM_BUS_ADDRESS", self.bus.address())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .spawn()
            .expect("spawn rauc service")
    }

    /// The bus daemon's own interface, on a connection of the fixture's.
    async fn bus_proxy(&self) -> DBusProxy<'static> {
        let conn = zbus::connection::Builder::address(self.bus.address())
            .expect("bus address")
            .build()
            .await
            .expect("connect to the private bus");
        DBusProxy::new(&conn).await.expect("bus proxy")
    }

    /// Waits for `de.pengutronix.rauc` to get an owner: subscribes to NameOwnerChanged first,
    /// then asks, so an owner appearing in between is not missed.
    async fn wait_for_rauc(&self) {
        let dbus = self.bus_proxy().await;
        let mut changes = dbus
            .receive_name_owner_changed_with_args(&[(0, "de.pengutronix.rauc")])
            .await
            .expect("NameOwnerChanged match");
        let name = BusName::try_from("de.pengutronix.rauc").expect("valid name");
        if dbus.name_has_owner(name).await.expect("NameHasOwner") {
            return;
        }
        let owned = tokio::time::timeout(START_DEADLINE, changes.next()).await;
        assert!(
            matches!(owned, Ok(Some(_))),
            "rauc did not take its name within {START_DEADLINE:?}:\n{}",
            self.rauc_log()
        );
    }
}

impl Drop for RaucFixture {
    fn drop(&mut self) {
        self.stop_rauc();
        // The bus goes with the fixture's fields, after the unmounts below.
        // A RAUC killed during an install may leave its bundle mounted inside the directory;
        // detach it so the directory can be removed.
        let dir = self.dir.path().to_string_lossy().into_owned();
        let mounts = fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        for point in mounts.lines().filter_map(|l| l.split(' ').nth(1)) {
            if point.starts_with(&dir) {
                let _ = Command::new("umount").arg("-l").arg(point).status();
            }
        }
    }
}

/// Fails the test loudly unless it runs as root: RAUC mounts plain bundles on loop devices.
pub fn require_root() {
    let status = fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .expect("Uid line in /proc/self/status");
    assert_eq!(euid, "0", "this test needs root: rauc mounts bundles on loop devices");
}

/// `sha256sum FILE`'s hex digest: an independent check of the client's own hashing.
pub fn sha256sum(file: &Path) -> String {
    let out = run(Command::new("sha256sum").arg(file));
    out.split_whitespace().next().expect("sha256sum prints a digest").to_string()
}

/// Runs a command to completion; panics with its output on failure; returns stdout.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Serves HTTP/1.1 on a loopback port from a thread of its own, one request per connection:
/// `answer(path)` is the whole raw response (see [`http_response`]). Returns the base URL
/// (`http://127.0.0.1:PORT`). The thread lives as long as the test process.
pub fn serve_http(answer: impl Fn(&str) -> Vec<u8> + Send + 'static) -> String {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
            let mut request_line = String::new();
            let _ = reader.read_line(&mut request_line);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let path = request_line.split(' ').nth(1).unwrap_or("/").to_string();
            let _ = stream.write_all(&answer(&path));
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// A raw HTTP/1.1 response: `status` (`200 OK`), `headers` (each ending in CRLF, may be
/// empty), then `body` with its `Content-Length`; the connection closes after it.
pub fn http_response(status: &str, headers: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// `text` repeated to exactly `len` bytes.
fn pattern(text: &str, len: usize) -> Vec<u8> {
    text.bytes().cycle().take(len).collect()
}
