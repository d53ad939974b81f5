"""`python -m grader` and the console scripts `grader` and `vit-grader` (pyproject.toml: grader.__main__:script)."""

import os
import sys

# Before anything else is imported: a sandbox's start-up then runs beside the grader's own.
from .sandbox.early import early_zygote


def run(argv: "list[str] | None" = None) -> int:
    """Start the zygote the command will need (sandbox/early.py), then run the command (cli.main)."""
    args = sys.argv[1:] if argv is None else argv
    zygote = early_zygote(args)
    try:
        from .cli import main

        return main(args, zygote=zygote)
    finally:
        if zygote is not None:
            zygote.close()


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
