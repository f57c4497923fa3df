# SPDX-License-Identifier: MIT
"""The warm session's two halves: the host's client and the guest's server.

`scripts/vm up` boots a VM that stays up (scripts/vm, mode session); its
init runs `session.py serve` (scripts/guest/session), which listens on a
TCP port of the guest that QEMU's user network forwards to a port of the
host's loopback. `scripts/vm exec|status|reload|down` run `session.py
client`, which connects there.

  session.py serve PORT TOKEN_FILE      (guest) serve the session
  session.py client SESSION_DIR OP ...  (host) one request: exec, ping,
                                        reload, poweroff

Each connection carries one request. Frames are a type byte, a 4-byte
length and the payload. The client's first frame (HELLO) is JSON with the
session's token (a random secret only root can read: the port is open to
every user of the host) and the request; then, for an exec, it sends its
standard input (STDIN, EOF), signals (SIGNAL) and terminal size changes
(WINCH), and receives OUT, ERR and finally EXIT. Other requests get one
REPLY (JSON).

A command runs in the VM's environment (PATH, PYTHONPATH, ... as the
init set them) with the variables the caller passed (`-e NAME=VALUE`) on
top, in the caller's working directory as the guest sees it (the repo is
/src). `python3` with a script, -c or -m starts as a fork of the warm
interpreter (scripts/guest/prefork.py: torch and torch_neuron already
imported; a program whose start-up environment differs gets a fresh one).
With a terminal on both ends the command gets a pseudo-terminal of its own
(Ctrl-C is then the terminal's); otherwise pipes, and the client forwards
SIGINT, SIGTERM, SIGHUP and SIGQUIT to the command's process group.
"""
import hmac
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

HELLO, STDIN, EOF, SIGNAL, WINCH = b"H", b"I", b"E", b"S", b"W"
OUT, ERR, EXIT, REPLY = b"O", b"R", b"X", b"Y"
FRAME = struct.Struct("!cI")
MAX_FRAME = 1 << 24
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
PREFORK = "/src/scripts/guest/prefork.py"
PREFORK_SOCK = "/run/neuron-session/prefork.sock"
# What a python3 command line must look like to start as a fork of the
# warm interpreter: what prefork.py's `run` takes.
PYTHON = re.compile(r"^(.*/)?python3?(\.\d+)?$")


def send_frame(sock, kind, data=b"", lock=None):
    if lock is None:
        sock.sendall(FRAME.pack(kind, len(data)) + data)
        return
    with lock:
        sock.sendall(FRAME.pack(kind, len(data)) + data)


def recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


def recv_frame(sock):
    kind, n = FRAME.unpack(recv_exact(sock, FRAME.size))
    if n > MAX_FRAME:
        raise ValueError(f"frame of {n} bytes")
    return kind, recv_exact(sock, n) if n else b""


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# -- the guest's server -------------------------------------------------------

