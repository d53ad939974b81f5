"""Code that runs inside the sandbox: the zygote and its per-case workers.

This module is self-contained (standard library and NumPy only) because the
parent passes its *source* to a fresh `python -I -c` interpreter: the sandboxed
side never needs to read any file of the bundle.

Process layout (one per grading run):

    grader (parent) --socketpair--> zygote --fork per case--> worker

* The zygote imports NumPy and the allowed modules once, compiles the
  submission, and never executes submission code. For each case it forks a
  worker, enforces the wall-clock limit, reaps it and reports its exit status
  and resource usage. When started as PID 1 of a PID namespace it also kills
  everything left in the namespace after each case.
* The worker locks itself down *before* any submission code runs: new session,
  only fds 0-3 open, rlimits, uid drop (as root), no_new_privs, Landlock (no
  file-system access at all, no TCP, no signals or abstract sockets outside),
  and a seccomp filter (no open/socket/exec/fork/ptrace/kill of others). It
  writes a "layers" frame describing what was applied, then runs the
  submission and writes one "result" frame: header + raw little-endian
  float64 bytes. Nothing is pickled.

Frames on the result pipe: MAGIC, u32 header length, JSON header, body.
"""
import json
import os
import struct
import sys

MAGIC = b"VITR"
HEADER_CAP = 64 * 1024          # a header longer than this is malformed
TRACEBACK_LINES = 12            # submission frames kept in an error report
TEXT_CAP = 2000                 # characters kept of an exception message

# Worker statuses carried in the result frame.
STATUS_OK = "ok"                          # function returned; see "result"
STATUS_LOADED = "loaded"                  # load-only run: module and function are fine
STATUS_IMPORT_EXCEPTION = "import_exception"
STATUS_MISSING_FUNCTION = "missing_function"
STATUS_NOT_CALLABLE = "not_callable"
STATUS_BAD_SIGNATURE = "bad_signature"
STATUS_FORBIDDEN_IMPORT = "forbidden_import"
STATUS_CALL_EXCEPTION = "call_exception"


# --------------------------------------------------------------------------
# framing (shared with the parent, which imports these names)
# --------------------------------------------------------------------------

def encode_frame(header, body=b""):
    raw = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return MAGIC + struct.pack("<I", len(raw)) + raw + body


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


# --------------------------------------------------------------------------
# kernel layers (ctypes; Linux only)
# --------------------------------------------------------------------------

PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

