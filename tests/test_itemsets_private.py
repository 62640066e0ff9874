"""The DP density estimate (dprm.itemsets.private): budget split, ledger, labels, conversion, bad input."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from dprm.errors import DataError, ParameterError
from dprm.itemsets import DensityEstimator
from dprm.itemsets.domains import encode_frame, infer_domains
from dprm.itemsets.ison import mine_itemsets
from dprm.itemsets import private
from dprm.itemsets.private import fit_private_estimator
from dprm.itemsets.private_chain import STRUCTURES
from dprm.itemsets.private_dp_trees import released_tree
from dprm.itemsets.private_fit import DOMAIN_REASON
from dprm.itemsets.private_parents import nonnegative_counts
from dprm.privacy import Accountant, SecureNoise, SeededNoise
from dprm.classifier import DPDecisionTreeClassifier

DOMAINS = {"a": ["x", "y", "z"], "b": ["u", "v"], "c": ["k", "l"], "d": ["only"]}


def _data(n: int, seed: int = 0) -> pd.DataFrame:
    """a -> b strongly dependent, c independent, d constant (one public category)."""
    rng = np.random.default_rng(seed)
    a = rng.choice(DOMAINS["a"], p=[0.6, 0.3, 0.1], size=n)
    b = np.where(a == "x", "u", np.where(rng.random(n) < 0.9, "v", "u"))
    c = rng.choice(DOMAINS["c"], p=[0.5, 0.5], size=n)
    return pd.DataFrame({"a": a, "b": b, "c": c, "d": ["only"] * n})


def _per_tree(ledger: list[dict]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for entry in ledger:
        tree = entry["step"].split(":")[0]
        totals[tree] = totals.get(tree, 0.0) + entry["epsilon"]
    return totals


@pytest.mark.parametrize("structure", STRUCTURES)
@pytest.mark.parametrize("chains", [1, 3])
def test_budget_split_equal_over_releasing_trees_and_ledger_adds_up(chains, structure):
    fit = fit_private_estimator(_data(2000), 1.0, domains=DOMAINS, n_chains=chains, structure=structure,
                                random_state=1)
    # d has one category: no release; R = chains x 3 releasing trees
    assert fit.parameters["releasing_trees"] == 3 * chains
    per_tree = _per_tree(fit.privacy["ledger"])
    assert len(per_tree) == 3 * chains
    assert all(name.split("(")[1].rstrip(")") != "d" for name in per_tree)
    for total in per_tree.values():
        assert total == pytest.approx(1.0 / (3 * chains), rel=1e-9)
    assert sum(e["epsilon"] for e in fit.privacy["ledger"]) == pytest.approx(1.0, rel=1e-9)
    assert fit.privacy["epsilon"] == pytest.approx(1.0)


@pytest.mark.parametrize("structure", STRUCTURES)
def test_budget_split_is_the_same_on_neighbouring_datasets(structure):
    """The split is fixed before any row is read: adding one row changes no tree's charge."""
    data = _data(500, seed=3)
    neighbour = pd.concat([data, pd.DataFrame([{"a": "z", "b": "u", "c": "l", "d": "only"}])], ignore_index=True)
    accountants = []
    for frame in (data, neighbour):
        accountant = Accountant(2.0, SeededNoise(np.random.default_rng(5)))
        fit_private_estimator(frame, 2.0, domains=DOMAINS, n_chains=2, accountant=accountant, structure=structure,
                              random_state=7)
        accountants.append(accountant)
    charges = [[(e.step, e.epsilon) for e in acc.ledger] for acc in accountants]
    assert charges[0] == charges[1]
    assert all(acc.spent() == Fraction(2) for acc in accountants)
    assert all(eps == Fraction(1, 3) for _, eps in charges[0])


def test_the_number_of_rows_is_not_in_the_estimate():
    fit = fit_private_estimator(_data(1234), 1.0, domains=DOMAINS, random_state=2)
    assert fit.estimator.n_seen_ == 0
    assert "1234" not in repr(fit.parameters)


def test_guarantee_labels():
    data = _data(300)
    secure = fit_private_estimator(data, 1.0, domains=DOMAINS)
    assert secure.privacy["private"] is True
    assert secure.privacy["guarantee"].startswith("pure-dp")
    assert secure.privacy["reasons"] == []
    seeded = fit_private_estimator(data, 1.0, domains=DOMAINS, random_state=0)
    assert seeded.privacy["private"] is False and seeded.privacy["guarantee"] == "none"
    read_off = fit_private_estimator(data, 1.0, domains={"a": DOMAINS["a"]})
    assert read_off.privacy["private"] is False and DOMAIN_REASON in read_off.privacy["reasons"]


