"""dprm: differentially private redescription mining."""

__version__ = "0.1.0"