# Syscalls refused with an errno. Names absent from an architecture's table
# (aarch64 has no open/fork/...) are simply skipped.
SYSCALLS = {
    "x86_64": {
        "open": 2, "creat": 85, "openat": 257, "openat2": 437,
        "socket": 41, "socketpair": 53,
        "clone": 56, "fork": 57, "vfork": 58, "clone3": 435,
        "execve": 59, "execveat": 322,
        "kill": 62, "tkill": 200, "tgkill": 234,
        "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297, "pidfd_send_signal": 424,
        "pidfd_getfd": 438, "ptrace": 101, "process_vm_readv": 310,
        "process_vm_writev": 311, "kcmp": 312,
        "truncate": 76, "rename": 82, "mkdir": 83, "rmdir": 84, "link": 86,
        "unlink": 87, "symlink": 88, "chmod": 90, "chown": 92, "lchown": 94,
        "mknod": 133, "mknodat": 259, "mkdirat": 258, "fchownat": 260,
        "unlinkat": 263, "renameat": 264, "linkat": 265, "symlinkat": 266,
        "fchmodat": 268, "renameat2": 316, "fchmodat2": 452, "utime": 132,
        "utimes": 235, "utimensat": 280, "futimesat": 261,
        "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
        "unshare": 272, "setns": 308, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "mount_setattr": 442, "name_to_handle_at": 303, "open_by_handle_at": 304,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
        "keyctl": 250, "add_key": 248, "request_key": 249,
        "personality": 135, "acct": 163, "swapon": 167, "swapoff": 168,
        "reboot": 169, "sethostname": 170, "setdomainname": 171,
        "init_module": 175, "finit_module": 313, "delete_module": 176,
        "kexec_load": 246, "kexec_file_load": 320, "iopl": 172, "ioperm": 173,
        "settimeofday": 164, "clock_settime": 227, "adjtimex": 159,
        "clock_adjtime": 305, "quotactl": 179,
        "setuid": 105, "setgid": 106, "setreuid": 113, "setregid": 114,
        "setresuid": 117, "setresgid": 119, "setgroups": 116,
        "setfsuid": 122, "setfsgid": 123,
        "shmget": 29, "shmat": 30, "msgget": 68, "semget": 64, "mq_open": 240,
        # Landlock does not cover metadata writes (xattrs, fchmod/fchown on an fd).
        "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197,
        "lremovexattr": 198, "fremovexattr": 199, "setxattrat": 463, "removexattrat": 466,
        "fchmod": 91, "fchown": 93, "file_setattr": 469, "quotactl_fd": 443,
        # Calls that act on *another* process of the same uid (plain and user-namespace
        # modes share the grader's uid): only pid 0 / ourselves is allowed, see _SELF_OR_ZERO.
        "prlimit64": 302, "sched_setparam": 142, "sched_setscheduler": 144,
        "sched_setaffinity": 203, "sched_setattr": 314,
        "setpriority": 141, "ioprio_set": 251, "pidfd_open": 434, "process_madvise": 440,
        "process_mrelease": 448, "move_pages": 279, "migrate_pages": 256,
        "fcntl": 72,                  # F_SETOWN/F_SETSIG would aim SIGIO at another process
        # Not needed by NumPy, and each one is a way around a layer above.
        "memfd_create": 319, "memfd_secret": 447, "inotify_init": 253, "inotify_init1": 294,
        "inotify_add_watch": 254, "fanotify_init": 300, "fanotify_mark": 301,
        "syslog": 103, "uselib": 134, "modify_ldt": 154, "listmount": 458, "statmount": 457,
        "open_tree_attr": 467,
        "timer_create": 222,          # unbounded kernel objects, outside RLIMIT_AS
        # Global, non-namespaced kernel resources (issue 9): system-wide AIO contexts
        # (fs.aio-max-nr), the rest of SysV IPC and POSIX queues, host-wide counters
        # and a global IPI. NumPy uses none of them.
        "io_setup": 206, "io_destroy": 207, "io_getevents": 208, "io_submit": 209, "io_cancel": 210,
        "io_pgetevents": 333, "shmctl": 31, "shmdt": 67, "semop": 65, "semctl": 66, "semtimedop": 220,
        "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "mq_unlink": 241, "mq_timedsend": 242,
        "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245, "inotify_rm_watch": 255,
        "sysinfo": 99, "ustat": 136, "sysfs": 139, "_sysctl": 156, "membarrier": 324,
        "vhangup": 153, "lookup_dcookie": 212,
    },
    "aarch64": {
        "openat": 56, "openat2": 437, "socket": 198, "socketpair": 199,
        "clone": 220, "clone3": 435, "execve": 221, "execveat": 281,
        "kill": 129, "tkill": 130, "tgkill": 131,
        "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240, "pidfd_send_signal": 424,
        "pidfd_getfd": 438, "ptrace": 117, "process_vm_readv": 270,
        "process_vm_writev": 271, "kcmp": 272,
        "truncate": 45, "mknodat": 33, "mkdirat": 34, "unlinkat": 35,
        "symlinkat": 36, "linkat": 37, "renameat": 38, "renameat2": 276,
        "fchownat": 54, "fchmodat": 53, "fchmodat2": 452, "utimensat": 88,
        "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
        "unshare": 97, "setns": 268, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "mount_setattr": 442, "name_to_handle_at": 264, "open_by_handle_at": 265,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
        "keyctl": 219, "add_key": 217, "request_key": 218,
        "personality": 92, "acct": 89, "swapon": 224, "swapoff": 225,
        "reboot": 142, "sethostname": 161, "setdomainname": 162,
        "init_module": 105, "finit_module": 273, "delete_module": 106,
        "kexec_load": 104, "kexec_file_load": 294,
        "settimeofday": 170, "clock_settime": 112, "adjtimex": 171,
        "clock_adjtime": 266, "quotactl": 60,
        "setuid": 146, "setgid": 144, "setreuid": 145, "setregid": 143,
        "setresuid": 147, "setresgid": 149, "setgroups": 159,
        "setfsuid": 151, "setfsgid": 152,
        "shmget": 194, "shmat": 196, "msgget": 186, "semget": 190, "mq_open": 180,
        "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14,
        "lremovexattr": 15, "fremovexattr": 16, "setxattrat": 463, "removexattrat": 466,
        "fchmod": 52, "fchown": 55, "file_setattr": 469, "quotactl_fd": 443,
        "prlimit64": 261, "sched_setparam": 118, "sched_setscheduler": 119,
        "sched_setaffinity": 122, "sched_setattr": 274,
        "setpriority": 140, "ioprio_set": 30, "pidfd_open": 434, "process_madvise": 440,
        "process_mrelease": 448, "move_pages": 239, "migrate_pages": 238,
        "fcntl": 25,
        "memfd_create": 279, "memfd_secret": 447, "inotify_init1": 26,
        "inotify_add_watch": 27, "fanotify_init": 262, "fanotify_mark": 263,
        "syslog": 116, "listmount": 458, "statmount": 457, "open_tree_attr": 467,
        "timer_create": 107,
        "io_setup": 0, "io_destroy": 1, "io_submit": 2, "io_cancel": 3, "io_getevents": 4,
        "io_pgetevents": 292, "shmctl": 195, "shmdt": 197, "semop": 193, "semctl": 191, "semtimedop": 192,
        "msgsnd": 189, "msgrcv": 188, "msgctl": 187, "mq_unlink": 181, "mq_timedsend": 182,
        "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185, "inotify_rm_watch": 28,
        "sysinfo": 179, "membarrier": 283, "vhangup": 58, "lookup_dcookie": 18,
    },
}

