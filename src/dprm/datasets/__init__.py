"""Example data: synthetic two-view datasets with planted redescriptions, and
classification data with a planted decision tree."""

from dprm.datasets.planted import RELATION_KINDS, PlantedData, make_planted, write_planted
from dprm.datasets.planted_classes import PlantedClassification, make_planted_classification

__all__ = [
    "PlantedClassification",
    "PlantedData",
    "RELATION_KINDS",
    "make_planted",
    "make_planted_classification",
    "write_planted",
]
