"""SerenadeCS / ES / NoSens and the ReReMi baseline: budgets, releases, parameters, CLI."""

from __future__ import annotations

import json
import functools
import re
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from conftest import RecordingNoise
from scipy.stats import chisquare

from dprm.data import load_two_view
from dprm.data.attributes import Attribute, AttributeKind, TwoViewData, View
from dprm.datasets import make_planted, write_planted
from dprm.errors import BudgetExceededError, ParameterError
from dprm.evaluation.run_documents import check_run_document
from dprm.mining import make_miner
from dprm.mining.serenade import ReReMi, SerenadeCS, SerenadeES, greedy
from dprm.mining.serenade.quality import JACCARD_ONE_SIDED, choose_steepness, jaccard_quality
from dprm.mining.serenade.union_cap import UnionCap
from dprm.privacy import Accountant, ExponentialMechanism, SeededNoise, reservoir
from dprm.queries import run_budget

from test_cli import run

PRIVATE = ["serenade-cs", "serenade-es", "serenade-es-nosens"]
FAST = {"initial_pairs": 3, "extensions": 3}


@pytest.fixture(scope="module")
def planted():
    data = make_planted(800, n_planted=2, noise=0.02, missing=0.02, random_state=3)
    return data, load_two_view(data.left, data.right, types=data.types)


@pytest.mark.parametrize("algorithm", PRIVATE)
@pytest.mark.parametrize("options", [{}, {"data_size": "engine", "min_rows": 500}, {"budget_split": "1/3,1/3,1/3"},
                                     {"numeric_grid": "auto"}])
def test_the_ledger_adds_up_and_every_draw_follows_a_charge(planted, algorithm, options) -> None:
    _, data = planted
    noise = RecordingNoise(np.random.default_rng(0))
    accountant = Accountant(1.0, noise)
    noise.accountant = accountant
    miner = make_miner(algorithm, epsilon=1.0, **FAST, **options).fit(data, accountant=accountant,
                                                                       rng=np.random.default_rng(0))
    spent = sum((e.epsilon for e in accountant.ledger), Fraction(0))
    assert spent == accountant.spent() <= 1
    if algorithm != "serenade-cs":  # ES spends exactly; CS may stop early
        assert spent == 1
    assert miner.privacy_["epsilon"] == pytest.approx(float(spent))
    assert noise.draws and min(noise.draws) >= 1
    # draws of one release happen after its charge and before the next one
    assert noise.draws == sorted(noise.draws)
    steps = [e.step for e in accountant.ledger]
    grids = [s for s in steps if s.startswith("grid")]   # numeric-grid auto: the grids are chosen first
    assert steps[:len(grids)] == grids and bool(grids) == (options.get("numeric_grid") == "auto")
    steps = steps[len(grids):]
    assert sum(s.startswith("initial pair") for s in steps) == 3
    if options.get("data_size") == "engine":
        assert "data size" not in steps
    else:
        assert steps[0] == "data size"
    for r in miner.redescriptions_:
        assert "interval" in r.extra


def test_es_budget_per_phase_is_exact(planted) -> None:
    _, data = planted
    accountant = Accountant(1, SeededNoise(np.random.default_rng(1)))
    SerenadeES(epsilon=1, initial_pairs=4, extensions=6, budget_split="0.6,0.3,0.1", size_share=0.01).fit(
        data, accountant=accountant, rng=np.random.default_rng(1))
    by_phase = Counter()
    for entry in accountant.ledger:
        by_phase[entry.step.split(" ")[0]] += entry.epsilon
    rest = Fraction(99, 100)
    assert by_phase == {"data": Fraction(1, 100), "initial": rest * Fraction(3, 5),
                        "extension": rest * Fraction(3, 10), "quality": rest * Fraction(1, 10)}


