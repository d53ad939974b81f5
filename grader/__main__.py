"""`python -m grader` and the console scripts `grader` and `vit-grader` (pyproject.toml: grader.__main__:script)."""

import os
import sys

from .served import flushed, through_server


def run(argv: "list[str] | None" = None) -> int:
    """Hand a `grade` to this user's running server (served.py), if one takes it; else start the
    zygote the command will need (sandbox/early.py), then run the command (cli.main)."""
    args = sys.argv[1:] if argv is None else argv
    open_standard_streams()
    drop_current_folder()
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


def drop_current_folder() -> None:
    """Take the current folder off sys.path, as `python -P` would: `python -m grader` puts it first,
    where a learner's numpy.py, yaml.py or random.py beside their solution would be imported in
    place of the real module (the grader's own modules come through its package, not sys.path)."""
    try:
        here = os.getcwd()
    except OSError:  # the folder was removed: nothing can be imported from it either
        here = None
    if sys.path and not sys.flags.safe_path and sys.path[0] in ("", here):
        del sys.path[0]


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
    and the status is 120 (served.UNWRITTEN), as Python's own exit gives then,
    with the reason on standard error. An exception (or SystemExit: argparse's
    usage errors) ends the process the ordinary way."""
    status = run()
    os._exit(flushed(status if isinstance(status, int) else 1))


if __name__ == "__main__":
    script()
