# The sandbox prelude (see python.ts): runs inside the sandboxed interpreter before the user's
# code. It sets the kernel resource limits, reads the script, then installs an audit hook that
# refuses file access outside the work folder, network access and process creation, and runs the
# script as a fresh __main__ module. The audit hook is a second layer that turns common mistakes
# into clear errors, not a boundary: its state lives in a closure, out of the script's plain
# reach, but code that sets out to (through gc, for one) can still switch it off. bubblewrap's
# namespaces and binds and the kernel limits, set up by python.ts, are what hold.
import json
import os
import resource
import signal
import sys

config = json.loads(sys.argv[1])
work = os.path.realpath(config["work"])


def limit(kind, value, hard=None):
    resource.setrlimit(kind, (value, value if hard is None else hard))


def _out_of_cpu(signum, frame):
    # exit with the status a shell gives for death by SIGXCPU: the runner's reason is then 'cpu'
    # (bwrap reports a signal death as a plain status; past the hard limit the kernel sends SIGKILL)
    sys.stderr.write("sandbox: CPU time limit exceeded\n")
    sys.stderr.flush()
    os._exit(128 + signal.SIGXCPU)


signal.signal(signal.SIGXCPU, _out_of_cpu)
limit(resource.RLIMIT_CORE, 0)
limit(resource.RLIMIT_CPU, config["cpu_seconds"], config["cpu_seconds"] + 1)  # SIGXCPU, then SIGKILL
limit(resource.RLIMIT_AS, config["memory_bytes"])
limit(resource.RLIMIT_FSIZE, config["file_bytes"])
limit(resource.RLIMIT_NOFILE, 256)
if config["limit_processes"]:
    limit(resource.RLIMIT_NPROC, config["max_processes"])

with open(config["script"], encoding="utf-8", errors="replace") as script_file:
    source = script_file.read()

# subprocess.Popen is audited, but _posixsubprocess.fork_exec (used directly by multiprocessing)
# is not: take it away, and refuse loading a fresh copy of the module below.
import _posixsubprocess  # noqa: E402


def _no_fork_exec(*args, **kwargs):
    raise PermissionError("sandbox: creating processes is not allowed")


_posixsubprocess.fork_exec = _no_fork_exec

READ_ROOTS = tuple(
    sorted(
        {work}
        | {os.path.realpath(p) for p in sys.path if p and os.path.isabs(p)}
        | {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix) if p}
        | {"/usr/share/zoneinfo"}
    )
)
READ_FILES = frozenset({"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"})
WRITE_FILES = frozenset({"/dev/null"})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
PROCESS_EVENTS = frozenset(
    {"os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system", "subprocess.Popen", "pty.spawn", "os.killpg"}
)
NETWORK_EVENTS = frozenset({"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"})
REFUSED_IMPORTS = frozenset({"ctypes", "_ctypes", "_posixsubprocess", "cffi", "_cffi_backend"})
# events whose arguments are paths that get changed (the first one or two arguments)
WRITE_EVENTS = {
    "os.remove": 1, "os.rmdir": 1, "os.mkdir": 1, "os.chmod": 1, "os.chown": 1, "os.truncate": 1,
    "os.utime": 1, "os.rename": 2, "os.replace": 2, "os.chflags": 1, "os.setxattr": 1,
    "os.removexattr": 1, "shutil.rmtree": 1, "shutil.chown": 1, "os.mkfifo": 1, "os.mknod": 1,
}
READ_EVENTS = {"os.listdir": 1, "os.scandir": 1, "os.chdir": 1, "os.getxattr": 1, "os.listxattr": 1}

def _resolve(path):
    if path is None:
        path = "."
    path = os.fsdecode(os.fspath(path))
    return os.path.realpath(path)


def _under(path, roots):
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _check(path, write):
    if isinstance(path, int):
        return  # an already open descriptor
    real = _resolve(path)
    if write:
        if real in WRITE_FILES or _under(real, (work,)):
            return
        raise PermissionError(f"sandbox: writing {os.fsdecode(os.fspath(path))!r} is not allowed (only the working folder)")
    if real in READ_FILES or _under(real, READ_ROOTS):
        return
    raise PermissionError(f"sandbox: reading {os.fsdecode(os.fspath(path))!r} is not allowed (only the working folder)")


def _is_write(mode, flags):
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and flags & WRITE_FLAGS != 0


def _install_hook():
    inside = [False]  # set while the hook itself runs (its own file checks are audited too)

    def _audit(event, args):
        if inside[0]:
            return
        inside[0] = True
        try:
            if event == "open":
                _check(args[0], _is_write(args[1] if len(args) > 1 else None, args[2] if len(args) > 2 else None))
            elif event in READ_EVENTS:
                for path in args[: READ_EVENTS[event]]:
                    _check(path, False)
            elif event in WRITE_EVENTS:
                for path in args[: WRITE_EVENTS[event]]:
                    _check(path, True)
            elif event in ("os.link", "os.symlink"):
                raise PermissionError("sandbox: creating links is not allowed")
            elif event in PROCESS_EVENTS:
                raise PermissionError("sandbox: creating processes is not allowed")
            elif event == "os.kill" and args[0] not in (0, os.getpid()):
                raise PermissionError("sandbox: signalling other processes is not allowed")
            elif event in NETWORK_EVENTS:
                raise PermissionError("sandbox: network access is not allowed")
            elif event == "import" and args[0] in REFUSED_IMPORTS:
                raise ImportError(f"sandbox: importing {args[0]} is not allowed")
            elif event.startswith("ctypes."):
                raise PermissionError("sandbox: ctypes is not allowed")
        finally:
            inside[0] = False

    sys.addaudithook(_audit)


_install_hook()

sys.argv = ["main.py"]
sys.path.insert(0, work)
import linecache  # noqa: E402
import types  # noqa: E402

linecache.cache["main.py"] = (len(source), None, source.splitlines(True), "main.py")
# the script's own __main__: sys.modules['__main__'] no longer reaches this prelude's globals
main = types.ModuleType("__main__")
main.__file__ = "main.py"
main.__builtins__ = __builtins__
sys.modules["__main__"] = main
del config, script_file
try:
    exec(compile(source, "main.py", "exec"), main.__dict__)
except SystemExit:
    raise
except BaseException as error:  # the traceback without this prelude's frames (named <string>)
    import traceback

    report = traceback.TracebackException(type(error), error, error.__traceback__)
    report.stack = traceback.StackSummary.from_list([f for f in report.stack if f.filename != "<string>"])
    sys.stderr.write("".join(report.format()))
    sys.stderr.flush()
    sys.exit(1)