class Server:
    def __init__(self, token):
        self.token = token
        self.lock = threading.Lock()
        self.execs = {}  # pid -> (argv, start time)
        self.prefork = None
        self.prefork_t0 = 0.0
        self.started = time.time()

    # The warm interpreter: prefork.py's server, restarted by a reload.
    def start_prefork(self):
        os.makedirs(os.path.dirname(PREFORK_SOCK), exist_ok=True)
        modules = os.environ.get("NEURON_SESSION_WARM", "").split()
        self.prefork_t0 = time.monotonic()
        self.prefork = subprocess.Popen(
            [sys.executable, PREFORK, "serve", PREFORK_SOCK] + modules,
            stdin=subprocess.DEVNULL, start_new_session=True)

    def stop_prefork(self):
        if self.prefork is None:
            return
        self.prefork.terminate()
        try:
            self.prefork.wait(30)
        except subprocess.TimeoutExpired:
            self.prefork.kill()
            self.prefork.wait()
        self.prefork = None

    def warm_state(self):
        if os.path.exists(PREFORK_SOCK):
            return "ready"
        if os.path.exists(PREFORK_SOCK + ".failed"):
            with open(PREFORK_SOCK + ".failed") as f:
                return "failed: " + f.read()
        if self.prefork is not None and self.prefork.poll() is not None:
            return f"exited with status {self.prefork.returncode}"
        return f"starting ({time.monotonic() - self.prefork_t0:.0f} s)"

    def status(self):
        now = time.time()
        with self.lock:
            execs = [{"pid": pid, "argv": argv, "seconds": round(now - t0, 1)}
                     for pid, (argv, t0) in self.execs.items()]
        return {"warm": self.warm_state(), "execs": execs,
                "uptime_s": round(now - self.started, 1),
                "driver": os.path.exists("/sys/module/neuron")}

    def serve(self, port):
        self.start_prefork()
        listener = socket.create_server(("0.0.0.0", port), backlog=64)
        print(f"session: serving on port {port}", file=sys.stderr, flush=True)
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn):
        try:
            kind, data = recv_frame(conn)
            req = json.loads(data) if kind == HELLO else {}
            if not hmac.compare_digest(str(req.get("token", "")), self.token):
                send_frame(conn, REPLY, json.dumps({"error": "bad token"}).encode())
                return
            op = req.get("op")
            if op == "exec":
                self.run_exec(conn, req)
            elif op == "ping":
                send_frame(conn, REPLY, json.dumps(self.status()).encode())
            elif op == "reload":
                send_frame(conn, REPLY, json.dumps(self.reload(req)).encode())
            elif op == "poweroff":
                self.poweroff(conn)
            else:
                send_frame(conn, REPLY, json.dumps({"error": f"unknown op {op!r}"}).encode())
        except (EOFError, OSError, ValueError):
            pass
        finally:
            # Closing with the client's frames unread would reset the
            # connection, and the client could lose the last ones sent
            # (EXIT): end ours, read until it closes.
            try:
                conn.shutdown(socket.SHUT_WR)
                conn.settimeout(5)
                while conn.recv(65536):
                    pass
            except OSError:
                pass
            conn.close()

    def reload(self, req):
        """Load what changed: the driver (the warm interpreter, which holds
        the card open, is stopped around it) and the user-space libraries
        (a new warm interpreter)."""
        with self.lock:
            if self.execs:
                busy = "; ".join(" ".join(a) for a, _ in self.execs.values())
                return {"error": f"{len(self.execs)} command(s) still running: {busy}"}
            self.stop_prefork()
            done = []
            if req.get("driver"):
                if os.path.exists("/sys/module/neuron"):
                    r = subprocess.run(["rmmod", "neuron"], capture_output=True, text=True)
                    if r.returncode:
                        self.start_prefork()
                        return {"error": "rmmod neuron: " + r.stderr.strip()}
                r = subprocess.run(["insmod", "/src/neuron.ko"], capture_output=True, text=True)
                if r.returncode:
                    self.start_prefork()
                    return {"error": "insmod /src/neuron.ko: " + r.stderr.strip()}
                done.append("driver reloaded")
            self.start_prefork()
            done.append("warm interpreter restarted")
            return {"done": done}

    def poweroff(self, conn):
        with self.lock:
            for pid in self.execs:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.stop_prefork()
        send_frame(conn, REPLY, b"{}")
        conn.close()
        os.sync()
        with open("/proc/sysrq-trigger", "w") as f:
            f.write("o")

    def command(self, argv, tty):
        """@argv as it runs: python3 through the warm interpreter where
        prefork.py can take its command line (not a REPL), and while that
        interpreter runs or starts (once it has failed, a fresh one)."""
        warm = os.path.exists(PREFORK_SOCK) or (
            self.prefork is not None and self.prefork.poll() is None)
        if warm and argv and PYTHON.match(argv[0]) and len(argv) > 1:
            rest = argv[2:] if argv[1] == "-u" else argv[1:]
            if rest and (rest[0] in ("-c", "-m") and len(rest) > 1
                         or not rest[0].startswith("-")):
                return [sys.executable, PREFORK, "run", PREFORK_SOCK, "--"] + argv[1:]
        return argv

    def run_exec(self, conn, req):
        argv, cwd, tty = req["argv"], req.get("cwd") or "/src", bool(req.get("tty"))
        env = dict(os.environ)
        env.pop("NEURON_SESSION_WARM", None)
        env.update(req.get("env") or {})
        if tty:
            env["TERM"] = req.get("term") or "xterm"
        cmd = self.command(argv, tty)
        send_lock = threading.Lock()
        master = None
        try:
            if tty:
                import pty
                master, slave = pty.openpty()
                set_winsize(slave, req.get("winsize"))
                # setsid -c: a session of its own with the terminal as its
                # controlling one, so that ^C and ^Z are the terminal's.
                proc = subprocess.Popen(["setsid", "-c"] + cmd, cwd=cwd, env=env,
                                        stdin=slave, stdout=slave, stderr=slave)
                os.close(slave)
                outs = [(master, OUT)]
            else:
                proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        start_new_session=True)
                outs = [(proc.stdout.fileno(), OUT), (proc.stderr.fileno(), ERR)]
        except OSError as e:
            msg = f"session: cannot run {argv[0]}: {e.strerror or e}\n".encode()
            send_frame(conn, ERR, msg)
            send_frame(conn, EXIT, b"127" if isinstance(e, FileNotFoundError) else b"126")
            return
        with self.lock:
            self.execs[proc.pid] = (argv, time.time())
        try:
            pumps = [threading.Thread(target=pump_out, args=(fd, kind, conn, send_lock),
                                      daemon=True) for fd, kind in outs]
            for t in pumps:
                t.start()
            stdin_fd = master if tty else proc.stdin.fileno()
            threading.Thread(target=self.pump_in, args=(conn, proc, stdin_fd, master),
                             daemon=True).start()
            code = proc.wait()
            for t in pumps:
                t.join(5)
            if code < 0:
                code = 128 - code  # killed by a signal, as a shell says
            send_frame(conn, EXIT, str(code).encode(), send_lock)
        finally:
            with self.lock:
                self.execs.pop(proc.pid, None)
            if master is not None:
                os.close(master)

    def pump_in(self, conn, proc, fd, master):
        """The client's frames: standard input, signals, window sizes. A
        client that goes away takes its command with it (SIGHUP, then
        SIGKILL), as a terminal's hang-up would."""
        try:
            while True:
                kind, data = recv_frame(conn)
                if kind == STDIN:
                    write_all(fd, data)
                elif kind == EOF and master is None:
                    proc.stdin.close()
                elif kind == EOF:
                    write_all(fd, b"\x04")
                elif kind == SIGNAL:
                    try:
                        os.killpg(proc.pid, int(data))
                    except (ProcessLookupError, ValueError):
                        pass
                elif kind == WINCH and master is not None:
                    set_winsize(master, json.loads(data))
        except (EOFError, OSError, ValueError):
            if proc.poll() is None:
                for sig in (signal.SIGHUP, signal.SIGKILL):
                    try:
                        os.killpg(proc.pid, sig)
                    except ProcessLookupError:
                        break
                    try:
                        proc.wait(5)
                        break
                    except subprocess.TimeoutExpired:
                        pass


