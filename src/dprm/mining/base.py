"""What every miner shares: parameters, the fitted redescriptions, the output document.

Miners follow scikit-learn's estimator conventions: ``__init__`` only stores the
parameters (all keyword arguments with defaults), ``fit(data, accountant=..., rng=...)``
validates them, mines, sets ``redescriptions_`` and returns the miner. Private miners
take every release through the ``accountant``; the randomness of their
data-independent choices comes from ``rng``.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from dprm.mining.extraction import Constraints
from dprm.queries import Redescription, make_document

__all__ = ["Miner"]


class Miner:
    """Base class of the redescription miners."""

    algorithm: ClassVar[str] = ""
    guarantee: ClassVar[str] = "none"

    redescriptions_: list[Redescription]
    privacy_: dict[str, Any]
    notes_: list[str]

    @classmethod
    def parameter_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        return [name for name in signature.parameters if name != "self"]

    def constraints(self) -> Constraints:
        """The constraints Γ from the miner's parameters (validated)."""
        return Constraints(
            min_support=self.min_support,
            max_support=self.max_support,
            min_jaccard=self.min_jaccard,
            max_pvalue=self.max_pvalue,
            max_clauses=self.max_clauses,
        )

    def get_params(self) -> dict[str, Any]:
        """The miner's parameters, as given to ``__init__``."""
        return {name: getattr(self, name) for name in self.parameter_names()}

    def document(self, extra_parameters: dict[str, Any] | None = None) -> dict[str, Any]:
        """The spec's JSON document (``dprm.redescriptions/1``) of the fitted miner."""
        parameters = {**self.get_params(), **(extra_parameters or {})}
        return make_document(self.algorithm, parameters, self.privacy_, self.redescriptions_)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"
