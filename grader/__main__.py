"""`python -m grader` and the `vit-grader` console script (pyproject.toml: grader.__main__:run)."""
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


if __name__ == "__main__":
    sys.exit(run())
