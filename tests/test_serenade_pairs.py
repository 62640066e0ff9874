"""The greedy miners' initial pairs, counted and drawn block by block (issue 9, memory)."""

from __future__ import annotations

import tracemalloc
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from conftest import RecordingNoise
from scipy.stats import chisquare

import dprm.mining.serenade.pairs as pairs
from dprm.data.attributes import Attribute, AttributeKind, Domain, TwoViewData, View
from dprm.errors import ParameterError
from dprm.mining import make_miner
from dprm.mining.serenade.literals import LiteralTable
from dprm.mining.serenade.quality import jaccard_quality
from dprm.privacy import Accountant, ExponentialMechanism, SeededNoise, WeightedReservoir, split_budget


def mixed_view(rng: np.random.Generator, side: str, n_rows: int, names: list[str]) -> View:
    """Boolean, categorical and numeric attributes with missing values (declared domains)."""
    attributes = []
    for j, name in enumerate(names):
        kind = j % 3
        if kind == 0:
            values = (rng.random(n_rows) < rng.uniform(0.2, 0.8)).astype(np.int8)
            values[rng.random(n_rows) < 0.1] = -1
            attributes.append(Attribute(name, side, AttributeKind.BOOLEAN, values, Domain(declared=True)))
        elif kind == 1:
            values = rng.integers(0, 3, n_rows).astype(np.int32)
            values[rng.random(n_rows) < 0.1] = -1
            attributes.append(Attribute(name, side, AttributeKind.CATEGORICAL, values,
                                        Domain(categories=("p", "q", "r"), declared=True)))
        else:
            values = np.round(rng.normal(0, 1, n_rows), 2)
            values[rng.random(n_rows) < 0.1] = np.nan
            attributes.append(Attribute(name, side, AttributeKind.NUMERIC, values,
                                        Domain(bounds=(-3.0, 3.0), declared=True)))
    return View(side, attributes)


def tables_for(seed: int, n_rows: int = 120, shared: bool = True) -> tuple[LiteralTable, LiteralTable]:
    rng = np.random.default_rng(seed)
    left_names = [f"a{j}" for j in range(5)]
    right_names = ["a0", "a4", "b2", "b3"] if shared else [f"b{j}" for j in range(4)]
    views = (mixed_view(rng, "left", n_rows, left_names), mixed_view(rng, "right", n_rows, right_names))
    return tuple(LiteralTable(v, mode="private", max_splits=4) for v in views)  # type: ignore[return-value]


def brute_force(tables) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every allowed pair in (left, right) order, counted from the literals' row masks."""
    left, right = tables[0].supports(), tables[1].supports()
    inter = left.astype(np.int64) @ right.T.astype(np.int64)
    union = left.sum(axis=1)[:, None] + right.sum(axis=1)[None, :] - inter
    allowed = np.asarray(tables[0].names)[:, None] != np.asarray(tables[1].names)[None, :]
    pair = np.flatnonzero(allowed.ravel())
    return pair, inter.ravel()[pair], union.ravel()[pair]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("side", [0, 1])
@pytest.mark.parametrize("block_pairs", [1, 7, 64, 10**9])
def test_blocks_count_every_allowed_pair_exactly_once(seed, side, block_pairs) -> None:
    tables = tables_for(seed)
    pair, inter, union = brute_force(tables)
    blocks = list(pairs.pair_blocks(tables, side, block_pairs))
    widest = int(np.bincount(tables[1 - side].attribute).max())  # a block holds at least one attribute
    assert all(len(b) <= max(block_pairs, widest) for b in blocks)
    got_pair = np.concatenate([b.pair for b in blocks])
    order = np.argsort(got_pair)
    assert np.array_equal(got_pair[order], pair)  # each allowed pair once, no same-name pair
    assert np.array_equal(np.concatenate([b.intersection for b in blocks])[order], inter)
    assert np.array_equal(np.concatenate([b.union for b in blocks])[order], union)
    assert pairs.count_pairs(tables) == pair.size
    if block_pairs >= len(tables[0]) * len(tables[1]):  # one block, in (left, right) order
        assert len(blocks) == 1 and np.array_equal(blocks[0].pair, pair)


def test_blocks_hold_at_most_the_block_size() -> None:
    tables = tables_for(3, shared=False)
    sizes = [len(b) for b in pairs.pair_blocks(tables, 0, 50)]
    assert sum(sizes) == len(tables[0]) * len(tables[1]) and max(sizes) <= 50 and len(sizes) > 1


