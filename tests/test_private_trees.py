"""Private trees: score sensitivities on neighbouring data, budgets, incremental counts."""

from __future__ import annotations

import signal
import threading

import numpy as np
import pytest
from conftest import random_view

from dprm.data.literal_index import LiteralIndex
from dprm.errors import BudgetExceededError, ParameterError
from dprm.privacy import Accountant, SeededNoise
from dprm.trees.private import (
    ChainCancelled,
    ChainTrace,
    cell_counts,
    grow_exponential_tree,
    leaf_classes,
    prepare_tree_pair,
    purity_mass,
    random_tree,
    sample_tree,
    sample_tree_pair,
)
from dprm.trees._kernels import chain_score
from dprm.trees.targets import target_from_attribute
from dprm.trees.tree import Tree


def accountant(total: float = 100.0, seed: int = 0) -> Accountant:
    return Accountant(total, SeededNoise(np.random.default_rng(seed)))


def heap_cells(tree, index):
    """Heap-position cells (a leaf, or the node where the row dropped out)."""
    cells = tree.apply_cells(index)
    positions = np.array(tree.leaves + tree.internal_nodes)
    return positions[cells]


def majority_mass(counts: np.ndarray) -> float:
    """``Σ_cells max_c τ_{n,c}``, written independently of the compiled kernel."""
    return float(sum(max(row) for row in counts.tolist()))


def pair_scores(left_index, right_index, first_tree, second_tree, target, n_classes, rows):
    """The pair scores of a fixed tree pair on the sub-dataset ``rows``, and ``G``."""
    inside = np.isin(np.arange(left_index.n_rows), rows)
    first_counts = cell_counts(first_tree, left_index, np.where(inside, target, -1), n_classes)
    second_target = np.where(inside, leaf_classes(heap_cells(first_tree, left_index), first_tree.depth), -1)
    second_counts = cell_counts(second_tree, right_index, second_target, 2**first_tree.depth)
    g_first, g_second = purity_mass(first_counts), purity_mass(second_counts)
    unsplit = purity_mass(second_counts.sum(axis=0, keepdims=True))
    n = len(rows)
    majority = majority_mass(first_counts) + majority_mass(second_counts) - float(second_counts.sum(axis=0).max())
    scores = {
        "gini": (g_first + g_second - unsplit) / 3,
        "paper": (g_first / n) * (1 + g_second / n) / 2,
        "counts": majority,
        "G": g_first,
    }
    # the compiled chain scores exactly these formulas
    for name, kind in (("gini", 1), ("paper", 2), ("counts", 3)):
        assert chain_score(first_counts, second_counts, kind, float(n), 0.0) == pytest.approx(scores[name])
    return scores


@pytest.mark.parametrize("seed", range(6))
def test_scores_change_by_at_most_their_sensitivity_on_neighbouring_data(seed: int) -> None:
    """Remove one row: G and the Gini pair score move by ≤ 1, Bai's score by ≤ 2, and
    the majority pair score of every tree pair by a value in the same interval [−2, 1]
    (bounded range 3)."""
    rng = np.random.default_rng(seed)
    n = 120
    left, right = random_view(rng, n, "left", 0.15), random_view(rng, n, "right", 0.15)
    indexes = [LiteralIndex(left, mode="private", max_splits=4), LiteralIndex(right, mode="private", max_splits=4)]
    target, n_classes = target_from_attribute(right["right_c0"])
    pairs = [[random_tree(indexes[0], 3, rng), random_tree(indexes[1], 3, rng)] for _ in range(10)]
    everyone = np.arange(n)
    full = [pair_scores(*indexes, *trees, target, n_classes, everyone) for trees in pairs]
    labelled_full = int((target >= 0).sum())
    worst = {"gini": 0.0, "G": 0.0, "bai": 0.0, "counts": 0.0}
    widest = 0.0
    for removed in rng.choice(n, 15, replace=False):
        rest = np.delete(everyone, removed)
        labelled_rest = int((target[rest] >= 0).sum())
        changes = []
        for trees, before in zip(pairs, full):
            after = pair_scores(*indexes, *trees, target, n_classes, rest)
            for name in ("gini", "G", "counts"):
                worst[name] = max(worst[name], abs(before[name] - after[name]))
            worst["bai"] = max(worst["bai"], abs((before["G"] - labelled_full) - (after["G"] - labelled_rest)))
            changes.append(after["counts"] - before["counts"])
            assert -2 - 1e-9 <= changes[-1] <= 1 + 1e-9  # removing a row: each term drops by 0 or 1
        widest = max(widest, max(changes) - min(changes))
    assert worst["gini"] <= 1.0 + 1e-9  # Gini pair score: sensitivity 1
    assert worst["G"] <= 1.0 + 1e-9  # G: sensitivity 1
    assert worst["bai"] <= 2.0 + 1e-9  # Bai's score (3): sensitivity 2
    assert worst["counts"] <= 2.0 + 1e-9 and widest <= 3.0 + 1e-9  # majority pair score: range 3
    assert worst["gini"] > 0.1 and widest >= 1  # the check is not vacuous


