"""SerenadeCS (Algorithm 1), SerenadeES (Algorithm 2) and NoSens: greedy private miners.

Where each part lives: the shared machinery (validation, literals, data size, quality,
initial pairs) in :mod:`.greedy`, the parameters in :mod:`.parameters`, SerenadeCS's
rounds in :mod:`.cs`, SerenadeES's (and NoSens's) in :mod:`.es`; this module holds the
derivation below and the public names.

Both grow redescriptions literal by literal from ``k`` initial pairs; they differ in
who decides what to extend. Budget (exact fractions; the ledger adds up to what is
spent, never more than ``epsilon``):

1. **Data size** (``data_size="noisy"``, the default): ``size_share · ε`` buys one
   discrete Laplace count of the rows (``size_share`` 3 %; 1 % with ``variant="paper"``); ``n̂``
   then sets the logistic centre (``min_support``, default 20 % of ``n̂``; 10 % with
   ``variant="paper"``), the ``auto`` rule's sizes and the p-values, all public afterwards.
   ``"public"``: the user gives the true ``rows`` (the output says ``n`` is public:
   the guarantee then holds only among datasets of that size, so ``private`` is
   false). ``"engine"``: the centre is ``f · max(n, min_rows)`` from the true ``n``
   inside the engine; the sensitivity is a bound over every data size
   (:class:`~dprm.mining.serenade.quality.LogisticQuality` with ``center_share``),
   and p-values use ``n̂`` from the released cells.
2. The rest ``ε'`` is split by ``budget_split = (init, extend, quality)`` (CS: the
   paper's d3 = 0.6, 0.3, 0.1; ES: 0.7, 0.1, 0.2, since its outputs are its initial
   pairs; must sum to 1 exactly); ``"auto"`` chooses it after
   the row count from public values (:func:`.auto.auto_split`; measured worse on weak
   data, so an option only).
3. **InitialPairs** (Algorithm 4): ``k`` independent size-1 weighted reservoirs
   (``WeightedReservoir(ε_i, Δ, k=1)``: each exactly one exponential-mechanism
   draw of ``ε_i``; ``ε_i = ε_init/k``, or for CS without extension rounds under the
   auto rule ``ε_init/2`` for the first and ``ε_init/(2(k-1))`` for the others,
   :func:`.auto.initial_shares`: public shares summing to ``ε_init`` exactly) over all
   (initial literal, other-side literal) pairs. The pairs
   are counted and scored block by block and every reservoir is fed each block
   (:mod:`.pairs`): the same Gumbel races, in memory bounded by a block, not by the
   number of pairs; a run with more than ``pairs.MAX_PAIRS`` pairs is refused before
   any release.
4. **ExtendOne** (Algorithm 3) and **ComputeQuality** (:mod:`.compute_quality`):

   * ES: ``M`` rounds of the memoised race (:mod:`.race`), ``ε_ext/M`` each; then
     one quality release per distinct final redescription, ``ε_qual/#distinct``.
   * CS: rounds ``ℓ = 0..m``. Round 0 measures every distinct initial pair; round
     ``ℓ ≥ 1`` extends every *alive* pair once (exponential mechanism) and measures
     it. Each round's share — ``ε_ext/m`` for extensions (rounds ≥ 1),
     ``ε_qual/(m+1)`` for qualities — is split equally among the pairs alive in it
     (which pairs are alive follows from released noisy Jaccards only). A pair
     stays alive while its noisy Jaccard exceeds ``min_jaccard``; its result is the
     last redescription that did. If every pair stops early, the later rounds'
     shares are not spent (the ledger says so; the authors' code spends
     ``(m+1)/m · ε_qual`` instead).

Scores: the lower-sensitivity quality ``q = J · σ(λ(I − c))`` (``quality="logistic"``;
``λ`` by line search on public values unless ``steepness`` is given) or the plain
Jaccard with ``Δ = 1`` (``quality="jaccard"``, the NoSens ablation).

**Bounded range** (``score_range="bounded"``, the default; ``"symmetric"`` is the
paper's ``exp(ε q / (2Δ))``). Adding a row changes every candidate's score by a value
in ``[-down, up]`` (the quality's :meth:`~.LogisticQuality.one_sided_sensitivity`; for
the Jaccard index ``(1/2, 1)``), removing one by a value in ``[-up, down]``. Let
``R = down + up`` and ``q̃_D = q_D − b |D|`` with ``b = (up − down)/2``: one row more
changes ``q̃`` by ``[-down − b, up − b] = [-R/2, R/2]``, so ``q̃`` has sensitivity
``R/2`` in the ordinary sense, and the exponential mechanism on ``q̃`` with
sensitivity ``R/2`` is ε-DP. ``q̃`` differs from ``q`` by a constant per dataset, which
the exponential mechanism (and every Gumbel race or reservoir built on it) ignores:
sampling ``∝ exp(ε q / R)`` is exactly that mechanism. So every draw is given the
sensitivity ``R/2`` (``R = 1.5 Δ`` at the line search's ``λ``: a third sharper at the
same ``ε``). Engine mode (the centre moves with ``n``) keeps ``R = 2Δ``.

**Numbers of draws** (``initial_pairs="auto"``, ``extensions="auto"``, the defaults):
after the noisy row count, ``k`` and ``m`` / ``M`` are the largest values up to the
paper's (20, and 4 / 80) such that every exponential-mechanism draw has sharpness
``ε_draw / R ≥ min_sharpness`` and every quality release noise of standard deviation at
most ``quality_noise · c`` on the intersection (:mod:`dprm.mining.serenade.auto`). The
rule reads only public values (``ε``, the split, ``R`` and ``c`` from ``n̂``), so it is
post-processing; integers keep the paper's numbers, and
``initial_pairs=20, extensions=80, score_range="symmetric"`` reproduces the paper's
ES (``extensions=4`` for CS). The chosen values are in ``chosen_`` and in the output's
``parameters.chosen``.

**Near-tautologies and significance** (issue 13). By default (``damping="union"``) every
score is damped by ``σ(μ(h − U))`` with the public cap ``h = 0.8 n̂``
(:mod:`.union_cap`: the one-sided bounds become ``(down + tanh(μ/4), up)``, derived
there, and ``R`` grows accordingly, so the draws stay ε-DP); ``damping="none"`` is the
paper's score. Results are judged on released values only: the row count for p-values
is the inverse-variance mean of ``n̂`` and the quality release's cell sum
(:meth:`.QualityRelease.combined_size`), and with ``significance="interval"`` (default)
a result is significant only if the upper end of its simulated p-value interval is at
most ``max_pvalue`` (``"point"``: the noisy p-value, the paper). ``grid="auto"``
(default) picks the grid after the row count (:func:`.auto.grid_splits`; ``"fixed"``:
``max_splits``).

Candidate literals: :mod:`.literals` (numeric thresholds on a grid over the declared
bounds, a data-independent candidate set; undeclared domains make the run not
private and the output says so). The initial pairs are counted from the row masks of
one view's literals (:func:`initial_side`: a view without numeric attributes, else the
one with fewer literals); the candidate set is all pairs either way.

**Numeric views on both sides** (derivation). Nothing in the privacy argument above
needs a Boolean or categorical view; with numeric attributes on both sides it holds
unchanged, for three reasons.

* *The candidate sets are public.* Every numeric literal is an interval
  ``(t_{lo-1}, t_hi]`` between points of the grid over the attribute's declared bounds
  (:func:`dprm.data.grid.rounded_grid`), so the initial pairs (all pairs of one literal
  per side, minus those on one attribute name) and the extensions of a released
  redescription (literals of attributes it does not use, by ``∧`` / ``∨``) are functions
  of the schema and of earlier outputs only: the same set on neighbouring datasets.
* *One row moves ``(I, U)`` by one of the moves the quality's sensitivity covers.*
  Whether a row satisfies a query depends on that row's values alone (an interval
  literal on its one value, ``∧`` / ``∨`` of such literals, a missing value satisfying
  no literal), whatever the kinds of the attributes. So adding a row to both views adds
  it to both supports, to one, or to none: ``(I, U) → (I+1, U+1)``, ``(I, U+1)`` or
  ``(I, U)`` — exactly the moves over which :mod:`.quality` takes its exact one-sided
  bounds ``(down, up)`` and ``Δ`` (over *all* ``0 ≤ I ≤ U``, so also over the supports
  that numeric half-intervals reach, up to all rows). Removing a row is the reverse
  move. Hence every pair and extension score changes within ``[-down, up]`` and the
  bounded-range draws with ``R = down + up`` are ε-DP as derived above.
* *The releases are the same mechanisms.* ComputeQuality releases the 2×2 cell table
  of the two supports (L1 sensitivity 1 for any pair of row sets) and the budget split
  (size count, ``init``, ``extend``, ``quality``) and the ``auto`` rule never look at
  attribute kinds: the ledger adds up exactly as before.

``tests/test_serenade_numeric.py`` checks the three facts by brute force on
neighbouring numeric datasets with missing values (one row added and removed).
"""
from dprm.mining.serenade.cs import SerenadeCS
from dprm.mining.serenade.es import SerenadeES
from dprm.mining.serenade.greedy import GreedyMiner, initial_side
from dprm.mining.serenade.parameters import DATA_SIZES, QUALITIES, SERENADE_PARAMETERS, parse_budget_split

__all__ = ["SerenadeCS", "SerenadeES", "parse_budget_split", "initial_side", "DATA_SIZES", "QUALITIES",
           "GreedyMiner", "SERENADE_PARAMETERS"]