def old_initial_pairs(tables, side, score, sensitivity, shares, accountant):
    """The former implementation: all pairs as flat arrays, one reservoir over them per share."""
    pair, inter, union = brute_force(tables)
    scores = score(inter, union)
    n_right = len(tables[1])
    chosen = []
    for number, share in enumerate(shares, start=1):
        position = int(WeightedReservoir(share, sensitivity, k=1).release(accountant, f"initial pair {number}",
                                                                          [scores])[0])
        chosen.append(divmod(int(pair[position]), n_right))
    return chosen


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("side", [0, 1])
def test_one_block_draws_exactly_what_the_flat_arrays_drew(seed, side) -> None:
    """Same seed, same initial pairs, whenever all pairs fit in one block."""
    tables = tables_for(seed)
    shares = split_budget(Fraction(3), [1] * 4)
    results = []
    for draw in (old_initial_pairs, pairs.draw_initial_pairs):
        accountant = Accountant(3, SeededNoise(np.random.default_rng(100 + seed)))
        results.append(draw(tables, side, jaccard_quality, Fraction(1, 2), shares, accountant))
        assert [e.step for e in accountant.ledger] == [f"initial pair {i}" for i in range(1, 5)]
    assert results[0] == results[1]


def boolean_tables(n_left: int, n_right: int, n_rows: int = 40) -> tuple[LiteralTable, LiteralTable]:
    """Literal tables of random Boolean attributes (seed 0): a few pairs, for the draws' laws."""
    rng = np.random.default_rng(0)
    views = [View(side, [Attribute(f"{side[0]}{j}", side, AttributeKind.BOOLEAN,
                                   (rng.random(n_rows) < 0.5).astype(np.int8), Domain(declared=True))
                         for j in range(count)])
             for side, count in (("left", n_left), ("right", n_right))]
    return tuple(LiteralTable(v, mode="private", max_splits=3) for v in views)


def test_streamed_draws_are_the_exponential_mechanism() -> None:
    """Blocks of 3 pairs, interleaved over two draws: each draw still has P(pair) ∝ exp(ε q / (2Δ))."""
    tables = boolean_tables(3, 3)
    pair, inter, union = brute_force(tables)
    probabilities = ExponentialMechanism(4, Fraction(1, 2)).probabilities(jaccard_quality(inter, union))
    runs = 3000
    seen = [Counter(), Counter()]
    noise = SeededNoise(np.random.default_rng(1))
    for _ in range(runs):
        accountant = Accountant(8, noise)
        chosen = pairs.draw_initial_pairs(tables, 0, jaccard_quality, Fraction(1, 2), [4, 4], accountant,
                                          block_pairs=3)
        for k, (l, r) in enumerate(chosen):
            seen[k][l * len(tables[1]) + r] += 1
    for counter in seen:
        observed = np.array([counter[p] for p in pair])
        assert chisquare(observed, probabilities * runs).pvalue > 1e-3


def test_distinct_draws_are_the_exponential_mechanism_over_the_pairs_not_drawn_before() -> None:
    """``distinct=True``, blocks of 3 pairs: the first draw as before; the second, given the first's
    pair, has P(pair) ∝ exp(ε q / (2Δ)) over the other pairs at its own ε; no pair is drawn twice."""
    tables = boolean_tables(3, 2)
    pair, inter, union = brute_force(tables)
    scores = jaccard_quality(inter, union)
    first_probabilities = ExponentialMechanism(4, Fraction(1, 2)).probabilities(scores)
    runs = 4000
    first, second = Counter(), Counter()
    noise = SeededNoise(np.random.default_rng(2))
    for _ in range(runs):
        accountant = Accountant(8, noise)
        chosen = pairs.draw_initial_pairs(tables, 0, jaccard_quality, Fraction(1, 2), [4, 4], accountant,
                                          block_pairs=3, distinct=True)
        labels = [l * len(tables[1]) + r for l, r in chosen]
        assert labels[0] != labels[1] and accountant.spent() == 8
        first[labels[0]] += 1
        second[labels[1]] += 1
    assert chisquare(np.array([first[p] for p in pair]), first_probabilities * runs).pvalue > 1e-3
    # the second draw's law: the sum over the first draw's pair f of P(f) · EM over the pairs other than f
    expected = np.zeros(len(pair))
    for f in range(len(pair)):
        others = np.arange(len(pair)) != f
        expected[others] += first_probabilities[f] * ExponentialMechanism(4, Fraction(1, 2)).probabilities(
            scores[others])
    assert chisquare(np.array([second[p] for p in pair]), expected * runs).pvalue > 1e-3


def test_every_draw_is_charged_before_any_key_is_drawn() -> None:
    tables = tables_for(4)
    noise = RecordingNoise(np.random.default_rng(0))
    accountant = Accountant(1, noise)
    noise.accountant = accountant
    pairs.draw_initial_pairs(tables, 0, jaccard_quality, 1, split_budget(Fraction(1), [1, 1, 1]), accountant,
                             block_pairs=5)
    assert noise.draws and min(noise.draws) == 3  # all three charges first


def test_memory_is_bounded_by_the_block_not_the_pairs() -> None:
    """Peak traced memory of a streamed count is a fraction of the one-matrix count."""
    rng = np.random.default_rng(5)
    n = 200
    views = [View(side, [Attribute(f"{side[0]}{j}", side, AttributeKind.BOOLEAN,
                                   (rng.random(n) < 0.3).astype(np.int8), Domain(declared=True))
                         for j in range(700)]) for side in ("left", "right")]
    tables = tuple(LiteralTable(v, mode="private", max_splits=3) for v in views)
    peaks = []
    for block_pairs in (10**9, 1 << 13):
        tracemalloc.start()
        total = sum(len(b) for b in pairs.pair_blocks(tables, 0, block_pairs))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert total == 700 * 700
    assert peaks[1] < peaks[0] / 4


