"""`python -m grader` and the console scripts `grader` and `vit-grader` (pyproject.toml: grader.__main__:script)."""

import os
import sys

from .served import through_server


def run(argv: "list[str] | None" = None) -> int:
    """Hand a `grade` to this user's running server (served.py), if one takes it; else start the
    zygote the command will need (sandbox/early.py), then run the command (cli.main)."""
    args = sys.argv[1:] if argv is None else argv
    open_standard_streams()
    status = through_server(args)
    if status is not None:
        return status
    # Before the rest of the grader is imported: a sandbox's start-up then runs beside the grader's own.
    from .sandbox.early import early_zygote

    zygote = early_zygote(args)
    try:
        from .cli import main

        return main(args, zygote=zygote)
    finally:
        if zygote is not None:
            zygote.close()


def open_standard_streams() -> None:
    """/dev/null in place of a standard stream the process was started without (`grade x >&-`):
    Python then has no sys.stdout to write the report to, and the next file the grader opens
    would take descriptor 1, where a child's output would land in it."""
    for fd, name, mode in ((0, "stdin", os.O_RDONLY), (1, "stdout", os.O_WRONLY), (2, "stderr", os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            if os.open(os.devnull, mode) != fd:  # the lowest free descriptor: this one, as 0..fd-1 are open
                raise
            setattr(sys, name, open(fd, "r" if fd == 0 else "w", encoding="utf-8", closefd=False))


def script() -> None:
    """Run the command, then end the process at once with its exit status.

    Once the command has returned, everything it wrote is in closed files and
    its sandbox is gone; only the interpreter's teardown of NumPy and the
    grader's modules is left, 20-30 ms that a learner's edit-grade loop would
    wait for at every grading. Standard output and error are flushed first; if
    that fails (a full disk, a reader that went away), the output is incomplete
    and the status is 120, as Python's own exit gives then, with the reason on
    standard error. An exception (or SystemExit: argparse's usage errors) ends
    the process the ordinary way."""
    status = run()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: the process was started with it closed
                stream.flush()
    except (OSError, ValueError) as exc:  # BrokenPipeError too; ValueError: closed by the command
        try:
            os.write(2, f"grader: could not write the output: {exc}\n".encode("utf-8", "replace"))
        except OSError:
            pass
        os._exit(UNWRITTEN)
    os._exit(status if isinstance(status, int) else 1)


UNWRITTEN = 120  # the status CPython exits with when it cannot flush standard output at exit


if __name__ == "__main__":
    script()
