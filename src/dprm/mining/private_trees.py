"""What the private tree-based miners share: parameters, targets, extraction, output.

AltExpM, AltMCMC (:mod:`dprm.mining.alternation`) and MCMCTreePair
(:mod:`dprm.mining.tree_pair`) differ only in how they obtain pairs of trees; this
base class holds the rest:

* the literal indexes in private mode (numeric split points on a grid over the
  public bounds, never at data values): equally wide, declared log-spaced, or, for a
  column without a declared transform, a grid of a public family chosen privately
  from ``grid_share`` of the budget before anything else (``numeric_grid="auto"``,
  the default; :mod:`dprm.mining.private_grids`);
* initial targets (:meth:`initial_target`): a uniformly random attribute of either
  view (the schema is public); Boolean values and categories are classes; a numeric
  attribute is cut into equal-width bins over its *public* bounds: ``target_bins``
  of them (``target_binning="fixed"``, the default), or as many as the paper's
  Freedman–Diaconis rule gives from differentially private estimates of the number
  of values and the interquartile range (``"fd"``, paid from ``binning_share`` of
  the budget, :meth:`_fd_bins`);
* below one trial's budget, trials of one literal pair each instead of trees
  (``trial``, :mod:`dprm.mining.pair_trials`, :mod:`dprm.mining.literal_pairs`);
* a noisy count of the rows with a small share of the budget (``size_share``,
  default 5 %, beyond the paper; 0 turns it off; released before the grids, with
  their count's tenth of ``grid_share`` added, and read by both): the data size
  enters Γ's maximum support and every p-value, and the sum of a tree pair's noisy
  cells alone is too rough for them (its variance grows with the number of cells);
  extraction also makes the cells add up to the combined estimate
  (:func:`dprm.mining.private_extraction.consistent_cells`);
* private extraction of each tree pair (:func:`dprm.mining.private_extraction.private_extract`),
  pruning, and the output's privacy block, whose guarantee comes from the releases
  actually made (:meth:`dprm.privacy.Accountant.privacy_block`) and is ``none`` with
  its reasons when a run is not private (seeded noise, or domains read off the data);
* the shared parameters (:data:`TREE_PARAMETERS`, :data:`MCMC_PARAMETERS`), their
  limits and the progress reports (:meth:`PrivateTreeMiner.work`); the chains' options
  (:data:`CHAIN_OPTIONS`) set in a run that ran no chain (literal-pair trials, the
  ``"auto"`` trial's choice below one trial's budget included, or AltExpM's trees) are
  listed in the output's ``parameters["unused"]`` and a note.
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Iterable
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np

from dprm.data.attributes import Attribute, AttributeKind, TwoViewData, require_attributes
from dprm.data.grid import GRID_FAMILY, grid_points, grid_spacing, public_grid
from dprm.data.literal_index import LiteralIndex
from dprm.engine import CountingEngine, InProcessEngine
from dprm.engine.in_process import check_data
from dprm.engine.workers import ShardWorkers
from dprm.errors import ParameterError
from dprm.mining.auto_trees import (ALTERNATING_LOW_TARGET_SHARE, AUTO, AUTO_MAX_TRIALS, FOUND_EXCESS,
                                     PAIRS_IF_WEAK, ROWS_FOR_TREES, TREES_THEN_PAIRS, WEAK_TOP_SCORE,
                                     auto_tree_settings, pairs_first)
from dprm.mining.base import Miner, Progress, ProgressCallback, view_reasons
from dprm.mining.independence import excess_of
from dprm.mining.initial_targets import InitialTarget, TargetChooser
from dprm.mining.literal_pairs import MAX_PAIR_CANDIDATES, PairChooser
from dprm.mining.pair_trials import PairTrials
from dprm.mining.private_extraction import discrete_laplace_variance, leaf_pair_table, private_extract_table, prune
from dprm.mining.private_grids import COUNT_SHARE, choosable, choose_grids, grid_note
from dprm.mining.ranking import ranked
from dprm.mining.selection import selection_sampler
from dprm.mining.tree_parameters import (CHAIN_OPTIONS, EXTRACTION_UNITS, MAX_DEPTH_SUBTREES, MCMC_PARAMETERS,
                                         NO_ROW_COUNT, PAIR_TRIALS, TOP_SCORE_FIRST, TREE_PARAMETERS, UNIT_CHOICES,
                                         extraction_units)
from dprm.mining.tree_rows import TreeRows, binned_classes
from dprm.params import as_generator
from dprm.privacy import Accountant, DiscreteLaplaceCount, ExponentialMechanism, split_budget
from dprm.privacy.accountant import PURE_DP_ON_MCMC_CONVERGENCE, SEEDED_PROPOSALS_REASON, run_accountant
from dprm.privacy.budget import as_epsilon, as_fraction
from dprm.queries import Redescription, canonical_key
from dprm.trees.private import sample_tree
from dprm.trees.tree import Tree

# The parameter tables are dprm.mining.tree_parameters'; named here too, where the miners' modules import them.
__all__ = ["PrivateTreeMiner", "CHAIN_OPTIONS", "TREE_PARAMETERS", "MCMC_PARAMETERS", "EXTRACTION_UNITS",
           "MAX_DEPTH_SUBTREES", "UNIT_CHOICES", "extraction_units"]


class PrivateTreeMiner(PairTrials, Miner):
    """Base class of the private tree-based miners (not used directly)."""

    #: The miner counts only through a counting engine when given one (:mod:`dprm.engine`), so it runs sharded.
    counts_through_engine = True
    #: Whether the auto rule is the alternations' (:func:`dprm.mining.auto_trees.auto_tree_settings`).
    alternating_rule = False

    # -- validation -----------------------------------------------------------------

    def _check_combination(self) -> None:
        if self.size_share + self.binning_share >= 1:
            raise ParameterError(f"size-share and binning-share must add up to less than 1, not "
                                 f"{self.size_share} + {self.binning_share}")
        if self.targets == "scored" and self.target_share != AUTO and self.size_share + self.target_share >= 1:
            raise ParameterError(f"size-share and target-share must add up to less than 1, not "
                                 f"{self.size_share} + {self.target_share}")
        if self.reestimate_share > 0 and self.counts != "cells":
            raise ParameterError("reestimate-share needs counts cells (the paper's counts have no single table)")
        autos = [name for name in self._auto_names()
                 if getattr(self, name) == AUTO and name not in NO_ROW_COUNT]
        if autos and self.size_share == 0:
            raise ParameterError(f"{autos[0].replace('_', '-')} auto needs size-share above 0 (the rule reads the "
                                 f"noisy row count)")
        most = ALTERNATING_LOW_TARGET_SHARE if self.alternating_rule else 0.3  # the auto rule's largest share
        if self.targets == "scored" and self.target_share == AUTO and self.size_share >= 1 - most:
            raise ParameterError(f"size-share must be below {1 - most:g} with target-share auto (up to {most:g}), "
                                 f"not {self.size_share}")
        if self.pair_thresholds == "on" and self.trial == "trees":
            raise ParameterError("pair-thresholds on needs a pair trial (trial pair, refined-pair or auto), not "
                                 "trial trees")
        if (self.trial in PAIR_TRIALS or self.trial in TOP_SCORE_FIRST) and self.targets != "scored":
            raise ParameterError(f"trial {self.trial} needs targets scored (the pair is chosen by its score)")
        if self.trial == TREES_THEN_PAIRS and self.alternating_rule:
            raise ParameterError("trial trees-then-pairs is mcmc-tree-pair's; alt-expm and alt-mcmc take trees, "
                                 "pairs-if-weak, pair, refined-pair or auto")
        if self.units == "subtrees" and self.depth != AUTO and self.depth > MAX_DEPTH_SUBTREES:
            raise ParameterError(f"depth must be at most {MAX_DEPTH_SUBTREES} with units subtrees (twice the units "
                                 f"per side: 16 times the extraction's memory of leaves), not {self.depth}")

    def work(self) -> int:
        """The progress total of a run, in the miner's work units (data-independent)."""
        raise NotImplementedError

    def _auto_names(self) -> tuple[str, ...]:
        """The parameters that may be ``"auto"`` (:mod:`dprm.mining.auto_trees`)."""
        return ("init_trials", "depth", "target_share", "trial", "pair_thresholds", "significance_probability")

    def _most_trials(self) -> int:
        """Trials a run makes at most (data-independent: the progress total)."""
        return AUTO_MAX_TRIALS if self.init_trials == AUTO else int(self.init_trials)

    def _run_parameters(self) -> dict[str, Any]:
        """The document's ``parameters["auto"]``, the values the ``"auto"`` rule chose, and ``parameters["unused"]``,
        the chains' options set in a run that ran no chain (:meth:`unused_options`)."""
        autos = {name: value for name, value in getattr(self, "settings_", {}).items() if getattr(self, name) == AUTO}
        if self.units == AUTO and hasattr(self, "units_"):
            autos["units"] = self.units_
        unused = self.unused_options()
        return {**({"auto": autos} if autos else {}), **({"unused": unused} if unused else {})}

    def unused_options(self) -> list[str]:
        """The :data:`CHAIN_OPTIONS` set away from their defaults in a fitted run that ran no MCMC chain.

        Whether a chain runs may depend on the noisy row count (``trial="auto"`` makes literal
        pairs below one trial's budget), so these options are not refused before the run; they
        are said to have had no effect after it. Empty before ``fit`` and where a chain ran.

        Returns
        -------
        list of str
            Parameter names, in :data:`CHAIN_OPTIONS`' order.
        """
        if getattr(self, "_chains_ran", True):
            return []
        defaults = {name: p.default for name, p in inspect.signature(type(self).__init__).parameters.items()}
        return [name for name in CHAIN_OPTIONS if name in defaults and getattr(self, name) != defaults[name]]

    def _resolve_settings(self, epsilon: float) -> None:
        """``init_trials_``, ``depth_``, ``target_share_`` (and ``omega_``): as given, or by the auto rule.

        The rule (:func:`dprm.mining.auto_trees.auto_tree_settings`) reads the run's ε and
        the released row count only; the values chosen are in :attr:`settings_` and a note.
        """
        rule = (auto_tree_settings(epsilon, self._data_size[0], alternating=self.alternating_rule,
                                   scored=self.targets == "scored", pairs=self._pairs_allowed(),
                                   rows_for_trees=self._rows_for_trees())
                if self._data_size is not None else None)
        chosen = {}
        for name in self._auto_names():
            value = getattr(self, name)
            if value == AUTO:  # without a row count (size-share 0) only these may be auto: trees, no thresholds
                value = getattr(rule, name) if rule is not None else NO_ROW_COUNT[name]
            chosen[name] = value
        for name, value in chosen.items():
            setattr(self, name + "_", value)
        self.settings_ = chosen
        # the trials where the released top score sends them to refined pairs from the start (pairs_first):
        # the rule's count of pairs (trees trials are fewer and larger), unless the trials were given
        self._pair_trials = (rule.pair_trials if self.init_trials == AUTO and rule is not None and rule.pair_trials
                             else self.init_trials_)
        self.units_ = extraction_units(self.units, int(self.depth_))
        self._notes = self._auto_notes()

    def _auto_notes(self) -> list[str]:
        """The note of what the auto rule chose (:attr:`settings_`), or none."""
        autos = [name for name in self._auto_names() if getattr(self, name) == AUTO and self.settings_[name] is not None]
        return ([f"auto: {', '.join(f'{n.replace(chr(95), chr(45))} {self.settings_[n]}' for n in autos)} "
                 f"(from epsilon and the noisy row count)"] if autos else [])

    def _rows_for_trees(self) -> float:
        """The auto rule's budget in rows from which the trials are trees (below it, refined pairs)."""
        return ROWS_FOR_TREES

    def _pairs_allowed(self) -> bool:
        """Whether the auto rule may make literal-pair trials: with a pair trial given, or with ``"auto"``
        when the depth is not given (a given depth asks for trees) and there are at most
        :data:`~dprm.mining.literal_pairs.MAX_PAIR_CANDIDATES` candidates (public: schema and grids)."""
        if self.trial == AUTO:
            return self.depth == AUTO and PairChooser.scored(self.indexes_) <= MAX_PAIR_CANDIDATES
        return self.trial in PAIR_TRIALS

    def _extraction_units(self) -> int:
        """Progress units of one extraction (:data:`EXTRACTION_UNITS` MCMC-step equivalents)."""
        return EXTRACTION_UNITS

    # -- the run --------------------------------------------------------------------

    def fit(
        self, data: TwoViewData | CountingEngine, *, accountant: Accountant | None = None,
        rng: np.random.Generator | None = None, progress: ProgressCallback | None = None,
    ) -> "PrivateTreeMiner":
        """Mine ``data`` spending exactly ``epsilon`` of ``accountant``.

        ``data`` is a dataset (counted in this process) or a counting engine
        (:mod:`dprm.engine`, e.g. the rows sharded on Ray): then every count is asked of
        the shards' :class:`~dprm.mining.tree_rows.TreeRows` workers (the chains in
        lock-step, one round trip per step of all chains; an extraction's table in one
        request) and summed, and all noise is drawn here, so the output, the statistics
        and the ledger are the same for the same seed whatever the engine.

        Without an accountant, one holding ``epsilon`` with secure noise is made.
        ``rng`` drives the data-independent choices (initial attributes, random
        trees, proposals, interval simulations). The chains' guarantee needs their
        proposals secret: a seed given as ``rng`` (an integer, a SeedSequence, or a
        legacy RandomState, from which one integer seed is drawn, advancing it) makes
        them known, so a run with chains is then labelled ``none``
        (:data:`~dprm.privacy.accountant.SEEDED_PROPOSALS_REASON`) even with an
        accountant of secure noise; a Generator is taken as secret
        (``numpy.random.default_rng()``, not one seeded by hand, for a private run). ``progress(done, total)`` is told
        the work done (:meth:`work` units: MCMC steps, or releases for AltExpM).
        """
        self._forget_fit()
        self.check_parameters()
        check_data(data)  # a clear error for a path, a DataFrame or None, before anything is spent
        engine = data if isinstance(data, CountingEngine) else None
        if isinstance(engine, InProcessEngine):
            data, engine = engine.schema, None
        if engine is not None:
            data = engine.schema
        n_rows = data.n_rows if engine is None else engine.n_rows
        constraints = self.constraints()
        tracker = Progress(progress, self.work())
        # A seed given as such (not a Generator) is known: the chains' proposals are then not secret.
        self._seeded_choices = rng is not None and not isinstance(rng, np.random.Generator)
        rng = as_generator(rng)
        accountant = run_accountant(accountant, self.epsilon)
        require_attributes(data.views)
        self._ledger_start = len(accountant.ledger)  # the run's releases from here on, the grids' first
        self._n_rows = n_rows
        self._data_size: tuple[float, float] | None = None
        data = self._choose_grids(data, engine, accountant)
        self._keys = itertools.count(1)
        self._shards: ShardWorkers | None = None
        try:
            self.indexes_ = [LiteralIndex(view, mode="private", max_splits=self.max_splits) for view in data.views]
            # attributes the types file declares complete (public): the normal form may use them
            self._complete = frozenset(a.name for view in data.views for a in view if a.domain.complete)
            if engine is not None:
                self._shards = engine.workers(partial(TreeRows, max_splits=self.max_splits))
            self._fit_rows(data, accountant, rng, tracker, constraints)
        finally:
            if self._shards is not None:
                self._shards.close()
                self._shards = None
            if engine is not None and self._chosen:  # the engine serves later runs: its public grids again
                engine.use_transforms({key: None for key in self._chosen})
        return self

    def _choose_grids(self, data: TwoViewData, engine: CountingEngine | None, accountant: Accountant) -> TwoViewData:
        """With ``numeric_grid="auto"``: each numeric column's grid, chosen privately.

        See :mod:`dprm.mining.private_grids`.

        Spends ``grid_share`` of ε first, when some column has no declared transform
        (:attr:`_grid_epsilon`, taken from the budget of the rest of the run); returns
        the data (sharded: the schema) whose domains carry the chosen grids.
        """
        self._grid_epsilon = 0
        self._grid_notes: list[str] = []
        self._chosen: dict[tuple[int, str], str] = {}
        if self.numeric_grid != "auto":
            return data
        if not any(choosable(a) for view in data.views for a in view.attributes):
            return data
        epsilon = as_epsilon(self.epsilon, "epsilon")
        grid_epsilon = epsilon * as_fraction(self.grid_share, "grid-share")
        choice_epsilon, n_hat = grid_epsilon, None
        # One count of the rows for the grids and the run (_release_data_size). The paper
        # variant keeps the grids' own count: its seeded runs write what they wrote before.
        if self.size_share > 0 and self.variant != "paper":
            count_share = grid_epsilon * COUNT_SHARE
            choice_epsilon = grid_epsilon - count_share
            n_hat = self._release_data_size(count_share + self._size_epsilon(epsilon - grid_epsilon), accountant)
        chosen = choose_grids(engine if engine is not None else InProcessEngine(data), choice_epsilon, accountant,
                              max_splits=self.max_splits, n_hat=n_hat, sampler=selection_sampler(epsilon, n_hat))
        self._chosen = chosen
        self._grid_epsilon = grid_epsilon
        self._grid_notes = [grid_note(chosen)]
        if engine is None:
            return data.with_transforms(chosen)
        engine.use_transforms(chosen)
        return engine.schema

    def _size_epsilon(self, epsilon: Fraction) -> Fraction:
        """The data size's share (``size_share``) of ``epsilon``, the budget after the grids."""
        return split_budget(epsilon, [as_fraction(self.size_share, "size-share"),
                                      1 - as_fraction(self.size_share, "size-share")])[0]

    def _release_data_size(self, epsilon: Fraction, accountant: Accountant) -> float:
        """The noisy count of the rows (``"data size"``, sensitivity 1) and its variance, kept for the run."""
        count = DiscreteLaplaceCount(epsilon)
        self._data_size = (float(count.release(accountant, "data size", self._n_rows)),
                           discrete_laplace_variance(count.scale))
        return self._data_size[0]

    def _fit_rows(self, data: TwoViewData, accountant: Accountant, rng: np.random.Generator, tracker: Progress,
                  constraints) -> None:
        """The run after the checks (``data``: the schema, with the rows in-process)."""
        self._reasons: list[str] = []
        self._found: dict[tuple[str, str], Redescription] = {}
        self._described: tuple[set[int], set[int]] = (set(), set())  # attributes of the released trees, per view
        self._constraints = constraints
        self._accountant = accountant
        self._rng = rng
        self._progress = tracker
        epsilon = as_epsilon(self.epsilon, "epsilon") - self._grid_epsilon  # the grids' share was spent first
        if self.size_share > 0:
            size_epsilon = self._size_epsilon(epsilon)
            epsilon = epsilon - size_epsilon
            if self._data_size is None:  # not released with the grids' count
                self._release_data_size(size_epsilon, accountant)
        self._resolve_settings(float(as_epsilon(self.epsilon, "epsilon")))
        self._binning_epsilon = []
        self._chooser = None
        self._pairs_only = self.targets == "scored" and self.trial_ in PAIR_TRIALS
        self._pair_chooser: PairChooser | None = None  # scored once a run: the pairs after trees reuse it
        sketch = Fraction(0)
        if self.targets == "scored" and self.trial_ in TOP_SCORE_FIRST and self._data_size is not None:
            # The pairs' top score first: weak structure goes to refined pairs from the start (pairs_first).
            self._pair_chooser = PairChooser(self.indexes_, counters=self._gain_counters())
            rest, top = self._release_top_score(self._pair_chooser, epsilon, accountant)
            if pairs_first(top, self._data_size[0]):
                if self._pair_trials != self.init_trials_:  # the rule's count of pairs, not of trees trials
                    self.init_trials_ = self.settings_["init_trials"] = self._pair_trials
                    self._notes = [*self._auto_notes(), *(n for n in self._notes if not n.startswith("auto: "))]
                self._notes.append(f"trial {self.trial_}: the released top score of the pairs ({top} rows) "
                                   f"is below {WEAK_TOP_SCORE:g} of the rows, so the trials are refined pairs")
                self._pairs_only = True
                self._mine_pairs(accountant, rest, top_score=top)
                self._finish_fit(data, accountant, tracker)
                return
            sketch = epsilon - rest
            if self.trial_ == PAIRS_IF_WEAK:  # no pairs follow the trees: the candidates' scores are not needed
                self._pair_chooser = None
        if self._pairs_only:
            self._mine_pairs(accountant, epsilon)
            self._finish_fit(data, accountant, tracker)
            return
        if self.targets == "scored":
            # Chosen privately by their association with the other view
            # (dprm.mining.initial_targets); binary targets need no binning.
            share = as_fraction(self.target_share_, "target-share")
            target_epsilon, epsilon = split_budget(epsilon, [share, 1 - share])
            if sketch:  # the pairs' top score was the targets' first release: out of their share, else the trees'
                target_epsilon, epsilon = ((target_epsilon - sketch, epsilon) if target_epsilon > 2 * sketch
                                           else (target_epsilon, epsilon - sketch))
            self._chooser = TargetChooser(self.indexes_, self.init_trials_, target_epsilon, accountant,
                                          counters=self._gain_counters())
            self._mine(data, accountant, rng, epsilon)
            self._finish_fit(data, accountant, tracker)
            return
        # The initial attributes are drawn first (uniformly: data-independent), so the
        # budget of the numeric ones' Freedman–Diaconis estimates is known in advance.
        sizes = [len(data.left), len(data.right)]
        picks = rng.integers(sum(sizes), size=self.init_trials_)
        self._initial = [(0, data.left.attributes[p]) if p < sizes[0] else (1, data.right.attributes[p - sizes[0]])
                         for p in picks]
        n_numeric = sum(a.kind is AttributeKind.NUMERIC for _, a in self._initial)
        if self.target_binning == "fd" and n_numeric > 0 and self.binning_share > 0:
            share = as_fraction(self.binning_share, "binning-share")
            binning, epsilon = split_budget(epsilon, [share, 1 - share])
            self._binning_epsilon = split_budget(binning, [1] * n_numeric)
        self._mine(data, accountant, rng, epsilon)
        self._finish_fit(data, accountant, tracker)

    def _finish_fit(self, data: TwoViewData, accountant: Accountant, tracker: Progress) -> None:
        """Prune what was found, write the privacy block, end the progress."""
        self.redescriptions_ = ranked(self._pruned(list(self._found.values())))  # kept before pruned, each best first
        # whether a chain ran: the ledger's labels say (the privacy block and the unused options read it)
        self._chains_ran = any(PURE_DP_ON_MCMC_CONVERGENCE in entry.guarantee
                               for entry in accountant.ledger[self._ledger_start:])
        self.privacy_ = self._privacy_block(data, accountant)
        unused = [name.replace("_", "-") for name in self.unused_options()]
        why = "its trials were literal pairs" if self._pairs_only else "its trees were exponential-mechanism choices"
        self.notes_ = [*self._grid_notes, *self._notes,
                       *([f"{', '.join(unused)} had no effect: no MCMC chain ran ({why})"] if unused else [])]
        tracker.finish()

    def _mine(self, data: TwoViewData, accountant: Accountant, rng: np.random.Generator, epsilon) -> None:
        """Spend exactly ``epsilon`` (what is left after the data-size count)."""
        raise NotImplementedError

    # -- building blocks ------------------------------------------------------------

    def initial_target(self, data: TwoViewData, rng: np.random.Generator) -> tuple[int, Any, int]:
        """The next initial attribute's classes: ``(its view 0/1, class per row, n classes)``.

        Sharded, the classes stay in the shards: the second value is then the key
        under which every shard's :class:`~dprm.mining.tree_rows.TreeRows` holds them.

        Uniform targets were drawn when the run started (data-independent); scored ones
        are chosen now (:class:`~dprm.mining.initial_targets.TargetChooser`), after the
        trees of the earlier trials were released, and the chosen literal stays in
        ``_target_literal`` (``None`` for a uniform target).
        """
        chosen = self._chooser.next() if self._chooser is not None else self._initial.pop(0)
        self._target_literal = chosen if isinstance(chosen, InitialTarget) else None
        if isinstance(chosen, InitialTarget):
            if self._shards is not None:
                key = next(self._keys)
                self._shards.call("literal_classes", key, chosen)
                return chosen.side, key, 2
            classes, n_classes = chosen.classes(self.indexes_[chosen.side])
            return chosen.side, classes, n_classes
        side, attribute = chosen
        classes, n_classes = self._classes(attribute, side)
        return side, classes, n_classes

    def _fd_bins(self, attribute: Attribute, side: int, low: float, high: float) -> int:
        """Freedman–Diaconis number of bins from differentially private estimates.

        ``2 · IQR · n^(-1/3)`` needs the number of values ``n`` and the interquartile
        range, both private. With this target's share ``ε_b`` of the budget: ``n̂`` by
        a discrete Laplace count (ε_b/3, sensitivity 1); each quartile by the
        exponential mechanism over the attribute's public grid of thresholds with
        utility ``−|#(x ≤ t) − q·n|`` (ε_b/3 each; adding a row changes the count
        below ``t`` by at most 1 and ``q·n`` by ``q``, and one of the two only when the
        row lies above ``t``: sensitivity 1). The bins are equal-width over the public
        bounds, at most ``2**depth`` of them.
        """
        epsilon = self._binning_epsilon.pop(0)
        shares = split_budget(epsilon, [1, 1, 1])
        index = self.indexes_[side]
        position = index.view.names.index(attribute.name)
        thresholds = index.thresholds[position]
        if thresholds.size == 0:
            return 2
        if self._shards is not None:
            histogram = self._shards.sum("code_histogram", side, attribute.name)
        else:
            codes = index.codes[position]
            histogram = np.bincount(codes[codes != index.missing_code], minlength=thresholds.size + 1)
        n_values = int(histogram.sum())
        below = np.cumsum(histogram)[: thresholds.size]
        step = f"target bins {attribute.name!r}"
        n_hat = max(1, DiscreteLaplaceCount(shares[0]).release(self._accountant, f"{step}: count", n_values))
        quartiles = []
        for q, share in zip((0.25, 0.75), shares[1:]):
            # utility in rows; the true n only shapes the utility (sensitivity derived above)
            chosen = ExponentialMechanism(share, 1).release(self._accountant, f"{step}: quantile {q}",
                                                            -np.abs(below - q * n_values))
            quartiles.append(float(thresholds[chosen]))
        # The rule's (high - low) / width in halves and grid spacings, which stay finite for
        # any finite bounds (±1.8e308 would overflow the plain differences).
        half_iqr = quartiles[1] / 2 - quartiles[0] / 2
        half_width = 2.0 * max(half_iqr, grid_spacing(low, high, thresholds.size) / 2) * n_hat ** (-1 / 3)
        bins = np.ceil(grid_spacing(low, high, 1) / half_width) if half_width > 0 else np.inf
        return int(np.clip(bins, 2, 2**self.depth_)) if np.isfinite(bins) else 2**self.depth_

    def _classes(self, attribute: Attribute, side: int) -> tuple[Any, int]:
        """The classes of an initial attribute (sharded: the key the shards hold them under) and their number."""
        edges = None
        if attribute.kind is AttributeKind.NUMERIC:
            if attribute.domain.bounds is not None and attribute.domain.declared:
                low, high = attribute.domain.bounds
            else:
                if self._shards is not None:  # the shards' merged bounds: the smallest and largest value
                    low, high = attribute.domain.bounds if attribute.domain.bounds is not None else (0.0, 1.0)
                else:
                    values = attribute.values[~np.isnan(attribute.values)]
                    low, high = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
                self._not_private(f"bins of the target {attribute.name!r} come from data, not declared bounds")
            n_classes = self._fd_bins(attribute, side, low, high) if self._binning_epsilon else self.target_bins
            if attribute.domain.transform == "log":  # declared heavy tail: bins equally wide in log(1 + x)
                edges = np.expm1(grid_points(math.log1p(low), math.log1p(high), n_classes - 1))
            elif attribute.domain.transform in GRID_FAMILY[1:]:  # a grid chosen privately: bins alike
                edges = public_grid(low, high, n_classes - 1, attribute.domain.transform)
            else:
                edges = grid_points(low, high, n_classes - 1)  # overflow-safe linspace(low, high, n_bins + 1)[1:-1]
        else:
            if attribute.kind is AttributeKind.CATEGORICAL and not attribute.domain.declared:
                self._not_private(f"categories of the target {attribute.name!r} come from data")
            n = len(attribute.domain.categories) if attribute.domain.categories is not None else 2
            n_classes = max(n, 2)
        if self._shards is not None:
            key = next(self._keys)
            self._shards.call("attribute_classes", key, side, attribute.name, edges)
            return key, n_classes
        return binned_classes(attribute.values, attribute.kind, edges), n_classes

    def chain_tree(self, side: int, target: Any, n_classes: int, epsilon, step: str, accountant: Accountant,
                   rng: np.random.Generator, score: str) -> Tree:
        """A tree of view ``side`` predicting ``target`` by its own MCMC chain (:func:`~dprm.trees.private.sample_tree`
        with the run's chain options), charged as ``step``; sharded, the chain runs on the shards."""
        rows = None
        if self._shards is not None:
            from dprm.trees.chain_shards import ChainRows  # numba: only where it runs

            rows = ChainRows(self._shards, (side, side), target, self._n_rows)
        return sample_tree(self.indexes_[side], target, n_classes, self.depth_, epsilon, accountant, step, rng,
                           iterations=self.mcmc_iterations, stop=self.mcmc_stop, node_choice=self.mcmc_nodes,
                           variance_threshold=self.variance_threshold, variance_window=self.variance_window,
                           progress=self._progress.advance, rows=rows, score=score)

    def leaf_target(self, side: int, tree: Tree) -> Any:
        """The leaf of every row in ``tree`` of view ``side`` as classes (``-1``: dropped out); sharded: a key."""
        if self._shards is not None:
            key = next(self._keys)
            self._shards.call("leaf_classes", key, side, tree)
            return key
        cells = tree.apply_cells(self.indexes_[side])
        return np.where(cells < tree.n_leaves, cells, -1)

    def forget(self, *targets: Any) -> None:
        """Free the shards' copies of sharded ``targets`` (nothing in-process)."""
        if self._shards is not None:
            self._shards.call("forget", [int(t) for t in targets])

    def released(self, side: int, tree: Tree) -> None:
        """A tree of view ``side`` was released: its attributes are taken for later scored targets and pairs."""
        attributes = {split.attribute for split in tree.splits if split is not None}
        self._described[side].update(attributes)
        if self._chooser is not None:
            self._chooser.take(side, attributes)

    def kept_structure(self, redescriptions: Iterable[Redescription]) -> bool:
        """Whether pruning keeps one of ``redescriptions`` whose noisy excess Jaccard is at least
        :data:`~dprm.mining.auto_trees.FOUND_EXCESS` (post-processing of released counts)."""
        return any(not r.pruned and (excess_of(r.extra) or 0.0) >= FOUND_EXCESS
                   for r in self._pruned(list(redescriptions)))

    def _pruned(self, redescriptions: list[Redescription]) -> list[Redescription]:
        """``redescriptions`` marked by the run's pruning settings (:func:`~dprm.mining.pruning.prune`)."""
        return prune(redescriptions, min_noisy_support=self.prune_support, max_interval_width=self.prune_interval,
                     interval_floor=self.prune_interval_floor, excess_floor=self.prune_excess_floor,
                     max_pvalue=self.max_pvalue if self.prune_significance else None,
                     significance_probability=self.significance_probability_)

    def extract(self, trees: tuple[Tree, Tree], epsilon, step: str) -> None:
        """Private extraction of one tree pair (left tree, right tree) into the results."""
        if self._shards is not None:  # one request for the whole extraction
            table = self._shards.sum("cell_table", trees[0], trees[1])
        else:
            cells = [trees[s].apply_cells(self.indexes_[s]) for s in (0, 1)]
            table = leaf_pair_table(cells[0], trees[0].n_leaves, cells[1], trees[1].n_leaves)
        found = private_extract_table(
            table, trees[0], self.indexes_[0], trees[1], self.indexes_[1],
            epsilon, self._accountant, step, self._constraints,
            counts=self.counts, units=self.units_, data_size=self._data_size, confidence=self.confidence,
            reestimate_share=self.reestimate_share, prune_width=self.prune_interval,
            prune_floor=self.prune_interval_floor, prune_excess_floor=self.prune_excess_floor, rng=self._rng,
        )
        for redescription in found:
            if self._complete:  # post-processing with public facts: the same supports, a shorter form
                redescription = redescription.normalized(self._complete)
            key = (canonical_key(redescription.left, self._complete), canonical_key(redescription.right, self._complete))
            self._found.setdefault(key, redescription)
        self._progress.advance(self._extraction_units())

    def _not_private(self, reason: str) -> None:
        if reason not in self._reasons:
            self._reasons.append(reason)

    def _privacy_block(self, data: TwoViewData, accountant: Accountant) -> dict[str, Any]:
        """The spec's block: the label from the releases' mechanisms, ``none`` with every reason."""
        # the views' reasons first, then those of single targets
        reasons = view_reasons(data.views, [index.private_domains for index in self.indexes_], "split points")
        if self._chains_ran and self._seeded_choices and accountant.noise.secure:
            reasons.append(SEEDED_PROPOSALS_REASON)
        return accountant.privacy_block(reasons=reasons + self._reasons, since=self._ledger_start)
