"""The OpenBLAS kernel a run asked for is the one that runs.

`.ci/run` runs the regeneration and golden tests again under other OpenBLAS
kernels (OPENBLAS_CORETYPE); that proves something only if OpenBLAS honoured
the request, which threadpoolctl reads from the loaded library itself.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl", reason="threadpoolctl is not installed (requirements-dev.txt)")


def _kernels() -> list[str]:
    np.ones((2, 2)) @ np.ones((2, 2))  # make sure the BLAS is loaded
    return [
        str(info.get("architecture"))
        for info in threadpoolctl.threadpool_info()
        if info.get("internal_api") == "openblas"
    ]


def test_openblas_is_found():
    assert _kernels(), "NumPy's OpenBLAS was not found by threadpoolctl"


@pytest.mark.skipif(
    not os.environ.get("OPENBLAS_CORETYPE"), reason="OPENBLAS_CORETYPE is not set: the default kernel runs"
)
def test_the_requested_kernel_runs():
    wanted = os.environ["OPENBLAS_CORETYPE"]
    assert all(k.lower() == wanted.lower() for k in _kernels()), f"asked for {wanted}, running {_kernels()}"
