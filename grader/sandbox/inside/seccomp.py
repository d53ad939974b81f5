"""The seccomp filter: the system calls a worker may not make, as a BPF program.

A deny-list over a default-allow policy (the calls NumPy and OpenBLAS need vary
by build); docs/threat-model.md lists what is refused and why. Part of the code
that runs inside the sandbox (grader/sandbox/child.py).
"""

import os
import struct

from .kernel import PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, _libc

# Names for the type checker only, which the script leaves out (script.py); typing is not imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    # prepared_program's template: (arch, the program's bytes, the byte offsets of the pid slots)
    from typing import Any  # noqa: F401 - used in type comments

    Prepared = tuple[str, bytes, tuple[int, ...]]

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

# Syscalls refused with an errno. Names absent from an architecture's table
# (aarch64 has no open/fork/...) are simply skipped. Laid out by family, several to a
# line, which `ruff format` keeps (fmt: off): one to a line, the table would be 200 lines.
# fmt: off
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
        # Global kernel resources no namespace separates: system-wide AIO contexts
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
# fmt: on

EPERM, ENOSYS, EACCES = 1, 38, 13
F_SETOWN, F_SETSIG, F_SETOWN_EX = 8, 10, 15
# The few syscalls whose arguments decide: signals only to ourselves; the
# pid-taking setters only on pid 0 (= the caller) or ourselves; fcntl except
# the commands that redirect SIGIO; clone3 "absent" so glibc falls back to
# clone, which is refused outright: one process, one thread (threads would
# race the harness on fd 3, and need RLIMIT_NPROC > 1 as root, so refusing
# them everywhere keeps verdicts identical in every mode).
_SELF_ONLY = {"kill", "tkill", "tgkill"}
_SELF_OR_ZERO = {"prlimit64", "sched_setparam", "sched_setscheduler", "sched_setaffinity", "sched_setattr"}
_OPEN_LIKE = {"open", "creat", "openat", "openat2"}


# BPF opcodes, seccomp's return values, and offsets into struct seccomp_data.
_LD_W_ABS, _JEQ_K, _JGE_K, _JGT_K, _RET_K = 0x20, 0x15, 0x35, 0x25, 0x06
_ALLOW, _ERRNO, _KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_OFF_NR, _OFF_ARCH, _OFF_ARG0_LO, _OFF_ARG0_HI, _OFF_ARG1_LO = 0, 4, 16, 20, 24
_MAX_JUMP = 255  # a classic-BPF conditional jump's offsets are one byte each


def _ins(code, jt, jf, k):
    # type: (int, int, int, int) -> bytes
    if not (0 <= jt <= _MAX_JUMP and 0 <= jf <= _MAX_JUMP):
        raise ValueError("a jump too long for classic BPF")
    return struct.pack("<HBBI", code, jt, jf, k & 0xFFFFFFFF)


def _syscall_body(name, own_pid):
    # type: (str, int) -> list[bytes]
    # The instructions deciding syscall `name` (or any of its family, which share them) by its
    # arguments, each path ending in a return.
    allow, deny = _ins(_RET_K, 0, 0, _ALLOW), _ins(_RET_K, 0, 0, _ERRNO | EPERM)
    if name in _SELF_ONLY:
        # arg0 (the target) must be this very process
        return [
            _ins(_LD_W_ABS, 0, 0, _OFF_ARG0_HI),
            _ins(_JEQ_K, 0, 3, 0),
            _ins(_LD_W_ABS, 0, 0, _OFF_ARG0_LO),
            _ins(_JEQ_K, 0, 1, own_pid),
            allow,
            deny,
        ]
    if name in _SELF_OR_ZERO:
        return [
            _ins(_LD_W_ABS, 0, 0, _OFF_ARG0_HI),
            _ins(_JEQ_K, 0, 4, 0),
            _ins(_LD_W_ABS, 0, 0, _OFF_ARG0_LO),
            _ins(_JEQ_K, 1, 0, 0),
            _ins(_JEQ_K, 0, 1, own_pid),
            allow,
            deny,
        ]
    if name == "fcntl":
        return [
            _ins(_LD_W_ABS, 0, 0, _OFF_ARG1_LO),
            _ins(_JEQ_K, 3, 0, F_SETOWN),
            _ins(_JEQ_K, 2, 0, F_SETSIG),
            _ins(_JEQ_K, 1, 0, F_SETOWN_EX),
            allow,
            deny,
        ]
    if name == "clone3":
        return [_ins(_RET_K, 0, 0, _ERRNO | ENOSYS)]
    raise ValueError(f"no rule decides {name} by its arguments")