EPERM, ENOSYS, EACCES = 1, 38, 13
F_SETOWN, F_SETSIG, F_SETOWN_EX = 8, 10, 15
# The few syscalls whose arguments decide: signals only to ourselves; the
# pid-taking setters only on pid 0 (= the caller) or ourselves; fcntl except
# the commands that redirect SIGIO; clone3 "absent" so glibc falls back to
# clone, which is refused outright: one process, one thread (threads would
# race the harness on fd 3, and need RLIMIT_NPROC > 1 as root, so refusing
# them everywhere keeps verdicts identical in every mode).
_SELF_ONLY = {"kill", "tkill", "tgkill"}
_SELF_OR_ZERO = {"prlimit64", "sched_setparam", "sched_setscheduler", "sched_setaffinity",
                 "sched_setattr"}
_OPEN_LIKE = {"open", "creat", "openat", "openat2"}


def _libc():
    import ctypes
    return ctypes, ctypes.CDLL(None, use_errno=True)


def seccomp_program(arch, own_pid):
    """The BPF filter as bytes (struct sock_filter[]), for `arch`."""
    table = SYSCALLS[arch]

    def ins(code, jt, jf, k):
        return struct.pack("<HBBI", code, jt, jf, k & 0xFFFFFFFF)

    LD_W_ABS, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06
    ALLOW, ERRNO, KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
    OFF_NR, OFF_ARCH, OFF_ARG0_LO, OFF_ARG0_HI, OFF_ARG1_LO = 0, 4, 16, 20, 24
    allow, deny = ins(RET_K, 0, 0, ALLOW), ins(RET_K, 0, 0, ERRNO | EPERM)

    prog = [ins(LD_W_ABS, 0, 0, OFF_ARCH),
            ins(JEQ_K, 1, 0, AUDIT_ARCH[arch]),
            ins(RET_K, 0, 0, KILL_PROCESS),       # foreign ABI (i386 via int 0x80): never
            ins(LD_W_ABS, 0, 0, OFF_NR)]
    if arch == "x86_64":                          # x32 syscalls alias the x86-64 ones
        prog += [ins(JGE_K, 0, 1, 0x40000000), ins(RET_K, 0, 0, ERRNO | ENOSYS)]

    # Every body below ends in a return on every path, so the accumulator
    # (the syscall number) is intact whenever a body is skipped.
    for name, nr in sorted(table.items(), key=lambda kv: kv[1]):
        if name in _SELF_ONLY:
            # arg0 (the target) must be this very process
            body = [ins(LD_W_ABS, 0, 0, OFF_ARG0_HI), ins(JEQ_K, 0, 3, 0),
                    ins(LD_W_ABS, 0, 0, OFF_ARG0_LO), ins(JEQ_K, 0, 1, own_pid), allow, deny]
        elif name in _SELF_OR_ZERO:
            body = [ins(LD_W_ABS, 0, 0, OFF_ARG0_HI), ins(JEQ_K, 0, 4, 0),
                    ins(LD_W_ABS, 0, 0, OFF_ARG0_LO), ins(JEQ_K, 1, 0, 0),
                    ins(JEQ_K, 0, 1, own_pid), allow, deny]
        elif name == "fcntl":
            body = [ins(LD_W_ABS, 0, 0, OFF_ARG1_LO), ins(JEQ_K, 3, 0, F_SETOWN),
                    ins(JEQ_K, 2, 0, F_SETSIG), ins(JEQ_K, 1, 0, F_SETOWN_EX), allow, deny]
        elif name == "clone3":
            body = [ins(RET_K, 0, 0, ERRNO | ENOSYS)]
        else:
            body = [ins(RET_K, 0, 0, ERRNO | (EACCES if name in _OPEN_LIKE else EPERM))]
        prog.append(ins(JEQ_K, 0, len(body), nr))
        prog += body
    prog.append(allow)
    return b"".join(prog)


