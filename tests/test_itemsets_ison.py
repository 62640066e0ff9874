"""ISON against known answers: the generating distribution, and brute force on the estimate."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
import pytest

from dprm.errors import ParameterError
from dprm.itemsets import ison
from dprm.itemsets.estimator import DensityEstimator
from dprm.itemsets.ison import chain_weights, mine_itemsets, run_ison

#: The generating distribution: a in {0,1,2}; b copies a with probability 0.9; c independent;
#: d = "on" exactly when a == 0 and c == "y".
P_A = np.array([0.5, 0.3, 0.2])
P_C = {"x": 0.4, "y": 0.6}


def true_joint() -> dict[tuple, float]:
    joint = {}
    for a, b, c in itertools.product(range(3), range(3), P_C):
        p = P_A[a] * (0.9 if b == a else 0.05) * P_C[c]
        d = "on" if (a == 0 and c == "y") else "off"
        joint[(f"a{a}", f"b{b}", c, d)] = p
    return joint


def true_supports() -> dict[frozenset, float]:
    columns = ("a", "b", "c", "d")
    supports: dict[frozenset, float] = {}
    for row, p in true_joint().items():
        for size in range(1, 5):
            for subset in itertools.combinations(range(4), size):
                key = frozenset((columns[j], row[j]) for j in subset)
                supports[key] = supports.get(key, 0.0) + p
    return supports


def draw(seed: int, n_rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = list(true_joint())
    p = np.array(list(true_joint().values()))
    picked = rng.choice(len(rows), p=p / p.sum(), size=n_rows)
    return pd.DataFrame([rows[i] for i in picked], columns=["a", "b", "c", "d"])


@pytest.fixture(scope="module")
def estimator() -> DensityEstimator:
    return DensityEstimator(n_chains=3, grace_period=50, split_confidence=0.01, tie_threshold=0.2,
                            random_state=0).fit(draw(0, 30000))


@pytest.mark.parametrize("theta", [0.05, 0.2, 0.4])
def test_finds_the_frequent_itemsets_of_the_generating_distribution(estimator, theta) -> None:
    truth = true_supports()
    found = {frozenset(s.items.items()): s.support for s in mine_itemsets(estimator, theta)}
    margin = 0.02  # itemsets this close to θ may fall either way on a sample of 30,000 rows
    for itemset, support in truth.items():
        if support >= theta + margin:
            assert itemset in found, sorted(itemset)
            assert found[itemset] == pytest.approx(support, abs=margin)
        elif support < theta - margin:
            assert itemset not in found, sorted(itemset)


def test_complete_on_the_estimate_itself(estimator) -> None:
    """Every itemset whose estimated support reaches θ is found (brute force over all itemsets)."""
    sizes = [len(v) for v in estimator.domains_.values()]
    rows = np.array(list(itertools.product(*[range(-1, s) for s in sizes])), dtype=np.int64)
    rows = rows[(rows >= 0).any(axis=1)]
    supports = estimator.density_many(rows, chain_weights(estimator, rows))
    theta = 0.1
    columns = estimator.columns_
    expected = {frozenset((columns[j], estimator.domains_[columns[j]][r[j]]) for j in np.flatnonzero(r >= 0)): s
                for r, s in zip(rows, supports) if s >= theta}
    found = {frozenset(s.items.items()): s.support for s in mine_itemsets(estimator, theta)}
    assert set(found) <= set(expected)
    missing = [k for k in expected if k not in found]
    # supports from a weighted mix of chains need not be monotone: only near-threshold ones may be missed
    assert all(expected[k] < theta + 0.01 for k in missing)
    for key, support in found.items():
        assert support == pytest.approx(expected[key])


def test_itemsets_are_sorted_and_bounded_by_max_length(estimator) -> None:
    itemsets = mine_itemsets(estimator, 0.05, max_length=2)
    assert itemsets and max(len(s) for s in itemsets) == 2
    keys = [(len(s), -s.support) for s in itemsets]
    assert keys == sorted(keys)
    assert all(isinstance(v, str) for s in itemsets for v in s.items.values())


def test_stopping_early_keeps_what_was_found(estimator, monkeypatch) -> None:
    """A fake clock that advances one second per reading stops the run part way (no real timing)."""
    ticks = iter(range(10**6))
    monkeypatch.setattr(ison.time, "perf_counter", lambda: float(next(ticks)))
    monkeypatch.setattr(ison, "BATCH", 4)
    full = run_ison(estimator, 0.05)
    ticks = iter(range(10**6))
    partial = run_ison(estimator, 0.05, max_seconds=12)
    assert partial.stopped_early and not full.stopped_early
    assert 0 < len(partial.itemsets) < len(full.itemsets)
    assert {frozenset(s.items.items()) for s in partial.itemsets} <= {frozenset(s.items.items())
                                                                      for s in full.itemsets}


@pytest.mark.parametrize("capped_batch", [1, 3, 1024])
def test_a_capped_run_gives_up_exactly_when_the_whole_run_finds_more(estimator, monkeypatch, capped_batch) -> None:
    """``max_itemsets`` stops a run once it has found more, in batches of any size: it gives up exactly
    when the uncapped run finds more than the cap, and otherwise finds the same itemsets."""
    monkeypatch.setattr(ison, "CAPPED_BATCH", capped_batch)
    for theta in (0.05, 0.2, 0.4):
        full = run_ison(estimator, theta)
        for cap in (1, len(full.itemsets) - 1, len(full.itemsets), len(full.itemsets) + 5):
            capped = run_ison(estimator, theta, max_itemsets=cap)
            assert capped.too_many == (len(full.itemsets) > cap)
            if capped.too_many:
                assert len(capped.itemsets) > cap and capped.candidates <= full.candidates
            else:
                assert capped.itemsets == full.itemsets and capped.candidates == full.candidates


def test_bad_thresholds_are_refused(estimator) -> None:
    for theta in (0, -0.1, 1.5, float("nan")):
        with pytest.raises(ParameterError, match="min_support must lie in"):
            mine_itemsets(estimator, theta)
    with pytest.raises(ParameterError, match="max_length"):
        mine_itemsets(estimator, 0.2, max_length=0)


@pytest.mark.parametrize("name, bad", [
    ("max_length", "2"), ("max_length", 2.5), ("max_length", True), ("max_length", 0),
    ("max_seconds", "1"), ("max_seconds", float("nan")), ("max_seconds", float("inf")), ("max_seconds", True),
    pytest.param("max_seconds", 10**400, id="max_seconds-10**400"), ("max_seconds", 0),
])
def test_limits_are_numbers_of_their_kind_refused_in_one_line(estimator, name, bad) -> None:
    """Text was a bare TypeError, a fraction, a bool or NaN was taken (``max_length=True`` as 1)."""
    from dprm.errors import short_repr
    from dprm.itemsets.top_k import run_top_k

    kind = "an integer >= 1" if name == "max_length" else "a positive finite number"
    message = f"^{name} must be None or {kind}, not {re.escape(short_repr(bad))}$"
    with pytest.raises(ParameterError, match=message):
        mine_itemsets(estimator, 0.2, **{name: bad})
    with pytest.raises(ParameterError, match=message):
        run_top_k(estimator, 3, 0.2, **{name: bad})


def test_min_support_is_no_bool_and_numpy_numbers_are_limits_like_python_ones(estimator) -> None:
    from dprm.itemsets.top_k import run_top_k

    with pytest.raises(ParameterError, match=r"^min_support must lie in \(0, 1\], got True$"):
        mine_itemsets(estimator, True)
    with pytest.raises(ParameterError, match="max_itemsets must be None or an integer >= 0, not -1"):
        run_ison(estimator, 0.2, max_itemsets=-1)
    python = mine_itemsets(estimator, 0.2, max_length=2, max_seconds=100)
    assert mine_itemsets(estimator, np.float64(0.2), max_length=np.int64(2), max_seconds=np.int64(100)) == python
    assert mine_itemsets(estimator, 0.2, max_length=10**30) == mine_itemsets(estimator, 0.2)  # longer than any
    assert run_top_k(estimator, np.int64(3), 0.2).run.itemsets == run_top_k(estimator, 3, 0.2).run.itemsets


def test_the_paths_method_gives_supports_of_edge_weight_marginalisation(estimator) -> None:
    itemsets = mine_itemsets(estimator, 0.2, method="paths")
    assert itemsets
    for itemset in itemsets:
        codes = estimator.codes_of(itemset.items)[None, :]
        expected = estimator.density_many(codes, chain_weights(estimator, codes), method="paths")[0]
        assert itemset.support == pytest.approx(expected)
        assert itemset.support >= 0.2


def test_supports_recalled_from_earlier_searches_are_the_ones_estimated_again(estimator) -> None:
    """top-k's probes share a memo of the supports estimated: a search with it finds the same itemsets
    with the same supports, bit for bit, as one without."""
    memo: dict[bytes, float] = {}
    for theta in (0.05, 0.4, 0.2, 0.1):
        fresh, _ = ison.ison_search(estimator, theta, None, None, "exact-or-sample", None)
        before = len(memo)
        recalled, _ = ison.ison_search(estimator, theta, None, None, "exact-or-sample", None, memo=memo)
        rows, supports = fresh.found_rows()
        again_rows, again_supports = recalled.found_rows()
        np.testing.assert_array_equal(again_rows, rows)
        np.testing.assert_array_equal(again_supports, supports)
        assert recalled.candidates == fresh.candidates and len(memo) >= before
    assert all(isinstance(key, bytes) and isinstance(value, float) for key, value in memo.items())


def independent_estimator(columns: int, p: float) -> DensityEstimator:
    """``columns`` independent two-valued columns, each ``"a"`` with probability ``p`` (single leaves: exact
    supports, ``p^k`` for ``k`` items ``"a"``)."""
    from dprm.itemsets.tree_model import ConditionalTree

    trees = [ConditionalTree.single_leaf(j, [p, 1 - p]) for j in range(columns)]
    return DensityEstimator.from_trees({f"c{j}": ["a", "b"] for j in range(columns)}, [(list(range(columns)), trees)])


class TooManyEstimated(AssertionError):
    """A run estimated more supports than a bounded check should have needed (the old run listed on for hours)."""


def count_estimates(monkeypatch, most: int) -> list[int]:
    """Count the supports ISON estimates (every call, the refusal's probe included); fail past ``most``."""
    estimated = [0]
    estimate = ison._Miner._estimate

    def counted(self, items):
        estimated[0] += len(items)
        if estimated[0] > most:
            raise TooManyEstimated(f"{estimated[0]:,} supports estimated")
        return estimate(self, items)

    monkeypatch.setattr(ison._Miner, "_estimate", counted)
    return estimated


def test_a_listing_of_more_itemsets_than_any_run_lists_is_refused_after_the_single_items(monkeypatch) -> None:
    """Four rows of 500 columns (2^250 frequent itemsets) ran for hours before a bound refused them. Here 30
    columns each "a" with probability 0.99: all 2^30 - 1 itemsets of "a"s reach 0.5, more than MAX_ITEMSETS
    (2^25). The refusal comes after the single items and a greedy probe of at most 26 x 30 supports, before
    ISON lists anything longer (it used to go on merging levels of up to 155 million candidates)."""
    estimator = independent_estimator(30, 0.99)
    estimated = count_estimates(monkeypatch, 2_000)
    with pytest.raises(ParameterError, match=r"an itemset of 26 items reaches support 0\.5 in the estimate, so its "
                                             r"67,108,863 subsets are frequent too .*--top-k K"):
        run_ison(estimator, 0.5)
    assert estimated[0] <= 60 + 26 * 30
    assert ison.explosive_length(30, None) == 26 and ison.MAX_ITEMSETS == 1 << 25


def test_a_bounded_listing_of_the_same_estimate_runs(monkeypatch) -> None:
    """What the refusal proposes runs: itemsets of at most 2 items (465 of them: C(30,1) + C(30,2) is no
    explosion), the top k, and a run cut by max_seconds is not refused (it lists what it found in time)."""
    from dprm.itemsets.top_k import run_top_k

    estimator = independent_estimator(30, 0.99)
    count_estimates(monkeypatch, 100_000)
    assert len(run_ison(estimator, 0.5, max_length=2).itemsets) == 30 + 30 * 29 // 2
    top = run_top_k(estimator, 5, 0.5)
    assert [len(s.items) for s in top.run.itemsets] == [1] * 5

    def clock(self):  # max_seconds's clock, run out after 5,000 candidates (batches of 1,000)
        self.stopped = self.stopped or self.candidates >= 5000
        return self.stopped

    monkeypatch.setattr(ison, "BATCH", 1000)
    monkeypatch.setattr(ison._Miner, "out_of_time", clock)
    cut = run_ison(estimator, 0.5, max_seconds=3600)
    assert cut.stopped_early and 5000 <= cut.candidates < 6000 and cut.itemsets


def test_the_probe_does_not_change_a_run_it_lets_through() -> None:
    """The greedy probe estimates supports without recording them: a run with the probe (more than 25
    columns) finds the same itemsets, supports and candidate count as the run without it."""
    estimator = independent_estimator(27, 0.5)  # at 0.2 only itemsets of at most 2 items: no refusal
    with_probe = run_ison(estimator, 0.2)
    assert ison.explosive_length(27, None) == 26
    original = ison._refuse_explosion
    try:
        ison._refuse_explosion = lambda *args: None
        without = run_ison(estimator, 0.2)
    finally:
        ison._refuse_explosion = original
    assert with_probe.itemsets == without.itemsets and with_probe.candidates == without.candidates
    assert len(with_probe.itemsets) == 2 * 27 + 4 * 27 * 26 // 2


def test_a_listing_past_the_limit_is_refused_even_when_no_long_itemset_shows_it(monkeypatch) -> None:
    """The probe sees long itemsets only; many short ones are counted as they are found, and the run is refused
    once it holds more than MAX_ITEMSETS (lowered here to 100: 15 columns of 0.5 have 30 items and 420 pairs
    frequent at 0.2, no itemset longer than 2)."""
    monkeypatch.setattr(ison, "MAX_ITEMSETS", 100)
    estimator = independent_estimator(15, 0.5)
    with pytest.raises(ParameterError, match=r"more than 100 itemsets reach support 0\.2 in the estimate"):
        run_ison(estimator, 0.2)
    assert len(run_ison(estimator, 0.2, max_length=1).itemsets) == 30


def test_a_column_of_more_categories_than_16_bit_codes_hold_is_refused_in_one_line() -> None:
    """ISON's code rows are int16: a column declared with 40,000 categories was an overflow (an internal error)
    after the estimate; it is refused, naming the column, before any itemset is formed; 32,767 codes pass."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.choice(["x", "y"], size=50), "b": rng.choice(["u", "v"], size=50)})
    wide = [f"k{c}" for c in range(40_000)]
    estimator = DensityEstimator(n_chains=1, random_state=0, n_samples=1000,
                                 domains={"a": ["x", "y"] + wide, "b": ["u", "v"]}).fit(frame)
    with pytest.raises(ParameterError, match=r"column 'a' has 40,002 categories, more than ISON's 16-bit codes"):
        run_ison(estimator, 0.3)
    fits = DensityEstimator(n_chains=1, random_state=0, n_samples=1000,
                            domains={"a": ["x", "y"] + wide[:ison.MAX_COLUMN_ITEMS - 2], "b": ["u", "v"]}).fit(frame)
    ison.check_item_codes(fits)  # passes (and ISON runs: see the test of its items below)


def sorted_positions_weights(estimator: DensityEstimator, codes: np.ndarray) -> np.ndarray:
    """Algorithm 3's weights as written: the sorted positions O, sum (m - O_i) + sum_{i>=2} (m - (O_i - O_{i-1}))."""
    m = codes.shape[1]
    weights = np.zeros((len(codes), len(estimator.chains_)))
    for c, chain in enumerate(estimator.chains_):
        position = chain.position() + 1
        for r, row in enumerate(codes):
            ordered = sorted(position[row >= 0].tolist())
            weights[r, c] = sum(m - o for o in ordered) + sum(m - (b - a) for a, b in zip(ordered, ordered[1:]))
    totals = weights.sum(axis=1, keepdims=True)
    return np.where(totals > 0, weights / np.where(totals > 0, totals, 1.0), 1.0 / weights.shape[1])


@pytest.mark.parametrize("seed", range(3))
def test_chain_weights_read_off_the_items_are_those_of_the_sorted_positions(seed) -> None:
    """The weights from each candidate's items (the gaps' sum telescopes) equal the definition, bit for bit."""
    from dprm.itemsets.tree_model import ConditionalTree

    rng = np.random.default_rng(seed)
    for _ in range(40):
        m, n_chains = int(rng.integers(1, 12)), int(rng.integers(1, 4))
        orders = [[int(j) for j in rng.permutation(m)] for _ in range(n_chains)]
        estimator = DensityEstimator.from_trees({f"c{j}": ["0", "1"] for j in range(m)},
                                                [(o, [ConditionalTree.single_leaf(j, [1, 1]) for j in o])
                                                 for o in orders])
        codes = np.where(rng.random((int(rng.integers(0, 30)), m)) < rng.random(), rng.integers(0, 2, (1, m)), -1)
        expected = sorted_positions_weights(estimator, codes)
        got = chain_weights(estimator, codes)
        assert got.shape == expected.shape and np.array_equal(got.view(np.int64), expected.view(np.int64))


def test_many_sets_of_nearly_certain_items_are_refused_without_a_long_itemset(monkeypatch) -> None:
    """The greedy probe sees one long itemset; a wide table at a high θ has millions of frequent itemsets none
    of them long (2,000 rows of 500 columns at θ = 0.9: about 10^7 of at most 16 items), and the run listed
    for more than 9 minutes. Here 40 columns "a" with probability 0.99 at θ = 0.9: no itemset of more than
    10 items is frequent (0.99^11 < 0.9), fewer than explosive_length's 13 for a limit lowered to 4,096, yet
    every set of at most 9 "a"s (more than 10^8) reaches θ by a union bound. Refused after the single items
    and the greedy probe (at most 13 x 40 supports), not after listing 10,000 of them."""
    monkeypatch.setattr(ison, "MAX_ITEMSETS", 4096)
    estimator = independent_estimator(40, 0.99)
    assert ison.explosive_length(40, None, 4096) == 13
    estimated = count_estimates(monkeypatch, 2_000)
    with pytest.raises(ParameterError, match=r"more than 4,096 itemsets reach support 0\.9 in the estimate, more "
                                             r"than a run lists: every set of its 40 nearly certain items .* "
                                             r"\(a union bound\); use --top-k K"):
        run_ison(estimator, 0.9)
    assert estimated[0] <= 13 * 40
    assert len(run_ison(estimator, 0.9, max_length=2).itemsets) == 40 + 40 * 39 // 2  # 820: not refused


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("method", ["exact-or-sample", "paths"])
def test_every_set_the_union_bound_counts_is_listed(seed: int, method: str) -> None:
    """Oracle for :mod:`dprm.itemsets.near_certain`: on estimates with split trees and reference samples, every
    set of frequent items of distinct columns whose deficits add up to at most 1 - θ is in ISON's listing,
    and the grid's count is at most the number of such sets (so at most the listing's size)."""
    from dprm.itemsets.near_certain import MARGIN, certain_subsets, deficits

    rng = np.random.default_rng(seed)
    n = 3000
    base = rng.random(n) < 0.97
    frame = pd.DataFrame({f"c{j}": np.where(base ^ (rng.random(n) < rng.uniform(0.0, 0.05)), "a", "b")
                          for j in range(7)})
    frame["d"] = np.where(rng.random(n) < 0.6, "x", "y")
    estimator = DensityEstimator(n_chains=3, random_state=seed, n_samples=20_000).fit(frame)
    for theta in (0.8, 0.9, 0.95):
        listed = {frozenset(s.items.items()) for s in run_ison(estimator, theta, method=method).itemsets}
        singles = np.array([estimator.codes_of({c: v}) for s in listed if len(s) == 1 for c, v in s])
        deficit = deficits(estimator, singles, method)
        columns = np.argmax(singles >= 0, axis=1)
        pool = [(int(columns[i]), int(singles[i, columns[i]]), deficit[i]) for i in range(len(singles))]
        certain = 0
        for size in range(1, len(pool) + 1):
            for chosen in itertools.combinations(pool, size):
                if len({c for c, _, _ in chosen}) < size or sum(d for _, _, d in chosen) > 1 - theta - MARGIN:
                    continue
                certain += 1
                assert frozenset((estimator.columns_[c], estimator.variables_[estimator.columns_[c]].categories[v])
                                 for c, v, _ in chosen) in listed
        assert certain_subsets(deficit, columns, theta, None, 10**9) <= certain <= len(listed)
        assert certain_subsets(deficit, columns, theta, 2, 10**9) <= sum(1 for s in listed if len(s) <= 2)


def test_a_wide_listing_is_limited_by_its_bytes() -> None:
    """A listing's limit is MAX_ITEMSETS, or fewer itemsets when each holds more bytes than MAX_LISTING_BYTES
    / MAX_ITEMSETS (128): 500 columns, 1,024 bytes an itemset, 4,194,304 itemsets in 4 GiB."""
    assert ison.listing_limit(30, 1) == ison.MAX_ITEMSETS
    assert ison.listing_limit(500, 1) == (4 << 30) // 1024 == 4_194_304
    assert ison.listing_limit(500, 24) == (4 << 30) // (24 * 24 + 1000)


def test_ison_writes_only_the_items_that_can_be_frequent_of_a_column_of_32767_categories() -> None:
    """A column declared with 32,767 categories made every candidate a bitset of 513 words and the path index
    one row per leaf and category (20 CPU s for 50 rows of two columns). The candidates are written with
    the single items that reach θ only, the index holds those only, and the itemsets are brute force's."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.choice(["x", "y"], size=50), "b": rng.choice(["u", "v"], size=50)})
    declared = ["x", "y"] + [f"k{c}" for c in range(ison.MAX_COLUMN_ITEMS - 2)]
    estimator = DensityEstimator(n_chains=2, random_state=0, n_samples=1000,
                                 domains={"a": declared, "b": ["u", "v"]}).fit(frame)
    index = ison.path_index(estimator)
    miner, _ = ison.ison_search(estimator, 0.3, None, None, "exact-or-sample", None, paths=index)
    frequent = [(c, v) for c, values in (("a", ["x", "y"]), ("b", ["u", "v"])) for v in values
                if estimator.density_many(estimator.codes_of({c: v})[None, :],
                                          chain_weights(estimator, estimator.codes_of({c: v})[None, :]))[0] >= 0.3]
    assert miner.codec.n_items == len(frequent) and miner.codec.n_words == 1 and index.bits.shape[0] == len(frequent)
    expected = {}
    for size in (1, 2):
        for chosen in itertools.combinations(frequent, size):
            if len({c for c, _ in chosen}) == size:
                codes = estimator.codes_of(dict(chosen))[None, :]
                support = estimator.density_many(codes, chain_weights(estimator, codes))[0]
                if support >= 0.3:
                    expected[frozenset(chosen)] = support
    found = {frozenset(s.items.items()): s.support for s in run_ison(estimator, 0.3).itemsets}
    assert found == expected