# The calls decided by their arguments, by family: the members of one share its body
# (_syscall_body of the first); every other call in a table is refused whatever its arguments.
_FAMILIES = (tuple(sorted(_SELF_ONLY)), tuple(sorted(_SELF_OR_ZERO)), ("fcntl",), ("clone3",))
_RUNS_PER_BLOCK = 60  # runs compared before their block's returns: every jump stays under _MAX_JUMP


def _refused_runs(table):
    # type: (dict[str, int]) -> list[tuple[int, int, int]]
    # The calls refused whatever their arguments, as runs of consecutive numbers with one errno:
    # (first, last, errno), in ascending order.
    decided = {name for family in _FAMILIES for name in family}
    runs = []  # type: list[list[int]]
    for nr, errno in sorted((nr, EACCES if n in _OPEN_LIKE else EPERM) for n, nr in table.items() if n not in decided):
        if runs and runs[-1][1] == nr - 1 and runs[-1][2] == errno:
            runs[-1][1] = nr
        else:
            runs.append([nr, nr, errno])
    return [(first, last, errno) for first, last, errno in runs]


def _runs_block(runs, more):
    # type: (list[tuple[int, int, int]], bool) -> list[bytes]
    # Two comparisons per run, then the three returns they jump to (ALLOW, EPERM, EACCES). A
    # number above the block's last run goes on past the returns to the next block if `more`.
    allow_at, refuse_at = 2 * len(runs), {EPERM: 2 * len(runs) + 1, EACCES: 2 * len(runs) + 2}
    block = []
    for i, (first, last, errno) in enumerate(runs):
        below, inside = 2 * i, 2 * i + 1  # the two comparisons' places in the block
        above = 3 if more and i == len(runs) - 1 else 0
        block.append(_ins(_JGE_K, 0, allow_at - below - 1, first))
        block.append(_ins(_JGT_K, above, refuse_at[errno] - inside - 1, last))
    return block + [_ins(_RET_K, 0, 0, _ALLOW), _ins(_RET_K, 0, 0, _ERRNO | EPERM), _ins(_RET_K, 0, 0, _ERRNO | EACCES)]


def seccomp_program(arch, own_pid):
    # type: (str, int) -> bytes
    """The BPF filter as bytes (struct sock_filter[]), for `arch`.

    After the ABI checks come the calls decided by their arguments, each family's numbers
    jumping to one shared body; then the calls refused outright, as ascending runs of
    consecutive numbers: a number below a run's first is allowed at once (no later run can
    hold it), one above its last goes on to the next run, one inside it gets the run's errno.
    The kernel checks and compiles the program in every worker, in time that grows with its
    length: this is about one instruction per call, where a comparison and a return for each
    would be two or more."""
    table = SYSCALLS[arch]
    prog = [
        _ins(_LD_W_ABS, 0, 0, _OFF_ARCH),
        _ins(_JEQ_K, 1, 0, AUDIT_ARCH[arch]),
        _ins(_RET_K, 0, 0, _KILL_PROCESS),  # foreign ABI (i386 via int 0x80): never
        _ins(_LD_W_ABS, 0, 0, _OFF_NR),
    ]
    if arch == "x86_64":  # x32 syscalls alias the x86-64 ones
        prog += [_ins(_JGE_K, 0, 1, 0x40000000), _ins(_RET_K, 0, 0, _ERRNO | ENOSYS)]
    # Every body ends in a return on every path, so the accumulator (the syscall number) is
    # intact whenever a body is skipped.
    for family in _FAMILIES:
        numbers = [table[name] for name in family if name in table]
        if not numbers:
            continue
        body = _syscall_body(family[0], own_pid)
        for i, nr in enumerate(numbers):  # a match jumps over the family's other numbers to the body
            final = i == len(numbers) - 1
            prog.append(_ins(_JEQ_K, len(numbers) - 1 - i, len(body) if final else 0, nr))
        prog += body
    runs = _refused_runs(table)
    for start in range(0, len(runs), _RUNS_PER_BLOCK):
        prog += _runs_block(runs[start : start + _RUNS_PER_BLOCK], start + _RUNS_PER_BLOCK < len(runs))
    if not runs:
        prog.append(_ins(_RET_K, 0, 0, _ALLOW))
    return b"".join(prog)


