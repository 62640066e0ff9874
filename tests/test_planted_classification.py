"""``make_planted_classification``: shapes, seeds, the planted tree's accuracy, bad sizes."""

from __future__ import annotations

import numpy as np
import pytest

from dprm.datasets import make_planted_classification
from dprm.errors import ParameterError


def test_shapes_schema_and_both_classes() -> None:
    data = make_planted_classification(2000, n_features=6, n_categories=4, depth=3,
                                       rng=np.random.default_rng(1))
    assert data.X.shape == (2000, 6)
    assert list(data.categories) == list(data.X.columns)
    assert all(set(data.X[c]) <= set(data.categories[c]) for c in data.X.columns)
    assert set(data.y) == set(data.classes)
    assert len(data.rules) == 2**3 and all(len(path) == 3 for path, _ in data.rules)


def test_same_seed_same_data() -> None:
    a = make_planted_classification(500, rng=np.random.default_rng(7))
    b = make_planted_classification(500, rng=np.random.default_rng(7))
    assert a.X.equals(b.X) and np.array_equal(a.y, b.y) and a.rules == b.rules


@pytest.mark.parametrize("noise", [0.0, 0.1, 0.3])
def test_planted_rules_predict_the_labels_up_to_the_noise(noise: float) -> None:
    data = make_planted_classification(20_000, n_features=8, depth=2, noise=noise,
                                       rng=np.random.default_rng(3))
    predicted = np.empty(len(data.y), dtype=object)
    for path, label in data.rules:
        mask = np.ones(len(data.y), dtype=bool)
        for feature, value, equal in path:
            mask &= (data.X[feature].to_numpy() == value) == equal
        predicted[mask] = label
    accuracy = float(np.mean(predicted == data.y))
    assert accuracy == pytest.approx(data.planted_accuracy)
    assert accuracy == pytest.approx(1 - noise, abs=0.015)


@pytest.mark.parametrize("kwargs", [{"n_rows": 0}, {"depth": 0}, {"depth": 5, "n_features": 3},
                                    {"n_categories": 1}, {"noise": 0.5}])
def test_bad_sizes_are_refused(kwargs: dict) -> None:
    arguments = {"n_rows": 100, **kwargs}
    with pytest.raises(ParameterError):
        make_planted_classification(arguments.pop("n_rows"), rng=np.random.default_rng(0), **arguments)
