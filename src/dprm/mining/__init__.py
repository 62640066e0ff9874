"""Redescription miners, chosen by name (``ALGORITHMS``) as on the command line.

``ALGORITHMS`` maps each command-line name to the miner class and the fixed
parameters that select the variant (scikit-learn style: variants by string key).
"""

from typing import Any

from dprm.mining.alternation import AlternatingTrees
from dprm.mining.base import Miner
from dprm.mining.cartwheels import CartWheels
from dprm.mining.extraction import Constraints, LeafCombination, contingency_table, extract_combinations
from dprm.mining.private_extraction import private_extract, prune
from dprm.mining.serenade import ReReMi, SerenadeCS, SerenadeES
from dprm.mining.tree_pair import MCMCTreePair

ALGORITHMS: dict[str, tuple[type[Miner], dict[str, Any]]] = {
    "cartwheels": (CartWheels, {}),
    "alt-expm": (AlternatingTrees, {"trees": "exponential"}),
    "alt-mcmc": (AlternatingTrees, {"trees": "mcmc"}),
    "mcmc-tree-pair": (MCMCTreePair, {}),
    "serenade-cs": (SerenadeCS, {}),
    "serenade-es": (SerenadeES, {"quality": "logistic"}),
    "serenade-es-nosens": (SerenadeES, {"quality": "jaccard"}),
    "reremi": (ReReMi, {}),
}


def make_miner(algorithm: str, **parameters: Any) -> Miner:
    """The miner named ``algorithm`` with the given parameters."""
    miner_class, fixed = ALGORITHMS[algorithm]
    return miner_class(**fixed, **parameters)


__all__ = [
    "ALGORITHMS",
    "AlternatingTrees",
    "CartWheels",
    "Constraints",
    "LeafCombination",
    "MCMCTreePair",
    "ReReMi",
    "SerenadeCS",
    "SerenadeES",
    "Miner",
    "contingency_table",
    "extract_combinations",
    "make_miner",
    "private_extract",
    "prune",
]
