"""The private tree miners at their best by default, the paper-era settings under variant="paper" (issue 28)."""

from __future__ import annotations

import inspect
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from test_cli import run

from dprm.data import load_two_view
from dprm.datasets import make_planted, write_planted
from dprm.errors import ParameterError
from dprm.mining import make_miner
from dprm.mining.tree_miner_defaults import PAPER_VALUES
from dprm.privacy import Accountant, SeededNoise

TREE_MINERS = ["alt-expm", "alt-mcmc", "mcmc-tree-pair"]


@pytest.fixture(scope="module")
def data():
    planted = make_planted(1200, n_left_boolean=30, n_right_numeric=10, relations=["disjunction", "thresholds"],
                           noise=0.02, random_state=5)
    return load_two_view(planted.left, planted.right, types=planted.types)


@pytest.mark.parametrize("algorithm", TREE_MINERS)
def test_the_default_is_the_measured_best_and_paper_the_paper_era(algorithm: str) -> None:
    best, paper = make_miner(algorithm), make_miner(algorithm, variant="paper")
    assert (best.variant, best.targets, best.init_trials, best.depth, best.target_share) == (
        "dprm", "scored", "auto", "auto", "auto")
    assert (paper.targets, paper.init_trials, paper.depth, paper.target_share, paper.numeric_grid) == (
        "uniform", 4, 4, 0.2, "equal-width")
    assert best.numeric_grid == "auto"
    assert paper.omega == (0.1 if algorithm == "mcmc-tree-pair" else None)
    # the signature (what the command line and the server read) shows the dprm defaults
    signature = inspect.signature(type(best).__init__).parameters
    assert signature["variant"].default == "dprm" and signature["targets"].default == "scored"
    # values given explicitly win over the variant's
    assert make_miner(algorithm, variant="paper", targets="scored", depth=3).get_params()["depth"] == 3
    assert make_miner(algorithm, variant="paper", targets="scored").targets == "scored"
    # a clone from get_params is the same miner
    assert type(paper)(**paper.get_params()).get_params() == paper.get_params()
    with pytest.raises(ParameterError, match="variant must be one of"):
        make_miner(algorithm, variant="papers")


def test_paper_values_name_parameters_of_the_miners() -> None:
    names = set(make_miner("mcmc-tree-pair").parameter_names())
    assert set(PAPER_VALUES) <= names


@pytest.mark.parametrize("probability", [0.95, None])
def test_what_is_kept_passes_the_significance_rule(data, probability: float | None) -> None:
    """A redescription is kept where its p-value is at most max-pvalue with posterior probability at least
    significance-probability (docs/mining-sessions.md, session 49); with none (the paper variant's value) where the
    upper end of its 95 % p-value interval is."""
    assert make_miner("mcmc-tree-pair").significance_probability == "auto"
    assert make_miner("mcmc-tree-pair", variant="paper").significance_probability is None
    miner = make_miner("mcmc-tree-pair", significance_probability=probability, mcmc_iterations=1000, init_trials=2,
                       depth=2)
    miner.fit(data, accountant=Accountant(1, SeededNoise(np.random.default_rng(3))), rng=np.random.default_rng(3))
    intervals = [r.extra["interval"] for r in miner.redescriptions_]
    kept = [i for r, i in zip(miner.redescriptions_, intervals) if not r.pruned]
    assert kept and all(i["significance"]["max_pvalue"] == miner.max_pvalue for i in intervals)
    assert all(0 <= i["significance"]["probability"] <= 1 for i in intervals)
    if probability is None:
        assert all(i["p_value"][1] <= miner.max_pvalue for i in kept)
    else:
        assert all(i["significance"]["probability"] >= probability for i in kept)


@pytest.mark.parametrize(("epsilon", "probability", "trial"),
                         [(0.1, 0.95, "pair"), (2.0, 0.975, "trees-then-pairs")])
def test_auto_significance_probability_follows_the_trials(data, epsilon: float, probability: float,
                                                          trial: str) -> None:
    """'auto': 0.95 where the trials are literal pairs (below one trial's budget), 0.975 from there on; the
    document's auto settings say which."""
    miner = make_miner("mcmc-tree-pair", epsilon=epsilon, mcmc_iterations=500)
    miner.fit(data, accountant=Accountant(epsilon, SeededNoise(np.random.default_rng(0))),
              rng=np.random.default_rng(0))
    assert (miner.trial_, miner.significance_probability_) == (trial, probability)
    assert miner.document()["parameters"]["auto"]["significance_probability"] == probability
    kept = [r.extra["interval"]["significance"]["probability"] for r in miner.redescriptions_ if not r.pruned]
    assert all(p >= probability for p in kept)


@pytest.mark.parametrize("omega", [None, 0.5, 0.8])
@pytest.mark.parametrize("alternations", [1, 2])
def test_alternation_budget_shares_add_up_to_epsilon(data, omega, alternations: int) -> None:
    accountant = Accountant(1, SeededNoise(np.random.default_rng(0)))
    miner = make_miner("alt-expm", init_trials=2, depth=2, omega=omega, alternations=alternations,
                       targets="uniform", size_share=0.1)
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(0))
    assert accountant.spent() == 1  # exact fractions
    ledger = accountant.ledger
    trees = sum(Fraction(e.epsilon) for e in ledger if e.step.startswith("tree 1."))
    extractions = sum(Fraction(e.epsilon) for e in ledger if e.step.startswith("extraction 1."))
    # what is left after the grids' and the row count's releases, in two trials
    trial = (1 - sum(Fraction(e.epsilon) for e in ledger if not e.step.startswith(("tree ", "extraction ")))) / 2
    assert trial == sum(Fraction(e.epsilon) for e in ledger if e.step.startswith(("tree 2.", "extraction 2.")))
    assert trees + extractions == trial
    if omega is None:  # the paper: every tree and every extraction the same share
        assert trees == trial * (alternations + 1) / (2 * alternations + 1)
    else:
        assert float(trees) == pytest.approx(float(trial) * omega, rel=1e-12)