def test_too_many_pairs_are_refused_before_any_release(monkeypatch) -> None:
    rng = np.random.default_rng(2)
    n = 300
    left = View("left", [Attribute(f"l{j}", "left", AttributeKind.BOOLEAN, (rng.random(n) < 0.5).astype(np.int8),
                                   Domain(declared=True)) for j in range(6)])
    right = View("right", [Attribute(f"r{j}", "right", AttributeKind.BOOLEAN,
                                     (rng.random(n) < 0.5).astype(np.int8), Domain(declared=True)) for j in range(6)])
    data = TwoViewData(left, right)
    monkeypatch.setattr(pairs, "MAX_PAIRS", 35)
    for algorithm in ("serenade-es", "serenade-cs"):
        accountant = Accountant(1, SeededNoise(np.random.default_rng(0)))
        with pytest.raises(ParameterError, match="36 candidate initial pairs, more than the limit of 35") as error:
            make_miner(algorithm, initial_pairs=2, extensions=2).fit(data, accountant=accountant,
                                                                    rng=np.random.default_rng(0))
        assert "\n" not in str(error.value)
        assert accountant.ledger == [] and accountant.spent() == 0
    monkeypatch.setattr(pairs, "MAX_PAIRS", 36)
    miner = make_miner("serenade-es", initial_pairs=2, extensions=2).fit(
        data, accountant=Accountant(1, SeededNoise(np.random.default_rng(0))), rng=np.random.default_rng(0))
    assert miner.privacy_["epsilon"] == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("side", [0, 1])
@pytest.mark.parametrize("k", [1, 5, 40, 10**4])
@pytest.mark.parametrize("block_pairs", [3, 50, 10**9])
def test_top_pairs_is_a_stable_sort_of_all_pairs(seed, side, k, block_pairs) -> None:
    """ReReMi's start: the k best pairs, ties by pair number, as argsort(kind="stable") did."""
    tables = tables_for(seed, n_rows=40)  # few rows: many ties
    pair, inter, union = brute_force(tables)
    jaccard = np.divide(inter, union, out=np.zeros(inter.shape), where=union > 0)
    jaccard[inter < 3] = -1.0
    order = np.argsort(-jaccard, kind="stable")[:k]

    def value(block):
        j = np.divide(block.intersection, block.union, out=np.zeros(len(block)), where=block.union > 0)
        return np.where(block.intersection < 3, -1.0, j)

    got_pairs, got_values = pairs.top_pairs(tables, side, k, value, block_pairs=block_pairs)
    assert np.array_equal(got_pairs, pair[order]) and np.array_equal(got_values, jaccard[order])


def test_no_candidate_pair_is_refused_before_any_release() -> None:
    values = (np.arange(50) % 2).astype(np.int8)
    same = [View(side, [Attribute("a", side, AttributeKind.BOOLEAN, values, Domain(declared=True))])
            for side in ("left", "right")]
    accountant = Accountant(1, SeededNoise(np.random.default_rng(0)))
    with pytest.raises(ParameterError, match="no candidate initial pair"):
        make_miner("serenade-es", initial_pairs=1, extensions=1).fit(TwoViewData(*same), accountant=accountant)
    assert accountant.ledger == []


@pytest.mark.parametrize("seed", range(5))
def test_the_covariance_count_moves_by_less_than_one_on_neighbouring_datasets(seed: int) -> None:
    """Adding or removing any one row moves every pair's ``|L∩R| − |L||R|/n`` by less than 1 (sensitivity 1)."""
    from dprm.mining.serenade.covariance import COVARIANCE_SENSITIVITY, covariance_counts

    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    left = rng.random((n, 6)) < rng.uniform(0.05, 0.95, 6)  # literals as row masks: 6 left, 5 right
    right = rng.random((n, 5)) < rng.uniform(0.05, 0.95, 5)

    def scores(l: np.ndarray, r: np.ndarray) -> np.ndarray:
        inter = l.T.astype(np.int64) @ r.astype(np.int64)
        return covariance_counts(inter, l.sum(axis=0)[:, None], r.sum(axis=0)[None, :], len(l))

    base = scores(left, right)
    worst = 0.0
    for row in range(n):  # remove each row
        keep = np.arange(n) != row
        worst = max(worst, float(np.abs(scores(left[keep], right[keep]) - base).max()))
    for pattern in range(2 ** 11):  # add a row of every membership of the 11 literals
        bits = (pattern >> np.arange(11)) & 1 == 1
        worst = max(worst, float(np.abs(scores(np.vstack([left, bits[:6]]), np.vstack([right, bits[6:]])) - base).max()))
    assert 0.5 < worst < COVARIANCE_SENSITIVITY
