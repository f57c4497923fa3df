# SPDX-License-Identifier: MIT
"""Start Python programs that use torch without paying for `import torch`.

Under TCG one `import torch` (with torch_neuron, pytest, torch._dynamo and
torchvision) costs 30-70 s of the guest's emulated CPU, in every process. The
server imports them once, then runs each program it is asked for in a child
it forks: the child starts with those modules loaded, as the children of a
zygote do. make check runs its sweep and both pytest lanes so
(scripts/guest/check).

  prefork.py serve SOCKET [MODULE...]  import MODULEs (default: WARM), then
                                       serve; SOCKET appears once ready
  prefork.py run SOCKET -- [-u] (-c CODE | -m MODULE | SCRIPT) [ARG...]
                                       run the program in a child of the
                                       server, with this process's open
                                       files (stdin, stdout, stderr, any
                                       other it inherited), cwd and
                                       environment; exit with its status

A program whose environment differs from the server's in what is read only
at start-up (LD_*, thread counts, PYTHON* other than PYTHONPATH, the
variables torch and torch_neuron read on import) would not see it: `run`
says so and starts a fresh interpreter instead. PYTHONPATH is honoured
(sys.path is rebuilt from it), modules already imported excepted.
`run` waits for the server's socket up to PREFORK_WAIT seconds (600), and
starts a fresh interpreter if it does not come or the server failed; if the
client dies, the server kills the child's process group. SIGINT, SIGTERM,
SIGHUP and SIGQUIT sent to `run` go to the child's process group (an
uncaught ^C ends the child as it ends an interpreter: status 130).
"""
import builtins
import fcntl
import importlib.util
import json
import os
import re
import selectors
import signal
import socket
import struct
import sys
import threading
import time
import traceback
import types
import warnings

# What the torch_neuron tests import anyway. Not PyTorch's test modules
# (torch.testing._internal): importing common_utils seeds the generator,
# forbids setting torch.backends flags and wraps TorchScript's calls, which
# would change the process the tests run in.
WARM = ["torch", "torch_neuron", "pytest", "torch._dynamo", "torchvision"]

# Read once, when the interpreter or torch starts: a child would not see them.
STARTUP_ENV = re.compile(r"^(LD_\w+|OMP_\w+|GOMP_\w+|KMP_\w+|OPENBLAS_\w+|MKL_\w+"
                         r"|PYTHON(?!PATH$)\w+|TORCH_DEVICE_BACKEND_AUTOLOAD"
                         r"|TORCH_NEURON_DISABLE_KERNELS|TORCH_NEURON_CUDA)$")
HEADER = struct.Struct("!I")
MAX_FDS = 64
REFUSED = -1000  # instead of an exit status: start fresh, the reason follows


def startup_env(env):
    return {k: v for k, v in env.items() if STARTUP_ENV.match(k)}


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


# -- the server --------------------------------------------------------------

def run_main(code, spec=None, file=None):
    """Run @code as __main__, as the interpreter does. Not with runpy: its
    frames are "<frozen runpy>", a file no module has, and for each such
    frame inspect.getmodule() scans all of sys.modules (see child_main)."""
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=builtins, __spec__=spec, __loader__=spec and spec.loader,
                         __package__=spec and spec.parent, __cached__=None)
    if spec is not None or file is not None:
        main.__file__ = spec.origin if spec is not None else file
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