def test_cs_says_what_it_left_unspent_also_with_a_shared_accountant(planted) -> None:
    """Every pair stops at once (min-jaccard 1): the rounds' shares are not spent, and
    the note says how much of this run's epsilon that is, whatever the accountant's total."""
    _, data = planted
    for total in (1, 3):
        accountant = Accountant(total, SeededNoise(np.random.default_rng(2)))
        miner = SerenadeCS(epsilon=1, initial_pairs=3, extensions=2, min_jaccard=1.0).fit(
            data, accountant=accountant, rng=np.random.default_rng(2))
        unspent = 1 - accountant.spent()
        assert 0 < unspent < 1
        assert any(f"epsilon {float(unspent):.4g} of 1 was not spent" in note for note in miner.notes_)
        privacy = miner.document()["privacy"]  # the spec: the unspent rest is stated in the output too
        assert privacy["unspent"] == float(unspent) and privacy["epsilon"] + privacy["unspent"] == pytest.approx(1)
        document = miner.document()  # and every reader takes it: the ledger adds up to what was spent, the
        check_run_document(document, "run.json", algorithm="serenade-cs")  # rest makes up parameters.epsilon
        assert run_budget(document["privacy"]) == pytest.approx(document["parameters"]["epsilon"]) == 1


def test_no_release_without_the_budget(planted) -> None:
    _, data = planted
    accountant = Accountant(0.5, RecordingNoise(np.random.default_rng(0)))
    accountant.noise.accountant = accountant
    with pytest.raises(BudgetExceededError):
        SerenadeES(epsilon=1.0, **FAST).fit(data, accountant=accountant)
    assert accountant.ledger == [] and accountant.noise.draws == []


def _tiny() -> TwoViewData:
    rng = np.random.default_rng(0)
    n = 60
    a = (np.arange(n) < 30).astype(np.int8)
    b = rng.integers(0, 2, n).astype(np.int8)
    x = (np.arange(n) < 25).astype(np.int8)
    y = rng.integers(0, 2, n).astype(np.int8)
    left = View("left", [Attribute("a", "left", AttributeKind.BOOLEAN, a),
                         Attribute("b", "left", AttributeKind.BOOLEAN, b)])
    right = View("right", [Attribute("x", "right", AttributeKind.BOOLEAN, x),
                           Attribute("y", "right", AttributeKind.BOOLEAN, y)])
    return TwoViewData(left, right)


def _initial_pair_miner(score_range, max_union) -> SerenadeES:
    return SerenadeES(quality="jaccard", epsilon=4, initial_pairs=1, extensions=0, budget_split="0.5,0.25,0.25",
                      data_size="public", rows=60, min_support=5, score_range=score_range, initial_score="quality",
                      **({"damping": "none"} if max_union is None else {"max_union": max_union}))


def _expected_pair_probabilities(data, score_range, half_range, max_union) -> tuple[list, np.ndarray]:
    """The four pairs of :func:`_tiny` and their exponential-mechanism probabilities."""
    pairs = [(a, x) for a in ("a", "b") for x in ("x", "y")]
    masks = {n: data.view(s)[n].values == 1 for s, names in enumerate((("a", "b"), ("x", "y"))) for n in names}
    inter = np.array([np.count_nonzero(masks[a] & masks[x]) for a, x in pairs])
    union = np.array([np.count_nonzero(masks[a] | masks[x]) for a, x in pairs])
    # budget after the public size: 4 · 0.5 for the one initial pair; P ∝ exp(ε J / R) with
    # R = 2 (symmetric, Jaccard sensitivity 1) or R = 1/2 + 1 (bounded range)
    score = jaccard_quality
    if max_union is not None:  # damped by σ(μ(h − u)), h = 0.5 · 60, μ = λ/2 (dprm.mining.serenade.union_cap)
        steepness = choose_steepness(5, objective="range" if score_range == "bounded" else "sensitivity").steepness
        score = UnionCap(jaccard_quality, 30, steepness / 2, one_sided=JACCARD_ONE_SIDED)
        half_range = score.score_range() / 2 if score_range == "bounded" else score.sensitivity()
    return pairs, ExponentialMechanism(2, half_range).probabilities(score(inter, union))


