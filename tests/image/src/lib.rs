//! Boots the firmware's QEMU test image (`just test-image`, tests/image/build.sh) and talks to
//! it the way an operator and a LAN client would: the serial console, a LAN link the test
//! controls, and the web UI through a port on the test host.
//!
//! The guest runs under QEMU with software emulation (TCG), UEFI firmware (OVMF) and the
//! image's own GRUB slot selection, with two virtio NICs in this order (docs/image.md):
//! - `eth0`, the WAN: QEMU user networking (DHCP from QEMU at 10.0.2.2, host port
//!   [`Guest::wan_https`] forwarded to the guest's port 443);
//! - `eth1`, the LAN: a tap device the test moves into a network namespace of its own
//!   ([`Guest::lan`]) with address [`LAN_CLIENT`].
//!
//! Root only (tap devices, network namespaces).

use std::fs;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The router's LAN address in the factory config (board/common/rootfs-overlay).
pub const LAN_ROUTER: Ipv4Addr = Ipv4Addr::new(192, 168, 1, 1);
/// The test's own address on the LAN, outside the factory DHCP pool (.100-.250).
pub const LAN_CLIENT: &str = "192.168.1.2/24";

/// The disk image `just test-image` builds, or `$ROUTERD_TEST_IMAGE`.
pub fn image_path() -> PathBuf {
    match std::env::var_os("ROUTERD_TEST_IMAGE") {
        Some(p) => PathBuf::from(p),
        None => image_dir().join("disk.img"),
    }
}

/// Where `just test-image` writes: `target/image` (disk.img, rootfs.ext4, update.raucb).
pub fn image_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/image")
}

/// Copies `file` to `dir`, padded with zeros to whole 512-byte sectors so that QEMU can attach
/// it as a disk; returns the copy's path and the original length in bytes (what the guest
/// reads back with `head -c`).
pub fn as_disk(file: &Path, dir: &Path) -> (PathBuf, u64) {
    let bytes = fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let len = bytes.len() as u64;
    let mut padded = bytes;
    padded.resize(padded.len().div_ceil(512) * 512, 0);
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let disk = dir.join(format!("{name}.disk"));
    fs::create_dir_all(dir).expect("disk directory");
    fs::write(&disk, padded).unwrap_or_else(|e| panic!("{}: {e}", disk.display()));
    (disk, len)
}

/// The LAN side's network namespace: the test kit's, deleted on drop (also when a test fails).
pub use routerd_test_kit::netns::Netns;