def child_main(req, fds, server_fds):
    """In the forked child: become the program of @req, never return."""
    code = 1
    try:
        os.setpgid(0, 0)
        signal.set_wakeup_fd(-1)
        warnings.filters[:] = CHILD_WARNINGS
        for fd in server_fds:
            os.close(fd)
        # The client's open files, at the numbers they had there (0, 1, 2
        # and any it inherited, as subprocess's pass_fds gives them): moved
        # out of the way first, then into place.
        above = max(req["fds"]) + 1
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, above) for fd in fds]
        for fd in fds:
            os.close(fd)
        for num, fd in zip(req["fds"], high):
            os.dup2(fd, num)
            os.close(fd)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        # The program replaces __main__; keep this file a module still, or
        # every inspect.getmodule() of a frame of it scans all of
        # sys.modules: PyTorch's sample inputs call inspect.stack() each
        # time, and the sweep ran ten times slower.
        sys.modules["_prefork_server"] = sys.modules["__main__"]
        argv = list(req["argv"])
        if argv and argv[0] == "-u":
            argv.pop(0)
            for f in (sys.stdout, sys.stderr):
                f.reconfigure(write_through=True)
        # sys.path as the interpreter would have built it: the program's
        # directory (the cwd for -m), PYTHONPATH, then the rest.
        ours = [p for p in os.environ.get("PYTHONPATH", "").split(":") if p]
        rest = [p for p in sys.path[1:] if p not in SERVER_PYTHONPATH]
        if argv[:1] == ["-c"]:
            sys.argv = ["-c"] + argv[2:]
            sys.path[:] = [""] + ours + rest
            run_main(compile(argv[1], "<string>", "exec"))
        elif argv[:1] == ["-m"]:
            sys.argv = [argv[1]] + argv[2:]
            sys.path[:] = [req["cwd"]] + ours + rest
            spec = importlib.util.find_spec(argv[1])
            if spec.submodule_search_locations is not None:  # a package
                spec = importlib.util.find_spec(argv[1] + ".__main__")
            sys.argv[0] = spec.origin
            run_main(spec.loader.get_code(spec.name), spec)
        else:
            sys.argv = argv
            path = os.path.abspath(argv[0])
            sys.path[:] = [os.path.dirname(path)] + ours + rest
            with open(path, "rb") as f:
                run_main(compile(f.read(), argv[0], "exec"), file=argv[0])
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, int) and e.code is not None:
            print(e.code, file=sys.stderr)
    except KeyboardInterrupt:
        # As the interpreter ends on an uncaught ^C: the traceback, then
        # killed by SIGINT (status 130 to a shell), once atexit ran.
        traceback.print_exc()
        code = -signal.SIGINT
    except BaseException:  # noqa: BLE001 -- as the interpreter reports it
        traceback.print_exc()
    finally:
        try:
            import atexit
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            if code == -signal.SIGINT:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGINT)
            os._exit(code & 0xff)


def serve(path, modules):
    """Import @modules and serve on @path; if that cannot be, say why in
    @path.failed (clients waiting for @path then start fresh at once)."""
    for stale in (path, path + ".failed"):
        if os.path.exists(stale):
            os.unlink(stale)
    try:
        return serve_on(path, modules)
    except BaseException as e:
        if not os.path.exists(path):
            with open(path + ".failed", "w") as f:
                f.write(f"the server failed: {type(e).__name__}: {e}")
        raise


