"""Odd inputs of the itemset estimators from Python: clear errors, never numpy or pandas internals."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from dprm.cli.itemsets import MAX_CHAINS as CLI_CHAINS
from dprm.errors import DataError, ParameterError, short_repr
from dprm.itemsets import DensityEstimator
from dprm.itemsets.parameters import MAX_CHAINS
from dprm.itemsets.private import fit_private_estimator
from dprm.privacy import Accountant, SeededNoise

FRAME = pd.DataFrame({"a": ["x", "y", "z", "x"], "c": ["u", "v", "u", "v"]})
DOMAINS = {"a": ["x", "y", "z"], "c": ["u", "v"]}


@pytest.mark.parametrize("frame, error, fragment", [
    (FRAME[[]], DataError, "has no columns"),
    (pd.concat([FRAME, FRAME[["a"]]], axis=1), DataError, "column name 'a' occurs more than once"),
    (FRAME.assign(g=[[1], [2]] * 2), DataError, "column 'g' holds list values"),
    (FRAME.to_numpy(), ParameterError, "must be a pandas DataFrame, not ndarray|a row must be a mapping"),
])
@pytest.mark.parametrize("fit", ["online", "private"])
def test_frames_that_cannot_be_learned_are_clear_errors(frame, error, fragment, fit) -> None:
    with pytest.raises(error, match=fragment):
        if fit == "online":
            DensityEstimator(passes=1).fit(frame)
        else:
            fit_private_estimator(frame, 1.0, random_state=0)


@pytest.mark.parametrize("make, fragment", [
    (lambda: fit_private_estimator(FRAME, 1.0, domains=["x"]), "domains must map column names"),
    (lambda: fit_private_estimator(FRAME, 1.0, domains=DOMAINS, random_state=-1), "random_state must be None"),
    (lambda: DensityEstimator(random_state="x").fit(FRAME), "random_state must be None"),
    (lambda: fit_private_estimator(FRAME, 1.0, domains=DOMAINS, random_state=1.5), "random_state must be None"),
    (lambda: DensityEstimator(domains=DOMAINS).fit([1, 2, 3]), "a row must be a mapping"),
    (lambda: DensityEstimator(tie_threshold="0.1").fit(FRAME), "tie_threshold must be a number >= 0"),
    (lambda: DensityEstimator(passes=1, tie_threshold=float("nan")).fit(FRAME), "tie_threshold must be"),
    (lambda: DensityEstimator(passes=1, grace_period=2.5).fit(FRAME), "grace_period must be a whole number"),
    (lambda: DensityEstimator(passes=1, split_confidence=1.0).fit(FRAME), "split_confidence must be a number in"),
    (lambda: DensityEstimator(passes=1).fit(FRAME).sample(3, 0), "rng must be a numpy.random.Generator"),
])
def test_bad_arguments_are_parameter_errors(make, fragment) -> None:
    with pytest.raises(ParameterError, match=fragment):
        make()


def test_a_generator_is_a_valid_random_state() -> None:
    fitted = DensityEstimator(passes=1, random_state=np.random.default_rng(4)).fit(FRAME)
    assert len(fitted.sample(5, np.random.default_rng(0))) == 5


def test_a_random_state_object_is_a_seed_drawn_from_it() -> None:
    """scikit-learn's ``RandomState``: one seed drawn from it (advancing it), then the fit of that seed,
    labelled as seeded (not private)."""
    seed = int(np.random.RandomState(4).randint(2**63, dtype=np.int64))
    fitted = DensityEstimator(passes=1, random_state=np.random.RandomState(4)).fit(FRAME)
    as_int = DensityEstimator(passes=1, random_state=seed).fit(FRAME)
    rng = np.random.default_rng(0)
    assert fitted.sample(50, np.random.default_rng(0)).equals(as_int.sample(50, rng))
    fits = [fit_private_estimator(FRAME, 1.0, domains=DOMAINS, random_state=state)
            for state in (np.random.RandomState(4), seed)]
    assert fits[0].privacy == fits[1].privacy and fits[0].privacy["guarantee"] == "none"
    assert fits[0].estimator.sample(50, np.random.default_rng(0)).equals(
        fits[1].estimator.sample(50, np.random.default_rng(0)))


@pytest.mark.parametrize("setting, bad, allowed", [
    ("n_samples", 10**12, "an integer in [1, 1000000]"),  # numpy's MemoryError (21.8 TiB) once queried
    ("n_chains", 10**6, "an integer in [1, 100]"),  # hung: a million chains drawn and grown
    ("n_chains", np.int64(101), "an integer in [1, 100]"),
])
def test_the_estimates_sizes_are_bounded_like_the_private_ones_and_the_command_lines(setting, bad, allowed) -> None:
    """One line naming the parameter, its value and its range, at the start of the fit."""
    message = f"^{setting} must be {re.escape(allowed)}, not {re.escape(short_repr(bad))}$"
    with pytest.raises(ParameterError, match=message):
        DensityEstimator(**{setting: bad}).fit(FRAME)
    with pytest.raises(ParameterError, match=message):
        fit_private_estimator(FRAME, 1.0, domains=DOMAINS, random_state=0, **{setting: bad})
    with pytest.raises(ParameterError, match="^orders must hold at most 100 orders"):
        DensityEstimator(orders=[["a", "c"]] * (MAX_CHAINS + 1)).fit(FRAME)
    assert MAX_CHAINS == CLI_CHAINS  # --chains


def test_a_private_fit_refuses_its_reference_sample_size_before_spending() -> None:
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    with pytest.raises(ParameterError, match="^n_samples must be"):
        fit_private_estimator(FRAME, 1.0, domains=DOMAINS, accountant=accountant, random_state=0, n_samples=0)
    assert float(accountant.spent()) == 0.0
    limit = DensityEstimator(n_chains=100, n_samples=1_000_000, random_state=0).fit(FRAME)
    assert len(limit.chains_) == 100 and limit.n_samples == 1_000_000