def test_compiled_chain_keeps_cells_and_counts_consistent() -> None:
    """After many accepted and rejected steps, the chain's state equals a recount."""
    from dprm.trees._kernels import run_chain
    from dprm.trees.layout import preorder, tree_layout
    from dprm.trees.private import _ChainSpace, _counts

    rng = np.random.default_rng(3)
    left, right = random_view(rng, 300, "left", 0.2), random_view(rng, 300, "right", 0.2)
    spaces = [_ChainSpace(LiteralIndex(v, mode="private", max_splits=5), np.dtype(np.uint8)) for v in (left, right)]
    target, n_classes = target_from_attribute(right["right_c1"])
    depth, steps = 3, 400
    nodes = [space.random_nodes(depth, rng) for space in spaces]
    cells = [space.cells(n, depth).astype(np.uint8) for space, n in zip(spaces, nodes)]
    # the targets' types of the miners' calls (dprm.trees.private: int8 up to 128 classes), so
    # that the kernels `dprm warm-cache` compiled serve this call too
    target = target.astype(np.int8)
    target_b = leaf_classes(cells[0], depth).astype(np.int8)
    counts = [_counts(cells[0], target, 15, n_classes), _counts(cells[1], target_b, 15, 8)]
    rank, _ = preorder(depth)
    layouts = [tree_layout(c, rank) for c in cells]
    done, accepted = run_chain(
        spaces[0].codes, spaces[0].missing, spaces[0].splits, spaces[0].starts, spaces[0].sizes, spaces[0].usable,
        spaces[1].codes, spaces[1].missing, spaces[1].splits, spaces[1].starts, spaces[1].sizes, spaces[1].usable,
        nodes[0], cells[0], *layouts[0], counts[0], target.copy(), nodes[1], cells[1], *layouts[1], counts[1], target_b,
        True, 1, 300.0, float((target >= 0).sum()), depth, 2.0,
        rng.integers(14, size=steps), rng.random(steps), rng.random(steps), rng.random(steps),
        np.log(rng.random(steps)), 0.5, 0, 0.0, 0, steps, np.zeros(1),
    )
    assert done == steps and 0 < accepted < steps
    for k in range(2):
        assert np.array_equal(cells[k], spaces[k].cells(nodes[k], depth))
        order, offset = layouts[k]  # every row once, in pre-order of its cell, each cell where offset says
        assert np.array_equal(np.sort(order), np.arange(300))
        assert np.array_equal(np.repeat(np.arange(15), np.diff(offset)), rank[cells[k][order]])
    assert np.array_equal(target_b, leaf_classes(cells[0], depth))
    assert np.array_equal(counts[0], _counts(cells[0], target, 15, n_classes))
    assert np.array_equal(counts[1], _counts(cells[1], target_b, 15, 8))
    first = spaces[0].tree(nodes[0], depth)
    assert np.array_equal(heap_cells(first, spaces[0].index), cells[0])


def test_budgets_are_charged_once_and_exactly() -> None:
    rng = np.random.default_rng(0)
    view = random_view(rng, 200)
    index = LiteralIndex(view, mode="private")
    target, n_classes = target_from_attribute(view["left_b0"])
    acc = accountant(1.0)
    grow_exponential_tree(index, target, n_classes, 4, 0.5, acc, "expm")
    sample_tree(index, target, n_classes, 3, 0.25, acc, "mcmc", rng, iterations=50)
    sample_tree_pair(index, index, target, n_classes, 3, 0.25, acc, "pair", rng, iterations=50)
    assert acc.remaining() == 0
    assert [entry.step for entry in acc.ledger] == ["expm level 1", "expm level 2", "expm level 3",
                                                      "expm level 4", "mcmc", "pair"]
    with pytest.raises(BudgetExceededError):
        sample_tree(index, target, n_classes, 3, 0.01, acc, "too much", rng, iterations=10)