/// Runs `cmd`, which must succeed; its stdout.
fn must(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A booted (or booting) guest. Dropping it stops QEMU; the console log stays in the
/// directory given to [`Guest::boot`].
pub struct Guest {
    qemu: Child,
    /// QEMU's arguments, to start it again after a guest reboot.
    args: Vec<String>,
    /// The LAN tap's name (QEMU makes it anew at each start).
    tap: String,
    dir: PathBuf,
    /// Everything the guest wrote to its serial console (also copied to `dir/console.log`).
    console_out: Arc<Mutex<Vec<u8>>>,
    console_in: ChildStdin,
    /// The LAN side: the guest's `eth1` is cabled to the tap in this namespace.
    pub lan: Netns,
    /// Host port forwarded by QEMU to the guest's WAN address, port 443.
    pub wan_https: u16,
    next_command: u32,
}

impl Guest {
    /// Starts QEMU on a copy-on-write overlay of `image` (`DIR/overlay.qcow2`: the image file is
    /// never written, and the guest's writes survive its reboots), with its console log
    /// (`console.log`) and QEMU's stderr in `dir`. Returns once QEMU is running and the LAN
    /// tap is in [`Guest::lan`]; the guest is still booting.
    pub fn boot(image: &Path, dir: &Path) -> Self {
        Self::boot_with_disks(image, dir, &[])
    }

    /// [`Guest::boot`] with more read-only virtio disks after the image's (`/dev/vdb`, …), to
    /// hand the guest files (the test image has no network client to fetch them).
    pub fn boot_with_disks(image: &Path, dir: &Path, disks: &[PathBuf]) -> Self {
        assert!(
            image.exists(),
            "{}: no test image; build it with `just test-image` (root)",
            image.display()
        );
        fs::create_dir_all(dir).expect("console directory");
        let image = fs::canonicalize(image).expect("image path");
        let overlay = dir.join("overlay.qcow2");
        for old in [&overlay, &dir.join("console.log"), &dir.join("qemu.stderr")] {
            let _ = fs::remove_file(old);
        }
        must(
            Command::new("qemu-img")
                .args(["create", "-q", "-f", "qcow2", "-F", "raw", "-b"])
                .arg(&image)
                .arg(&overlay),
        );
        let wan_https = free_port();
        let tap = format!("rdimg{}", std::process::id() % 1_000_000);
        let mut args: Vec<String> = [
            "-machine",
            "q35",
            "-cpu",
            "max",
            "-smp",
            "2",
            "-m",
            "1024",
            "-nodefaults",
            "-display",
            "none",
            "-bios",
            "/usr/share/ovmf/OVMF.fd",
            // A guest reboot ends QEMU and Guest::reboot starts it again on the same disks:
            // a warm reset of OVMF under TCG with several virtio disks sometimes never comes
            // back, and a cold start is what a power cycle does anyway.
            "-no-reboot",
            // A hardware watchdog for systemd's RuntimeWatchdogSec= (the overlay sets it).
            "-device",
            "i6300esb",
            // The serial console on QEMU's stdin/stdout; signal=off: a typed ^C goes to the
            // guest, not to QEMU.
            "-chardev",
            "stdio,id=console,signal=off",
            "-serial",
            "chardev:console",
            "-monitor",
            "none",
        ]
        .map(String::from)
        .to_vec();
        args.push("-drive".into());
        args.push(format!("file={},format=qcow2,if=virtio", overlay.display()));
        for d in disks {
            args.push("-drive".into());
            args.push(format!("file={},format=raw,if=virtio,readonly=on", d.display()));
        }
        // PCI order names the NICs: 0x3 is eth0 (WAN), 0x4 is eth1 (LAN). No option ROMs:
        // the firmware boots the disk, not the network.
        args.extend([
            "-netdev".to_string(),
            format!("user,id=wan,hostfwd=tcp:127.0.0.1:{wan_https}-:443"),
            "-device".into(),
            "virtio-net-pci,netdev=wan,addr=0x3,mac=52:54:00:00:00:01,romfile=".into(),
            "-netdev".into(),
            format!("tap,id=lan,ifname={tap},script=no,downscript=no"),
            "-device".into(),
            "virtio-net-pci,netdev=lan,addr=0x4,mac=52:54:00:00:00:02,romfile=".into(),
        ]);
        let lan = Netns::new("rdimg");
        let console_out = Arc::new(Mutex::new(Vec::new()));
        let (qemu, console_in) = start_qemu(&args, dir, &console_out);
        let mut guest = Self {
            qemu,
            args,
            tap,
            dir: dir.to_path_buf(),
            console_out,
            console_in,
            lan,
            wan_https,
            next_command: 0,
        };
        guest.cable_lan();
        guest
    }

    /// The name of the test's end of the LAN cable (a tap in [`Guest::lan`]).
    pub fn lan_ifname(&self) -> &str {
        &self.tap
    }

    /// Moves the tap QEMU made into [`Guest::lan`] and gives it [`LAN_CLIENT`]: QEMU makes
    /// it in this namespace, the test's end of the LAN cable lives in its own. The tap keeps
    /// working after the move (QEMU holds its file descriptor).
    fn cable_lan(&mut self) {
        let tap = self.tap.clone();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !Command::new("ip")
            .args(["link", "show", &tap])
            .output()
            .is_ok_and(|o| o.status.success())
        {
            self.check_running();
            assert!(Instant::now() < deadline, "QEMU made no tap {tap} in 30 s");
            thread::sleep(Duration::from_millis(50));
        }
        must(Command::new("ip").args(["link", "set", &tap, "netns", self.lan.name()]));
        self.lan.ip(&["addr", "add", LAN_CLIENT, "dev", &tap]);
        self.lan.ip(&["link", "set", &tap, "up"]);
    }

    /// Reboots the guest from its console and waits for the console login after it. With
    /// `-no-reboot` the reset ends QEMU; it is started again on the same disks (the overlay
    /// keeps what the guest wrote), like a power cycle. The console log goes on.
    pub fn reboot(&mut self, limit: Duration) {
        let mark = self.console_mark();
        self.type_line("reboot");
        self.restart_after_reset(limit);
        self.login_from(mark, limit);
    }

    /// Waits until the guest resets by itself (the health gate's reboot) and starts QEMU
    /// again, like [`Guest::reboot`], without typing anything or waiting for the login.
    pub fn await_reset(&mut self, limit: Duration) {
        self.restart_after_reset(limit);
    }

    /// Waits (deadline) for QEMU to end after a guest reset and starts it again on the same
    /// disks.
    fn restart_after_reset(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            match self.qemu.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) => {}
                Err(e) => panic!("QEMU: {e}"),
            }
            assert!(
                Instant::now() < deadline,
                "the guest did not reset within {limit:?}; console:\n{}",
                self.console_tail()
            );
            thread::sleep(Duration::from_millis(200));
        }
        let (qemu, console_in) = start_qemu(&self.args, &self.dir, &self.console_out);
        self.qemu = qemu;
        self.console_in = console_in;
        self.cable_lan();
    }

    /// Panics with QEMU's exit status and stderr when QEMU is no longer running.
    fn check_running(&mut self) {
        if let Ok(Some(status)) = self.qemu.try_wait() {
            let stderr = fs::read_to_string(self.dir.join("qemu.stderr")).unwrap_or_default();
            panic!("QEMU exited ({status}): {stderr}\nconsole: {}", self.console_tail());
        }
    }

    /// Everything the guest wrote to its serial console so far, with `\r` removed.
    pub fn console_text(&self) -> String {
        let bytes = self.console_out.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).replace('\r', "")
    }

    /// The last 3,000 bytes of the console, for failure messages.
    pub fn console_tail(&self) -> String {
        let text = self.console_text();
        let cut = text.len().saturating_sub(3000);
        let cut = (cut..text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
        text[cut..].to_string()
    }

    /// How many bytes the console has shown so far: a position for [`Guest::wait_for_from`].
    pub fn console_mark(&self) -> usize {
        self.console_out.lock().map(|b| b.len()).unwrap_or(0)
    }

    /// Waits until the console shows `needle`; panics with the console's tail at `limit`.
    pub fn wait_for(&mut self, needle: &str, limit: Duration) {
        self.wait_for_from(needle, 0, limit);
    }

    /// Waits until the console shows `needle` after byte `from` ([`Guest::console_mark`]).
    pub fn wait_for_from(&mut self, needle: &str, from: usize, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let bytes = self.console_out.lock().map(|b| b.clone()).unwrap_or_default();
            let seen =
                String::from_utf8_lossy(bytes.get(from..).unwrap_or_default()).contains(needle);
            if seen {
                return;
            }
            self.check_running();
            assert!(
                Instant::now() < deadline,
                "{needle:?} not on the console within {limit:?}; console:\n{}",
                self.console_tail()
            );
            thread::sleep(Duration::from_millis(200));
        }
    }

    /// Types `line` and a newline on the serial console.
    pub fn type_line(&mut self, line: &str) {
        self.console_in.write_all(line.as_bytes()).expect("console write");
        self.console_in.write_all(b"\n").expect("console write");
        self.console_in.flush().expect("console write");
    }

    /// Waits for the automatic root login on the serial console, then replaces the login
    /// shell with a plain `sh` without echo or prompt, and kernel messages off the console,
    /// so [`Guest::run`] can cut each command's output out of the log.
    pub fn login(&mut self, limit: Duration) {
        self.login_from(0, limit);
    }

    /// [`Guest::login`] for the login that follows console byte `from` (after a reboot).
    pub fn login_from(&mut self, from: usize, limit: Duration) {
        self.wait_for_from("login: root (automatic login)", from, limit);
        self.type_line("dmesg -n 1; stty -echo; exec env PS1= PS2= /bin/sh");
        let (rc, out) = self.run("echo ready", Duration::from_secs(30));
        assert_eq!((rc, out.trim()), (0, "ready"), "console shell");
    }

    /// Runs `script` (shell text, may span lines) in the console shell and returns its exit
    /// status and output (stdout and stderr, `\r` removed). Panics at `limit`.
    pub fn run(&mut self, script: &str, limit: Duration) -> (i32, String) {
        self.next_command += 1;
        let n = self.next_command;
        // The markers are printed by printf from pieces, so the typed text (echoed when echo
        // is still on) never contains them.
        let begin = format!("@@B-{n}\n");
        let end = format!("@@E-{n} ");
        self.type_line(&format!(
            "printf '@@%s-{n}\\n' B\n{{\n{script}\n}} 2>&1\nprintf '@@%s-{n} %s\\n' E $?"
        ));
        let deadline = Instant::now() + limit;
        loop {
            let text = self.console_text();
            if let Some(b) = text.rfind(&begin) {
                let rest = &text[b + begin.len()..];
                if let Some(e) = rest.find(&end) {
                    let status = rest[e + end.len()..].lines().next().unwrap_or("");
                    if let Ok(rc) = status.trim().parse::<i32>() {
                        return (rc, rest[..e].to_string());
                    }
                }
            }
            self.check_running();
            assert!(
                Instant::now() < deadline,
                "{script:?} did not finish within {limit:?}; console:\n{}",
                self.console_tail()
            );
            thread::sleep(Duration::from_millis(200));
        }
    }

    /// [`Guest::run`] for a command that must succeed; its output.
    pub fn must_run(&mut self, script: &str, limit: Duration) -> String {
        let (rc, out) = self.run(script, limit);
        assert_eq!(rc, 0, "{script:?} exited {rc}:\n{out}");
        out
    }

    /// Writes `text` to `path` in the guest (through a here-document on the console).
    pub fn write_file(&mut self, path: &str, text: &str) {
        assert!(!text.contains("\n@@EOF@@"), "text contains the here-document marker");
        self.must_run(
            &format!("cat >{path} <<'@@EOF@@'\n{text}\n@@EOF@@"),
            Duration::from_secs(60),
        );
    }

    /// A port on 127.0.0.1 whose connections are carried to `target` on the LAN (the
    /// connecting socket is made inside [`Guest::lan`]): the web UI as a LAN client sees it,
    /// reachable from the test host.
    pub fn forward_from_lan(&self, target: SocketAddr) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind forward port");
        let port = listener.local_addr().expect("local addr").port();
        let netns = Arc::new(format!("/run/netns/{}", self.lan.name()));
        thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let netns = Arc::clone(&netns);
                thread::spawn(move || {
                    if let Ok(upstream) = connect_in_netns(&netns, target) {
                        splice(client, upstream);
                    }
                });
            }
        });
        port
    }
}

