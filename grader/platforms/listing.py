"""The platforms by name and what each offers: the command line's choices, at no import cost.

`LISTED` names the module of each platform (registry.py imports it on first use)
and whether it offers a results format for `grade --format` and a package for
`export`. This module imports nothing of the grader, so that parsing a command
line (cli/parsers.py) pulls in no platform, no report type and no date handling.
tests/test_formats.py checks that every module's record offers exactly what
`LISTED` says.
"""

from __future__ import annotations

from typing import NamedTuple


class Listing(NamedTuple):
    """Where a platform's module is and what its record offers."""

    module: str
    results: bool  # a results format for `grade --format` (render and render_error)
    exports: bool  # a package for `export`


# In the order the command line lists them.
LISTED: dict[str, Listing] = {
    "gradescope": Listing("gradescope", results=True, exports=True),
    "exercism": Listing("exercism", results=True, exports=False),
    "junit": Listing("junit", results=True, exports=False),
    "kattis": Listing("kattis", results=False, exports=True),
    "prairielearn": Listing("prairielearn", results=True, exports=True),
    "otter": Listing("otter", results=False, exports=True),
}
PLATFORM_FORMATS = tuple(name for name, listed in LISTED.items() if listed.results)
EXPORT_PLATFORMS = tuple(name for name, listed in LISTED.items() if listed.exports)