@pytest.mark.parametrize("stop", ["fixed", "variance"])
def test_a_chain_run_in_chunks_for_progress_gives_the_same_trees(stop: str) -> None:
    """Chunked runs (progress reports) keep the state in the arrays: same result, steps add up."""
    rng = np.random.default_rng(6)
    left, right = random_view(rng, 300, "left", 0.1), random_view(rng, 300, "right", 0.1)
    indexes = [LiteralIndex(left, mode="private", max_splits=6), LiteralIndex(right, mode="private", max_splits=6)]
    target, n_classes = target_from_attribute(right["right_c0"])
    options = {"iterations": 5_500, "stop": stop, "variance_window": 40, "variance_threshold": 0.05}
    results = []
    for chunked in (False, True):
        reported: list[int] = []
        trace = ChainTrace()
        trees = sample_tree_pair(indexes[0], indexes[1], target, n_classes, 3, 2.0, accountant(), "pair",
                                 np.random.default_rng(9), trace=trace, **options,
                                 **({"progress": reported.append} if chunked else {}))
        single = sample_tree(indexes[0], target, n_classes, 3, 2.0, accountant(seed=3), "tree",
                             np.random.default_rng(4), iterations=3_333,
                             **({"progress": reported.append} if chunked else {}))
        results.append(([t.splits for t in trees], single.splits, trace.steps, trace.accepted))
        if chunked:
            assert sum(reported) == 5_500 + 3_333 and len(reported) > 5 and min(reported) > 0
    assert results[0] == results[1]
    if stop == "variance":
        assert results[0][2] < 5_500  # the stop fired, and the chunks agree where


def test_a_cancelled_chain_stops_after_its_chunk_under_way() -> None:
    """A chain on a worker thread looks at ``cancelled`` between chunks: set during the first
    chunk, the chain raises after it; set before, it runs no step; unset, it runs to the end."""
    rng = np.random.default_rng(6)
    left, right = random_view(rng, 300, "left", 0.1), random_view(rng, 300, "right", 0.1)
    indexes = [LiteralIndex(left, mode="private", max_splits=6), LiteralIndex(right, mode="private", max_splits=6)]
    target, n_classes = target_from_attribute(right["right_c0"])

    def job():
        return prepare_tree_pair(indexes[0], indexes[1], target, n_classes, 3, 2.0, accountant(), "pair",
                                 np.random.default_rng(9), iterations=50_000)

    cancelled, reported = threading.Event(), []

    def advance(steps: int) -> None:
        reported.append(steps)
        cancelled.set()

    with pytest.raises(ChainCancelled):
        job().run(advance, cancelled)
    assert len(reported) == 1 and 0 < reported[0] < 50_000
    reported.clear()
    with pytest.raises(ChainCancelled):
        job().run(reported.append, cancelled)
    assert reported == []
    assert len(job().run(None, threading.Event())) == 2


def test_an_interrupted_tree_pair_miner_stops_its_chains_instead_of_finishing_them() -> None:
    """Ctrl-C in the main thread while the miner's chain runs on its pool's thread: the run
    ends with KeyboardInterrupt after the chunk under way, not after the whole chain (the
    pool's exit waits for its threads, which used to run every step first)."""
    from dprm.data.attributes import TwoViewData
    from dprm.mining import MCMCTreePair

    rng = np.random.default_rng(2)
    # 4,000 rows: the whole chain takes about 15 s here, stopping takes a chunk (0.2 s); the bound
    # below leaves seconds for a loaded machine to hand the signal to the main thread (at 400 rows,
    # a 2.5 s chain, one CI run stopped at 98.5 % of it)
    left, right = random_view(rng, 4000, "left", 0.1), random_view(rng, 4000, "right", 0.1)
    seen: list[tuple[int, int]] = []
    interrupted = threading.Event()

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done > 0 and not interrupted.is_set():   # the chain has started: Ctrl-C, a real signal
            interrupted.set()
            signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)

    def ctrl_c(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGUSR1, ctrl_c)   # Ctrl-C's path, without pytest's own SIGINT handling
    try:
        miner = MCMCTreePair(init_trials=1, mcmc_iterations=2_000_000, targets="uniform")
        with pytest.raises(KeyboardInterrupt):
            miner.fit(TwoViewData(left, right), accountant=accountant(1.0), rng=np.random.default_rng(0),
                      progress=progress)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    done, total = seen[-1]
    assert interrupted.is_set() and done < total / 2   # a chain left to finish reports done == total


