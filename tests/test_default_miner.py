"""The default private miner of ``dprm mine`` and the auto settings of the tree miners (issue 13)."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from test_cli import run

from dprm.data import load_two_view
from dprm.datasets import make_planted
from dprm.errors import ParameterError
from dprm.mining import default_algorithm, default_parameters, make_miner
from dprm.mining.auto_trees import (AUTO_MAX_TRIALS, ROWS_FOR_EXPONENTIAL_TREES, auto_tree_settings,
                                     pairs_after_trees)
from dprm.privacy import Accountant, SeededNoise


@pytest.mark.parametrize("epsilon", [1e-4, 0.01, 0.1, 0.3, 1.0, 3.0, 1e4])
@pytest.mark.parametrize("n_hat", [-50.0, 0.0, 100.0, 2575.0, 28_900.0, 1e9])
def test_auto_settings_are_in_range(epsilon: float, n_hat: float) -> None:
    settings = auto_tree_settings(epsilon, n_hat)
    assert 1 <= settings.init_trials <= AUTO_MAX_TRIALS
    assert settings.depth in (2, 3)
    assert 0 < settings.omega < 1
    rows = epsilon * max(n_hat, 1.0)
    # pruning's significance: surer where extraction chooses among many unions of leaves (session 49)
    assert settings.significance_probability == (0.95 if rows < 600 else 0.975)
    if rows < 600:  # one literal pair: no separate target
        assert (settings.trial, settings.init_trials, settings.omega, settings.target_share) == ("pair", 1, 0.7, None)
    elif rows < 1200:  # two refined pairs
        assert (settings.trial, settings.init_trials, settings.omega, settings.target_share) == (
            "refined-pair", 2, 0.75, None)
    else:
        # MCMCTreePair from two trials' budget on: the first trees trial or two test the data; the
        # alternations: the pairs' top score first, then trees; without pairs: trees
        assert settings.trial == "trees-then-pairs" and settings.init_trials >= 2
        assert 0 < settings.target_share <= 0.3
        assert auto_tree_settings(epsilon, n_hat, pairs=False) == replace(settings, trial="trees")
        assert auto_tree_settings(epsilon, n_hat, alternating=True).trial == "pairs-if-weak"


def test_auto_settings_grow_with_the_budget_in_rows() -> None:
    budgets = [(0.1, 2575), (0.3, 2575), (1.0, 2575), (1.0, 10_000), (1.0, 28_900)]
    trials = [auto_tree_settings(e, n).init_trials for e, n in budgets]
    assert trials == sorted(trials) and trials[0] == 1 and trials[-1] == AUTO_MAX_TRIALS
    assert auto_tree_settings(0.1, 2575).depth == 2 and auto_tree_settings(1.0, 28_900).depth == 3


@pytest.mark.parametrize("epsilon", [1e-4, 0.01, 0.1, 0.3, 1.0, 3.0, 1e4])
@pytest.mark.parametrize("n_hat", [-50.0, 0.0, 100.0, 2575.0, 5999.0, 6000.0, 28_900.0, 1e9])
def test_alternations_rule_differs_only_below_one_trials_budget(epsilon: float, n_hat: float) -> None:
    """AltExpM/AltMCMC: depth 1, share 0.4 and no alternation where ε·n̂ < 600 (one trial), else the pair's rule."""
    pair = auto_tree_settings(epsilon, n_hat, pairs=False)
    alternating = auto_tree_settings(epsilon, n_hat, alternating=True, pairs=False)
    if epsilon * max(n_hat, 1.0) < 600:
        assert (alternating.init_trials, alternating.depth, alternating.target_share, alternating.alternations) == (
            1, 1, 0.4, 0)
        assert alternating.omega == pair.omega and pair.init_trials == 1 and pair.depth == 2
        # with literal pairs (the default) every tree miner makes the same one pair there
        with_pairs = [auto_tree_settings(epsilon, n_hat, alternating=a) for a in (False, True)]
        assert all(s.trial == "pair" and s.omega == 0.7 and s.init_trials == 1 for s in with_pairs)
    else:
        rows = epsilon * max(n_hat, 1.0)
        if rows < 1200:
            assert alternating == pair and pair.alternations == 1
        else:  # MCMCTreePair's trees trials are fewer and larger (at least 800 rows each but two), the alternations'
            assert alternating.init_trials == min(max(int(rows // 600), 1), 8)
            assert pair.init_trials == min(max(int(rows // 800), 2), 8)
            assert pair.depth == (3 if rows / pair.init_trials >= 1200 else 2) and alternating.omega == 0.5
            # the pair's chains get 0.6 of a trial from three trees trials on (the first one's extraction decides
            # whether trees go on where there are two)
            assert pair.omega == (0.6 if pair.init_trials >= 3 else 0.5)
            assert (alternating.alternations, alternating.trial) == (pair.alternations, pair.trial) == (1, "trees")
        with_pairs = auto_tree_settings(epsilon, n_hat, alternating=True)
        if epsilon * max(n_hat, 1.0) < 1200:  # every tree miner makes the same two refined pairs
            assert with_pairs.trial == "refined-pair"  # the alternations' own trees are not made
            assert replace(with_pairs, alternations=1) == auto_tree_settings(epsilon, n_hat)
        else:  # the pairs' top score first, then the alternations' trees unless it is weak
            assert with_pairs == replace(alternating, trial="pairs-if-weak")


@pytest.mark.parametrize("epsilon", [1e-4, 0.1, 0.3, 1.0, 2.0, 3.0, 1e4])
@pytest.mark.parametrize("n_hat", [0.0, 1200.0, 2575.0, 4406.0, 5999.0, 6000.0, 28_900.0])
def test_altexpm_makes_refined_pairs_up_to_its_trees_budget(epsilon: float, n_hat: float) -> None:
    """AltExpM's rule: the others' below 1,200 rows of budget and from 6,000 on; ⌊B/600⌋ refined pairs between."""
    rows = epsilon * max(n_hat, 1.0)
    settings = auto_tree_settings(epsilon, n_hat, alternating=True, rows_for_trees=ROWS_FOR_EXPONENTIAL_TREES)
    if rows < 1200 or rows >= ROWS_FOR_EXPONENTIAL_TREES:
        assert settings == auto_tree_settings(epsilon, n_hat, alternating=True)
    else:
        assert (settings.trial, settings.init_trials, settings.omega, settings.target_share,
                settings.alternations) == ("refined-pair", min(int(rows // 600), AUTO_MAX_TRIALS), 0.75, None, 0)


@pytest.mark.parametrize("algorithm", ["alt-expm", "alt-mcmc"])
def test_between_two_trials_and_ten_altexpm_refines_pairs_and_altmcmc_grows_trees(algorithm: str) -> None:
    data = _data()  # 1,200 rows: at ε = 2 about 2,400 rows of budget, three or four trials
    accountant = Accountant(2.0, SeededNoise(np.random.default_rng(4)))
    miner = make_miner(algorithm, epsilon=2.0, mcmc_iterations=300).fit(data, accountant=accountant,
                                                                       rng=np.random.default_rng(4))
    trials = miner.settings_["init_trials"]
    assert trials == int(2.0 * miner._data_size[0] // 600) >= 3
    steps = [e.step for e in accountant.ledger]
    if algorithm == "alt-expm":
        assert miner.settings_["trial"] == "refined-pair"
        assert [s for s in steps if s.startswith(("literal pair", "refinement"))] == [
            step for k in range(1, trials + 1) for step in (f"literal pair {k}", f"refinement {k}")]
        assert not [s for s in steps if s.startswith("tree ")]
    else:  # the pairs' top score first (tests/test_pairs_if_weak.py), then trees on these planted relations
        assert miner.settings_["trial"] == "pairs-if-weak" and "pairs' top score" in steps
        assert [s for s in steps if s.startswith("tree ")] and not [s for s in steps if s.startswith("literal pair")]
    assert accountant.remaining() == 0 and sum(e.epsilon for e in accountant.ledger) == accountant.spent()


@pytest.mark.parametrize("algorithm", ["alt-expm", "alt-mcmc"])
@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_alternations_follow_their_rule_and_spend_exactly_epsilon(algorithm: str, epsilon: float) -> None:
    """With ``trial="trees"``: the alternations' own rule below one trial's budget (the pairs: next test)."""
    data = _data()  # 1,200 rows: at ε = 0.1 the budget in rows (~110) is below one trial's 600
    accountant = Accountant(epsilon, SeededNoise(np.random.default_rng(1)))
    miner = make_miner(algorithm, epsilon=epsilon, mcmc_iterations=300, trial="trees")
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(1))
    rule = auto_tree_settings(epsilon, miner._data_size[0], alternating=True, pairs=False)
    assert miner.settings_ == {"init_trials": rule.init_trials, "depth": rule.depth,
                               "target_share": rule.target_share, "omega": rule.omega,
                               "alternations": rule.alternations, "trial": "trees", "pair_thresholds": "off",
                               "significance_probability": 0.975}   # trees: many unions of leaves to choose from
    assert (rule.depth == 1) == (rule.alternations == 0) == (epsilon == 0.1)
    trees = [e for e in accountant.ledger if e.step.startswith("tree ")]
    extractions = [e for e in accountant.ledger if e.step.startswith("extraction ")]
    levels = rule.depth if algorithm == "alt-expm" else 1  # AltExpM charges each level, AltMCMC each chain
    assert len(trees) == (rule.alternations + 1) * rule.init_trials * levels
    assert len(extractions) == max(rule.alternations, 1) * rule.init_trials
    if rule.alternations == 0:  # the one tree and the extraction share the trial's budget by ω = 1/2
        assert sum(e.epsilon for e in trees) == sum(e.epsilon for e in extractions)
    assert accountant.remaining() == 0 and sum(e.epsilon for e in accountant.ledger) == accountant.spent()


@pytest.mark.parametrize("algorithm", ["alt-expm", "alt-mcmc"])
def test_without_alternation_the_tree_is_extracted_against_the_target_literal(algorithm: str) -> None:
    """``alternations`` 0: every redescription has the chosen target's attribute alone on its side."""
    data = _data()
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(3)))
    miner = make_miner(algorithm, epsilon=1.0, alternations=0, init_trials=2, depth=2, mcmc_iterations=300)
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(3))
    chosen = [e.step for e in accountant.ledger if e.step.startswith("initial target")]
    assert chosen and accountant.remaining() == 0
    assert len([e for e in accountant.ledger if e.step.startswith("extraction ")]) == 2
    assert miner.redescriptions_, "a 1,200-row planted table at ε = 1 gives candidates"
    for r in miner.redescriptions_:  # one side holds the target's attribute and nothing else
        assert len(r.left.attributes()) == 1 or len(r.right.attributes()) == 1


@pytest.mark.parametrize("algorithm", ["alt-expm", "alt-mcmc", "mcmc-tree-pair"])
def test_below_one_trials_budget_every_tree_miner_makes_one_literal_pair(algorithm: str) -> None:
    data = _data()
    accountant = Accountant(0.1, SeededNoise(np.random.default_rng(2)))
    miner = make_miner(algorithm, epsilon=0.1, mcmc_iterations=300).fit(data, accountant=accountant,
                                                                       rng=np.random.default_rng(2))
    steps = [e.step for e in accountant.ledger if not e.step.startswith(("grids:", "grid of"))]
    assert steps == ["data size", "literal pair 1", "extraction 1: cell counts"]
    choice, extraction = (e.epsilon for e in accountant.ledger[-2:])
    assert choice / (choice + extraction) == Fraction(7, 10) and accountant.remaining() == 0
    assert miner.settings_["trial"] == "pair" and "trial pair" in " ".join(miner.notes_)
    # no chain: pure-dp when secure; below one trial's budget the selections draw by permute-and-flip
    assert miner.privacy_["ledger"][-2]["mechanism"] == "exponential (permute-and-flip)"
    grids = [e["mechanism"] for e in miner.privacy_["ledger"] if e["step"].startswith("grid of")]
    assert grids and set(grids) == {"exponential (permute-and-flip, monotone scores)"}


def test_from_one_trials_budget_the_selections_keep_the_gumbel_sampler() -> None:
    data = _data()
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(3)))   # about 1,200 rows of budget
    miner = make_miner("mcmc-tree-pair", epsilon=1.0, mcmc_iterations=300).fit(data, accountant=accountant,
                                                                              rng=np.random.default_rng(3))
    assert miner.settings_["trial"] != "pair"
    selections = [e["mechanism"] for e in miner.privacy_["ledger"] if e["mechanism"].startswith("exponential")]
    assert selections and not any("permute-and-flip" in m for m in selections)


@pytest.mark.parametrize("algorithm, options, unused", [
    ("mcmc-tree-pair", {"mcmc_stop": "variance", "anchor": "attribute", "anchor_window": 5},
     ["mcmc_stop", "anchor", "anchor_window"]),
    ("alt-mcmc", {"mcmc_stop": "variance", "mcmc_nodes": "by-depth"}, ["mcmc_stop", "mcmc_nodes"]),
    ("mcmc-tree-pair", {}, []),
])
def test_chain_options_of_a_run_without_a_chain_are_said_to_be_unused(algorithm: str, options: dict,
                                                                        unused: list[str]) -> None:
    """The auto trial made a literal pair (no chain), and the output recorded --mcmc-stop variance, --anchor and
    --anchor-window as if they had been used."""
    data = _data()
    accountant = Accountant(0.1, SeededNoise(np.random.default_rng(2)))
    miner = make_miner(algorithm, epsilon=0.1, **options).fit(data, accountant=accountant,
                                                              rng=np.random.default_rng(2))
    assert miner.settings_["trial"] == "pair" and miner.privacy_["guarantee"] == "none"  # seeded noise
    assert miner.unused_options() == unused
    parameters = miner.document()["parameters"]
    assert parameters.get("unused", []) == unused and all(parameters[name] == options[name] for name in unused)
    said = [note for note in miner.notes_ if "had no effect" in note]
    assert said == ([f"{', '.join(n.replace('_', '-') for n in unused)} had no effect: no MCMC chain ran "
                     f"(its trials were literal pairs)"] if unused else [])


def test_chain_options_of_a_run_with_chains_are_used() -> None:
    data = _data()
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(2)))
    miner = make_miner("mcmc-tree-pair", epsilon=1.0, trial="trees", init_trials=1, depth=2, mcmc_iterations=200,
                       mcmc_stop="variance", variance_window=20).fit(data, accountant=accountant,
                                                                     rng=np.random.default_rng(2))
    assert miner.unused_options() == [] and "unused" not in miner.document()["parameters"]
    assert not any("had no effect" in note for note in miner.notes_)


def test_altexpm_runs_no_chain_and_says_its_chain_options_are_unused() -> None:
    data = _data()
    accountant = Accountant(1.0, SeededNoise(np.random.default_rng(2)))
    miner = make_miner("alt-expm", epsilon=1.0, trial="trees", init_trials=1, depth=2,
                       mcmc_iterations=200).fit(data, accountant=accountant, rng=np.random.default_rng(2))
    assert miner.unused_options() == ["mcmc_iterations"] == miner.document()["parameters"]["unused"]
    assert "mcmc-iterations had no effect: no MCMC chain ran (its trees were exponential-mechanism choices)" in \
        miner.notes_


def test_a_literal_pair_needs_scored_targets() -> None:
    with pytest.raises(ParameterError, match="trial pair needs targets scored"):
        make_miner("mcmc-tree-pair", trial="pair", targets="uniform").check_parameters()


def test_no_alternation_needs_scored_targets() -> None:
    with pytest.raises(ParameterError, match="alternations 0 needs targets scored"):
        make_miner("alt-expm", alternations=0, targets="uniform")
    data = _data()  # auto with uniform targets: one alternation (a uniform target has no literal)
    miner = make_miner("alt-expm", epsilon=0.1, targets="uniform")
    miner.fit(data, accountant=Accountant(0.1, SeededNoise(np.random.default_rng(0))), rng=np.random.default_rng(0))
    assert miner.settings_["alternations"] == 1 and "alternations 1" in " ".join(miner.notes_)


def test_alternations_auto_target_share_limits_the_size_share() -> None:
    with pytest.raises(ParameterError, match="size-share must be below 0.6 with target-share auto"):
        make_miner("alt-expm", size_share=0.65)
    make_miner("mcmc-tree-pair", size_share=0.65).check_parameters()  # its rule's share is at most 0.3


def _data(declare_complete: bool = True):
    planted = make_planted(1200, n_left_boolean=30, n_right_numeric=10, relations=["disjunction", "threshold-or"],
                           random_state=2)
    types = planted.types
    if not declare_complete:  # make_planted declares its columns complete; without it a query's text names its cells
        types = {"columns": {name: {k: v for k, v in spec.items() if k != "complete"}
                             for name, spec in types["columns"].items()}}
    return load_two_view(planted.left, planted.right, types=types)


@pytest.mark.parametrize("epsilon", [0.1, 0.7, 2.0, 2.5])  # one pair, two refined pairs, two / three trees trials
def test_auto_miner_follows_the_rule_on_the_released_count(epsilon: float) -> None:
    data = _data()
    accountant = Accountant(epsilon, SeededNoise(np.random.default_rng(0)))
    miner = make_miner(default_algorithm(epsilon), epsilon=epsilon, mcmc_iterations=300,
                       **default_parameters(epsilon))
    seen = []
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(0), progress=lambda d, t: seen.append((d, t)))
    # one count of the rows first, for the grids and the run; then the grids (numeric-grid auto)
    released = accountant.ledger[0]
    assert released.step == "data size"
    total, grid_epsilon = Fraction(str(epsilon)), Fraction(str(epsilon)) * Fraction(str(miner.grid_share))
    assert released.epsilon == grid_epsilon / 10 + (total - grid_epsilon) * Fraction(str(miner.size_share))
    grids = [e for e in accountant.ledger if e.step.startswith(("grids:", "grid of"))]
    assert grids and accountant.ledger[1:1 + len(grids)] == grids
    assert not any(e.step.startswith("grids:") for e in grids)   # no second count
    assert sum(e.epsilon for e in grids) == grid_epsilon * Fraction(9, 10)
    rule = auto_tree_settings(epsilon, miner._data_size[0])
    assert miner.settings_ == {"init_trials": rule.init_trials, "depth": rule.depth,
                               "target_share": rule.target_share, "omega": rule.omega, "trial": rule.trial,
                               "pair_thresholds": "off",   # on only where refined pairs have 600 rows each
                               "significance_probability": 0.95 if rule.trial == "pair" else 0.975}
    trials = {0.1: "pair", 0.7: "refined-pair", 2.0: "trees-then-pairs", 2.5: "trees-then-pairs"}  # ~110 rows at 0.1
    assert rule.trial == trials[epsilon]
    chains = [e for e in accountant.ledger if e.step.startswith("sampleTreePair#")]
    pairs = [e for e in accountant.ledger if e.step.startswith("literal pair ")]
    if rule.trial == "trees-then-pairs" and not chains:  # a weak top score of the pairs: refined pairs only
        assert 1 <= len(pairs) <= rule.init_trials
    elif rule.trial == "trees-then-pairs":  # trees throughout, or two trees trials and then refined pairs
        assert (len(chains), len(pairs)) in ((rule.init_trials, 0), (2, pairs_after_trees(rule.init_trials)))
        # each chain and its extraction share their trial by the rule's ω (0.6 from three trees trials on)
        assert rule.omega == (0.6 if rule.init_trials >= 3 else 0.5)
        omega = Fraction(str(rule.omega))
        extractions = {e.step.split(":")[0].removeprefix("extractReds#"): e.epsilon for e in accountant.ledger
                       if e.step.startswith("extractReds#")}
        for chain in chains:
            assert chain.epsilon * (1 - omega) == extractions[chain.step.removeprefix("sampleTreePair#")] * omega
    else:
        assert (len(chains), len(pairs)) == (0, rule.init_trials)
    assert float(accountant.spent()) == pytest.approx(epsilon)
    assert seen[-1][0] == seen[-1][1] == miner.work()  # total fixed before the data: the most trials
    document = miner.document()
    assert document["parameters"]["depth"] == "auto" and document["parameters"]["auto"]["depth"] == rule.depth
    assert any(note.startswith("auto: init-trials") for note in miner.notes_)


def test_auto_needs_the_row_count() -> None:
    with pytest.raises(ParameterError, match="init-trials auto needs size-share above 0"):
        make_miner("alt-mcmc", init_trials="auto", size_share=0)
    with pytest.raises(ParameterError, match="omega must be"):
        make_miner("mcmc-tree-pair", omega="often")
    with pytest.raises(ParameterError, match="depth must be an integer"):
        make_miner("cartwheels", depth="auto")  # not private: no rule


def test_dprm_mine_without_algorithm_runs_the_default_private_miner(tmp_path: Path) -> None:
    planted = make_planted(800, n_left_boolean=20, n_right_numeric=8, relations=["thresholds"], random_state=1)
    from dprm.datasets import write_planted

    write_planted(planted, tmp_path)
    output = tmp_path / "out.json"
    code, out, err = run(["mine", tmp_path / "left.csv", tmp_path / "right.csv", "--types", tmp_path / "types.json",
                          "--epsilon", "0.5", "--seed", "4", "--mcmc-iterations", "300", "--output", output])
    assert code == 0, err
    document = json.loads(output.read_text())
    assert document["algorithm"] == "mcmc-tree-pair"
    assert document["parameters"]["targets"] == "scored" and document["parameters"]["mcmc_iterations"] == 300
    assert document["parameters"]["epsilon"] == 0.5
    assert "default miner: mcmc-tree-pair" in out
    # an option given overrides the rule
    code, out, err = run(["mine", tmp_path / "left.csv", tmp_path / "right.csv", "--types", tmp_path / "types.json",
                          "--epsilon", "0.5", "--seed", "4", "--mcmc-iterations", "300", "--init-trials", "2",
                          "--output", output])
    assert code == 0, err
    document = json.loads(output.read_text())
    assert document["parameters"]["init_trials"] == 2 and "init_trials" not in document["parameters"]["auto"]
    code, out, err = run(["mine", tmp_path / "left.csv", tmp_path / "right.csv", "--omega", "abc"])
    assert code == 2 and "--omega must be a number or 'auto'" in err


def test_subtree_units_are_post_processing_of_the_same_releases() -> None:
    """units auto (subtrees at depth <= 6) releases what units leaves releases; only the queries formed differ.

    On data without declared complete columns, so that two queries printed alike are sums of the same
    released cells (with complete columns the normal form may print sums of different cells alike: seen
    here as [l_bool_0 = false] with left supports 705.17 and 706.26)."""
    data = _data(declare_complete=False)
    runs = {}
    for units in ("leaves", "auto"):
        accountant = Accountant(1.0, SeededNoise(np.random.default_rng(3)))
        miner = make_miner("mcmc-tree-pair", epsilon=1.0, mcmc_iterations=300, units=units)
        miner.fit(data, accountant=accountant, rng=np.random.default_rng(3))
        runs[units] = (miner, [(e.step, e.epsilon) for e in accountant.ledger])
    (leaves, leaves_ledger), (auto, auto_ledger) = runs["leaves"], runs["auto"]
    assert auto.units_ == "subtrees" and leaves.units_ == "leaves"
    assert auto_ledger == leaves_ledger  # the same releases, in the same order, with the same ε
    assert auto.document()["parameters"]["units"] == "auto"
    assert auto.document()["parameters"]["auto"]["units"] == "subtrees"
    # the same noise draws: a redescription both runs form has the same released statistics in both
    stats = {(str(r.left), str(r.right)): r.stats for r in leaves.redescriptions_}
    common = [(key, r.stats) for r in auto.redescriptions_ if (key := (str(r.left), str(r.right))) in stats]
    assert common and all(s == stats[key] for key, s in common)
    # subtrees are more starts for extraction: every kept leaves redescription's pair of trees gives more forms
    assert len(auto.redescriptions_) > len(leaves.redescriptions_)


def test_units_auto_takes_leaves_beyond_the_subtrees_depth_and_in_the_paper_variant() -> None:
    assert make_miner("mcmc-tree-pair", depth=7).units == "auto"  # allowed: auto takes leaves at depth 7
    with pytest.raises(ParameterError, match="depth must be at most 6 with units subtrees"):
        make_miner("mcmc-tree-pair", depth=7, units="subtrees")
    assert make_miner("alt-mcmc", variant="paper").units == "leaves"
    data = _data()
    miner = make_miner("alt-expm", epsilon=1.0, depth=1, init_trials=1)
    miner.fit(data, accountant=Accountant(1.0, SeededNoise(np.random.default_rng(0))), rng=np.random.default_rng(0))
    assert miner.units_ == "subtrees" and "units" not in miner.settings_