# No pid is this large (pid_max is at most 2**22): marks where a worker's own pid goes.
PID_SLOT = 0x7FFFFFFE


def prepared_program(arch):
    # type: (str) -> Prepared | None
    """The filter for `arch` with a placeholder for the pid, and the byte offsets of the
    placeholders (None for an arch without a table). The zygote builds it once: building it
    costs about 1.2 ms of Python, which every worker would pay again in its own CPU time; and
    loads it into the ctypes buffer the workers install it from (_loaded)."""
    if arch not in SYSCALLS:
        return None
    prepared = _template(arch)
    _loaded(prepared)
    return prepared


def _template(arch):
    # type: (str) -> Prepared
    # prepared_program(arch), for an arch that has a table.
    raw = seccomp_program(arch, PID_SLOT)
    slots = [i + 4 for i in range(0, len(raw), 8) if struct.unpack_from("<I", raw, i + 4)[0] == PID_SLOT]
    return arch, raw, tuple(slots)


def program_for(prepared, own_pid):
    # type: (Prepared, int) -> bytes
    """seccomp_program(arch, own_pid), from prepared_program(arch)'s template."""
    _arch, raw, slots = prepared
    buf = bytearray(raw)
    for off in slots:
        struct.pack_into("<I", buf, off, own_pid & 0xFFFFFFFF)
    return bytes(buf)


# The filter as the kernel takes it (a sock_fprog over a ctypes buffer of the template), made once:
# the zygote makes it before its first fork (prepared_program), and each worker writes its pid into
# its own copy-on-write copy. Making the ctypes type and buffer in every worker cost 0.12 ms and 50
# page faults of its CPU time. Holds (the template's bytes, the buffer, the sock_fprog).
_LOADED = []  # type: list[tuple[bytes, Any, Any]]


def _loaded(prepared):
    # type: (Prepared) -> tuple[Any, Any]
    # The ctypes buffer holding `prepared`'s template and a sock_fprog pointing at it.
    _arch, raw, _slots = prepared
    if not _LOADED or _LOADED[0][0] is not raw:
        import ctypes

        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        buf = ctypes.create_string_buffer(raw, len(raw))
        _LOADED[:] = [(raw, buf, SockFprog(len(raw) // 8, ctypes.addressof(buf)))]
    return _LOADED[0][1], _LOADED[0][2]


def loaded_for(prepared, own_pid):
    # type: (Prepared, int) -> tuple[Any, Any]
    """The loaded filter (_loaded: a ctypes buffer and the sock_fprog over it) with `own_pid` in
    its pid slots, as program_for(prepared, own_pid) has it. In a worker the buffer is its own
    copy-on-write copy of the zygote's: the zygote's keeps its placeholders for the next one."""
    buf, prog = _loaded(prepared)
    for off in prepared[2]:
        struct.pack_into("<I", buf, off, own_pid & 0xFFFFFFFF)
    return buf, prog


def apply_seccomp(own_pid, prepared=None):
    # type: (int, Prepared | None) -> tuple[bool, str]
    """Install the filter (from `prepared`, if built for this arch); return (applied, detail)."""
    arch = os.uname().machine
    if arch not in SYSCALLS:
        return False, f"no syscall table for {arch}"
    import ctypes

    libc = _libc()
    if prepared is None or prepared[0] != arch:
        prepared = _template(arch)
    n = len(prepared[1]) // 8
    if n > 4096:
        return False, "filter too long"
    _buf, prog = loaded_for(prepared, own_pid)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False, f"no_new_privs failed: {os.strerror(ctypes.get_errno())}"
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        return False, f"seccomp refused: {os.strerror(ctypes.get_errno())}"
    return True, (
        f"{n} BPF instructions ({arch}): no open, socket, exec, fork, threads, ptrace, "
        "xattr writes, host-wide kernel resources (AIO, SysV IPC, keyrings, inotify), "
        "or signals/rlimits/scheduling aimed at other processes"
    )