impl Drop for Guest {
    /// Stops QEMU and removes the disk overlay (hundreds of MiB after an update); the
    /// console log and QEMU's stderr stay.
    fn drop(&mut self) {
        let _ = self.qemu.kill();
        let _ = self.qemu.wait();
        let _ = fs::remove_file(self.dir.join("overlay.qcow2"));
    }
}

/// A TCP connection to `target` from the network namespace at `netns` (this thread enters
/// it: `setns(2)` changes only the calling thread's namespace).
fn connect_in_netns(netns: &str, target: SocketAddr) -> io::Result<TcpStream> {
    let ns = fs::File::open(netns)?;
    nix::sched::setns(&ns, nix::sched::CloneFlags::CLONE_NEWNET).map_err(io::Error::from)?;
    TcpStream::connect_timeout(&target, Duration::from_secs(10))
}

/// Copies both ways between `a` and `b` until either side closes.
fn splice(a: TcpStream, b: TcpStream) {
    let (Ok(a2), Ok(b2)) = (a.try_clone(), b.try_clone()) else { return };
    let up = thread::spawn(move || copy_then_shutdown(a, b2));
    copy_then_shutdown(b, a2);
    let _ = up.join();
}

fn copy_then_shutdown(mut from: TcpStream, mut to: TcpStream) {
    let _ = io::copy(&mut from, &mut to);
    let _ = to.shutdown(std::net::Shutdown::Write);
}