def test_dp_trees_grown_by_mcmc_from_a_given_seed_are_labelled_not_private(monkeypatch):
    """random_state with a given accountant of secure noise seeds the DP trees' MCMC proposals:
    the label is none with that reason (here every tree is grown by MCMC: no exact draw is
    allowed); without random_state the same fit is private."""
    from dprm.classifier import estimator as classifier_estimator
    from dprm.privacy.accountant import SEEDED_PROPOSALS_REASON

    monkeypatch.setattr(classifier_estimator, "AUTO_EXACT_WORK", 0)
    data = _data(300)
    seeded = fit_private_estimator(data, 1.0, domains=DOMAINS, structure="dp-trees", random_state=0,
                                   accountant=Accountant(1.0, SecureNoise()))
    assert seeded.privacy["guarantee"] == "none" and seeded.privacy["reasons"] == [SEEDED_PROPOSALS_REASON]
    secure = fit_private_estimator(data, 1.0, domains=DOMAINS, structure="dp-trees",
                                   accountant=Accountant(1.0, SecureNoise()))
    assert secure.privacy["guarantee"] == "pure-dp-on-mcmc-convergence" and secure.privacy["reasons"] == []


@pytest.mark.parametrize("structure", STRUCTURES)
def test_large_epsilon_recovers_the_density_and_the_itemsets(structure):
    data = _data(20000, seed=4)
    fit = fit_private_estimator(data, 200.0, domains=DOMAINS, n_chains=2, max_depth=2, structure=structure,
                                random_state=3)
    estimator = fit.estimator
    truth_ax = float(np.mean(data["a"] == "x"))
    assert estimator.density({"a": "x"}) == pytest.approx(truth_ax, abs=0.02)
    assert estimator.density({"a": "x", "b": "u"}) == pytest.approx(truth_ax, abs=0.03)
    assert estimator.density({"a": "y", "b": "u"}) == pytest.approx(float(np.mean((data.a == "y") & (data.b == "u"))),
                                                                    abs=0.02)
    found = {frozenset(s.items.items()) for s in mine_itemsets(estimator, 0.25)}
    assert frozenset({("a", "x"), ("b", "u")}) in found
    assert frozenset({("a", "x"), ("b", "v")}) not in found


def test_small_epsilon_is_noisier_than_large():
    data = _data(3000, seed=6)
    truth = float(np.mean((data.a == "x") & (data.b == "u")))
    errors = {}
    for eps in (0.05, 50.0):
        errs = [abs(fit_private_estimator(data, eps, domains=DOMAINS, random_state=s).estimator.density(
            {"a": "x", "b": "u"}) - truth) for s in range(8)]
        errors[eps] = float(np.mean(errs))
    assert errors[50.0] < errors[0.05]


def test_released_tree_keeps_the_classifier_structure_and_its_noisy_counts_made_consistent():
    data = _data(5000, seed=8)
    variables = infer_domains(data, DOMAINS)
    X = data[["a", "c"]]
    clf = DPDecisionTreeClassifier(epsilon=50.0, max_depth=2, embedding_depth=1, search="exhaustive",
                                   categorical_splits="multiway", leaf_labels="noisy-counts",
                                   categories={"a": DOMAINS["a"], "c": DOMAINS["c"]}, classes=DOMAINS["b"],
                                   random_state=0)
    clf.fit(X, data["b"].to_numpy())
    tree = released_tree(clf, [0, 2], [variables["a"], variables["c"]], target=1)
    assert tree.target == 1 and tree.split_columns() <= {0, 2}
    codes = encode_frame(data, variables)
    proba = tree.predict_proba(codes)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.allclose(proba, clf.predict_proba(X), atol=0.02)  # at ε = 50 the noise is small either way
    # every row is predicted by a node's noisy counts, made non-negative with their total
    noisy = np.asarray(clf.tree_.noisy_counts)
    expected = {tuple(np.round(nonnegative_counts(row) / max(nonnegative_counts(row).sum(), 1e-300), 12))
                for row in noisy if nonnegative_counts(row).sum() > 0}
    assert {tuple(np.round(p, 12)) for p in np.unique(proba, axis=0)} <= expected


def test_estimator_is_a_density_estimator_with_public_domains():
    fit = fit_private_estimator(_data(500), 1.0, domains=DOMAINS, n_chains=2, random_state=0)
    assert isinstance(fit.estimator, DensityEstimator)
    assert fit.estimator.domains_ == {k: tuple(v) for k, v in DOMAINS.items()}
    assert len(fit.estimator.chains_) == 2


@pytest.mark.parametrize("epsilon", [0, -1, float("nan"), float("inf"), "x", 1e-300, 1e-5, 1e5])
def test_bad_epsilon_spends_nothing(epsilon):
    accountant = Accountant(1.0, SecureNoise())
    with pytest.raises(ParameterError):
        fit_private_estimator(_data(50), epsilon, domains=DOMAINS, accountant=accountant)
    assert accountant.spent() == 0


