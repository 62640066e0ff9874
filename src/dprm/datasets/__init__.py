"""Example data: synthetic two-view datasets with planted redescriptions,
classification data with a planted decision tree, IBM-Quest-like itemset streams, and
the paper's movielens table (read from the user's copy of MovieLens 100K)."""

from dprm.datasets.movielens import load_movielens, movielens_types
from dprm.datasets.planted import PLANTED_FILES, RELATION_KINDS, PlantedData, make_planted, write_planted
from dprm.datasets.planted_classes import PlantedClassification, make_planted_classification
from dprm.datasets.transactions import TransactionStream, iter_transactions, make_transactions

__all__ = [
    "PLANTED_FILES",
    "RELATION_KINDS",
    "PlantedClassification",
    "PlantedData",
    "TransactionStream",
    "iter_transactions",
    "load_movielens",
    "make_planted",
    "make_planted_classification",
    "make_transactions",
    "movielens_types",
    "write_planted",
]
