"""Miner parameters: declared once, every one with help and limits, checked before any work."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from dprm.errors import ParameterError
from dprm.mining import ALGORITHMS, CartWheels, MCMCTreePair, Miner, Param, make_miner, parameter_help, parameter_specs
from dprm.mining.alternation import AlternatingTrees
from dprm.mining.serenade import ReReMi, SerenadeCS, SerenadeES
from dprm.params import BUDGET_SHARE_UNIT
from dprm.privacy import Accountant, SecureNoise

MINER_CLASSES = [CartWheels, AlternatingTrees, MCMCTreePair, SerenadeCS, SerenadeES, ReReMi]
SPECS = [(algorithm, name, spec) for algorithm in ALGORITHMS for name, spec in parameter_specs(algorithm).items()]


def one_line_error(algorithm: str, **parameters) -> str:
    with pytest.raises(ParameterError) as error:
        make_miner(algorithm, **parameters)
    message = str(error.value)
    assert "\n" not in message and message
    return message


# -- declared once ------------------------------------------------------------------------


@pytest.mark.parametrize("miner_class", MINER_CLASSES)
def test_every_init_parameter_has_a_spec_and_the_signature_stays_flat(miner_class) -> None:
    signature = inspect.signature(miner_class.__init__)
    names = [n for n in signature.parameters if n != "self"]
    assert set(names) == set(miner_class.parameter_specs)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is not inspect.Parameter.empty
               for n, p in signature.parameters.items() if n != "self")
    miner = miner_class()
    assert miner.get_params() == {n: signature.parameters[n].default for n in names}  # __init__ stores them all
    miner.check_parameters()  # every default is allowed


def test_a_parameter_without_a_spec_is_refused_when_the_class_is_defined() -> None:
    with pytest.raises(TypeError, match="without a spec"):
        class Broken(Miner):  # noqa: F841
            parameter_specs = {"depth": Param("depth", "Depth.", "int")}

            def __init__(self, *, depth: int = 2, width: int = 3) -> None:
                self._store(locals())


def test_help_for_every_parameter_in_words_with_its_limits() -> None:
    helps = parameter_help()
    for algorithm, name, spec in SPECS:
        assert name in helps and "allowed: " in helps[name]
        assert len(spec.help.split()) >= 4, f"{algorithm}.{name}: say what it means in words"
        if spec.kind == "int" and spec.high is not None:
            assert spec.why, f"{algorithm}.{name}: say why {spec.high} is the limit"
    assert "initial targets" in helps["init_trials"] and "InTr" in helps["init_trials"]
    assert "alternations" in helps["alternations"] and "RMIter" in helps["alternations"]
    assert "MCMC steps" in helps["mcmc_iterations"] and "MCIter" in helps["mcmc_iterations"]
    assert "in rows" in helps["min_support"] and "share of the rows" in helps["max_support"]
    assert helps["depth"].endswith("allowed: 1 to 7 or auto, 1 to 6 for cartwheels")
    assert parameter_specs("mcmc-tree-pair")["mcmc_iterations"].unit == "steps"


# -- limits ---------------------------------------------------------------------------------


def _context(name: str) -> dict:
    """Other parameters a value needs to be valid on its own."""
    return {"rows": {"data_size": "public"}, "anchor_window": {"anchor": "attribute"}}.get(name, {})


@pytest.mark.parametrize(("algorithm", "name", "spec"), [s for s in SPECS if s[2].kind == "int" and s[2].high])
def test_every_size_parameter_has_an_upper_limit_with_its_reason(algorithm, name, spec) -> None:
    make_miner(algorithm, **{name: int(spec.high), **_context(name)})  # the limit itself is allowed
    message = one_line_error(algorithm, **{name: int(spec.high) + 1, **_context(name)})
    assert message == f"{spec.option} must be at most {int(spec.high):,} ({spec.why}), not {int(spec.high) + 1}"


SHARE_SPECS = [s for s in SPECS if s[2].unit == BUDGET_SHARE_UNIT]


def test_every_share_of_the_budget_is_declared_as_one() -> None:
    """The shares the check below covers: each private tree miner's and each Serenade's."""
    names = {(algorithm, name) for algorithm, name, _ in SHARE_SPECS}
    for algorithm in ("alt-expm", "alt-mcmc", "mcmc-tree-pair"):
        assert {(algorithm, name) for name in ("omega", "size_share", "grid_share", "target_share",
                                               "reestimate_share", "binning_share")} <= names
    assert {("serenade-cs", "size_share"), ("serenade-es", "size_share")} <= names


@pytest.mark.parametrize(("algorithm", "name", "spec"), SHARE_SPECS)
def test_a_share_of_the_budget_too_small_to_release_anything_is_refused(algorithm, name, spec) -> None:
    """A denormal share (``1e-320``) passed every check, then overflowed its noise scale mid-run: a
    server job was charged and failed (``OverflowError`` in ``float_up``). Refused before any work now."""
    for value in (1e-320, 1e-7, "1/10000000" if spec.kind == "epsilon" else 9.99e-7):
        message = one_line_error(algorithm, **{name: value, **_context(name)})
        assert message.startswith(f"{spec.option} must be ") and "at least 1e-06 of the budget" in message, message
    make_miner(algorithm, **{name: 1e-6, **_context(name)})  # the smallest share itself is allowed
    zero_allowed = not (spec.low == 0 and spec.low_open)
    assert ("must be 0 or at least" in one_line_error(algorithm, **{name: 1e-320})) == zero_allowed


def test_serenade_budget_split_and_sharpness_too_small_are_refused() -> None:
    assert one_line_error("serenade-cs", budget_split="0.0000001,0.5,0.4999999") == (
        "each budget-split share must be at least 1e-06 of the budget (a smaller share's noise drowns every count), "
        "not 1e-07")
    make_miner("serenade-cs", budget_split="0.000001,0.5,0.499999")
    for algorithm in ("serenade-cs", "serenade-es"):
        assert one_line_error(algorithm, min_sharpness=1e-320) == (
            "min-sharpness must be at least 0.01 (a blunter draw is close to uniform over its candidates), not 1e-320")


def test_a_tiny_share_is_refused_before_reading_data_or_spending() -> None:
    for miner in (MCMCTreePair(grid_share=1e-320), AlternatingTrees(omega=1e-320), SerenadeES(size_share=1e-320)):
        accountant = Accountant(1, SecureNoise())
        with pytest.raises(ParameterError, match="at least 1e-06 of the budget"):
            miner.fit(None, accountant=accountant)
        assert accountant.ledger == [] and not hasattr(miner, "redescriptions_")


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_depth_and_iterations_that_no_machine_holds_are_refused(algorithm) -> None:
    names = set(parameter_specs(algorithm))
    for name, value in (("depth", 30), ("depth", 100), ("init_trials", 10**11), ("mcmc_iterations", 10**11),
                        ("alternations", 10**9), ("initial_pairs", 10**9), ("extensions", 10**9),
                        ("max_splits", 10**6), ("variance_window", 10**9), ("max_literals", 10**6)):
        if name in names:
            assert one_line_error(algorithm, **{name: value}).startswith(f"{name.replace('_', '-')} must be at most")


def test_the_messages_name_the_option_the_limit_and_the_reason() -> None:
    assert one_line_error("cartwheels", depth=30) == (
        "depth must be at most 6 (extraction compares every pair of leaf sets of a tree pair: memory grows as "
        "16^depth, up to 7 GB at depth 6), not 30")
    assert one_line_error("mcmc-tree-pair", depth=100).startswith("depth must be at most 7 (")
    assert one_line_error("alt-mcmc", depth=0) == "depth must be at least 1, not 0"
    assert one_line_error("alt-mcmc", depth=7, units="subtrees").startswith("depth must be at most 6 with units "
                                                                           "subtrees")
    assert one_line_error("alt-expm", size_share=0.5, binning_share=0.5).startswith(
        "size-share and binning-share must add up to less than 1")
    assert one_line_error("mcmc-tree-pair", omega=1.0) == "omega must be in (0, 1), not 1.0"
    assert one_line_error("serenade-es", max_pvalue=2) == "max-pvalue must be in [0, 1], not 2"
    assert one_line_error("alt-expm", epsilon=1e-9).startswith("epsilon must be in [0.0001, 10,000] (a smaller "
                                                              "budget drowns")
    assert one_line_error("serenade-cs", data_size="engine", min_support=50).startswith("data-size 'engine' needs")


# -- types --------------------------------------------------------------------------------


def _bad_values(spec: Param) -> list:
    nan, inf = float("nan"), float("inf")
    common = [] if spec.none else [None]
    if spec.kind == "int":
        return common + [True, False, 2.5, 3.0, "3", nan, inf, [3]]
    if spec.kind == "float":
        return common + [True, "0.5", nan, inf, -inf, np.float64("nan"), [0.5]]
    if spec.kind == "epsilon":
        return common + [True, nan, inf, -inf, "abc", 0, -1]
    if spec.kind == "bool":
        return common + [1, 0, "yes", "true", nan]
    if spec.kind == "choice":
        return common + ["nonsense", 3, True, "", nan]
    return common + [3, True, nan, "1,2", "0.5,0.5,0.1"]  # text: the budget split


@pytest.mark.parametrize(("algorithm", "name", "spec"), SPECS)
def test_wrong_types_and_non_finite_values_are_clean_parameter_errors(algorithm, name, spec) -> None:
    for value in _bad_values(spec):
        message = one_line_error(algorithm, **{name: value, **_context(name)})
        assert message.startswith(spec.option) or (name == "budget_split" and "budget-split" in message), message


def test_numpy_numbers_are_numbers() -> None:
    miner = make_miner("mcmc-tree-pair", depth=np.int64(3), omega=np.float64(0.2), mcmc_iterations=np.int32(50))
    assert miner.depth == 3
    # the private tree miners also take "auto" (issue 13), and their message says so
    assert one_line_error("mcmc-tree-pair", depth=np.float64(3.0)) == ("depth must be an integer or auto, not "
                                                                       "np.float64(3.0)")


@pytest.mark.parametrize(("value", "message"), [
    (2.5, "depth must be an integer, not 2.5"),
    ("3", "depth must be an integer, not '3'"),
    (True, "depth must be an integer, not True"),
    (math.nan, "depth must be an integer, not nan"),
])
def test_depth_of_the_wrong_type(value, message) -> None:
    assert one_line_error("cartwheels", depth=value) == message
    for algorithm in ("alt-expm", "mcmc-tree-pair"):  # these also take "auto" (issue 13)
        assert one_line_error(algorithm, depth=value) == message.replace("an integer", "an integer or auto")


def test_auto_and_none_where_allowed_only() -> None:
    make_miner("serenade-es", initial_pairs="auto", extensions="auto", min_support=None, steepness=None)
    assert one_line_error("reremi", initial_pairs="auto") == "initial-pairs must be an integer, not 'auto'"
    assert one_line_error("serenade-cs", initial_pairs="many") == "initial-pairs must be an integer or auto, not 'many'"
    assert one_line_error("alt-mcmc", min_support=None) == "min-support must be a number, not None"
    make_miner("alt-mcmc", prune_interval=None, prune_support=None)


def test_unknown_algorithm_and_parameters_are_parameter_errors() -> None:
    assert one_line_error("best-miner").startswith("unknown algorithm 'best-miner'")
    assert one_line_error("reremi", depth=3) == "reremi has no parameter depth"
    assert one_line_error("alt-expm", trees="mcmc") == "alt-expm has no parameter trees"  # fixed by the name


# -- before any work ------------------------------------------------------------------------


@pytest.mark.parametrize(("miner_class", "bad"), [
    (CartWheels, {"depth": 30}),
    (AlternatingTrees, {"depth": 100}),
    (MCMCTreePair, {"mcmc_iterations": 10**12}),
    (SerenadeCS, {"initial_pairs": 0}),
    (SerenadeES, {"max_splits": 10**5}),
    (ReReMi, {"extensions": -1}),
])
def test_fit_checks_before_reading_data_or_spending(miner_class, bad) -> None:
    """``data=None`` would fail on first use: the ParameterError proves nothing was read."""
    miner = miner_class(**bad)  # scikit-learn style: __init__ only stores
    accountant = Accountant(1, SecureNoise())
    with pytest.raises(ParameterError):
        miner.fit(None, accountant=accountant)
    assert accountant.ledger == [] and not hasattr(miner, "redescriptions_")


def test_the_experiment_runner_refuses_bad_values_before_any_run() -> None:
    from dprm.evaluation.budgets import parse_budgets
    from dprm.evaluation.algorithms import _check_parameters

    budgets = parse_budgets("1x1")
    with pytest.raises(ParameterError, match="depth must be at most 7"):
        _check_parameters(["alt-expm"], budgets, {"depth": 100})
    with pytest.raises(ParameterError, match="depth must be an integer"):
        _check_parameters(["cartwheels"], budgets, {"cartwheels": {"depth": 2.5}})
    _check_parameters(["alt-expm", "cartwheels"], budgets, {"depth": 3})


def test_none_is_a_value_of_the_options_whose_help_offers_it(tmp_path) -> None:
    """``--prune-interval none`` and ``-p prune_interval=none`` switch the rule off (they
    were refused as 'not a valid number'); a choice keeps the text ``none``."""
    from test_cli import run

    from dprm.cli.miner_options import given_parameters
    from dprm.evaluation.algorithms import parameters_for

    assert given_parameters(ALGORITHMS, "alt-expm", {"prune_interval": "none", "prune_support": "12"}) == {
        "prune_interval": None, "prune_support": 12.0}
    assert given_parameters(ALGORITHMS, "reremi", {"min_support": "None"}) == {"min_support": None}
    with pytest.raises(ParameterError, match="--prune-interval must be a number or 'none', not 'wide'"):
        given_parameters(ALGORITHMS, "alt-expm", {"prune_interval": "wide"})
    assert parameters_for("alt-expm", {"prune_interval": "none", "alt-expm": {"prune_support": "none"}}) == {
        "prune_interval": None, "prune_support": None}
    assert parameters_for("serenade-es", {"damping": "none"}) == {"damping": "none"}
    left, right = tmp_path / "l.csv", tmp_path / "r.csv"
    left.write_text("id,a,b\n" + "".join(f"{i},{i % 5},{'xy'[i % 2]}\n" for i in range(40)))
    right.write_text("id,c\n" + "".join(f"{i},{'pq'[i % 2]}\n" for i in range(40)))
    out = tmp_path / "o.json"
    code, _, stderr = run(["mine", left, right, "-a", "alt-expm", "--prune-interval", "none", "--prune-support",
                           "none", "--seed", "1", "--output", out])
    assert code == 0, stderr
    import json

    parameters = json.loads(out.read_text())["parameters"]
    assert parameters["prune_interval"] is None and parameters["prune_support"] is None


def test_exact_numbers_as_parameters_fit_and_write_plain_json() -> None:
    """A Fraction confidence passed the check and then failed in numpy after ε was spent;
    Fraction ε and numpy integers made the document unserialisable by json.dumps."""
    import json
    from fractions import Fraction

    from dprm.datasets import make_planted
    from dprm.data import load_two_view
    from dprm.privacy import SeededNoise

    planted = make_planted(300, n_planted=1, random_state=2)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    miner = make_miner("alt-expm", epsilon=Fraction(1, 3), confidence=Fraction(1, 2), depth=np.int64(2),
                       init_trials=1)
    with pytest.raises(ParameterError, match="call fit first"):
        miner.document()
    miner.fit(data, accountant=Accountant(Fraction(1, 3), SeededNoise(np.random.default_rng(0))),
              rng=np.random.default_rng(0))
    parameters = json.loads(json.dumps(miner.document()))["parameters"]
    assert parameters["confidence"] == 0.5 and parameters["epsilon"] == pytest.approx(1 / 3)
    assert parameters["depth"] == 2


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_every_miner_is_cloned_and_set_as_scikit_learn_does(algorithm: str) -> None:
    from sklearn.base import clone

    miner = make_miner(algorithm)
    copy = clone(miner)
    assert type(copy) is type(miner) and copy is not miner and copy.get_params() == miner.get_params()
    name = "min_support" if "min_support" in miner.get_params() else next(iter(miner.get_params()))
    with pytest.raises(ParameterError):
        miner.set_params(no_such_parameter=1)
    if name == "min_support":
        before = miner.get_params()
        with pytest.raises(ParameterError):
            miner.set_params(min_support=-5)
        assert miner.get_params() == before  # a refused value leaves the miner as it was
        assert miner.set_params(min_support=7) is miner and miner.min_support == 7


# -- values of other types: used as the numbers they are ------------------------------------------


def _planted_data(rows: int = 300):
    from dprm.data import load_two_view
    from dprm.datasets import make_planted

    planted = make_planted(rows, n_left_boolean=6, n_right_numeric=4, n_planted=2, random_state=0)
    return load_two_view(planted.left, planted.right, types=planted.types)


@pytest.mark.parametrize("algorithm", ["mcmc-tree-pair", "alt-expm", "alt-mcmc"])
def test_an_epsilon_given_as_exact_text_is_used_as_that_fraction(algorithm) -> None:
    # float("1/3") failed in the tree miners after the row count and the grids were charged
    from fractions import Fraction

    from dprm.privacy import SeededNoise

    accountant = Accountant(1, SeededNoise(np.random.default_rng(0)))
    miner = make_miner(algorithm, epsilon="1/3", mcmc_iterations=200).fit(_planted_data(), accountant=accountant,
                                                                          rng=0)
    assert miner.epsilon == Fraction(1, 3) and accountant.spent() == Fraction(1, 3)
    assert sum(Fraction(entry.epsilon) for entry in accountant.ledger) == Fraction(1, 3)


def test_numpy_integers_are_stored_as_python_integers() -> None:
    # np.uint8(200) · 50 overflowed in the miner; np.int16(30000) silently gave a wrong work total
    miner = make_miner("mcmc-tree-pair", mcmc_iterations=np.int16(30000), init_trials=np.uint8(2))
    assert type(miner.mcmc_iterations) is int and type(miner.init_trials) is int
    assert miner.work() == make_miner("mcmc-tree-pair", mcmc_iterations=30000, init_trials=2).work()
    assert type(make_miner("reremi", initial_pairs=np.uint8(2)).initial_pairs) is int


def test_a_steepness_too_flat_for_the_damping_is_refused_before_anything_is_spent() -> None:
    accountant = Accountant(1, SecureNoise())
    for algorithm in ("serenade-cs", "serenade-es"):
        assert one_line_error(algorithm, steepness=5e-324).startswith("steepness must be at least 1e-09")
        with pytest.raises(ParameterError, match="steepness must be at least"):
            SerenadeES(steepness=5e-324).fit(None, accountant=accountant)
    assert accountant.ledger == []


@pytest.mark.parametrize("algorithm, rows", [("mcmc-tree-pair", 300), ("mcmc-tree-pair", 2000), ("alt-mcmc", 2000),
                                             ("alt-expm", 300), ("serenade-es", 300), ("serenade-cs", 300),
                                             ("reremi", 300)])
def test_a_fitted_miner_pickles_and_deep_copies(algorithm, rows) -> None:
    # at 2,000 rows the targets are chosen by a TargetChooser that holds the accountant
    import copy
    import pickle

    from dprm.privacy import SeededNoise

    private = algorithm != "reremi"
    small = {"mcmc_iterations": 200} if algorithm in ("mcmc-tree-pair", "alt-expm", "alt-mcmc") else {}
    miner = make_miner(algorithm, **small)
    accountant = Accountant(1, SeededNoise(np.random.default_rng(0))) if private else None
    miner.fit(_planted_data(rows), accountant=accountant, rng=0)
    for copied in (pickle.loads(pickle.dumps(miner)), copy.deepcopy(miner)):
        assert copied.document() == miner.document()
        assert not any(hasattr(copied, name) for name in ("_accountant", "_progress", "_chooser"))