def _record_offers(monkeypatch) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """What every streamed initial-pair draw is offered: ``(its scale, scores, labels)`` per offer."""
    offered: list[tuple[float, np.ndarray, np.ndarray]] = []
    scales: dict[int, float] = {}
    start, offer = reservoir.WeightedReservoir.start, reservoir.ReservoirDraw.offer

    def recording_start(mechanism, accountant, step, **options):
        draw = start(mechanism, accountant, step, **options)
        scales[id(draw)] = mechanism.scale
        return draw

    def recording_offer(draw, scores, labels=None):
        offered.append((scales[id(draw)], np.array(scores, dtype=np.float64), np.array(labels)))
        return offer(draw, scores, labels)

    monkeypatch.setattr(reservoir.WeightedReservoir, "start", recording_start)
    monkeypatch.setattr(reservoir.ReservoirDraw, "offer", recording_offer)
    return offered


# The draw's distribution, exactly: what the miner offers the streamed draw (every pair's score
# and the draw's scale, keys score/scale + Gumbel) gives P ∝ exp(score/scale); these must be the
# exponential mechanism's probabilities over exactly the four pairs, for each score range and
# damping. That the keys draw P ∝ exp(score/scale) is the reservoir's own test
# (test_privacy_mechanisms: test_reservoir_k1_is_the_exponential_mechanism); the end-to-end
# frequencies of the miner's released pair are checked once below (the same draw and the same
# label-to-pair map whatever the score range and damping).
@pytest.mark.parametrize("score_range, half_range", [("symmetric", 1), ("bounded", Fraction(3, 4))])
@pytest.mark.parametrize("max_union", [None, 0.5])
def test_initial_pairs_are_exponential_mechanism_draws(score_range, half_range, max_union, monkeypatch) -> None:
    data = _tiny()
    offered = _record_offers(monkeypatch)
    miner = _initial_pair_miner(score_range, max_union).fit(data, accountant=Accountant(4, SeededNoise(
        np.random.default_rng(0))))
    pairs, probabilities = _expected_pair_probabilities(data, score_range, half_range, max_union)
    assert len({scale for scale, _, _ in offered}) == 1
    scale = offered[0][0]
    scores = np.concatenate([s for _, s, _ in offered])
    labels = np.concatenate([lab for _, _, lab in offered])
    left, right = miner.tables_
    drawn = [(left.names[i], right.names[j]) for i, j in (divmod(int(label), len(right)) for label in labels)]
    assert sorted(drawn) == pairs  # every pair offered once, no other
    weights = np.exp(scores / scale)
    offered_probabilities = dict(zip(drawn, weights / weights.sum()))
    np.testing.assert_allclose([offered_probabilities[p] for p in pairs], probabilities, rtol=1e-9)
    r = miner.redescriptions_[0]
    assert (str(r.left), str(r.right)) in {(a, x) for a, x in pairs}


def test_released_initial_pairs_follow_the_exponential_mechanism(monkeypatch) -> None:
    """The released pair's frequencies over 1,500 seeded fits (the bounded, damped case)."""
    data = _tiny()
    runs = 1500
    # The damped runs' line search for the steepness is deterministic in public values (the
    # centre and the objective) and was three quarters of each fit: it is done once here and
    # handed to all 1,500 runs (the same LogisticQuality the miner would compute each time).
    monkeypatch.setattr(greedy, "choose_steepness", functools.lru_cache(maxsize=None)(greedy.choose_steepness))
    seen: Counter = Counter()
    for seed in range(runs):
        accountant = Accountant(4, SeededNoise(np.random.default_rng(seed)))
        miner = _initial_pair_miner("bounded", 0.5).fit(data, accountant=accountant)
        r = miner.redescriptions_[0]
        seen[(str(r.left), str(r.right))] += 1
    pairs, probabilities = _expected_pair_probabilities(data, "bounded", Fraction(3, 4), 0.5)
    observed = np.array([seen[p] for p in pairs])
    assert sum(observed) == runs
    assert chisquare(observed, probabilities * runs).pvalue > 1e-3