def test_bad_data_spends_nothing():
    accountant = Accountant(1.0, SecureNoise())
    bad = _data(50)
    bad.loc[10, "a"] = "w"
    with pytest.raises(DataError, match="'a'"):
        fit_private_estimator(bad, 1.0, domains=DOMAINS, accountant=accountant)
    with pytest.raises(DataError, match="no data rows"):  # no rows and a domain to read off them
        fit_private_estimator(_data(50).iloc[:0], 1.0, domains={"a": DOMAINS["a"]}, accountant=accountant)
    numeric = pd.DataFrame({"a": _data(50)["a"], "n": np.arange(50, dtype=float) + 0.5})
    with pytest.raises(ParameterError):
        fit_private_estimator(numeric, 1.0, domains={"a": DOMAINS["a"]}, accountant=accountant)
    small = Accountant(0.5, SecureNoise())
    with pytest.raises(ParameterError, match="remaining budget"):
        fit_private_estimator(_data(50), 1.0, domains=DOMAINS, accountant=small)
    assert accountant.spent() == 0 and small.spent() == 0


def test_parents_structure_chooses_the_order_and_reports_it():
    """With the default structure the chain's order is released too: b, which a explains, follows a or precedes it
    as its parent; every variable but the constant one is released once, and the ledger names each release."""
    fit = fit_private_estimator(_data(20000, seed=9), 50.0, domains=DOMAINS, random_state=4)
    order = fit.parameters["orders"][0]
    assert sorted(order) == sorted(DOMAINS) and order[-1] == "d"  # the constant column goes last, unreleased
    chain = fit.estimator.chains_[0]
    tests = {fit.estimator.columns_[t.target]: {fit.estimator.columns_[c] for c in t.split_columns()}
             for t in chain.trees}
    assert tests["b"] == {"a"} or "b" in tests["a"]
    steps = [e["step"] for e in fit.privacy["ledger"]]
    assert len(steps) == 2 * 3 - 1  # the first variable has no choice to make: counts only
    assert all(step.startswith("chain 1, variable ") for step in steps)


def test_bad_structure_or_parents_spends_nothing():
    accountant = Accountant(1.0, SecureNoise())
    for options in ({"structure": "forest"}, {"max_parents": -1}, {"max_parents": 9}):
        with pytest.raises(ParameterError):
            fit_private_estimator(_data(50), 1.0, domains=DOMAINS, accountant=accountant, **options)
    assert accountant.spent() == 0


@pytest.mark.parametrize("method", ["auto", "basis", "chain"])
@pytest.mark.parametrize("epsilon", [1e-4, 1000, 10_000])
def test_the_ends_of_the_epsilon_range_fit_and_the_ledger_adds_up(method, epsilon):
    """At ε of about 750 and more a discrete Laplace draw is always 0 (its variance 0 in floats): the bases'
    inverse-variance weights stayed finite only with a floor under the variance (a ZeroDivisionError before)."""
    accountant = Accountant(epsilon, SeededNoise(np.random.default_rng(0)))
    fit = fit_private_estimator(_data(400), epsilon, domains=DOMAINS, private_method=method, min_support=0.3,
                                accountant=accountant, random_state=0)
    assert sum(e["epsilon"] for e in fit.privacy["ledger"]) == pytest.approx(epsilon, rel=1e-9)
    assert accountant.spent() == pytest.approx(epsilon, rel=1e-9)


def test_dp_trees_that_would_get_less_than_the_least_epsilon_are_refused_before_anything_is_spent():
    accountant = Accountant(1.0, SecureNoise())
    with pytest.raises(ParameterError, match=r"each of the 6 DP trees.*use epsilon >= 0.0006"):
        fit_private_estimator(_data(50), 0.0005, domains=DOMAINS, n_chains=2, structure="dp-trees",
                              accountant=accountant)
    assert accountant.spent() == 0
    fit = fit_private_estimator(_data(50), 0.0006, domains=DOMAINS, n_chains=2, structure="dp-trees",
                                random_state=0)  # the least that gives each tree its 1e-4
    assert fit.parameters["epsilon_per_tree"] == pytest.approx(1e-4)


def test_autos_chain_reports_the_items_noise_it_released():
    """"auto" releases the items first; when it goes on with the chain, their scale is still in the summary."""
    fit = fit_private_estimator(_data(300), 0.01, domains=DOMAINS, private_method="auto", min_support=0.3,
                                random_state=0)
    assert fit.parameters["auto_choice"] == "chain"
    assert any(e["step"].startswith("items") for e in fit.privacy["ledger"])
    # the items' 20 % of ε over the three columns that release (d has one category)
    assert fit.parameters["noise"]["items"] == pytest.approx(3 / (0.01 * 0.2))


def test_the_public_names_are_importable_from_private_as_from_their_homes() -> None:
    """The fits live in modules of their own; users import fit_private_estimator and its names from here."""
    from dprm.itemsets import private_chain, private_dp_trees, private_fit

    homes = {name: module for module in (private_chain, private_dp_trees, private_fit) for name in module.__all__}
    moved = [name for name in private.__all__ if name in homes]
    assert set(moved) == {"PrivateFit", "DOMAIN_REASON", "released_tree", "MAX_DEPTH", "STRUCTURES",
                          "COMPRESSED_MAX_PARENTS", "COMPRESSED_MAX_CELLS"}
    assert all(getattr(private, name) is getattr(homes[name], name) for name in moved)
    assert all(hasattr(private, name) for name in private.__all__)