def apply_seccomp(own_pid):
    """Install the filter; return (applied, detail)."""
    arch = os.uname().machine
    if arch not in SYSCALLS:
        return False, f"no syscall table for {arch}"
    ctypes, libc = _libc()
    raw = seccomp_program(arch, own_pid)
    n = len(raw) // 8
    if n > 4096:
        return False, "filter too long"
    buf = ctypes.create_string_buffer(raw, len(raw))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(n, ctypes.addressof(buf))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False, f"no_new_privs failed: {os.strerror(ctypes.get_errno())}"
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        return False, f"seccomp refused: {os.strerror(ctypes.get_errno())}"
    return True, (f"{n} BPF instructions ({arch}): no open, socket, exec, fork, threads, ptrace, "
                  "xattr writes, host-wide kernel resources (AIO, SysV IPC, keyrings, inotify), "
                  "or signals/rlimits/scheduling aimed at other processes")


LANDLOCK_CREATE_RULESET, LANDLOCK_RESTRICT_SELF = 444, 446


def landlock_abi():
    ctypes, libc = _libc()
    abi = libc.syscall(LANDLOCK_CREATE_RULESET, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    return abi if abi > 0 else 0, os.strerror(ctypes.get_errno()) if abi <= 0 else ""


def apply_landlock():
    """Deny every file-system access (no rules at all), TCP, and, from ABI 6,
    signals and abstract UNIX sockets outside the domain. Return (applied, detail)."""
    abi, why = landlock_abi()
    if not abi:
        return False, f"Landlock unavailable ({why})"
    ctypes, libc = _libc()
    fs = (1 << 13) - 1                      # ABI 1: execute .. make_sym
    fs |= (1 << 13) if abi >= 2 else 0      # refer
    fs |= (1 << 14) if abi >= 3 else 0      # truncate
    fs |= (1 << 15) if abi >= 5 else 0      # ioctl_dev
    fields = [fs]
    if abi >= 4:
        fields.append(0b11)                 # bind_tcp, connect_tcp
    if abi >= 6:
        fields.append(0b11)                 # scope: abstract unix socket, signal
    raw = struct.pack(f"<{len(fields)}Q", *fields)
    buf = ctypes.create_string_buffer(raw, len(raw))
    fd = libc.syscall(LANDLOCK_CREATE_RULESET, buf, len(raw), 0)
    if fd < 0:
        return False, f"Landlock ruleset refused: {os.strerror(ctypes.get_errno())}"
    try:
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        if libc.syscall(LANDLOCK_RESTRICT_SELF, fd, 0) != 0:
            return False, f"Landlock restrict refused: {os.strerror(ctypes.get_errno())}"
    finally:
        os.close(fd)
    scope = ", signals and abstract sockets scoped" if abi >= 6 else ""
    net = ", no TCP" if abi >= 4 else ""
    return True, f"ABI {abi}: no file-system access{net}{scope}"


def get_dumpable():
    """PR_GET_DUMPABLE of this process, or None where prctl does not exist (not Linux)."""
    try:
        _, libc = _libc()
        return libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        return None


def set_dumpable(flag):
    try:
        _, libc = _libc()
        return libc.prctl(PR_SET_DUMPABLE, 1 if flag else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


# --------------------------------------------------------------------------
# the worker: runs one case (or only loads the module)
# --------------------------------------------------------------------------

def _vm_size_bytes():
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _apply_rlimits(job):
    import resource
    cpu = max(1, int(job["cpu_limit_s"] + 0.999))
    limits = [
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_FSIZE, (0, 0)),
        (resource.RLIMIT_NOFILE, (16, 16)),
        (resource.RLIMIT_NPROC, (1, 1)) if job.get("drop_uid") is not None else None,
        (resource.RLIMIT_MEMLOCK, (0, 0)),
        (resource.RLIMIT_MSGQUEUE, (0, 0)),
    ]
    base = _vm_size_bytes()
    if base and job.get("memory_bytes"):
        limits.append((resource.RLIMIT_AS, (base + job["memory_bytes"],) * 2))
    applied = []
    for item in limits:
        if item is None:
            continue
        try:
            soft, hard = item[1]
            cur_soft, cur_hard = resource.getrlimit(item[0])
            if cur_hard != resource.RLIM_INFINITY and hard > cur_hard:
                hard = cur_hard
                soft = min(soft, hard)
            resource.setrlimit(item[0], (soft, hard))
            applied.append(item[0])
        except (ValueError, OSError):
            pass
    return len(applied) >= 6, f"cpu {cpu}s (hard {cpu + 1}s), address space +{job.get('memory_bytes', 0) >> 20} MiB, no files, core 0"


def _drop_privileges(uid):
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError("uid drop did not take")


def _lock_down(job, result_fd):
    """Apply every layer, report them on the result pipe, then return.

    Writing the "layers" frame is the last thing done before submission code
    runs, so the parent knows that an exit without that frame (111, 112) is
    the harness's own failure, and one after it is the submission's doing.
    """
    layers = {}
    os.setsid()
    ok, detail = _apply_rlimits(job)
    layers["rlimits"] = ["active" if ok else "partial", detail]
    uid = job.get("drop_uid")
    if uid is not None:
        # Never run submission code as root: a failed drop is a grader fault (112).
        _drop_privileges(uid)
        layers["uid_drop"] = ["active", f"uid/gid {uid}, no supplementary groups"]
    try:
        _, libc = _libc()
        libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)  # after the uid change, which clears it
    except OSError:
        pass
    if os.getppid() != job["zygote_pid"]:
        os._exit(111)                       # the zygote died meanwhile
    if job["layers"].get("landlock"):
        ok, detail = apply_landlock()
        layers["landlock"] = ["active" if ok else "unavailable", detail]
    if job["layers"].get("seccomp"):
        ok, detail = apply_seccomp(os.getpid())
        layers["seccomp"] = ["active" if ok else "unavailable", detail]
    _write_all(result_fd, encode_frame({"kind": "layers", "layers": layers}))
    return layers