def test_initial_pairs_by_covariance_are_exponential_mechanism_draws(monkeypatch) -> None:
    """The default ``initial_score="covariance"``: every pair offered once with ``|L∩R| − |L||R|/n``, at the scale
    of sensitivity 1, so P ∝ exp(ε C / 2) with the initial pair's ε (4 · 0.5)."""
    from dprm.mining.serenade.covariance import covariance_counts

    data = _tiny()
    offered = _record_offers(monkeypatch)
    miner = SerenadeES(epsilon=4, initial_pairs=1, extensions=0, budget_split="0.5,0.25,0.25", data_size="public",
                       rows=60, min_support=5).fit(data, accountant=Accountant(4, SeededNoise(np.random.default_rng(0))))
    assert miner.initial_score == "covariance"
    left, right = miner.tables_
    labels = np.concatenate([lab for _, _, lab in offered])
    scores = np.concatenate([s for _, s, _ in offered])
    pairs = [divmod(int(label), len(right)) for label in labels]
    assert len(set(pairs)) == len(pairs) == len(left) * len(right)  # every pair offered once
    for (i, j), score in zip(pairs, scores):
        a, x = left.query(i).support(data.left), right.query(j).support(data.right)
        assert score == pytest.approx(float(covariance_counts(np.count_nonzero(a & x), a.sum(), x.sum(), 60)))
    assert [scale for scale, _, _ in offered] == pytest.approx([1.0] * len(offered))  # 2Δ/ε = 2 · 1 / (4 · 0.5)


def test_shared_attribute_names_never_on_both_sides() -> None:
    rng = np.random.default_rng(1)
    n = 200
    base = rng.integers(0, 2, (4, n)).astype(np.int8)
    left = View("left", [Attribute(f"q{i}", "left", AttributeKind.BOOLEAN, base[i]) for i in range(4)])
    right = View("right", [Attribute(f"q{i}", "right", AttributeKind.BOOLEAN, base[i]) for i in range(4)])
    data = TwoViewData(left, right)
    for algorithm in ("serenade-es", "reremi"):
        miner = make_miner(algorithm, initial_pairs=5, extensions=4)
        miner.fit(data, accountant=None if algorithm == "reremi" else Accountant(1, SeededNoise(rng)), rng=rng)
        for r in miner.redescriptions_:
            assert not (r.left.attributes() & r.right.attributes())


def test_reremi_is_exact_and_finds_the_planted_relation() -> None:
    planted = make_planted(600, n_planted=2, noise=0.0, random_state=0)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    miner = ReReMi(initial_pairs=5).fit(data)
    assert miner.privacy_["guarantee"] == "none" and miner.privacy_["ledger"] == []
    assert miner.redescriptions_[0].stats.jaccard > 0.95
    for r in miner.redescriptions_:
        from dprm.queries import RedescriptionStats
        exact = RedescriptionStats.from_supports(r.left.support(data.left), r.right.support(data.right))
        assert r.stats == exact


@pytest.mark.parametrize("options, message", [
    ({"budget_split": "0.5,0.5,0.1"}, "sum to 1"),
    ({"budget_split": "0.7,0.1,0.2000000001"}, r"\(sum 1\.0000000001\)"),  # not "(sum 1)": the exact sum
    ({"budget_split": "0.5,0.5"}, "three shares"),
    ({"budget_split": "0.5,0.6,-0.1"}, "positive"),
    ({"initial_pairs": 0}, "initial-pairs"),
    ({"max_age": -1}, "max-age"),
    ({"extensions": -1}, "extensions"),
    ({"data_size": "exact"}, "data-size"),
    ({"data_size": "public"}, "--rows"),
    ({"rows": 10}, "--rows"),
    ({"epsilon": 0}, "epsilon"),
    ({"epsilon": -1}, "epsilon"),
])
def test_bad_parameters(planted, options, message) -> None:
    _, data = planted
    with pytest.raises(ParameterError, match=message):
        SerenadeES(**options).fit(data, accountant=Accountant(1, SeededNoise(np.random.default_rng(0))))


