"""A case's arguments, rebuilt in the worker from the run request: ints and floats as sent,
arrays copied out of the payload's float64 bytes, a list of dicts of arrays built anew, so that
each call receives objects of its own (sandbox/wire.py, encode_args, writes the request).

Part of the code that runs inside the sandbox (grader/sandbox/child.py).
"""

import os

# Names for the type checker only, which the script leaves out (script.py); typing is not imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import mmap  # noqa: F401 - used in type comments
    from types import ModuleType  # noqa: F401 - used in type comments
    from typing import Any  # noqa: F401 - used in type comments


def _map_payload(fd):
    # type: (int) -> mmap.mmap
    # A large case's bytes, mapped read-only from the memfd the grader passed with the request
    # (sandbox/wire.py): the arrays are copied out of the mapping, and the worker unmaps it
    # before it sets its rlimits, so RLIMIT_AS counts none of it (as the zygote's own copy of an
    # inline payload, which every worker inherits, is counted in every worker alike).
    import mmap

    return mmap.mmap(fd, os.fstat(fd).st_size, mmap.MAP_SHARED, mmap.PROT_READ)


def _payload_array(payload, offset, shape, np):
    # type: (bytes | mmap.mmap, int, list[int], ModuleType) -> tuple[object, int]
    # The array of `shape` at `offset` in the payload's float64 bytes, copied; and the next offset.
    count = 1
    for d in shape:
        count *= d
    arr = np.frombuffer(payload, dtype="<f8", count=count, offset=offset)
    return arr.reshape(shape).astype(np.float64, copy=True), offset + count * 8


def _case_arguments(specs, payload, np):
    # type: (list[dict[str, Any]], bytes | mmap.mmap, ModuleType) -> list[object]
    # The case's arguments in call order; a list's items as new dicts of new arrays, in its order.
    args = []  # type: list[object]
    offset = 0
    for spec in specs:
        if spec["kind"] == "int":
            args.append(int(spec["value"]))
        elif spec["kind"] == "float":
            args.append(float(spec["value"]))
        elif spec["kind"] == "list":
            items = []  # type: list[dict[str, object]]
            for keys in spec["items"]:
                item = {}  # type: dict[str, object]
                for key, shape in keys:
                    item[str(key)], offset = _payload_array(payload, offset, shape, np)
                items.append(item)
            args.append(items)
        else:
            arr, offset = _payload_array(payload, offset, spec["shape"], np)
            args.append(arr)
    return args


def _arguments_of(specs, payload, fds, np):
    # type: (list[dict[str, Any]], bytes, list[int], ModuleType) -> list[object]
    # The case's arguments, from the request's inline payload or, with a fourth descriptor, from
    # a large case's memfd (sandbox/wire.py): mapped, copied out and unmapped here, before the
    # worker sets its rlimits (which then count none of it) and its descriptors (mmap keeps a
    # duplicate of the one it maps, which may be fd 3, where the result pipe goes).
    if len(fds) <= 3:
        return _case_arguments(specs, payload, np)
    large = _map_payload(fds[3])
    try:
        return _case_arguments(specs, large, np)
    finally:
        large.close()
