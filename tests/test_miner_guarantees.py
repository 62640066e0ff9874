"""Every miner's privacy block says honestly what holds (spec/redescriptions.md, ``privacy``).

Every miner × {seeded noise, secure noise, undeclared types, the variance stop}: the
label, ``private`` and ``reasons`` agree with the spec and with each other.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dprm.data import load_two_view
from dprm.datasets import make_planted
from dprm.evaluation.run_documents import check_run_document
from dprm.mining import ALGORITHMS, make_miner
from dprm.privacy import Accountant, SecureNoise, SeededNoise
from dprm.privacy.accountant import is_guarantee
from dprm.queries import document_redescriptions

FAST = {
    "cartwheels": {"depth": 2, "init_trials": 2, "alternations": 1},
    "alt-expm": {"depth": 2, "init_trials": 1},
    "alt-mcmc": {"depth": 2, "init_trials": 1, "mcmc_iterations": 200},
    "mcmc-tree-pair": {"depth": 2, "init_trials": 1, "mcmc_iterations": 200},
    "serenade-cs": {"initial_pairs": 2, "extensions": 1},
    "serenade-es": {"initial_pairs": 2, "extensions": 2},
    "serenade-es-nosens": {"initial_pairs": 2, "extensions": 2},
    "reremi": {"initial_pairs": 2, "extensions": 1},
}
NOT_PRIVATE = {"cartwheels", "reremi"}
#: What holds for a secure run over declared types: exact mechanisms say pure-dp; a
#: chain only upon convergence; float64 Gumbel keys (Serenade's initial pairs, ES's race)
#: are a floating-point selection.
SECURE_LABEL = {
    "alt-expm": "pure-dp",
    "alt-mcmc": "pure-dp-on-mcmc-convergence",
    "mcmc-tree-pair": "pure-dp-on-mcmc-convergence",
    "serenade-cs": "pure-dp; floating-point selection",
    "serenade-es": "pure-dp; floating-point selection",
    "serenade-es-nosens": "pure-dp; floating-point selection",
}
VARIANCE_LABEL = {
    "alt-expm": "pure-dp",  # no chain: the stop has nothing to stop
    "alt-mcmc": "pure-dp-on-mcmc-convergence; data-dependent stop",
    "mcmc-tree-pair": "pure-dp-on-mcmc-convergence; data-dependent stop",
}


@pytest.fixture(scope="module")
def planted():
    raw = make_planted(500, n_planted=2, noise=0.02, random_state=5)
    return (load_two_view(raw.left, raw.right, types=raw.types),  # declared types and domains
            load_two_view(raw.left, raw.right))                   # types and domains read off the data


def run(algorithm: str, data, noise, **options):
    accountant = None if algorithm in NOT_PRIVATE else Accountant(1, noise)
    miner = make_miner(algorithm, **FAST[algorithm], **options)
    return miner.fit(data, accountant=accountant, rng=np.random.default_rng(0))


def check_consistent(algorithm: str, privacy: dict) -> None:
    """The spec's invariants of a privacy block."""
    keys = {"epsilon", "neighbouring", "guarantee", "private", "reasons", "ledger"}
    assert set(privacy) - {"unspent"} == keys  # `unspent` where a run stopped early (the spec: stated)
    assert privacy["neighbouring"] == "add-remove-one-row"
    assert is_guarantee(privacy["guarantee"]), privacy["guarantee"]
    assert privacy["private"] is (privacy["guarantee"] != "none")
    assert (privacy["reasons"] == []) is privacy["private"]  # not private exactly when there are reasons
    assert all(isinstance(r, str) and r for r in privacy["reasons"])
    if algorithm in NOT_PRIVATE:
        assert privacy["epsilon"] is None and privacy["ledger"] == []
        assert privacy["reasons"] == [f"{algorithm} is not a private algorithm: every statistic is exact"]
    else:
        assert math.isclose(sum(e["epsilon"] for e in privacy["ledger"]), privacy["epsilon"])
        assert 0 < privacy["epsilon"] <= 1 + 1e-12
        if "unspent" in privacy:
            assert privacy["unspent"] > 0 and math.isclose(privacy["epsilon"] + privacy["unspent"], 1)


