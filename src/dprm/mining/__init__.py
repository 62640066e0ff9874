"""Redescription miners, chosen by name (``ALGORITHMS``) as on the command line."""

from dprm.mining.base import Miner
from dprm.mining.cartwheels import CartWheels
from dprm.mining.extraction import Constraints, LeafCombination, contingency_table, extract_combinations

ALGORITHMS: dict[str, type[Miner]] = {
    CartWheels.algorithm: CartWheels,
}

__all__ = [
    "ALGORITHMS",
    "CartWheels",
    "Constraints",
    "LeafCombination",
    "Miner",
    "contingency_table",
    "extract_combinations",
]
