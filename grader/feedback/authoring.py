"""The records a bundle's problem module (problem.py, next to problem.yaml) writes its feedback in.

The diagnosis (grader/feedback/) knows no problem: the catalogue of mistakes, the parts of
the function they point at, the constants a fit may change, the axes along which an error
is located and the rules that read the group pattern all come from the bundle, as these
records (docs/bundle.md, "The problem module"). The module's names, all but the first three
optional:

- `PARTS: dict[str, str]` a part of the function -> how a sentence names it;
- `PART_SECTIONS: dict[str, str]` a part -> the statement.md heading that specifies it;
- `CATALOGUE: dict[str, Mistake]` keyed by reference/variants.py's MISTAKES ids;
- `CONSTANTS: dict[str, Constant]` continuous constants a diagnosis may fit (Variant fields);
- `AXES: tuple[Axis, ...]` where an error may be confined (default: one per output dimension);
- `AXES_PHRASES: dict[str, str]` the axes named together ("everywhere", "spread");
- `ONLY_GROUP: tuple[OnlyGroup, ...]`, `MIXED_GROUPS`, `GROUP_RULES: tuple[GroupRule, ...]`,
  `SAMPLE_RULES: tuple[SampleRule, ...]`, `TOO_SLOW: dict[str, str]`: the group reading;
- `SUBJECT: str` how a sentence names the whole function ("the block");
- `BATCH_DIM: str` a dimension along which the function is independent (large cases are
  then compared on their first slice);
- `run_variant(variants, inputs, variant, arithmetic=None)`: reference/variants.py's
  function evaluated on one case's inputs under one configuration.

Records only: nothing here imports NumPy, so a problem module loads fast.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STATEMENT = "statement.md"


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@dataclass(frozen=True)
class Mistake:
    """One catalogue entry: what went wrong, where, and where the statement says otherwise."""

    id: str
    title: str
    explanation: str
    part: str  # a key of PARTS
    section: str  # a heading of statement.md
    quote: str  # a phrase of that section that the mistake violates
    fix: str  # the one thing to change, as an imperative sentence
    match: str = "values"  # "values": outputs reproduce the mistake's; "rounding": error of its size
    dtype: str | None = None  # a returned array of this dtype is this mistake, whatever its values

    @property
    def anchor(self) -> str:
        return f"{STATEMENT}#{slug(self.section)}"

    @property
    def pointer(self) -> str:
        """Where to read, e.g. 'statement.md, section "Shapes"'."""
        return f'{STATEMENT}, section "{self.section}"'


@dataclass(frozen=True)
class Constant:
    """A continuous constant of the function a learner can get wrong: a field of variants.Variant."""

    name: str  # the Variant field
    title: str
    part: str  # a key of PARTS
    correct: float
    grid: tuple[float, ...]  # values learners write, tried before any fit
    bounds: tuple[float, float]  # log10 range of the continuous fit
    fix: str
    description: str  # what a fitted value means: a format string over {value}
    requires: tuple[str, ...] = ()  # Variant fields that must keep their correct value for the constant to act
    signed: bool = False  # the value may be negative too (a bias): the fit searches both signs

    def describe(self, value: float) -> str:
        return self.description.format(value=value)


@dataclass(frozen=True)
class Axis:
    """An axis along which the wrong values of an output may be confined.

    `dim` is a symbol of problem.yaml's output.shape (or its index); `groups` a dimension
    name that splits that output dimension into so many equal, contiguous blocks (the axis
    is then the blocks). `within` names an earlier axis: this one is confined when, within
    that axis's affected entries, some of its own are clean (else: when some are clean at all).
    """

    name: str  # plural, as a sentence says it ("tokens")
    dim: str | int
    groups: str | None = None
    within: str | None = None
    letter: str | None = None  # the size's name in a sentence (default: the dimension's symbol)
    unit: str = "indices"  # a block's span, named in a sentence ("columns 0-3")
    one: str | None = None  # singular (default: the name less its plural ending)

    @property
    def singular(self) -> str:
        if self.one is not None:
            return self.one
        if self.name.endswith(("ches", "shes", "sses", "xes")):
            return self.name[:-2]
        return self.name[:-1] if self.name.endswith("s") else self.name


@dataclass(frozen=True)
class OnlyGroup:
    """When `group` is the only hidden group failing (the mixed groups aside), say `text`."""

    group: str
    parts: tuple[str, ...]
    text: str
    samples_pass: bool = False  # only when the samples pass too


@dataclass(frozen=True)
class GroupRule:
    """When every group of `passing` passes and every group of `failing` fails, say `text`."""

    passing: tuple[str, ...]
    failing: tuple[str, ...]
    parts: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class SampleRule:
    """When only the samples ran and exactly `failing` failed, say `text` ("{more}": how to learn more)."""

    failing: tuple[str, ...]
    parts: tuple[str, ...]
    text: str