def test_mcmc_trees_learn_a_clear_rule_and_the_paper_score_does_not() -> None:
    """At a moderate budget the counts-scaled pair score finds the planted split; the
    paper's normalised score (range 1, sensitivity 1) leaves the chain near uniform."""
    rng = np.random.default_rng(1)
    n = 2000
    left, right = random_view(rng, n, "left", 0.0), random_view(rng, n, "right", 0.0)
    target = left["left_b2"].values.astype(np.int64)
    right["right_b1"].values[:] = np.where(rng.random(n) < 0.95, target, 1 - target)
    indexes = [LiteralIndex(left, mode="private"), LiteralIndex(right, mode="private")]
    planted = right.names.index("right_b1")
    purity = {}
    for score in ("counts", "gini", "paper"):
        found, masses = 0, []
        for seed in range(4):
            first, _ = sample_tree_pair(indexes[1], indexes[0], target, 2, 2, 0.5, accountant(), "pair",
                                        np.random.default_rng(seed), iterations=3000, pair_score=score)
            found += planted in {split.attribute for split in first.splits}
            masses.append(purity_mass(cell_counts(first, indexes[1], target, 2)))
        purity[score] = (found, float(np.mean(masses)))
    assert purity["counts"][0] >= 3 and purity["gini"][0] >= 3 and purity["paper"][0] <= 1
    assert purity["counts"][1] > purity["paper"][1] + 200  # rows better sorted by the first tree
    assert purity["gini"][1] > purity["paper"][1] + 200


def test_bad_chain_parameters() -> None:
    rng = np.random.default_rng(0)
    view = random_view(rng, 50)
    index = LiteralIndex(view, mode="private")
    target, n_classes = target_from_attribute(view["left_b0"])
    with pytest.raises(ParameterError, match="mcmc-stop"):
        sample_tree(index, target, n_classes, 2, 0.1, accountant(), "x", rng, stop="sometimes")
    with pytest.raises(ParameterError, match="pair-score"):
        sample_tree_pair(index, index, target, n_classes, 2, 0.1, accountant(), "x", rng, pair_score="best")
    for depth in (0, 8):  # a cell is one byte: at most 255 positions
        with pytest.raises(ParameterError, match="depth must be 1 to 7"):
            sample_tree(index, target, n_classes, depth, 0.1, accountant(), "x", rng)


def test_variance_stop_ends_early_on_a_converged_chain() -> None:
    rng = np.random.default_rng(4)
    view = random_view(rng, 100)
    index = LiteralIndex(view, mode="private")
    target, n_classes = target_from_attribute(view["left_b0"])
    trace = ChainTrace()
    sample_tree(index, target, n_classes, 2, 1e6, accountant(1e7), "x", rng, iterations=5000, stop="variance",
                variance_threshold=1e-9, variance_window=50, trace=trace)
    assert trace.steps < 5000


def test_mcmc_chain_targets_the_exponential_mechanism_over_trees() -> None:
    """On a tiny tree space, final states of many chains follow exp(ε·score/(2Δ)).

    One node, candidates: a Boolean split and three thresholds of a numeric attribute
    (so attributes have 1 and 3 splits: the global move needs its Hastings term, the
    local move is symmetric). Bai's score G − τ with Δ = 2.
    """
    from scipy.stats import chisquare

    from dprm.data.attributes import Attribute, AttributeKind, Domain, View

    rng = np.random.default_rng(11)
    n = 40
    x = rng.uniform(0, 4, n)
    b = (rng.random(n) < 0.5).astype(np.int8)
    target = ((x > 2) ^ (rng.random(n) < 0.2)).astype(np.int64)
    view = View("left", [Attribute("b", "left", AttributeKind.BOOLEAN, b, Domain(declared=True)),
                         Attribute("x", "left", AttributeKind.NUMERIC, x, Domain(bounds=(0, 4), declared=True))])
    index = LiteralIndex(view, mode="private", max_splits=3)
    epsilon = 0.6
    scores = []
    for split in index.splits:
        scores.append(purity_mass(cell_counts(Tree(depth=1, splits=[split]), index, target, 2)) - n)
    weights = np.exp(epsilon * (np.array(scores) - max(scores)) / 4)
    expected = weights / weights.sum()
    finals = []
    for chain in range(1500):
        tree = sample_tree(index, target, 2, 1, epsilon, Accountant(1, SeededNoise(np.random.default_rng(chain))),
                           "chain", np.random.default_rng(10_000 + chain), iterations=30)
        finals.append(index.splits.index(tree.splits[0]))
    observed = np.bincount(finals, minlength=len(index.splits))
    assert chisquare(observed, expected * observed.sum()).pvalue > 1e-3
    assert expected.max() > 1.5 * expected.min()  # the target is far from uniform: the test has power


