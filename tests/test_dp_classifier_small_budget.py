"""The defaults' small-budget release (issue 29, :mod:`dprm.classifier.small_budget`).

* the rule reads public inputs only and switches exactly at its documented boundary;
* the default fit charges a noisy row count (``COUNT_SHARE`` of ε) before its noise,
  then the whole tree or the chosen root split with the rest: the ledger, the
  accountant and ``privacy_spent_`` agree and equal ε; explicit settings and the
  paper's variant keep their releases (no row count);
* the chosen root split draws exactly the exponential mechanism over (split,
  children's labels) with score range 1, whose probabilities on neighbouring
  datasets stay within ``e^ε`` (enumerated, and close to the bound); the whole
  default fit is ε-indistinguishable on neighbouring datasets (empirical check, the
  choice of release included).
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dprm.classifier import DPDecisionTreeClassifier
from dprm.classifier.encoding import FeatureEncoding
from dprm.classifier.parameters import LEAF_PRIOR
from dprm.classifier.small_budget import (
    COUNT_SHARE,
    ROOT_SPLIT_RATIO,
    chosen_split_tree,
    prefers_root_split,
    root_options,
    root_split_options,
)
from dprm.privacy import Accountant, DiscreteLaplaceCount, SeededNoise, StructuredDraw, StructuredExponentialMechanism


class LoggedNoise(SeededNoise):
    """Seeded noise that records the ledger's last step at every draw."""

    def __init__(self, rng: np.random.Generator) -> None:
        super().__init__(rng)
        self.accountant: Accountant | None = None
        self.steps: list[str | None] = []

    def _log(self) -> None:
        ledger = self.accountant.ledger if self.accountant is not None else []
        self.steps.append(ledger[-1].step if ledger else None)

    def discrete_laplace(self, values, scale):
        self._log()
        return super().discrete_laplace(values, scale)

    def gumbel(self, size):
        self._log()
        return super().gumbel(size)

    def uniform(self, size):
        self._log()
        return super().uniform(size)


def table(rng: np.random.Generator, n_rows: int, n_classes: int, n_features: int = 3):
    y = rng.integers(n_classes, size=n_rows)
    X = pd.DataFrame({f"a{i}": np.where(rng.random(n_rows) < 0.7, np.array(["p", "q", "r"])[y % 3],
                                        rng.choice(["p", "q", "r"], size=n_rows)) for i in range(n_features)})
    categories = {c: ["p", "q", "r"] for c in X.columns}
    return X, np.array([f"k{c:02d}" for c in y]), categories, [f"k{c:02d}" for c in range(n_classes)]


def test_the_rule_switches_at_its_boundary() -> None:
    """``ε n̂ √C < ROOT_SPLIT_RATIO · (ln(m / (1 − LEAF_PRIOR)) + ln C)``: true just below, false above."""
    for m, C in ((27, 2), (65, 3), (147, 19)):
        price = math.log(m / (1 - LEAF_PRIOR)) + math.log(C)
        boundary = ROOT_SPLIT_RATIO * price / math.sqrt(C)  # ε · n̂ at the boundary
        for epsilon in (0.09, 0.9, 9.0):
            n = boundary / epsilon
            assert prefers_root_split(epsilon, n * (1 - 1e-9), C, m, LEAF_PRIOR)
            assert not prefers_root_split(epsilon, n * (1 + 1e-9), C, m, LEAF_PRIOR)
    assert not prefers_root_split(0.01, 1, 2, 0, LEAF_PRIOR)  # nothing to split on: the tree (a leaf)
    assert prefers_root_split(0.1, -50, 2, 3, LEAF_PRIOR)  # a negative noisy count is just small


def test_root_options_count_what_the_whole_tree_chooses_among() -> None:
    ds = [FeatureEncoding.categorical("a", ("x", "y")), FeatureEncoding.categorical("b", ("p", "q", "r", "s")),
          FeatureEncoding.numeric("c", 0.0, 1.0, np.array([0.2, 0.4, 0.6, 0.8]))]
    assert root_options(ds, "binary") == 1 + 4 + 4
    assert root_options(ds, "multiway") == 1 + 1 + 4
    assert root_options(ds, "both") == 1 + (1 + 4) + 4