def test_public_rows_must_be_the_data_size(planted) -> None:
    _, data = planted
    with pytest.raises(ParameterError, match="--rows"):
        SerenadeES(data_size="public", rows=7, **FAST).fit(data, accountant=Accountant(1, SeededNoise(
            np.random.default_rng(0))))
    miner = SerenadeES(data_size="public", rows=data.n_rows, **FAST).fit(
        data, accountant=Accountant(1, SeededNoise(np.random.default_rng(0))))
    assert any("public" in reason for reason in miner.privacy_["reasons"])


# -- command line ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("serenade")
    write_planted(make_planted(400, n_planted=2, random_state=1), directory)
    return directory


@pytest.mark.parametrize("algorithm", PRIVATE + ["reremi"])
def test_cli_runs(files, tmp_path, algorithm) -> None:
    out = tmp_path / "out.json"
    args = ["mine", files / "left.csv", files / "right.csv", "-a", algorithm, "--types", files / "types.json",
            "--initial-pairs", "3", "--seed", "1", "-o", out]
    if algorithm != "reremi":
        args += ["--epsilon", "1", "--extensions", "2", "--budget-split", "0.5,0.4,0.1"]
    code, _, err = run(args)
    assert code == 0, err
    document = json.loads(out.read_text())
    assert document["algorithm"] == algorithm
    assert document["parameters"]["initial_pairs"] == 3
    assert document["privacy"]["guarantee"] == "none"  # not a private algorithm, or seeded: not private
    assert document["privacy"]["private"] is False and document["privacy"]["reasons"]
    if algorithm != "reremi":
        assert document["privacy"]["reasons"][0].startswith("seeded noise source")
        assert document["parameters"]["budget_split"] == "0.5,0.4,0.1"
        assert sum(e["epsilon"] for e in document["privacy"]["ledger"]) == pytest.approx(
            document["privacy"]["epsilon"])


@pytest.mark.parametrize("extra, message", [
    (["--budget-split", "0.6,0.3,0.2"], "sum to 1"),
    (["--budget-split", "0.7,0.1,0.2000000001"], "(sum 1.0000000001)"),  # a float's :g showed "(sum 1)"
    (["--budget-split", "1/3,1/3,1/2"], "(sum 7/6)"),
    (["--initial-pairs", "0"], "initial-pairs"),
    (["--max-age", "-2"], "max-age"),
    (["--epsilon", "0"], "epsilon"),
    (["--depth", "2"], "does not apply"),
])
def test_cli_bad_input(files, tmp_path, extra, message) -> None:
    out = tmp_path / "out.json"
    args = ["mine", files / "left.csv", files / "right.csv", "-a", "serenade-es", "--types", files / "types.json",
            "--seed", "1", "-o", out, *extra]
    if "--epsilon" not in extra:
        args += ["--epsilon", "1"]
    code, _, err = run(args)
    assert code == 2 and err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize("seed", range(3))
def test_scores_change_by_at_most_the_sensitivity_on_neighbouring_data(seed) -> None:
    """Remove one row: every initial-pair and extension score moves by at most Δ."""
    from dprm.mining.serenade.extensions import Growing, extension_counts
    from dprm.mining.serenade.literals import LiteralTable
    from dprm.mining.serenade.quality import LogisticQuality

    planted = make_planted(300, n_planted=2, noise=0.05, random_state=seed)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    keep = np.ones(data.n_rows, dtype=bool)
    keep[np.random.default_rng(seed).integers(data.n_rows)] = False

    def subset(view):
        return View(view.name, [Attribute(a.name, a.view, a.kind, a.values[keep], a.domain) for a in view])

    quality = LogisticQuality(center=30, steepness=0.1)
    delta = quality.sensitivity()
    scores = []
    for d in (data, TwoViewData(subset(data.left), subset(data.right))):
        tables = tuple(LiteralTable(v, mode="private", max_splits=5) for v in d.views)
        masks = tables[0].supports()
        inter = tables[1].pair_counts(masks)
        union = masks.sum(axis=1)[:, None] + tables[1].pair_counts(np.ones((1, d.n_rows), bool))[0][None, :] - inter
        state = Growing.pair(tables, 0, 3)
        candidates = extension_counts(state, tables, 4)
        scores.append((quality(inter, union), quality(candidates.intersection, candidates.union)))
    for before, after in zip(*scores):
        assert np.abs(before - after).max() <= delta + 1e-12


