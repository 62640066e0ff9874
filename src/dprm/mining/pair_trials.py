"""Trials of literal pairs in the private tree miners: the pair, its refinement, its extraction.

Below one trial's budget, and wherever the ``"auto"`` rule or the released top score
of the pairs asks for them (:mod:`dprm.mining.auto_trees`), a trial of a tree miner
is not a target and a tree pair but a literal of each view chosen at once
(:mod:`dprm.mining.literal_pairs`), optionally its numeric literal chosen again near
its threshold (:mod:`dprm.mining.pair_thresholds`) and one more split of either side
(:mod:`dprm.mining.pair_refinement`), then extracted privately like any tree pair.
:class:`PairTrials` holds these trials for :class:`~dprm.mining.private_trees.PrivateTreeMiner`;
:func:`pair_trial_shares` splits a trial's budget between its releases, exactly.

Examples
--------
>>> from fractions import Fraction
>>> pair_trial_shares(Fraction(1), omega=Fraction(3, 4), refined=True, sharpen=False)
(Fraction(3, 5), Fraction(0, 1), Fraction(1, 5), Fraction(1, 5))
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from typing import Any

from dprm.mining.auto_trees import (AUTO, PAIR_OMEGA, PAIR_SKETCH_SHARE, PAIR_THRESHOLD_SHARE, REFINED_PAIR_OMEGA,
                                     REFINEMENT_SHARE, decisive_pairs, pairs_after_trees)
from dprm.mining.literal_pairs import PairChooser
from dprm.mining.pair_refinement import refine_pair
from dprm.mining.pair_thresholds import anchored_side, sharpen_pair
from dprm.mining.selection import selection_sampler
from dprm.privacy import Accountant, DiscreteLaplaceCount, split_budget
from dprm.privacy.budget import as_fraction
from dprm.trees.tree import Tree

__all__ = ["PairTrials", "pair_trial_shares"]


def pair_trial_shares(budget: Fraction, *, omega: Fraction, refined: bool, sharpen: bool
                       ) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """A pair trial's ``budget`` as ``(choice, thresholds, refinement, extraction)`` (exact; zeros where unused).

    Refined: :data:`~dprm.mining.auto_trees.REFINEMENT_SHARE` for the refinement, ω of
    the rest for the choice, the remainder for the extraction; else ω and ``1 − ω``.
    ``sharpen``: :data:`~dprm.mining.auto_trees.PAIR_THRESHOLD_SHARE` of the choice for
    the pair's thresholds (:meth:`PairTrials._mine_pairs`).
    """
    zero = Fraction(0)
    if refined:
        refinement_share = as_fraction(REFINEMENT_SHARE, "refinement share")
        rest = 1 - refinement_share
        choice, refinement, extraction = split_budget(budget, [omega * rest, refinement_share, (1 - omega) * rest])
    else:
        (choice, extraction), refinement = split_budget(budget, [omega, 1 - omega]), zero
    thresholds = zero
    if sharpen:
        share = as_fraction(PAIR_THRESHOLD_SHARE, "pair-threshold share")
        choice, thresholds = split_budget(choice, [1 - share, share])
    return choice, thresholds, refinement, extraction

class PairTrials:
    """The literal-pair trials of :class:`~dprm.mining.private_trees.PrivateTreeMiner` (its base; not used alone).

    The methods read the run's state that the miner sets in ``fit``: its literal
    indexes (``indexes_``), the chosen settings (``trial_``, ``init_trials_``,
    ``omega_``, ``pair_thresholds_``), the attributes of the released trees
    (``_described``), the shards of a sharded run (``_shards``) and its notes; each
    pair is extracted by the miner's ``extract``.
    """

    def _mine_pairs(self, accountant: Accountant, epsilon, *, after_trees: int = 0,
                    top_score: int | None = None) -> None:
        """Trials of one literal pair each (:mod:`dprm.mining.literal_pairs`), spending exactly ``epsilon``.

        ``after_trees``: the number of trees trials made before (trial
        :data:`~dprm.mining.auto_trees.TREES_THEN_PAIRS`): ``epsilon`` then goes to
        :func:`~dprm.mining.auto_trees.pairs_after_trees` refined pairs, numbered on from
        there, and the attributes of the released trees are left out of their choices.

        Each trial's budget is split by ω between the pair's choice and its extraction
        (ω auto, or none for the paper's equal shares: the pair's 0.7). A
        ``"refined-pair"`` trial (:mod:`dprm.mining.pair_refinement`) first sets
        :data:`~dprm.mining.auto_trees.REFINEMENT_SHARE` of its budget aside for the
        refinement split; ω splits the rest (ω auto:
        :data:`~dprm.mining.auto_trees.REFINED_PAIR_OMEGA`). With ``pair_thresholds`` on,
        :data:`~dprm.mining.auto_trees.PAIR_THRESHOLD_SHARE` of the pair's share chooses
        its one numeric literal again (:mod:`dprm.mining.pair_thresholds`); a pair with
        none or two gives that share to its extraction.

        Where the auto rule asks for two or more refined pairs (``init_trials`` auto, not
        the alternations' rule), :data:`~dprm.mining.auto_trees.PAIR_SKETCH_SHARE` of
        ``epsilon`` first releases the candidates' top score (:meth:`_decisive_count`) and
        the pairs are as many as the rest can choose decisively, at least one.

        ``top_score``: the pairs' top score the run has released already (trial
        :data:`~dprm.mining.auto_trees.TREES_THEN_PAIRS` where
        :func:`~dprm.mining.auto_trees.pairs_first`): the trials are refined pairs and
        that release decides their number. The chooser scored for that release (its
        candidates' scores are over all the rows and public candidates) serves the pairs,
        from the start or after the trees, instead of scoring every pair again.
        """
        chooser = self._pair_chooser or PairChooser(self.indexes_, counters=self._gain_counters())
        for side, attributes in enumerate(self._described):
            chooser.take(side, attributes)
        refined = self.trial_ == "refined-pair" or after_trees > 0 or top_score is not None
        given = getattr(self, "omega", AUTO) != AUTO and self.omega_ is not None
        omega = as_fraction(self.omega_ if given else REFINED_PAIR_OMEGA if refined else PAIR_OMEGA, "omega")
        sharpen = self.pair_thresholds_ == "on"
        shares = partial(pair_trial_shares, omega=omega, refined=refined, sharpen=sharpen)
        counter = self._refinement_counter()
        count = pairs_after_trees(self.init_trials_, after_trees) if after_trees else self.init_trials_
        if refined and count > 1 and self.init_trials == AUTO and not self.alternating_rule:
            epsilon, count = self._decisive_count(chooser, epsilon, count, shares, accountant, top_score)
        trials = split_budget(epsilon, [1] * count)
        # permute-and-flip below one trial's budget (dprm.mining.selection): ε and the released row count
        sampler = selection_sampler(self.epsilon, None if self._data_size is None else self._data_size[0])
        for trial, budget in enumerate(trials, start=after_trees + 1):
            choice, thresholds, refinement, extraction = shares(budget)
            target, partner = chooser.choose(choice, accountant, f"literal pair {trial}", sampler=sampler)
            if sharpen and anchored_side(target, partner) is not None:
                target, partner = sharpen_pair(self.indexes_, target, partner, thresholds, accountant,
                                               f"pair thresholds {trial}", self._gain_counters())
            elif sharpen:  # no one numeric literal to move (the released pair says so): the extraction gets its share
                extraction += thresholds
            if refined:
                left, right, split = refine_pair(self.indexes_, target, partner, refinement, accountant,
                                                 f"refinement {trial}", chooser.taken, counter)
                chooser.take(split.side, [split.split.attribute])
                trees = [left, right]
            else:
                trees = [Tree(depth=1, splits=[partner])] * 2
                trees[target.side] = target.tree()
            self.extract((trees[0], trees[1]), extraction, f"extraction {trial}")

    def _release_top_score(self, chooser: PairChooser, epsilon: Fraction, accountant: Accountant
                           ) -> tuple[Fraction, int]:
        """Release the candidates' top score with :data:`~dprm.mining.auto_trees.PAIR_SKETCH_SHARE` of ``epsilon``.

        The top score is the largest score of the candidates (:meth:`PairChooser.scores`),
        rounded down: each candidate's score has sensitivity 1
        (:mod:`dprm.mining.literal_pairs`), so their maximum over the public candidate
        set has sensitivity 1, and rounding down keeps it (two values within 1 of each
        other round down to integers within 1); it is released by the discrete Laplace
        mechanism (ledger step ``"pairs' top score"``). Returns the budget left and the
        released score.
        """
        share = as_fraction(PAIR_SKETCH_SHARE, "pair-sketch share")
        sketch, rest = split_budget(epsilon, [share, 1 - share])
        scores = chooser.scores()
        top = math.floor(float(scores.max())) if scores.size else 0
        return rest, int(DiscreteLaplaceCount(sketch).release(accountant, "pairs' top score", top))

    def _decisive_count(self, chooser: PairChooser, epsilon: Fraction, count: int,
                        shares: Callable[[Fraction], tuple[Fraction, ...]], accountant: Accountant,
                        released: int | None = None) -> tuple[Fraction, int]:
        """Keep as many of ``count`` pairs as choose decisively, by the pairs' released top score.

        The top score is released first (:meth:`_release_top_score`) unless ``released``
        gives it (released by the run already, on the same candidates).
        :func:`~dprm.mining.auto_trees.decisive_pairs` then reads only that release and
        public values (post-processing). Returns the budget left for the pairs and their
        number; a note says when there are fewer than ``count``.
        """
        rest = epsilon
        if released is None:
            rest, released = self._release_top_score(chooser, epsilon, accountant)
        choices = [shares(split_budget(rest, [1] * k)[0])[0] for k in range(1, count + 1)]
        decided = decisive_pairs(released, chooser.scores().size, choices)
        if decided < count:
            self._notes.append(f"refined pairs: {decided} of {count}: the released top score of the pairs "
                               f"({released} rows) makes more choices on this budget close to uniform")
        return rest, decided

    def _refinement_counter(self) -> "Any | None":
        """Sharded: the refinement's counts summed over the shards; else None (counted in-process)."""
        if self._shards is None:
            return None
        return partial(self._shards.sum, "refinement_counts")

    def _gain_counters(self) -> "tuple[Any, Any] | None":
        """Sharded: each side's gain counts summed over the shards (for the target and pair choosers); else None."""
        if self._shards is None:
            return None
        shards = self._shards
        return tuple(partial(shards.sum, "gain_counts", side) for side in (0, 1))