def test_the_row_count_mechanism_at_its_boundary() -> None:
    """The row count's noise scale is the smallest float with ``1 / scale <= ε_rows``:
    the probability of any output moves by at most ``e^{ε_rows}`` between ``n`` and
    ``n + 1`` (discrete Laplace: the ratio is ``e^{1/scale}``), and is charged once."""
    for epsilon in (Fraction(1, 10), Fraction(1), Fraction(7, 3), Fraction(10)):
        mechanism = DiscreteLaplaceCount(epsilon * COUNT_SHARE)
        assert mechanism.epsilon == epsilon / 10
        assert 1 / mechanism.scale <= float(epsilon * COUNT_SHARE)
        assert math.isclose(1 / mechanism.scale, float(epsilon * COUNT_SHARE), rel_tol=1e-12)
        assert mechanism.privacy_map(1) == epsilon * COUNT_SHARE


@pytest.mark.parametrize(("epsilon", "n_rows", "n_classes", "release", "second"),
                         [(0.1, 200, 19, "chosen split", "split"), (5.0, 200, 2, "tree", "structure#1")])
def test_the_default_fit_charges_the_count_first_and_spends_exactly_epsilon(epsilon, n_rows, n_classes, release,
                                                                           second) -> None:
    X, y, categories, classes = table(np.random.default_rng(3), n_rows, n_classes)
    noise = LoggedNoise(np.random.default_rng(0))
    accountant = Accountant(epsilon, noise)
    noise.accountant = accountant
    clf = DPDecisionTreeClassifier(epsilon=epsilon, max_depth=3, categories=categories, classes=classes,
                                   accountant=accountant, random_state=0, mcmc_steps=200).fit(X, y)
    assert clf.release_ == release
    total = Fraction(str(epsilon))
    assert [(e.step, e.epsilon) for e in accountant.ledger] == [("rows", total * COUNT_SHARE),
                                                               (second, total * (1 - COUNT_SHARE))]
    assert accountant.spent() == total
    assert clf.privacy_spent_ == epsilon
    assert sum(e["epsilon"] for e in clf.ledger_) == pytest.approx(epsilon, abs=1e-12)
    # every draw follows the charge of its release: the count first, then the model
    assert noise.steps[0] == "rows" and set(noise.steps[1:]) == {second}
    if release == "chosen split":
        assert clf.tree_.node_count == 5  # the root, a child per category and one for missing values
    assert clf.guarantee_ == "none"  # seeded noise


