"""What an estimate answers: densities of (partial) assignments, conditionals, and samples.

:class:`DensityQueries` is the query side of :class:`~dprm.itemsets.estimator.DensityEstimator`
(a mix-in): it reads only the estimate's columns and domains (``variables_``), its
chains (``chains_``), the size and seed of the reference samples, never how the
chains were learned. The methods are described in the estimator's module notes
(*Inference on partial assignments*, *Sampling*).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from dprm.data.category_text import category_text
from dprm.errors import ParameterError, short_repr
from dprm.itemsets.chain import Chain, sample_chain
from dprm.itemsets.domains import VariableDomain
from dprm.itemsets.reference_sample import ReferenceSample

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DensityQueries", "METHODS"]

#: How a partial assignment is answered (``method=``; the estimator's module notes).
METHODS = ("exact-or-sample", "paths")


class DensityQueries:
    """Densities, conditionals and samples of an ensemble of chains (a mix-in of the estimator).

    A subclass provides ``variables_`` (column → :class:`VariableDomain`, in the trees'
    column order), ``chains_``, ``n_samples`` and the attributes ``_sample_seed`` (the
    reference samples' seed) and ``_samples`` (their cache; None to draw them again).
    """

    n_samples: int
    _sample_seed: int | None
    _samples: list[ReferenceSample] | None

    @property
    def variables_(self) -> dict[str, VariableDomain]:  # pragma: no cover - provided by the subclass
        raise NotImplementedError

    @property
    def chains_(self) -> list[Chain]:  # pragma: no cover - provided by the subclass
        raise NotImplementedError

    def codes_of(self, assignment: Mapping[str, object]) -> np.ndarray:
        """The code row of a (partial) assignment: each column's code, -1 where not assigned.

        Values are category texts (or numbers of binned columns); an unknown column or
        value, or an assignment that is not a mapping, is a :class:`~dprm.errors.ParameterError`.
        """
        if not isinstance(assignment, Mapping):
            raise ParameterError(f"an assignment must be a mapping from column name to value "
                                 f"({{'colour': 'red'}}), not {type(assignment).__name__}")
        variables = self.variables_
        columns = list(variables)
        codes = np.full(len(columns), -1, dtype=np.int64)
        for name, value in assignment.items():
            if name not in variables:
                raise ParameterError(f"no column named {name!r} (columns: {', '.join(columns)})")
            domain = variables[name]
            text = category_text(value)
            if domain.edges is not None and text not in domain.categories:
                codes[columns.index(name)] = domain.encode([value])[0]
            elif text in domain.categories:
                codes[columns.index(name)] = domain.categories.index(text)
            else:
                raise ParameterError(f"column {name!r} has no category {text!r}")
        return codes

    def chain_densities(self, codes: np.ndarray, method: str = "exact-or-sample") -> np.ndarray:
        """Each chain's density of each (partial) assignment.

        Parameters
        ----------
        codes : numpy.ndarray of int, shape (n, n_columns)
            Code rows, -1 where a column is not assigned.
        method : {"exact-or-sample", "paths"}
            See *Inference on partial assignments* in the module notes.

        Returns
        -------
        numpy.ndarray of float64, shape (n, n_chains)
        """
        if method not in METHODS:
            raise ParameterError(f"method must be 'exact-or-sample' or 'paths', not {method!r}")
        chains = self.chains_
        codes = np.atleast_2d(np.asarray(codes, dtype=np.int64))
        assigned = codes >= 0
        # each row's assigned columns, row by row (a candidate holds a few of a wide table's columns: the work
        # follows them, not every tree of every chain)
        rows, columns = np.nonzero(assigned)
        out = np.ones((len(codes), len(chains)))
        for c, chain in enumerate(chains):
            by_product = np.ones(len(codes), dtype=bool)
            if method == "exact-or-sample":  # rows whose assigned variables' trees test an unassigned one
                by_product[_rows_testing_unassigned(chain, assigned, rows, columns)] = False
                sampled = np.flatnonzero(~by_product)
                if len(sampled):
                    out[sampled, c] = self._reference_samples()[c].supports(codes[sampled])
            # the rows each tree multiplies (its target assigned, answered by the product), ascending, grouped by
            # target; the trees multiply in the chain's order, as one loop over every tree did
            kept = by_product[rows]
            by_column = np.argsort(columns[kept], kind="stable")
            kept_rows = rows[kept][by_column]
            ends = np.cumsum(np.bincount(columns[kept], minlength=codes.shape[1]))
            for tree in chain.trees:
                stop = ends[tree.target]
                start = ends[tree.target - 1] if tree.target > 0 else 0
                if stop > start:
                    at = kept_rows[start:stop]
                    out[at, c] *= tree.target_proba(codes[at])
        return out

    def _reference_samples(self) -> list[ReferenceSample]:
        if self._samples is None:
            rng = np.random.default_rng(self._sample_seed)
            sizes = [d.size for d in self.variables_.values()]
            self._samples = [ReferenceSample(sample_chain(chain, self.n_samples, rng), sizes)
                             for chain in self.chains_]
        return self._samples

    def density_many(self, codes: np.ndarray, chain_weights: np.ndarray | None = None,
                     method: str = "exact-or-sample") -> np.ndarray:
        """The ensemble's density of each code row: the (weighted) mean of the chains' densities.

        ``chain_weights`` is one weight per chain, or one row of weights per code row;
        each row is normalised. Default: equal weights.
        """
        per_chain = self.chain_densities(codes, method)
        if chain_weights is None:
            return per_chain.mean(axis=1)
        weights = np.broadcast_to(np.asarray(chain_weights, dtype=float), per_chain.shape)
        return (per_chain * weights).sum(axis=1) / weights.sum(axis=1)

    def density(self, assignment: Mapping[str, object], method: str = "exact-or-sample") -> float:
        """The estimated probability of a full or partial assignment (column -> value)."""
        return float(self.density_many(self.codes_of(assignment)[None, :], method=method)[0])

    def conditional(self, target: str, given: Mapping[str, object]) -> dict[str, float]:
        """The distribution of ``target`` given a (partial) assignment of other columns.

        ``density(given + {target: v})`` for every state ``v``, normalised over ``v``;
        an impossible ``given`` (density 0 for every ``v``) gives the uniform distribution.
        Where the target's domain has the missing value, it is one of the states but not
        a category: the categories' probabilities then add up to less than 1 by its own.
        """
        variables = self.variables_
        if target not in variables:
            raise ParameterError(f"no column named {target!r}")
        if not isinstance(given, Mapping):
            self.codes_of(given)  # its one-line refusal
        if target in given:
            raise ParameterError(f"the target {target!r} is also given")
        row = self.codes_of(given)
        j = list(variables).index(target)
        rows = np.repeat(row[None, :], variables[target].size, axis=0)
        rows[:, j] = np.arange(variables[target].size)
        joint = self.density_many(rows)
        total = joint.sum()
        proba = joint / total if total > 0 else np.full(len(joint), 1.0 / len(joint))
        return dict(zip(variables[target].categories, proba.tolist()))

    def sample_codes(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` code rows drawn from the estimate (see *Sampling*)."""
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
            raise ParameterError(f"the number of rows to draw must be an integer, not {short_repr(n)}")
        if n < 0:
            raise ParameterError("the number of rows to draw must not be negative")
        if not isinstance(rng, np.random.Generator):
            raise ParameterError(f"rng must be a numpy.random.Generator (numpy.random.default_rng(seed)), "
                                 f"not {type(rng).__name__}")
        chains = self.chains_
        codes = np.full((n, len(self.variables_)), -1, dtype=np.int64)
        which = rng.integers(0, len(chains), size=n)
        for c, chain in enumerate(chains):
            rows = np.flatnonzero(which == c)
            if len(rows):
                codes[rows] = sample_chain(chain, len(rows), rng)
        return codes

    def sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        """``n`` rows drawn from the estimate, values as category texts (NaN for a missing value)."""
        import pandas as pd

        codes = self.sample_codes(n, rng)
        variables = self.variables_
        return pd.DataFrame({name: pd.Series(d.texts(codes[:, j]), dtype=object)
                             for j, (name, d) in enumerate(variables.items())})


def _rows_testing_unassigned(chain: Chain, assigned: np.ndarray, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """The rows (indices, possibly repeated) of which some assigned column's tree in ``chain`` tests a column the
    row leaves unassigned: the rows ``"exact-or-sample"`` answers from the reference sample.

    ``rows`` and ``columns`` are ``np.nonzero(assigned)``. Each (row, assigned column) pair
    looks up the columns its tree tests, so the work follows the rows' items and the
    trees' splits, not the chain's number of trees.
    """
    m = assigned.shape[1]
    tested = [np.zeros(0, dtype=np.int64)] * m  # column -> the columns its tree tests
    for tree in chain.trees:
        tested[tree.target] = np.fromiter(tree.split_columns(), dtype=np.int64)
    counts = np.array([len(t) for t in tested], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    flat = np.concatenate(tested)
    per_pair = counts[columns]  # each pair's tested columns: flat[starts[t] : starts[t] + counts[t]]
    total = int(per_pair.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    first = np.repeat(starts[columns] - (np.cumsum(per_pair) - per_pair), per_pair)
    pair_rows = np.repeat(rows, per_pair)
    return pair_rows[~assigned[pair_rows, flat[first + np.arange(total)]]]