def serve_on(path, modules):
    global SERVER_PYTHONPATH
    SERVER_PYTHONPATH = {p for p in os.environ.get("PYTHONPATH", "").split(":") if p}
    t0 = time.monotonic()
    loaded = []
    for m in modules:
        try:
            __import__(m)
            loaded.append(m)
        except ImportError as e:  # e.g. no torchvision: its tests skip
            print(f"prefork: not preloaded: {e}", file=sys.stderr, flush=True)
    # A fork copies the locks other threads hold. No Python thread may run;
    # native ones may: OpenBLAS starts its workers when it is loaded (one
    # per further CPU) and stops them around a fork (pthread_atfork), as
    # every `import torch` that forks (DataLoader workers) relies on.
    if threading.active_count() != 1:
        sys.exit(f"prefork: {threading.active_count()} Python threads after the "
                 "imports; cannot fork safely")
    global CHILD_WARNINGS
    CHILD_WARNINGS = list(warnings.filters)
    warnings.filterwarnings("ignore", r"This process .* is multi-threaded",
                            DeprecationWarning)
    print(f"prefork: {', '.join(loaded)} imported in {time.monotonic() - t0:.1f} s; "
          f"serving on {path}", file=sys.stderr, flush=True)
    ours = startup_env(os.environ)
    tmp = f"{path}.{os.getpid()}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(tmp)
    listener.listen(16)
    os.rename(tmp, path)  # the socket appears once it serves

    children = {}  # pid -> client connection
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel.register(wake_r, selectors.EVENT_READ)

    def reap():
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = children.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            try:
                conn.sendall(struct.pack("!i", code))
            except OSError:
                pass
            sel.unregister(conn)
            conn.close()

    def accept():
        conn, _ = listener.accept()
        try:
            (n,) = HEADER.unpack(recv_exact(conn, HEADER.size))
            msg, fds, _, _ = socket.recv_fds(conn, n, MAX_FDS)
            msg += recv_exact(conn, n - len(msg))
            req = json.loads(msg)
        except (EOFError, OSError, ValueError):
            conn.close()
            return
        theirs = startup_env(req["env"])
        if len(fds) != len(req["fds"]) or theirs != ours:
            diff = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
            why = "its files did not arrive" if diff == [] else \
                "start-up environment differs: " + ", ".join(diff)
            for fd in fds:
                os.close(fd)
            conn.sendall(struct.pack("!i", REFUSED) + why.encode())
            conn.close()
            return
        pid = os.fork()
        if pid == 0:
            child_main(req, fds, [listener.fileno(), sel.fileno(), wake_r, wake_w,
                                  conn.fileno()] + [c.fileno() for c in children.values()])
        try:
            os.setpgid(pid, pid)  # before a kill of its group can come
        except OSError:
            pass  # it has already done so, or exited
        for fd in fds:
            os.close(fd)
        try:  # the client forwards its signals to the child's group
            conn.sendall(struct.pack("!i", pid))
        except OSError:
            pass
        children[pid] = conn
        sel.register(conn, selectors.EVENT_READ)

    try:
        while not stop:
            for key, _ in sel.select(timeout=1.0):
                if key.fileobj is listener:
                    accept()
                elif key.fileobj == wake_r:
                    os.read(wake_r, 512)
                else:  # a client hung up before its child ended (it sends
                    # nothing after its request: readable means closed)
                    pid = next((p for p, c in children.items() if c is key.fileobj), None)
                    if pid is not None:
                        try:
                            os.killpg(pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
            reap()
    finally:
        os.unlink(path)
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


SERVER_PYTHONPATH = set()
CHILD_WARNINGS = []


# -- the client --------------------------------------------------------------

def fresh(argv, why):
    print(f"prefork: {why}; starting a new interpreter", file=sys.stderr, flush=True)
    os.execv(sys.executable, [sys.executable] + argv)


def run(path, argv):
    deadline = time.monotonic() + float(os.environ.get("PREFORK_WAIT", "600"))
    while not os.path.exists(path):
        if os.path.exists(path + ".failed"):
            with open(path + ".failed") as f:
                fresh(argv, f.read())
        if time.monotonic() > deadline:
            fresh(argv, f"no server at {path}")
        time.sleep(0.2)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as e:
        fresh(argv, f"server at {path}: {e.strerror}")
    fds = sorted(int(f) for f in os.listdir("/proc/self/fd")
                 if int(f) != sock.fileno() and os.path.exists(f"/proc/self/fd/{f}"))
    if len(fds) > MAX_FDS:
        fresh(argv, f"{len(fds)} open files, more than {MAX_FDS}")
    msg = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ),
                      "fds": fds}).encode()
    sock.sendall(HEADER.pack(len(msg)))
    socket.send_fds(sock, [msg], fds)
    try:
        (pid,) = struct.unpack("!i", recv_exact(sock, 4))
        if pid == REFUSED:
            fresh(argv, sock.recv(4096).decode())
        # The program runs in a process group of its own, in the server's
        # session: what would interrupt or end this process goes to it.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, lambda s, _f: forward(pid, s))
        (code,) = struct.unpack("!i", recv_exact(sock, 4))
    except EOFError:
        sys.exit("prefork: the server went away")
    sys.exit(128 - code if code < 0 else code)


def forward(pid, sig):
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def main(argv):
    if len(argv) >= 2 and argv[0] == "serve":
        return serve(argv[1], argv[2:] or WARM)
    if len(argv) >= 4 and argv[0] == "run" and argv[2] == "--":
        return run(argv[1], argv[3:])
    sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