def _short(text):
    text = "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in str(text))
    return text if len(text) <= TEXT_CAP else text[:TEXT_CAP] + " [...]"


def _guarded(fn, fallback):
    try:
        return fn()
    except BaseException:  # the submission's object misbehaved while being described
        return fallback


def _submission_frames(exc, filename):
    """(line, function) of the traceback's frames that run the submission's code."""
    out, tb = [], exc.__traceback__
    while tb is not None and len(out) < 100_000:
        code = tb.tb_frame.f_code
        if code.co_filename == filename and type(tb.tb_lineno) is int:
            out.append((tb.tb_lineno, str(code.co_name)))
        tb = tb.tb_next
    return out


def _error_info(exc, filename, source_lines):
    """Exception type, message, and only the frames inside the submission.

    Source text comes from the zygote's own copy of the file, not from
    linecache (which the submission can rewrite) and without touching any
    other file (tracebacks through NumPy would try to read its sources)."""
    frames = _guarded(lambda: _submission_frames(exc, filename), [])

    def text(lineno):
        return source_lines[lineno - 1].strip() if 0 < lineno <= len(source_lines) else ""
    lines = [f"line {n}, in {name}: {text(n)}" for n, name in frames]
    if len(lines) > TRACEBACK_LINES:
        half = TRACEBACK_LINES // 2
        lines = lines[:half] + [f"... {len(lines) - 2 * half} more frames ..."] + lines[-half:]
    lineno = frames[-1][0] if frames else _guarded(lambda: getattr(exc, "lineno", None), None)
    return {"type": _guarded(lambda: _short(type(exc).__name__), "exception"),
            "message": _guarded(lambda: _short(exc), "(str() of the exception raised an error)"),
            "traceback": [_short(x) for x in lines],
            "line": lineno if type(lineno) is int else None}


def _exception_frame(exc, filename, source_lines, status):
    """The result frame reporting `exc`. The exception object is the
    submission's (its __str__, __class__ or metaclass may raise), so every use
    of it is guarded: a failure here must not escape into harness code."""
    try:
        if _guarded(lambda: isinstance(exc, ImportError) and "not allowed here" in str(exc), False):
            status = STATUS_FORBIDDEN_IMPORT
        return encode_frame({"kind": "result", "status": status,
                             "error": _error_info(exc, filename, source_lines)})
    except BaseException:
        return encode_frame({"kind": "result", "status": status, "error": {
            "type": "exception", "message": "(the exception could not be described)",
            "traceback": [], "line": None}})


def _describe_type(value, np):
    t = type(value)
    if t is np.ndarray:
        return "ndarray" if value.ndim else "0-d array"
    if isinstance(value, np.ma.MaskedArray):
        return "masked array (numpy.ma.MaskedArray)"
    if isinstance(value, np.ndarray):
        return f"ndarray subclass {t.__module__}.{t.__qualname__}"
    if isinstance(value, np.generic):
        return f"NumPy scalar {t.__name__}"
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ != "builtins" else t.__name__


