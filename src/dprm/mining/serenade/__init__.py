"""Greedy differentially private redescription mining: SerenadeCS, SerenadeES, ReReMi.

* :class:`SerenadeCS`, :class:`SerenadeES` (``quality="jaccard"``: the NoSens
  ablation): :mod:`dprm.mining.serenade.private_miners`;
* :class:`ReReMi`, the non-private baseline: :mod:`dprm.mining.serenade.reremi`;
* building blocks: candidate literals and vectorised counts (:mod:`.literals`,
  :mod:`.extensions`), the memoised extension race (:mod:`.race`), ComputeQuality
  (:mod:`.compute_quality`), the lower-sensitivity quality (:mod:`.quality`).

Design and derivations: ``docs/serenade.md``.
"""

from dprm.mining.serenade.private_miners import SerenadeCS, SerenadeES, parse_budget_split
from dprm.mining.serenade.reremi import ReReMi

__all__ = ["ReReMi", "SerenadeCS", "SerenadeES", "parse_budget_split"]