def test_dprm_mine_records_the_variant(tmp_path: Path) -> None:
    planted = make_planted(600, n_left_boolean=12, n_right_numeric=6, relations=["thresholds"], random_state=1)
    write_planted(planted, tmp_path)
    views = [tmp_path / "left.csv", tmp_path / "right.csv", "--types", tmp_path / "types.json"]
    for variant, targets in (("paper", "uniform"), ("dprm", "scored")):
        output = tmp_path / f"{variant}.json"
        code, out, err = run(["mine", *views, "-a", "alt-expm", "--variant", variant, "--epsilon", "1",
                              "--seed", "3", "--output", output])
        assert code == 0, err
        parameters = json.loads(output.read_text())["parameters"]
        assert parameters["variant"] == variant and parameters["targets"] == targets
    code, out, err = run(["mine", *views, "-a", "alt-expm", "--variant", "new"])
    assert code == 2 and "variant must be one of" in err


# -- the greedy miners (SerenadeCS, SerenadeES, NoSens) -------------------------------------------------

GREEDY_MINERS = {"serenade-es": 80, "serenade-cs": 4, "serenade-es-nosens": 80}


@pytest.mark.parametrize("algorithm", sorted(GREEDY_MINERS))
def test_greedy_miners_default_to_dprm_and_paper_is_the_papers_configuration(algorithm: str) -> None:
    from dprm.mining.serenade.parameters import SERENADE_PAPER_VALUES

    best, paper = make_miner(algorithm), make_miner(algorithm, variant="paper")
    assert (best.variant, best.initial_pairs, best.extensions, best.score_range, best.damping, best.significance,
            best.grid) == ("dprm", "auto", "auto", "bounded", "union", "interval", "auto")
    assert (paper.variant, paper.initial_pairs, paper.extensions, paper.budget_split, paper.score_range,
            paper.damping, paper.significance, paper.grid, paper.max_splits, paper.numeric_grid) == (
        "paper", 20, GREEDY_MINERS[algorithm], "0.6,0.3,0.1", "symmetric", "none", "point", "fixed", 19,
        "equal-width")
    assert set(SERENADE_PAPER_VALUES) <= set(best.parameter_names())
    assert inspect.signature(type(best).__init__).parameters["variant"].default == "dprm"
    # values given explicitly win, and a clone from get_params is the same miner
    assert make_miner(algorithm, variant="paper", initial_pairs=3, damping="union").get_params()["initial_pairs"] == 3
    assert make_miner(algorithm, variant="paper", damping="union").damping == "union"
    assert type(paper)(**paper.get_params()).get_params() == paper.get_params()
    with pytest.raises(ParameterError, match="variant must be one of"):
        make_miner(algorithm, variant="papers").check_parameters()


def test_greedy_paper_variant_spends_epsilon_on_the_papers_draws(data) -> None:
    accountant = Accountant(1, SeededNoise(np.random.default_rng(2)))
    miner = make_miner("serenade-es", variant="paper", extensions=6)
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(2))
    steps = [entry.step for entry in accountant.ledger]
    assert sum(step.startswith("initial pair") for step in steps) == 20
    assert sum(step.startswith("extension") for step in steps) == 6
    assert accountant.spent() == 1
    assert accountant.ledger[0].step == "data size" and accountant.ledger[0].epsilon == Fraction(1, 100)


@pytest.mark.parametrize("algorithm", ["serenade-cs", "serenade-es"])
def test_greedy_default_counts_the_rows_with_three_percent(data, algorithm: str) -> None:
    """The row count every public rule reads takes 3 % of ε (the paper variant's 1 %: above)."""
    accountant = Accountant(1, SeededNoise(np.random.default_rng(3)))
    make_miner(algorithm).fit(data, accountant=accountant, rng=np.random.default_rng(3))
    assert accountant.ledger[0].step == "data size" and accountant.ledger[0].epsilon == Fraction(3, 100)
    assert sum(entry.step == "data size" for entry in accountant.ledger) == 1


def test_dprm_mine_records_the_greedy_variant(tmp_path: Path) -> None:
    planted = make_planted(600, n_left_boolean=12, n_right_numeric=6, relations=["thresholds"], random_state=1)
    write_planted(planted, tmp_path)
    views = [tmp_path / "left.csv", tmp_path / "right.csv", "--types", tmp_path / "types.json"]
    for variant, pairs in (("paper", 20), ("dprm", "auto")):
        output = tmp_path / f"{variant}.json"
        code, out, err = run(["mine", *views, "-a", "serenade-cs", "--variant", variant, "--epsilon", "1",
                              "--seed", "3", "--output", output])
        assert code == 0, err
        parameters = json.loads(output.read_text())["parameters"]
        assert parameters["variant"] == variant and parameters["initial_pairs"] == pairs
        assert parameters["damping"] == ("none" if variant == "paper" else "union")
