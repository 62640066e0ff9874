"""Example data: synthetic two-view datasets with planted redescriptions."""

from dprm.datasets.planted import PlantedData, make_planted, write_planted

__all__ = ["PlantedData", "make_planted", "write_planted"]