@pytest.mark.parametrize("node_choice", ["uniform", "by-depth"])
def test_both_node_choices_target_the_exponential_mechanism_over_depth_2_trees(node_choice) -> None:
    """Depth 2 (three nodes, four candidate splits each: 64 trees): the final states of
    many chains follow exp(ε·score/(2Δ)) whichever way a step picks its node."""
    from itertools import product

    from scipy.stats import chisquare

    from dprm.data.attributes import Attribute, AttributeKind, Domain, View

    rng = np.random.default_rng(12)
    n = 40
    x = rng.uniform(0, 4, n)
    b = (rng.random(n) < 0.5).astype(np.int8)
    target = ((x > 2) ^ (b == 1) ^ (rng.random(n) < 0.1)).astype(np.int64)
    view = View("left", [Attribute("b", "left", AttributeKind.BOOLEAN, b, Domain(declared=True)),
                         Attribute("x", "left", AttributeKind.NUMERIC, x, Domain(bounds=(0, 4), declared=True))])
    index = LiteralIndex(view, mode="private", max_splits=3)
    epsilon = 0.5
    trees = list(product(range(len(index.splits)), repeat=3))
    scores = np.array([purity_mass(cell_counts(Tree(depth=2, splits=[index.splits[s] for s in t]), index, target, 2))
                       for t in trees]) - n
    weights = np.exp(epsilon * (scores - scores.max()) / 4)
    expected = weights / weights.sum()
    finals = []
    for chain in range(2500):
        tree = sample_tree(index, target, 2, 2, epsilon, Accountant(1, SeededNoise(np.random.default_rng(chain))),
                           "chain", np.random.default_rng(20_000 + chain), iterations=60, node_choice=node_choice)
        finals.append(trees.index(tuple(index.splits.index(s) for s in tree.splits)))
    observed = np.bincount(finals, minlength=len(trees))
    assert chisquare(observed, expected * observed.sum()).pvalue > 1e-3
    assert expected.max() > 3 * expected.min()  # far from uniform: the test has power


@pytest.mark.parametrize("seed", range(3))
def test_single_tree_majority_scores_are_monotone_of_sensitivity_1(seed: int) -> None:
    """AltMCMC's and AltExpM's ``score="counts"``: removing a row lowers the majority mass of
    every tree, and the majority quality of every split and node, by 0 or 1 (monotone,
    sensitivity 1: ``exp(ε M)``); the compiled kernel (kind 4) scores the same formula."""
    from dprm.trees.criterion import node_class_counts, qualities_from_counts

    rng = np.random.default_rng(seed)
    n = 150
    left = random_view(rng, n, "left", 0.15)
    index = LiteralIndex(left, mode="private", max_splits=4)
    target, n_classes = target_from_attribute(left["left_c0"])
    trees = [random_tree(index, 3, rng) for _ in range(10)]
    position = np.zeros(n, dtype=np.int64)

    def scores(rows: np.ndarray) -> tuple[list[float], np.ndarray]:
        labels = np.where(np.isin(np.arange(n), rows), target, -1)
        masses = []
        for tree in trees:
            counts = cell_counts(tree, index, labels, n_classes)
            masses.append(majority_mass(counts))
            assert chain_score(counts, counts, 4, float(n), 0.0) == pytest.approx(masses[-1])
        flat = node_class_counts(index, position, labels, 1, n_classes)
        return masses, qualities_from_counts(index, flat, 1, n_classes, "counts")[:, 0]

    everyone = np.arange(n)
    full, full_quality = scores(everyone)
    moved = 0
    for removed in rng.choice(n, 12, replace=False):
        rest, rest_quality = scores(np.delete(everyone, removed))
        changes = np.concatenate([np.subtract(rest, full), rest_quality - full_quality])
        assert np.all((changes >= -1 - 1e-9) & (changes <= 1e-9))  # one direction, at most one row
        moved += int(np.any(changes < 0))
    assert moved >= 6  # not vacuous