def pump_out(fd, kind, conn, lock):
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the terminal's last user closed it
            data = b""
        if not data:
            return
        try:
            send_frame(conn, kind, data, lock)
        except OSError:
            return


def set_winsize(fd, size):
    if size:
        import fcntl
        import termios
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))


def serve_main(port, token_file):
    with open(token_file) as f:
        token = f.read().strip()
    Server(token).serve(int(port))


# -- the host's client --------------------------------------------------------

def fail(msg, code=125):
    print(f"[vm] {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


def connect(session, op, **req):
    with open(os.path.join(session, "port")) as f:
        port = int(f.read())
    with open(os.path.join(session, "token")) as f:
        token = f.read().strip()
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.settimeout(None)
    send_frame(sock, HELLO, json.dumps(dict(req, op=op, token=token)).encode())
    return sock


def request(session, op, **req):
    """One request with a JSON reply; the reply, or exit 125 saying why."""
    try:
        sock = connect(session, op, **req)
        kind, data = recv_frame(sock)
    except (OSError, EOFError, ValueError) as e:
        fail(f"{op}: the session does not answer ({e})")
    reply = json.loads(data)
    if "error" in reply:
        fail(f"{op}: {reply['error']}", 1)
    return reply


def exec_main(session, top, args):
    env, argv = {}, list(args)
    while argv and argv[0] in ("-e", "--env"):
        if len(argv) < 2 or "=" not in argv[1]:
            fail("exec: -e takes NAME=VALUE", 2)
        name, _, value = argv[1].partition("=")
        env[name] = value
        argv = argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        fail("exec: no command (scripts/vm exec [-e NAME=VALUE]... -- CMD [ARG]...)", 2)
    # The repo is /src in the guest: the working directory and arguments
    # that are paths inside it are rewritten so.
    cwd = os.getcwd()
    if cwd == top or cwd.startswith(top + "/"):
        gcwd = "/src" + cwd[len(top):]
    else:
        print(f"[vm] exec: {cwd} is outside the repo (the VM sees only the repo, at /src); "
              "running in /src", file=sys.stderr, flush=True)
        gcwd = "/src"
    argv = ["/src" + a[len(top):] if a == top or a.startswith(top + "/") else a for a in argv]
    tty = os.isatty(0) and os.isatty(1)
    extra = {}
    if tty:
        size = os.get_terminal_size(1)
        extra = {"winsize": [size.lines, size.columns], "term": os.environ.get("TERM")}
    try:
        sock = connect(session, "exec", argv=argv, cwd=gcwd, env=env, tty=tty, **extra)
    except OSError as e:
        fail(f"exec: the session does not answer ({e})")
    lock = threading.Lock()
    saved = None
    if tty:
        import termios
        import tty as ttymod
        saved = termios.tcgetattr(0)
        ttymod.setraw(0)

        def winch(*_):
            s = os.get_terminal_size(1)
            try:
                send_frame(sock, WINCH, json.dumps([s.lines, s.columns]).encode(), lock)
            except OSError:
                pass
        signal.signal(signal.SIGWINCH, winch)
    else:
        def forward(sig, _frame):
            try:
                send_frame(sock, SIGNAL, str(int(sig)).encode(), lock)
            except OSError:
                pass
        for sig in FORWARDED:
            signal.signal(sig, forward)

    def pump_stdin():
        while True:
            try:
                data = os.read(0, 65536)
            except OSError:
                data = b""
            try:
                send_frame(sock, STDIN if data else EOF, data, lock)
            except OSError:
                return
            if not data:
                return
    threading.Thread(target=pump_stdin, daemon=True).start()
    code = None
    try:
        while True:
            kind, data = recv_frame(sock)
            if kind == OUT:
                write_all(1, data)
            elif kind == ERR:
                write_all(2, data)
            elif kind == EXIT:
                code = int(data)
                break
            elif kind == REPLY:  # refused
                print(f"[vm] exec: {json.loads(data).get('error')}", file=sys.stderr)
                code = 125
                break
    except (EOFError, OSError, ValueError):
        pass
    finally:
        if saved is not None:
            import termios
            termios.tcsetattr(0, termios.TCSADRAIN, saved)
    if code is None:
        fail("exec: the session's VM went away while the command ran "
             f"(its console: {os.path.join(session, 'console.log')})")
    os._exit(code)  # the stdin reader may still be blocked in read()


def client_main(argv):
    session, top, op, rest = argv[0], argv[1], argv[2], argv[3:]
    if op == "exec":
        exec_main(session, top, rest)
    elif op == "ping":
        print(json.dumps(request(session, "ping")))
    elif op == "reload":
        what = set(rest)
        print(json.dumps(request(session, "reload", driver="driver" in what)))
    elif op == "poweroff":
        request(session, "poweroff")
    else:
        fail(f"unknown request {op}", 2)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "serve":
        serve_main(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 5 and sys.argv[1] == "client":
        client_main(sys.argv[2:])
    else:
        sys.exit(__doc__)