def test_cli_auto_and_paper_settings(files, tmp_path) -> None:
    left, right, types = files / "left.csv", files / "right.csv", files / "types.json"
    for extra in ([], ["--initial-pairs", "auto", "--extensions", "auto"],
                  ["--initial-pairs", "2", "--extensions", "3", "--score-range", "symmetric"]):
        out = tmp_path / "out.json"
        code, _, err = run(["mine", left, right, "--types", types, "-a", "serenade-es", "--epsilon", "1",
                             "--seed", "1", "-o", out, *extra])
        assert code == 0, err
        chosen = json.loads(out.read_text())["parameters"]["chosen"]
        if extra[-1:] == ["symmetric"]:
            assert (chosen["initial_pairs"], chosen["extensions"]) == (2, 3)
    code, _, err = run(["mine", left, right, "--types", types, "-a", "serenade-cs", "--epsilon", "1",
                         "--initial-pairs", "many"])
    assert code == 2 and "--initial-pairs must be an integer or 'auto'" in err
    code, _, err = run(["mine", left, right, "--types", types, "-a", "reremi", "--score-range", "bounded"])
    assert code == 2 and "--score-range does not apply" in err


def test_a_minimum_support_above_the_data_size_is_refused_or_said(planted) -> None:
    """800 rows: with the public size a min-support of 900 rows is refused before any
    release; with the noisy size the run says that nothing can reach it (n̂ is public)."""
    _, data = planted
    accountant = Accountant(1, SeededNoise(np.random.default_rng(4)))
    with pytest.raises(ParameterError, match="min-support 900 rows is above --rows 800"):
        SerenadeES(epsilon=1, min_support=900, data_size="public", rows=800, **FAST).fit(
            data, accountant=accountant, rng=np.random.default_rng(4))
    assert accountant.ledger == []
    miner = SerenadeES(epsilon=1, min_support=5000, **FAST).fit(
        data, accountant=Accountant(1, SeededNoise(np.random.default_rng(4))), rng=np.random.default_rng(4))
    assert any("minimum support 5000 rows is above the data size" in note for note in miner.notes_)
    miner = SerenadeES(epsilon=1, min_support=100, **FAST).fit(
        data, accountant=Accountant(1, SeededNoise(np.random.default_rng(4))), rng=np.random.default_rng(4))
    assert not any("above the data size" in note for note in miner.notes_)


@pytest.mark.parametrize("miner_class", [SerenadeES, SerenadeCS])
def test_results_are_kept_from_a_twentieth_of_the_rows_though_the_centre_is_a_fifth(planted, miner_class) -> None:
    """Without min-support the logistic centre is 20 % of the (noisy) rows and the smallest kept intersection
    5 %; a min-support given, or variant paper's 10 %, is both."""
    _, data = planted
    miner = miner_class(epsilon=1.0, **FAST).fit(data, accountant=Accountant(1, SeededNoise(np.random.default_rng(0))))
    centre, kept = (float(x) for x in re.search(r"centre\): (\d+) rows; results kept from (\d+) rows",
                                                " ".join(miner.notes_)).groups())
    assert kept == pytest.approx(centre / 4, abs=1)
    assert all(r.pruned for r in miner.redescriptions_ if r.stats.intersection < kept - 0.5)
    assert miner_class()._kept_support(1000) == 50
    assert miner_class(min_support=0.1)._kept_support(1000) == miner_class(variant="paper")._kept_support(1000) == 100
    assert miner_class(min_support=30)._kept_support(1000) == 30