def check_document(miner) -> None:
    """The miner's document, as written and read back, passes every reader's checks (report --run, evaluate)."""
    document = json.loads(json.dumps(miner.document({"seed": None})))
    document_redescriptions(document, source="run.json")
    check_run_document(document, "run.json", algorithm=miner.algorithm)


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_secure_run_over_declared_types(planted, algorithm) -> None:
    miner = run(algorithm, planted[0], SecureNoise())
    check_consistent(algorithm, miner.privacy_)
    check_document(miner)
    assert miner.privacy_["guarantee"] == SECURE_LABEL.get(algorithm, "none")


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_seeded_run_is_not_private_and_says_why(planted, algorithm) -> None:
    miner = run(algorithm, planted[0], SeededNoise(np.random.default_rng(1)))
    check_consistent(algorithm, miner.privacy_)
    check_document(miner)
    assert miner.privacy_["guarantee"] == "none" and miner.privacy_["private"] is False
    if algorithm not in NOT_PRIVATE:
        assert miner.privacy_["reasons"][0].startswith("seeded noise source")
        assert all("seed" not in note for note in miner.notes_)  # the reasons are not repeated as notes


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_undeclared_types_are_not_private(planted, algorithm) -> None:
    miner = run(algorithm, planted[1], SecureNoise())
    check_consistent(algorithm, miner.privacy_)
    check_document(miner)
    assert miner.privacy_["guarantee"] == "none"
    if algorithm not in NOT_PRIVATE:
        assert any("undeclared types or domains" in reason for reason in miner.privacy_["reasons"])


@pytest.mark.parametrize("algorithm", list(VARIANCE_LABEL))
@pytest.mark.parametrize("threshold", [1e-12, 1e9])  # never fires / fires at once: the rule looked at the data
def test_the_variance_stop_is_in_the_label(planted, algorithm, threshold) -> None:
    options = {"mcmc_stop": "variance", "variance_window": 20, "variance_threshold": threshold}
    miner = run(algorithm, planted[0], SecureNoise(), **options)
    check_consistent(algorithm, miner.privacy_)
    check_document(miner)
    assert miner.privacy_["guarantee"] == VARIANCE_LABEL[algorithm]
    seeded = run(algorithm, planted[0], SeededNoise(np.random.default_rng(2)), **options)
    assert seeded.privacy_["guarantee"] == "none"  # a reason outranks every qualifier


def test_public_rows_are_a_reason(planted) -> None:
    data = planted[0]
    miner = run("serenade-es", data, SecureNoise(), data_size="public", rows=data.n_rows)
    check_consistent("serenade-es", miner.privacy_)
    check_document(miner)
    assert miner.privacy_["guarantee"] == "none"
    assert any("public" in reason for reason in miner.privacy_["reasons"])


def test_a_shared_accountant_reports_each_run_alone(planted) -> None:
    accountant = Accountant(3, SecureNoise())
    first = make_miner("mcmc-tree-pair", **FAST["mcmc-tree-pair"]).fit(planted[0], accountant=accountant)
    second = make_miner("alt-expm", **FAST["alt-expm"]).fit(planted[0], accountant=accountant)
    assert first.privacy_["guarantee"] == "pure-dp-on-mcmc-convergence"
    assert second.privacy_["guarantee"] == "pure-dp"  # not weakened by the earlier run's chains
    assert first.privacy_["epsilon"] == pytest.approx(1) and second.privacy_["epsilon"] == pytest.approx(1)
    check_document(first)
    check_document(second)
    assert len(first.privacy_["ledger"]) + len(second.privacy_["ledger"]) == len(accountant.ledger)


def test_documents_of_qualified_runs_are_valid(planted) -> None:
    miner = run("serenade-es", planted[0], SecureNoise())
    assert miner.document()["privacy"]["guarantee"] == "pure-dp; floating-point selection"


@pytest.mark.parametrize("algorithm", ["alt-expm", "alt-mcmc", "mcmc-tree-pair", "serenade-cs", "serenade-es"])
def test_an_accountant_of_the_wrong_type_is_a_parameter_error(algorithm):
    import pandas as pd

    from dprm.data import load_two_view
    from dprm.errors import ParameterError
    from dprm.mining import make_miner

    data = load_two_view(pd.DataFrame({"a": ["x", "y"] * 10}), pd.DataFrame({"c": ["u", "v", "v", "u"] * 5}))
    with pytest.raises(ParameterError, match="accountant must be a dprm.privacy.Accountant"):
        make_miner(algorithm).fit(data, accountant="x")  # was AttributeError: no attribute 'can_afford'