def _result_frame(value, np, cap):
    kind = _describe_type(value, np)
    header = {"kind": "result", "status": STATUS_OK, "type": kind}
    if kind != "ndarray":
        return encode_frame(header)
    header["dtype"] = str(value.dtype)
    header["shape"] = list(value.shape)
    if value.dtype != np.float64:
        return encode_frame(header)
    if cap is not None and 8 * value.size > cap:
        # Never materialise what the parent will refuse: a zero-stride view can
        # claim 80 GB, and copying it would turn "too large" into a MemoryError.
        header["nbytes"] = 8 * value.size
        return encode_frame(header)
    body = np.ascontiguousarray(value, dtype="<f8").tobytes()
    header["nbytes"] = len(body)
    return encode_frame(header, body)


def is_allowed(allowed, name):
    """May submission code import `name`? (the problem's allowed_imports)"""
    if any(name == ex or name.startswith(ex + ".") for ex in allowed["exclude"]):
        return False
    top = name.split(".")[0]
    return top in allowed["packages"] or top in allowed["stdlib"] or name in allowed["stdlib"]


def _guarded_import(allowed, original):
    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        # Harness import statements always pass their globals; a bare
        # __import__("os") call (no globals) can only be the submission's.
        caller = (globals or {}).get("__name__", "solution")
        if caller == "solution" and level == 0 and not allowed(name):
            raise ImportError(f"import of {name!r} is not allowed here", name=name)
        return original(name, globals, locals, fromlist, level)
    return guarded


PROBE_REPEATS_CAP = 64


def probe_workload(np):
    """A fixed mix of BLAS, elementwise and interpreter work: the machine's speed unit.

    Small (about 8 ms here) so that the minimum of several runs in one worker
    is cheap: the minimum is the run least disturbed by other processes.
    Thread time, not process time: once RLIMIT_CPU is set the kernel's process
    clock advances only at scheduler ticks (4 ms here) while a task runs; the
    thread clock is exact, and the worker runs one thread (single-threaded BLAS)."""
    import time
    rng = np.random.default_rng(12345)
    a = rng.standard_normal((96, 96))
    start = time.thread_time()
    acc = 0.0
    for _ in range(16):
        b = np.tanh(a @ a.T / 96.0)
        acc += float(np.exp(b - b.max(axis=-1, keepdims=True)).sum())
    for i in range(25000):
        acc += (i % 7) * 0.5
    return time.thread_time() - start, acc


def run_worker(job, code, source_lines, payload, fds, np):
    """Body of the forked worker. Never returns."""
    result_fd = 3
    try:
        os.dup2(fds[0], 3)
        os.dup2(fds[1], 1)
        os.dup2(fds[2], 2)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.closerange(4, 65536)
        args = []
        offset = 0
        for spec in job["args"]:
            if spec["kind"] == "int":
                args.append(int(spec["value"]))
                continue
            count = 1
            for d in spec["shape"]:
                count *= d
            arr = np.frombuffer(payload, dtype="<f8", count=count, offset=offset)
            offset += count * 8
            args.append(arr.reshape(spec["shape"]).astype(np.float64, copy=True))
        del payload
        _lock_down(job, result_fd)
    except BaseException as exc:  # harness failure before any submission code: say so
        sys.stderr.write(f"sandbox worker setup failed: {exc!r}\n")
        os._exit(112)

    if job["mode"] == "probe":  # no submission code in this worker: its report is trusted
        repeats = max(1, min(int(job.get("probe_repeats", 1)), PROBE_REPEATS_CAP))
        runs = [probe_workload(np)[0] for _ in range(repeats)]
        _write_all(result_fd, encode_frame({"kind": "result", "status": "probe", "seconds": min(runs),
                                            "runs": runs}))
        os._exit(0)

    import builtins
    import types
    allowed = job["allowed"]
    builtins.__import__ = _guarded_import(lambda name: is_allowed(allowed, name), builtins.__import__)

    filename = job["filename"]
    # A registered module, as `python solution.py` would have: dataclasses, typing
    # and pickle look the defining module up in sys.modules by name.
    module = types.ModuleType("solution")
    module.__file__ = filename
    module.__builtins__ = builtins
    sys.modules["solution"] = module
    namespace = module.__dict__
    frame = None
    try:
        exec(code, namespace)
        fn = namespace.get(job["function"])
        if fn is None:
            frame = encode_frame({"kind": "result", "status": STATUS_MISSING_FUNCTION})
        elif not callable(fn):
            frame = encode_frame({"kind": "result", "status": STATUS_NOT_CALLABLE,
                                  "type": type(fn).__name__})
        else:
            import inspect
            try:
                inspect.signature(fn).bind(*[None] * len(job["args"]))
            except TypeError as exc:
                frame = encode_frame({"kind": "result", "status": STATUS_BAD_SIGNATURE,
                                      "message": _short(exc)})
            except ValueError:
                pass  # no signature available (e.g. a builtin): let the call decide
    except BaseException as exc:
        frame = _exception_frame(exc, filename, source_lines, STATUS_IMPORT_EXCEPTION)
    if frame is None and job["mode"] == "load":
        frame = encode_frame({"kind": "result", "status": STATUS_LOADED})
    if frame is None:
        try:
            value = fn(*args)
            frame = _result_frame(value, np, job.get("result_bytes"))
        except BaseException as exc:
            frame = _exception_frame(exc, filename, source_lines, STATUS_CALL_EXCEPTION)
    try:
        _write_all(result_fd, frame)
    except BaseException:
        os._exit(113)
    for stream in (sys.stdout, sys.stderr):  # os._exit would drop what print() buffered
        try:
            stream.flush()
        except BaseException:
            pass
    os._exit(0)