def test_majority_score_trees_learn_a_clear_rule_at_a_small_budget() -> None:
    """One tree of depth 2 at ε = 0.05 on 2,000 rows: the majority mass (exp(ε M)) puts the
    planted attribute in the tree in most seeds, Bai's G − τ (exp(ε (G − τ)/4)) rarely."""
    rng = np.random.default_rng(1)
    n = 2000
    left, right = random_view(rng, n, "left", 0.0), random_view(rng, n, "right", 0.0)
    target = left["left_b2"].values.astype(np.int64)
    right["right_b1"].values[:] = np.where(rng.random(n) < 0.8, target, 1 - target)
    index = LiteralIndex(right, mode="private")
    planted = right.names.index("right_b1")
    found = {}
    for score in ("counts", "gini"):
        found[score] = sum(planted in {s.attribute for s in sample_tree(
            index, target, 2, 2, 0.05, accountant(), "tree", np.random.default_rng(seed), iterations=2000,
            score=score).splits} for seed in range(6))
        found[score] += sum(planted in {s.attribute for s in grow_exponential_tree(
            index, target, 2, 2, 0.05, accountant(seed=seed), "tree", score=score).splits} for seed in range(6))
    assert found["counts"] >= 9 and found["counts"] >= found["gini"] + 3, found


@pytest.mark.parametrize("move", ["held", "local"])
def test_an_anchored_pair_chain_targets_the_exponential_mechanism_over_its_restricted_pairs(move) -> None:
    """Depth-1 pairs; the second tree anchored at the threshold ``y ≤ t_2`` of five:
    held (4 pairs: the first tree's splits) or local within one grid point (4 × 3
    pairs). The final states of many chains follow ``exp(ε·score/3)`` (the counts
    score's bounded range 3) over exactly those pairs (no other second tree is ever
    reached)."""
    from itertools import product

    from scipy.stats import chisquare

    from dprm.data.attributes import Attribute, AttributeKind, Domain, View
    from dprm.trees.chain_draws import Anchor

    rng = np.random.default_rng(13)
    n = 60
    x, y = rng.uniform(0, 4, n), rng.uniform(0, 6, n)
    b, c = (rng.random(n) < 0.5).astype(np.int8), (rng.random(n) < 0.5).astype(np.int8)
    target = ((x > 2) ^ (rng.random(n) < 0.2)).astype(np.int64)
    left = View("left", [Attribute("b", "left", AttributeKind.BOOLEAN, b, Domain(declared=True)),
                         Attribute("x", "left", AttributeKind.NUMERIC, x, Domain(bounds=(0, 4), declared=True))])
    right = View("right", [Attribute("c", "right", AttributeKind.BOOLEAN, c, Domain(declared=True)),
                           Attribute("y", "right", AttributeKind.NUMERIC, y, Domain(bounds=(0, 6), declared=True))])
    left_index = LiteralIndex(left, mode="private", max_splits=3)
    right_index = LiteralIndex(right, mode="private", max_splits=5)
    thresholds = [k for k, s in enumerate(right_index.splits) if s.attribute == 1]
    assert len(thresholds) == 5
    anchor = Anchor(nodes=(0,), splits=(thresholds[2],), move=move, window=1 if move == "local" else None)
    seconds = thresholds[2:3] if move == "held" else thresholds[1:4]
    pairs = list(product(range(len(left_index.splits)), seconds))
    scores = np.array([pair_scores(left_index, right_index, Tree(depth=1, splits=[left_index.splits[s]]),
                                   Tree(depth=1, splits=[right_index.splits[t]]), target, 2, np.arange(n))["counts"]
                       for s, t in pairs])
    epsilon = 0.8
    weights = np.exp(epsilon * (scores - scores.max()) / 3)
    expected = weights / weights.sum()
    finals = []
    for chain in range(2000):
        first, second = sample_tree_pair(left_index, right_index, target, 2, 1, epsilon,
                                         Accountant(1, SeededNoise(np.random.default_rng(chain))), "pair",
                                         np.random.default_rng(30_000 + chain), iterations=40, anchor=anchor)
        finals.append(pairs.index((left_index.splits.index(first.splits[0]),
                                   right_index.splits.index(second.splits[0]))))  # ValueError if outside
    observed = np.bincount(finals, minlength=len(pairs))
    assert chisquare(observed, expected * observed.sum()).pvalue > 1e-3
    assert expected.max() > 1.5 * expected.min()  # far from uniform: the test has power
