"""Example data: synthetic two-view datasets with planted redescriptions, and
classification data with a planted decision tree."""

from dprm.datasets.planted import PlantedData, make_planted, write_planted
from dprm.datasets.planted_classes import PlantedClassification, make_planted_classification

__all__ = [
    "PlantedClassification",
    "PlantedData",
    "make_planted",
    "make_planted_classification",
    "write_planted",
]
