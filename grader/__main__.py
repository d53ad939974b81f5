import sys

# Before anything else is imported: a sandbox's start-up then runs beside the grader's own.
from .sandbox.early import early_zygote

zygote = early_zygote(sys.argv[1:])
try:
    from .cli import main
    status = main(zygote=zygote)
finally:
    if zygote is not None:
        zygote.close()
sys.exit(status)