def test_explicit_settings_and_the_paper_keep_their_releases() -> None:
    X, y, categories, classes = table(np.random.default_rng(4), 200, 19)
    for params in ({"embedding_depth": 3}, {"leaf_labels": "joint"}, {"leaf_labels": "noisy-counts"},
                   {"variant": "paper"}):
        clf = DPDecisionTreeClassifier(epsilon=0.1, max_depth=3, categories=categories, classes=classes,
                                       random_state=0, mcmc_steps=100, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            clf.fit(X, y)
        assert clf.release_ == "tree", params
        assert "rows" not in [e["step"] for e in clf.ledger_], params
        assert clf.privacy_spent_ <= 0.1 + 1e-12


SCHEMA = [FeatureEncoding.categorical("a", ("x", "y")), FeatureEncoding.categorical("b", ("p", "q", "r"))]


def exact_split_distribution(codes: np.ndarray, y: np.ndarray, n_classes: int, eta: float) -> dict:
    """``P(split, labels) ∝ (1/m) Π_k (1/C) exp(η n_k,label_k)`` by enumerating every candidate."""
    weights = {}
    for f, option in enumerate(root_split_options(SCHEMA)):
        n_codes = SCHEMA[f].n_codes
        child = codes[:, f]  # the missing code is n_codes: the last child
        counts = np.array([[np.sum((child == k) & (y == c)) for c in range(n_classes)] for k in range(n_codes + 1)])
        for labels in itertools.product(range(n_classes), repeat=n_codes + 1):
            score = sum(counts[k, c] for k, c in enumerate(labels))
            weights[(option, labels)] = math.exp(eta * score - (n_codes + 1) * math.log(n_classes))
    total = sum(weights.values())
    return {key: w / total for key, w in weights.items()}


def small_table(rng: np.random.Generator, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    codes = np.column_stack([rng.integers(0, 3, size=n_rows), rng.integers(0, 4, size=n_rows)]).astype(np.int32)
    y = np.where(rng.random(n_rows) < 0.8, codes[:, 1] % 2, rng.integers(2, size=n_rows)).astype(np.intp)
    return codes, y


def test_the_chosen_split_draws_the_exact_exponential_mechanism() -> None:
    """4,000 draws of :func:`chosen_split_tree` against the enumerated distribution
    (every candidate's frequency inside its Clopper–Pearson interval at 1e-5, with a
    Bonferroni factor over the candidates)."""
    codes, y = small_table(np.random.default_rng(1), 12)
    epsilon, draws = 0.7, 4000
    exact = exact_split_distribution(codes, y, 2, epsilon)
    rng = np.random.default_rng(2)
    seen: dict = {}
    for _ in range(draws):
        draw = StructuredExponentialMechanism(epsilon, 1, 1).start(Accountant(epsilon, SeededNoise(rng)), "split")
        root = chosen_split_tree(codes, y, 2, SCHEMA, draw)
        key = (root.option, tuple(child.label for child in root.children))
        seen[key] = seen.get(key, 0) + 1
    assert set(seen) <= set(exact)
    for key, p in exact.items():
        low, high = clopper_pearson(seen.get(key, 0), draws, 1e-5 / len(exact))
        assert low <= p <= high, (key, p, seen.get(key, 0))


def test_the_chosen_split_is_epsilon_dp_at_its_boundary() -> None:
    """On random neighbouring datasets (one row added anywhere) every candidate's
    probability moves by at most ``e^ε`` (range-1 score: the row adds 0 or 1 to
    every candidate's score), and the worst case comes close to the bound."""
    rng = np.random.default_rng(3)
    epsilon, worst = 0.5, 0.0
    for _ in range(30):
        codes, y = small_table(rng, int(rng.integers(0, 15)))
        row = np.array([[rng.integers(0, 3), rng.integers(0, 4)]], dtype=np.int32)
        label = np.array([rng.integers(2)], dtype=np.intp)
        p = exact_split_distribution(codes, y, 2, epsilon)
        q = exact_split_distribution(np.vstack([codes, row]), np.append(y, label), 2, epsilon)
        ratio = max(abs(math.log(p[k] / q[k])) for k in p)
        assert ratio <= epsilon * (1 + 1e-12)
        worst = max(worst, ratio)
    assert worst > 0.6 * epsilon  # the bound is nearly attained: the map is not loose


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def test_default_fits_on_neighbours_do_not_contradict_epsilon() -> None:
    """Empirical check of the whole default release (count, choice, model): 800 fits
    on ``D`` and on ``D'`` = ``D`` plus one row, where the rule's boundary lies inside
    the count's noise (both releases occur: 70 rows against a boundary of about 71).
    For every output (the release chosen and the predicted class of every possible
    input) the Clopper–Pearson bounds of its frequencies keep the ratio within
    ``e^ε`` (each comparison fails by chance with probability at most 1e-5 if the fit
    is ε-DP). Exact search, so no MCMC limit is involved."""
    epsilon, fits = 1.0, 800
    rng = np.random.default_rng(5)
    y = rng.integers(2, size=70)
    X = pd.DataFrame({"a": np.where((y == 1) ^ (rng.random(70) < 0.3), "p", "q"), "b": rng.choice(["p", "q"], size=70)})
    categories = {"a": ["p", "q"], "b": ["p", "q"]}
    classes = ["k00", "k01"]
    labels = np.array([f"k{c:02d}" for c in y])
    neighbour = (pd.concat([X, pd.DataFrame({"a": ["p"], "b": ["p"]})], ignore_index=True),
                 np.append(labels, "k01"))
    probe = pd.DataFrame({"a": ["p", "p", "q", "q"], "b": ["p", "q", "p", "q"]})
    counts = []
    for (data, target), base in (((X, labels), 0), (neighbour, 100_000)):
        seen: dict = {}
        for seed in range(fits):
            clf = DPDecisionTreeClassifier(epsilon=epsilon, max_depth=2, categories=categories, classes=classes,
                                           search="exhaustive", random_state=base + seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                clf.fit(data, target)
            key = (clf.release_, tuple(clf.predict(probe)))
            seen[key] = seen.get(key, 0) + 1
        counts.append(seen)
    assert {k[0] for k in counts[0]} == {"tree", "chosen split"}, counts[0]
    bound = math.exp(epsilon)
    for key in set(counts[0]) | set(counts[1]):
        a = clopper_pearson(counts[0].get(key, 0), fits, 1e-5)
        b = clopper_pearson(counts[1].get(key, 0), fits, 1e-5)
        assert a[0] <= bound * b[1] and b[0] <= bound * a[1], (key, counts[0].get(key), counts[1].get(key))
