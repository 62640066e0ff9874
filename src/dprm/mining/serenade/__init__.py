"""Greedy differentially private redescription mining: SerenadeCS, SerenadeES, ReReMi."""