# --------------------------------------------------------------------------
# the zygote
# --------------------------------------------------------------------------

PRELOAD_MAX = 160               # modules imported before lock-down (harness + allowed + named)
PRELOAD_NAME_MAX = 160          # characters of one module name
PRELOAD_BUDGET_S = 10.0         # seconds of importing, after which the rest is skipped
FAILED_SHOWN = 8                # failed preloads named in the "ready" message


def preload(modules):
    """Import `modules` (the harness's, the problem's, then the submission's) before
    lock-down, bounded in count, name size and time: a submission naming hundreds
    of modules that do not exist only limits what it may import itself.
    Returns {"count": failures, "first": [a few of them]}."""
    import time
    start, failed, dead = time.monotonic(), [], []
    for i, mod in enumerate(modules):
        if i >= PRELOAD_MAX or time.monotonic() - start > PRELOAD_BUDGET_S:
            failed.append(f"{len(modules) - i} more not tried")
            break
        if type(mod) is not str or len(mod) > PRELOAD_NAME_MAX or \
                not all(part.isidentifier() for part in mod.split(".")):
            failed.append("(an invalid module name)")
            continue
        if any(mod.startswith(d + ".") for d in dead):
            continue                                  # its package already failed
        try:
            __import__(mod)
        except BaseException as exc:  # a missing (or exiting) module only limits what may be imported
            dead.append(mod)
            failed.append(f"{mod[:80]}: {type(exc).__name__}")
    return {"count": len(failed), "first": failed[:FAILED_SHOWN]}


def _names_in(source):
    """Every identifier and string constant of `source`; None after `from numpy import *`."""
    import ast
    names = set()
    try:
        tree = ast.parse(source)
    except BaseException:
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "numpy" and any(a.name == "*" for a in node.names):
            return None
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.update(node.name.split("."))
        elif isinstance(node, ast.Constant) and type(node.value) is str and len(node.value) < 64:
            names.add(node.value)
    return names