/// Spawns QEMU with `args`, appending its serial console to `console` and `dir/console.log`
/// as it comes (QEMU stalls the guest's UART when nobody reads); QEMU's stderr goes to
/// `dir/qemu.stderr`. Returns the process and the console's input.
fn start_qemu(args: &[String], dir: &Path, console: &Arc<Mutex<Vec<u8>>>) -> (Child, ChildStdin) {
    let stderr = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("qemu.stderr"))
        .expect("qemu.stderr");
    let mut qemu = Command::new("qemu-system-x86_64")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("qemu-system-x86_64 (apt-get install qemu-system-x86 ovmf)");
    let console_in = qemu.stdin.take().expect("piped stdin");
    let mut stdout = qemu.stdout.take().expect("piped stdout");
    let sink = Arc::clone(console);
    let mut log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("console.log"))
        .expect("console.log");
    thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            let _ = log.write_all(&buf[..n]);
            if let Ok(mut out) = sink.lock() {
                out.extend_from_slice(&buf[..n]);
            }
        }
    });
    (qemu, console_in)
}

/// A TCP port on 127.0.0.1 that nothing listens on now.
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("local addr").port()
}

/// Sends `GET path` over TLS to 127.0.0.1:`port`, trusting exactly the certificate
/// `cert_pem` (the one the guest made on first boot) for the name `localhost`, and returns
/// the whole response (status line, headers, body).
///
/// Errors: the connection, the handshake (certificate not the trusted one) or the read
/// failing, or no answer within `limit`.
pub fn https_get(port: u16, cert_pem: &str, path: &str, limit: Duration) -> io::Result<String> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(cert_pem.as_bytes()) {
        let cert = cert.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        roots.add(cert).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| io::Error::other(e.to_string()))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").map_err(io::Error::other)?;
    let conn = rustls::ClientConnection::new(Arc::new(config), name).map_err(io::Error::other)?;
    let tcp = TcpStream::connect(("127.0.0.1", port))?;
    tcp.set_read_timeout(Some(limit))?;
    tcp.set_write_timeout(Some(limit))?;
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    write!(tls, "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    let mut response = Vec::new();
    match tls.read_to_end(&mut response) {
        Ok(_) => {}
        // The server may close without close_notify after a complete response.
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && !response.is_empty() => {}
        Err(e) => return Err(e),
    }
    Ok(String::from_utf8_lossy(&response).into_owned())
}
