"""The bundle's feedback as the diagnosis reads it: its catalogue of classic mistakes, the parts
they point at, the constants a fit may change, the axes of an output and the group-reading
rules, all from the bundle's problem module (problem.py; records in feedback/authoring.py),
with the defaults of the optional names filled in.

reference/variants.py holds the *implementation* of each mistake (judge bundle only, because
its default configuration is a correct solution); the problem module holds the human side,
keyed by the same ids. It contains no numerics, so it ships with the practice archive.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..problem.bundle import Bundle, BundleError
from ..problem.input_rules import item_entry
from ..problem.parameters import Parameter
from .authoring import STATEMENT, Axis, Constant, GroupRule, Mistake, OnlyGroup, SampleRule, slug

__all__ = ["STATEMENT", "FeedbackData", "Mistake", "feedback_data", "slug"]

REQUIRED = ("PARTS", "PART_SECTIONS", "CATALOGUE")  # the problem module's names without a default


@dataclass(frozen=True)
class FeedbackData:
    """What one bundle tells the diagnosis (see feedback/authoring.py for each name's meaning)."""

    parts: Mapping[str, str]
    part_sections: Mapping[str, str]
    catalogue: Mapping[str, Mistake]
    parameters: tuple[tuple[str, str], ...]  # (name, type) in call order, from problem.yaml
    # each parameter's shape, as problem.yaml writes it; a list's: (its length,), and each key's
    # under item_entry(name, "*", key)
    shapes: Mapping[str, tuple[str, ...]]
    output_shape: tuple[str, ...]
    sample_format: str  # the stored mistake outputs' format, from problem.yaml's id
    function: str  # problem.yaml's function name
    constants: Mapping[str, Constant] = field(default_factory=dict)
    axes: tuple[Axis, ...] = ()
    axes_phrases: Mapping[str, str] = field(default_factory=dict)
    only_group: tuple[OnlyGroup, ...] = ()
    mixed_groups: tuple[str, ...] = ()
    group_rules: tuple[GroupRule, ...] = ()
    sample_rules: tuple[SampleRule, ...] = ()
    too_slow: Mapping[str, str] = field(default_factory=dict)
    subject: str = "the function"
    batch_dim: str | None = None
    size_inputs: tuple[str, ...] = ()
    run_variant: Callable[..., Any] | None = None
    canonical_variant: Callable[[Any], Any] = lambda v: v

    def mistake(self, mistake_id: str) -> Mistake:
        """The catalogue entry for `mistake_id`; KeyError names the unknown id."""
        try:
            return self.catalogue[mistake_id]
        except KeyError:
            raise KeyError(f"no catalogue entry for mistake {mistake_id!r}") from None

    @property
    def array_parameters(self) -> tuple[str, ...]:
        return tuple(name for name, kind in self.parameters if kind == "ndarray")

    def variant_output(
        self, variants: ModuleType, inputs: Mapping[str, Any], variant: Any, arithmetic: Any = None
    ) -> Any:
        """reference/variants.py's function on `inputs` under configuration `variant`: the
        module's run_variant, else the variants module's function of problem.yaml's name."""
        if self.run_variant is not None:
            return self.run_variant(variants, inputs, variant, arithmetic)
        run = getattr(variants, self.function)
        args = [inputs[name] for name, _ in self.parameters]
        return run(*args, v=variant) if arithmetic is None else run(*args, v=variant, arithmetic=arithmetic)


def default_axes(output_shape: tuple[str, ...]) -> tuple[Axis, ...]:
    """One axis per output dimension, named by its symbol (an expression: by its position)."""
    return tuple(Axis(sym if sym.isidentifier() else f"axis {i}", i) for i, sym in enumerate(output_shape))


def _shapes(parameters: tuple[Parameter, ...]) -> dict[str, tuple[str, ...]]:
    out = {p.name: (p.length,) if p.length else tuple(str(d) for d in p.shape) for p in parameters}
    keys = {item_entry(p.name, "*", k.name): tuple(str(d) for d in k.shape) for p in parameters for k in p.items}
    return {**out, **keys}


def _from_module(module: ModuleType, bundle: Bundle) -> FeedbackData:
    missing = [n for n in REQUIRED if not hasattr(module, n)]
    if missing:
        raise BundleError(f"{bundle.root / 'problem.py'} defines no {', '.join(missing)}: the diagnosis needs them")
    spec = bundle.spec
    shape = tuple(str(s) for s in spec.output_shape)
    names = vars(module)
    axes = tuple(names.get("AXES", ())) or default_axes(shape)
    optional: dict[str, Any] = {
        key: names[name]
        for key, name in (
            ("constants", "CONSTANTS"),
            ("only_group", "ONLY_GROUP"),
            ("mixed_groups", "MIXED_GROUPS"),
            ("group_rules", "GROUP_RULES"),
            ("sample_rules", "SAMPLE_RULES"),
            ("too_slow", "TOO_SLOW"),
            ("subject", "SUBJECT"),
            ("batch_dim", "BATCH_DIM"),
            ("size_inputs", "SIZE_INPUTS"),
            ("run_variant", "run_variant"),
            ("canonical_variant", "canonical_variant"),
        )
        if name in names
    }
    return FeedbackData(
        parts=module.PARTS,
        part_sections=module.PART_SECTIONS,
        catalogue=module.CATALOGUE,
        parameters=tuple((p.name, p.type) for p in spec.parameters),
        shapes=_shapes(spec.parameters),
        output_shape=shape,
        sample_format=f"{spec.id}/mistake-outputs/1",
        function=spec.function,
        axes=axes,
        axes_phrases=names.get("AXES_PHRASES", {}),
        **optional,
    )


def feedback_data(bundle: Bundle) -> FeedbackData:
    """The bundle's feedback, read from its problem module (imported once per Bundle)."""
    return _from_module(bundle.load_problem_module(), bundle)