def numpy_lazy_submodules(np, allowed, source):
    """NumPy loads np.strings, np.char, np.rec, np.testing, ... on first attribute
    access, which reads files: refused once the worker is locked down. Import the
    allowed ones the submission names (all of them after `from numpy import *`)
    now, and make the excluded ones (numpy.f2py, numpy.ctypeslib) say why."""
    import types

    class Refused(types.ModuleType):
        def __getattr__(self, attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            raise ImportError(f"import of {self.__name__!r} is not allowed here", name=self.__name__)

    wanted = _names_in(source)
    public = getattr(np, "__all__", ())
    for name in [n for n in public if type(n) is str and n.isidentifier() and n not in vars(np)]:
        mod = f"{np.__name__}.{name}"
        if not is_allowed(allowed, mod):
            setattr(np, name, Refused(mod))
        elif wanted is None or name in wanted:
            try:
                __import__(mod)
            except BaseException:
                pass

def _send(sock, msg):
    data = json.dumps(msg, separators=(",", ":")).encode("utf-8")
    sock.sendall(struct.pack("<I", len(data)) + data)


def _recv_exact(sock, n):
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv(sock):
    """One message: (header dict, payload bytes, fds); (None, b"", []) at EOF."""
    import socket as _socket
    head, fds, _flags, _addr = _socket.recv_fds(sock, 8, 8)
    if not head:
        return None, b"", []
    if len(head) < 8:
        rest = _recv_exact(sock, 8 - len(head))
        if rest is None:
            return None, b"", []
        head += rest
    hlen, plen = struct.unpack("<II", head)
    header = json.loads(_recv_exact(sock, hlen))
    payload = _recv_exact(sock, plen) if plen else b""
    return header, payload, fds


def _net_interfaces():
    import socket as _socket
    try:
        return sorted(name for _, name in _socket.if_nameindex())
    except OSError:
        return []


def _reap_all():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


PR_SET_CHILD_SUBREAPER = 36
SWEEP_ROUNDS = 100


def _children():
    """PIDs of this process's children (orphans re-parent here: we are a subreaper)."""
    pids = []
    try:
        for tid in os.listdir(f"/proc/{os.getpid()}/task"):
            with open(f"/proc/{os.getpid()}/task/{tid}/children", "rb") as f:
                pids += [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        pass
    return pids


def _kill_descendants():
    """SIGKILL every descendant, round after round, until none is left.

    Needed where neither a PID namespace nor a private uid can sweep (plain
    mode as an ordinary user): a setsid()'d grandchild leaves our process
    group, but as a subreaper we still inherit it when its parent dies.
    """
    import signal
    for _ in range(SWEEP_ROUNDS):
        pids = _children()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _sweep(job):
    """Kill whatever the worker left behind, when this can be done safely."""
    import signal
    _kill_descendants()
    if os.getpid() == 1:                     # PID 1 of our own namespace: kill the rest
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
    elif job.get("drop_uid") is not None:    # a uid used by nothing else: kill it all
        pid = os.fork()
        if pid == 0:
            try:
                os.setresuid(job["drop_uid"], job["drop_uid"], job["drop_uid"])
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
            os._exit(0)
        os.waitpid(pid, 0)
    _reap_all()


def _supervise(pid, job, sock):
    """Wait for the worker under the wall-clock limit; return its outcome."""
    import select
    import signal
    import time
    start = time.monotonic()
    deadline = start + job["wall_limit_s"]
    killed_by = None
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(sock.fileno(), select.POLLIN)
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                killed_by = "wall"
                break
            events = poller.poll(remaining * 1000)
            if any(fd == pidfd for fd, _ in events):
                break
            if any(fd == sock.fileno() for fd, _ in events):
                msg, _, fds = _recv(sock)
                for fd in fds:
                    os.close(fd)
                if msg is None:
                    killed_by = "parent_gone"
                    break
                if msg.get("op") == "kill":
                    killed_by = msg.get("reason", "parent")
                    break
        if killed_by:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _, status, ru = os.wait4(pid, 0)
    finally:
        os.close(pidfd)
    wall = time.monotonic() - start
    _sweep(job)
    return {
        "event": "finished",
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "wall_s": wall,
        "maxrss_kib": ru.ru_maxrss,
        "killed_by": killed_by,
    }


def zygote_main(ctrl_fd):
    import socket as _socket
    sock = _socket.socket(fileno=ctrl_fd)
    init, _, _ = _recv(sock)
    if init is None:
        return
    set_dumpable(False)
    try:
        _, libc = _libc()
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except OSError:
        pass
    import numpy as np
    failed = preload(init["preload"])
    source = init["source"]
    numpy_lazy_submodules(np, init["allowed"], source)
    import linecache
    # Tracebacks show the submission's own lines without reading any file.
    source_lines = source.splitlines(True)
    linecache.cache[init["filename"]] = (len(source), None, source_lines, init["filename"])
    try:
        code = compile(source, init["filename"], "exec", dont_inherit=True)
    except BaseException as exc:  # the parent already checked the syntax; report anyway
        _send(sock, {"event": "error", "message": f"compile failed: {exc!r}"})
        return
    abi, _ = landlock_abi()
    _send(sock, {"event": "ready", "pid": os.getpid(), "uid": os.getuid(), "euid": os.geteuid(),
                 "pid_namespace": os.getpid() == 1, "net_interfaces": _net_interfaces(),
                 "dumpable": get_dumpable(),
                 "landlock_abi": abi, "arch": os.uname().machine,
                 "python": sys.version.split()[0], "numpy": np.__version__,
                 "preload_failed": failed})
    while True:
        msg, payload, fds = _recv(sock)
        if msg is None or msg.get("op") == "quit":
            return
        if msg.get("op") != "run" or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            _send(sock, {"event": "error", "message": "bad request"})
            continue
        job = dict(init["job"], **msg["job"], zygote_pid=os.getpid())
        job["allowed"] = init["allowed"]
        pid = os.fork()
        if pid == 0:
            try:
                sock.close()
                run_worker(job, code, source_lines, payload, fds, np)
            finally:
                os._exit(114)  # whatever escapes (a signal handler raising in harness code): never the zygote loop
        for fd in fds:
            os.close(fd)
        _send(sock, {"event": "started"})
        _send(sock, _supervise(pid, job, sock))


if __name__ == "__main__":
    zygote_main(int(sys.argv[1]))
