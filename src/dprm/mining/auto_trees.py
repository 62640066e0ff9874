r"""The ``"auto"`` settings of the private tree miners: few, decisive releases at low budgets.

What limits a private tree miner is the budget *in rows*, ``B = ε · n̂`` (ε the run's
budget, ``n̂`` the noisy row count the run releases first): a released count has noise
of scale ``1/ε_release`` rows, a selection by the exponential mechanism separates
candidates whose scores differ by more than about ``2Δ·ln(#candidates)/ε_release``
rows, and the signal of a relation is a share of ``n`` rows. So the rule reads only
public values (ε, ``n̂`` and the schema's size through the candidates) and is the
same on every dataset:

* **trials** ``InTr = clip(⌊B / 600⌋, 1, 8)``: each trial (a target, a tree pair, its
  extraction) should have at least 600 rows of budget; below that, splitting the
  budget makes every release too noisy to keep anything (measured on MAMMAL at
  ε = 0.1, ``B ≈ 260``: four trials kept nothing in 4 of 4 runs, one trial kept
  redescriptions in 10 of 10). MCMCTreePair's **trees trials** (from
  :data:`ROWS_FOR_TREES` on) are fewer and larger: ``clip(⌊B / 800⌋, 2, 8)``
  (session 46, docs/mining-sessions.md: at ε = 1 on 2,500 rows three trials instead of four
  took planted-heavy's top-10 excess from 0.215 to 0.331 and planted-numeric's from
  0.218 to 0.298, the relations found per run on the five planted tables from 59 to
  65 of 100, with MAMMAL level over 30 runs, 0.339 / 0.762 → 0.340 / 0.762, and
  narrower intervals, 0.184 → 0.138; latent-heavy 0.270 → 0.260); the refined pairs
  of a run whose pairs' top score is weak (:func:`pairs_first`) stay ``⌊B / 600⌋`` at
  most (``pair_trials``);
* **depth** 2 below 1,200 rows of budget per trial, else 3: a tree pair of depth d
  has ``(2^d + 1)²`` cells, each released with the extraction's noise, and a
  Metropolis–Hastings chain over deeper trees spreads the same budget over many more
  splits (deeper nodes hold fewer rows, so their splits are chosen almost
  uniformly). Depth 2 expresses a conjunction or disjunction of two literals per
  side, and, with extraction's disjunctions of leaves, ``(a ∧ b) ∨ c``;
* **ω = 1/2**: the chain and the extraction get equal shares (the paper's ω = 0.1 left
  the chains of small trials almost uniform); MCMCTreePair's trees trials from three of
  them on (``B ≥ 2,400`` rows) give the chain :data:`TREES_OMEGA` = 0.6 (session 47,
  docs/mining-sessions.md: at ε = 1 on 2,500 rows planted-heavy's top-10 excess 0.269 → 0.322
  and 0.331 → 0.343 over two blocks of ten seeds, planted-numeric's 0.298 → 0.335, the
  five planted tables' relations found per run 65 → 67 of 100 with higher top-10
  excess on each, MAMMAL level over 30 runs, 0.340 / 0.762 → 0.339 / 0.769, for a wider
  median interval, 0.138 → 0.176; with two trials, where the first trial's extraction
  decides whether trees go on, it measured level or lower and stays 1/2);
* **target share** ``min(0.3, 0.1 · InTr)`` of ε for choosing the initial targets
  (``targets="scored"``): each pick keeps about a tenth of a trial's budget; with
  several trials the later picks, made after the strongest attributes are taken,
  need it.

Below one trial's budget (``B < 600`` rows) with scored targets and no depth given,
every tree miner's trial is **one literal pair** (``trial="pair"``, :mod:`dprm.mining.literal_pairs`): a
literal of each view chosen at once with ``ω = 0.7`` of the budget, then extracted with
the rest; no separate target, no chain. Measured at ε = 0.1 (session 22,
docs/mining.md, seeds 0–4, runs that keep something, all kept significant): spi 3 → 4
of 5, nmes1988 3 → 5, MAMMAL 5 → 5 with top-10 excess 0.24 → 0.35 and the median
interval width 0.34 → 0.27, planted 0 → 4 of 5 (one relation of four found, pooled).
Why: each choice of the exponential mechanism needs a score gap of about
``2Δ·ln(#candidates)/ε`` rows, so a target then a tree, each on part of the budget,
need about twice the rows that one choice among all the pairs needs with all of it.
``pairs=False`` (``trial="trees"``) keeps the trees at every budget. There pruning keeps a
redescription whose p-value is at most ``max_pvalue`` with posterior probability 0.95
(:data:`PAIR_SIGNIFICANCE_PROBABILITY`; 0.975 from one trial's budget on, where extraction
chooses among many more unions of leaves; ``significance_probability``, session 49:
at ε = 0.1, 30 runs on each of nine tables, runs keeping 194 → 201 of 270, randhie-s
10 → 16, every kept redescription still truly significant).

Between one trial's budget and two trials' (``600 ≤ B < 1,200`` rows) the trials are
**two refined pairs** (``trial="refined-pair"``, :mod:`dprm.mining.pair_refinement`):
each a literal pair chosen at once, then one more split of either side by the
exponential mechanism (a conjunction or disjunction of two literals on that side),
then the extraction; shares 0.6, 0.2, 0.2 of the trial (``ω = 3/4`` of what the
refinement leaves). Measured at ε = 0.3 (session 24, docs/mining.md; 5 runs on each of
five generated planted tables, 10 on the real data): relations found per run 0.76 →
1.64 on average, runs that keep something 19 → 24 of 25, top-10 excess 0.11–0.20 →
0.22–0.29; MAMMAL, spi and latent-heavy more excess as well (spi: runs keeping 5 → 10
of 10); but the relations found pooled over five runs 2.8 → 2.2 of 4 on average (the
pairs go to the strongest relations in every run, a trees trial's target varies more
from run to run) and intervals 2–3 times wider (the extraction's smaller share). Why:
a trees trial spends its budget on a target and on a chain over two trees of depth 2,
whose choices at this budget are close to uniform below the root; a refined pair makes
two decisive choices, then one release.

**As many refined pairs as the budget chooses decisively.** Where the rule asks for two
or more refined pairs (here, and after the trees of :data:`TREES_THEN_PAIRS`; not for the
alternations, nor for a count the user gives), :data:`PAIR_SKETCH_SHARE` of their budget
first releases the candidates' top score ``M̂`` (discrete Laplace, sensitivity 1), and
:func:`decisive_pairs` keeps the largest number of pairs whose choice still puts about
nine tenths of its mass near the top (``ε_choice · M̂ / 2 ≥ ln #candidates + ln 9``), one
when none does. On weak real data a pair's top score is 260–430 rows against 500–850 on
planted relations and MAMMAL, and two choices of about 0.08 each (ε = 0.3, 3,000 rows)
then land among the hundreds of thousands of candidates near uniformly (exact odds on
``randhie-s``: 77 % of the mass on pairs with excess below 0.02, 0.1 % at twice the
budget). Measured (session 35, docs/mining-sessions.md; 10 runs, runs keeping / top-10 excess /
median interval width): ``randhie-s`` at ε = 0.3 6/10, 0.080, 0.23 → 10/10, 0.084, 0.12;
``randhie3`` 5/10 → 10/10; spi at ε = 0.2 7/10 → 10/10 (width 0.24 → 0.13); Fair's
survey at ε = 0.15 5/10 → 10/10; MAMMAL, latent-heavy and the planted tables keep two
pairs (what they give up is the sketch's share: MAMMAL's top-10 excess 0.356 → 0.343 at
ε = 0.3, seeds 10–29; planted relations found per run 1.68 → 1.40 and 1.55 → 1.36 on
seeds 0–9 and 10–29 of the five tables, pooled over each table's runs 11 → 13 and 11 → 12
of 20).

From two trials' budget on (``B ≥ 1,200`` rows) the alternations' trials are trees and
MCMCTreePair's are **trees-then-pairs** (:data:`TREES_THEN_PAIRS`): the first
:data:`TREES_BEFORE_PAIRS` trees trials (one where there are two trials) are extracted at
once, and when pruning keeps
none of their redescriptions above independence (a noisy excess Jaccard
``J − J_ind ≥`` :data:`FOUND_EXCESS`, 0, from the released counts: post-processing), the
other trials' budget goes to :func:`pairs_after_trees` refined pairs, each with about two
trials' budget, whose choices leave out the attributes of the released trees; otherwise
the trials stay trees. On weak structure (health-care use, surveys) a trees trial's chain
drifts and its extraction of a depth-2 pair keeps nothing, while a refined pair makes two
decisive choices and one release. Measured at ε = 1 (session 34, docs/mining-sessions.md; 10 runs
on the real tables, 5 on the others): runs keeping something on three held-out tables of
the RAND health insurance experiment 5, 7, 7 → 10, 9, 10 of 10 (top-10 excess 0.045,
0.044, 0.067 → 0.066, 0.057, 0.071), spi 9 → 10 of 10 (0.060 → 0.068), nmes1988 0.082 →
0.094; MAMMAL 0.326 / 0.751 → 0.324 / 0.767 (top-10 excess / J), the planted tables'
relations found pooled unchanged (3, 4, 4, 4, 3 of 4). What it costs: Fair's survey 0.093 →
0.079, planted-numeric 0.226 → 0.271 excess with 3 → 2 of 4 relations pooled. Deciding
after one trees trial instead of two lost nmes1988's runs (10 → 8 of 10 keeping: its first
trial keeps nothing in 7 runs of 10, its later ones do) and a planted relation. The
alternations keep trees (``alternating=True``). With two trials (``1,200 ≤ B < 1,800``)
the one trees trial decides for the other (session 35, docs/mining-sessions.md; 30 runs each, runs
keeping, trees → trees-then-pairs): spi at ε = 0.3 21 → 29, randhie1 at ε = 0.3 24 → 30,
Fair at ε = 0.2 17 → 21, planted-heavy at ε = 0.5 21 → 30, nmes1988 at ε = 0.3 29 → 28;
MAMMAL and latent-heavy at ε = 0.5 unchanged (top-10 excess 0.339 → 0.344, 0.260 → 0.257);
what it costs: planted relations found pooled over ten runs of each of the five tables
17 → 15 of 20 at ε = 0.5 and 19 → 17 at ε = 0.6 (per run 1.44 → 1.38, 1.70 → 1.62).

**Pairs first where the pairs' top score is weak** (:func:`pairs_first`). Before any tree,
trees-then-pairs releases the literal pairs' top score (:data:`PAIR_SKETCH_SHARE` of the
budget, the release of :func:`decisive_pairs`). Below :data:`WEAK_TOP_SCORE` of the noisy
row count every trial is a refined pair, as many as that release says the budget chooses
decisively; otherwise the release came out of the initial targets' share and the trials go
on as above. On fourteen tables the top score is 0.075–0.104 of the rows on weak real data
(three held-out RAND tables, Fair's survey, spi, nmes1988) and 0.20–0.33 on structure a tree
describes (planted relations in all their forms, MAMMAL, latent-heavy, latent-light). Where
the best pair of literals explains a tenth of the rows, the trees' splits below the root
fit noise and their extraction lists near-duplicates of weak pairs; refined pairs with the
whole budget make few decisive choices. Measured (session 36, docs/mining-sessions.md; 10 runs,
top-10 excess, before → after): at ε = 1 ``randhie-s`` 0.070 → 0.084, ``randhie1``
0.078 → 0.098, ``randhie3`` 0.069 → 0.080 (non-private CARTwheels 0.074, 0.101, 0.090),
spi 0.070 → 0.096, nmes1988 0.087 → 0.102, Fair 0.088 → 0.085, all kept 97–100 %
significant; at ε = 0.5 and 2 likewise. MAMMAL at ε = 1 over 60 runs 0.332 / 0.762 → 0.344
/ 0.761 (top-10 excess / J), planted-heavy over 60 runs 0.220 → 0.243, the planted tables'
relations pooled unchanged (3, 4, 4, 4, 3 of 4).

**The alternations read the same release** (:data:`PAIRS_IF_WEAK`, session 40,
docs/mining-sessions.md): where their trials are trees from two trials' budget on, the pairs' top
score comes first, and below :data:`WEAK_TOP_SCORE` of the rows every trial is a refined
pair; otherwise they make their trees to the end (no switch after the first trials: on
``planted-heavy`` it took AltMCMC's trees from 0.330 to 0.226). Measured for AltMCMC at
ε = 1 (10 runs, runs keeping / top-10 excess, before → after): ``randhie3`` 7/10, 0.053 →
10/10, 0.076; ``randhie1`` 0.069 → 0.098; ``randhie-s`` 9/10, 0.065 → 10/10, 0.084; spi
9/10, 0.056 → 10/10, 0.096; nmes1988 0.043 → 0.104; Fair 0.073 → 0.086 (the default's
figures there); what the release costs the targets on strong data: planted-numeric 0.349
and 0.260 → 0.224 and 0.245 (two blocks of seeds), latent-heavy 0.235 and 0.254 → 0.194
and 0.230, planted-heavy 0.315 and 0.299 → 0.268 and 0.265 (runs keeping 18/20 → 17/20
and 20/20), MAMMAL 0.370 / 0.743 → 0.373 / 0.751, the planted tables level. AltExpM at
ε = 3, where its trials are trees: spi 0.049 → 0.099, nmes1988 0.047 → 0.110, ``randhie3``
0.081 → 0.097, MAMMAL 0.360 / 0.773 → 0.363 / 0.768.

AltExpM's trials are refined pairs further up, to ``B < 6,000`` rows
(:data:`ROWS_FOR_EXPONENTIAL_TREES`; ``⌊B / 600⌋`` of them, at most 8): its trees choose
each level of each tree by the exponential mechanism on a share of the trial, which at
``B ≈ 2,400`` (ε = 1, 2,500 rows) leaves a root choice among ~1,300 splits nearly uniform.
Measured at ε = 1 (session 27, docs/mining.md; 5 runs each): planted relations found
pooled on the five generated tables 1, 1, 2, 2, 2 → 2, 4, 3, 3, 2 of 4, every run keeping
(was 3/5 on three tables); nmes1988 runs keeping 2/5 → 5/5 (top-10 excess 0.061 →
0.100); spi 0.060 → 0.113 with 93 % → 100 % significant; MAMMAL excess 0.299 → 0.395 at
J 0.747 → 0.740; at ε = 2 (``B ≈ 5,000``) MAMMAL 0.317 → 0.391, planted 1/4 → 2/4; at
ε = 3 (``B ≈ 7,500``) the trees are as good or better (planted 3/4 against 2/4). What it
costs at ε = 1: latent-heavy top-10 J 0.636 → 0.599 (excess 0.252 → 0.278),
planted-numeric 2/4 → 1/4 pooled (runs keeping 4/5 → 5/5).

Where the refined pairs have at least one trial's budget each (``B / trials ≥ 600`` rows:
AltExpM's ``⌊B / 600⌋`` refined pairs, not the two below 1,200 rows), a pair with one
numeric literal chooses it again near its released threshold (``pair_thresholds="on"``,
:mod:`dprm.mining.pair_thresholds`), with :data:`PAIR_THRESHOLD_SHARE` of the pair's
share (a pair with none or two gives that share to its extraction): the pair's score is
nearly flat across the thresholds of a numeric literal it predicts, so its threshold
lands anywhere between the median and the relation's, where a refinement finds nothing
to add. Measured at ε = 1 (session 28, docs/mining.md; AltExpM, one benchmark run):
relations found pooled over five runs on each of the five planted tables 2, 4, 3, 3, 2 →
3, 4, 4, 4, 4 of 4, per run 2.4 → 3.0; planted-numeric top-10 excess 0.179 → 0.199
(10 runs); MAMMAL, spi, nmes1988, latent-heavy and planted-heavy within the spread of
the seeds, their intervals narrower where numeric pairs give their share to the
extraction (latent-heavy's median width 0.176 → 0.109). With two refined pairs at
ε = 0.3 (window 3) it found more relations pooled (2, 2, 2, 3, 2 → 2, 3, 3, 3, 3 of 4)
but fewer per run (1.64 → 1.48) with less excess (0.263 → 0.232 on average); with the
one pair at ε = 0.1 fewer runs kept anything (planted-heavy 7 → 2 of 10, spi 8 → 6):
the share the pair gives up costs more there, so it is off.

The alternations (AltExpM, AltMCMC: ``alternating=True``) read the same rule, except
where the budget does not cover one trial (``B < 600`` rows, hence one trial): there
their trees are of **depth 1**, the targets' share is **0.4** and they make **no
alternation** (``alternations`` 0: the one tree is extracted against the initial
target's literal itself, so the trial's tree share buys one tree instead of two).
Measured at ε = 0.1, 10 seeded runs (session 17, docs/mining.md): runs that keep
something, AltExpM with one alternation → none, MAMMAL 7 → 10, nmes1988 1 → 4,
planted 2 → 6, spi 2 → 0 (its two had 57 % significant); AltMCMC MAMMAL 8 → 10,
nmes1988 2 → 4, planted 2 → 6, spi 0 → 1; all kept significant. Why: an alternation
releases its trees one after the other, each on its own share (a quarter of the trial
each at ω = 1/2) and each bound to predict what the one before released (the first:
the initial target), where MCMCTreePair's single chain moves both trees towards
agreement and may leave a weak target behind. A depth-1 tree is one choice among the
view's splits with the tree's whole share (a depth-2 tree spends it on three nodes,
two of which see about half the rows each), and a first tree that predicts a poor
target drags the second with it, so the target gets a larger share. Measured on
MAMMAL at ε = 0.1 (``B ≈ 260``; docs/mining.md, issue 28): AltExpM kept redescriptions
in 7 of 30 seeded runs with depth 2 and share 0.1, 20 of 30 with depth 1 and 0.4
(depth 1 with 0.1: 6 of 30; depth 2 with 0.5: 0 of 10).

The figures behind the constants are in docs/mining.md ("Weak signal").

Examples
--------
>>> brief = lambda s: (s.init_trials, s.depth, s.omega, s.target_share, s.alternations, s.trial, s.pair_thresholds)
>>> brief(auto_tree_settings(0.1, 2575))
(1, 2, 0.7, None, 1, 'pair', 'off')
>>> brief(auto_tree_settings(0.1, 2575, pairs=False))
(1, 2, 0.5, 0.1, 1, 'trees', 'off')
>>> brief(auto_tree_settings(0.3, 2575))
(2, 2, 0.75, None, 1, 'refined-pair', 'off')
>>> brief(auto_tree_settings(1.0, 2575))
(3, 2, 0.6, 0.3, 1, 'trees-then-pairs', 'off')
>>> brief(auto_tree_settings(1.0, 2575, pairs=False))
(3, 2, 0.6, 0.3, 1, 'trees', 'off')
>>> brief(auto_tree_settings(0.6, 2575))   # two trials: one trees trial decides
(2, 2, 0.5, 0.2, 1, 'trees-then-pairs', 'off')
>>> brief(auto_tree_settings(1.0, 28_900))
(8, 3, 0.6, 0.3, 1, 'trees-then-pairs', 'off')
>>> brief(auto_tree_settings(0.1, 2575, alternating=True, pairs=False))
(1, 1, 0.5, 0.4, 0, 'trees', 'off')
>>> brief(auto_tree_settings(1.0, 2575, alternating=True))   # AltMCMC
(4, 2, 0.5, 0.3, 1, 'pairs-if-weak', 'off')
>>> brief(auto_tree_settings(1.0, 2575, alternating=True, rows_for_trees=ROWS_FOR_EXPONENTIAL_TREES))   # AltExpM
(4, 2, 0.75, None, 0, 'refined-pair', 'on')
>>> auto_tree_settings(3.0, 2575, alternating=True, rows_for_trees=ROWS_FOR_EXPONENTIAL_TREES).trial
'pairs-if-weak'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from dprm.privacy.budget import EpsilonLike

__all__ = ["AUTO", "AUTO_MAX_TRIALS", "MIN_TREES_TRIALS", "ROWS_PER_TREES_TRIAL", "TREES_OMEGA",
           "MIN_TRIALS_FOR_TREES_OMEGA",
           "PAIR_THRESHOLD_SHARE", "REFINED_PAIR_OMEGA", "REFINEMENT_SHARE",
           "ROWS_FOR_EXPONENTIAL_TREES", "ROWS_FOR_TREES", "FOUND_EXCESS", "TREES_THEN_PAIRS",
           "TREES_BEFORE_PAIRS", "TRIALS_PER_PAIR_AFTER_TREES", "PAIRS_IF_WEAK", "PAIR_SKETCH_SHARE", "DECISIVE_ODDS",
           "WEAK_TOP_SCORE", "PAIR_SIGNIFICANCE_PROBABILITY", "SIGNIFICANCE_PROBABILITY", "TreeSettings",
           "auto_tree_settings", "budget_in_rows", "decisive_pairs", "pairs_after_trees", "pairs_first"]

#: The value that asks for the rule.
AUTO = "auto"
#: Rows of budget (ε · n̂) per trial.
ROWS_PER_TRIAL = 600
#: Rows of budget per trees trial of MCMCTreePair from :data:`ROWS_FOR_TREES` on (session 46).
ROWS_PER_TREES_TRIAL = 800
#: Fewest trees trials of MCMCTreePair from :data:`ROWS_FOR_TREES` on: one trees trial decides for the other.
MIN_TREES_TRIALS = 2
#: Most trials the rule chooses (bounds the run's time and the progress total).
AUTO_MAX_TRIALS = 8
#: Rows of budget per trial from which the trees are of depth 3.
ROWS_FOR_DEPTH_3 = 1200
#: The chains' share of a trial's budget.
AUTO_OMEGA = 0.5
#: The chains' share of a trees trial's budget of MCMCTreePair from :data:`MIN_TRIALS_FOR_TREES_OMEGA` trees
#: trials on (session 47).
TREES_OMEGA = 0.6
#: Fewest trees trials of MCMCTreePair whose chains get :data:`TREES_OMEGA`.
MIN_TRIALS_FOR_TREES_OMEGA = 3
#: The share of a literal-pair trial's budget for choosing the pair (the rest extracts it).
PAIR_OMEGA = 0.7
#: Pruning's significance rule (:func:`dprm.mining.pruning.prune`): the posterior probability that a kept
#: redescription's p-value is at most ``max_pvalue``, where the trials are literal pairs (below one trial's
#: budget: the kept are forms of one pair's table, session 49) ...
PAIR_SIGNIFICANCE_PROBABILITY = 0.95
#: ... and from one trial's budget on, where extraction chooses among many unions of leaves (the level of the
#: upper end of a 95 % p-value interval, the rule before session 49).
SIGNIFICANCE_PROBABILITY = 0.975
#: Rows of budget from which the trials are trees; below it (and above :data:`ROWS_PER_TRIAL`),
#: :data:`REFINED_PAIR_TRIALS` refined pairs.
ROWS_FOR_TREES = 1200
#: Refined-pair trials where the budget is between one trial's and :data:`ROWS_FOR_TREES`.
REFINED_PAIR_TRIALS = 2
#: AltExpM's rows of budget from which its trials are trees; below it (and from
#: :data:`ROWS_FOR_TREES` on) ``⌊B / 600⌋`` refined pairs (at most 8): its trees choose
#: each level by the exponential mechanism, which needs more budget than a chain.
ROWS_FOR_EXPONENTIAL_TREES = 6000
#: The share of a pair's choice that chooses its one numeric literal again near its threshold, where
#: ``pair_thresholds`` is on (:mod:`dprm.mining.pair_thresholds`).
PAIR_THRESHOLD_SHARE = 0.2
#: The share of a refined-pair trial's budget for its refinement split (:mod:`dprm.mining.pair_refinement`).
REFINEMENT_SHARE = 0.2
#: A refined-pair trial's ω: the pair's share of what the refinement leaves (the rest extracts):
#: 0.6 of the trial for the pair, 0.2 for the extraction.
REFINED_PAIR_OMEGA = 0.75
#: The alternations' targets' share where the budget does not cover one trial.
ALTERNATING_LOW_TARGET_SHARE = 0.4
#: MCMCTreePair's trial kind from two trials' budget on: :data:`TREES_BEFORE_PAIRS` trees trials (one of
#: two), then trees if they kept a redescription of noisy excess over independence of at least :data:`FOUND_EXCESS`,
#: else refined pairs.
TREES_THEN_PAIRS = "trees-then-pairs"
#: The noisy excess Jaccard (``J − J_ind`` from the released counts) from which a redescription the
#: first trees trial keeps counts as found structure (:data:`TREES_THEN_PAIRS`): 0, any kept one above
#: independence. Measured against 0.25 (docs/mining-sessions.md, session 34): the same on the weak tables where the
#: first trial keeps nothing, better where it keeps weak structure that its trees describe well (Fair's
#: survey: top-10 excess 0.095 against 0.069).
FOUND_EXCESS = 0.0
#: Trials' budgets per refined pair after the trees trials that kept nothing above independence
#: (:data:`TREES_THEN_PAIRS`): ``⌈(InTr − 2) / 2⌉`` pairs, each with about two trials' budget.
TRIALS_PER_PAIR_AFTER_TREES = 2
#: The alternations' trial kind from two trials' budget on (AltExpM, AltMCMC; MCMCTreePair's as an option): the
#: pairs' top score released first, refined pairs throughout where it is weak (:func:`pairs_first`), else trees
#: trials to the end (no switch after the first ones, unlike :data:`TREES_THEN_PAIRS`).
PAIRS_IF_WEAK = "pairs-if-weak"
#: The trees trials :data:`TREES_THEN_PAIRS` makes (and extracts at once) before it decides (one where there are
#: only two trials).
TREES_BEFORE_PAIRS = 2
#: The share of the budget of two or more auto refined pairs that releases the pairs' top score, from
#: which :func:`decisive_pairs` decides how many of them the budget can choose decisively.
PAIR_SKETCH_SHARE = 0.05
#: How much more probable than the candidates scoring nothing a pair's choice must make the top score's
#: candidates together to count as decisive (:func:`decisive_pairs`): 9, nine in ten.
DECISIVE_ODDS = 9
#: The share of the noisy row count below which the pairs' released top score marks weak structure, where
#: :data:`TREES_THEN_PAIRS` makes refined pairs from the start (:func:`pairs_first`): 0.15.
WEAK_TOP_SCORE = 0.15


@dataclass(frozen=True)
class TreeSettings:
    """What the rule chooses."""

    init_trials: int
    depth: int
    omega: float
    target_share: float | None
    alternations: int = 1
    trial: str = "trees"
    pair_thresholds: str = "off"
    #: The most refined pairs where the released top score sends the trials to pairs from the start
    #: (:func:`pairs_first`): ``⌊B / 600⌋``, at most 8, whatever the trees trials would be.
    pair_trials: int | None = None
    #: Pruning's significance probability (:data:`PAIR_SIGNIFICANCE_PROBABILITY`, :data:`SIGNIFICANCE_PROBABILITY`).
    significance_probability: float = SIGNIFICANCE_PROBABILITY


def auto_tree_settings(epsilon: float, n_hat: float, *, alternating: bool = False,
                       scored: bool = True, pairs: bool = True,
                       rows_for_trees: float = ROWS_FOR_TREES) -> TreeSettings:
    """The settings for a run of budget ``epsilon`` on about ``n_hat`` rows (module docstring).

    ``n_hat`` is a released (noisy) count; a value below 1 counts as 1. ``alternating``:
    the rule of AltExpM and AltMCMC (depth 1 and a larger targets' share below one
    trial's budget; no alternation there, ``alternations`` 0, where the targets are
    ``scored``: a uniform target is an attribute, not a literal to extract against).
    ``pairs``: below one trial's budget, with scored targets, one literal pair per trial
    (``trial="pair"``, module docstring); ``False``: trees at every budget.
    ``rows_for_trees``: the budget in rows from which the trials are trees; below it
    (from one trial's budget on) refined pairs, two below :data:`ROWS_FOR_TREES`,
    ``⌊B / 600⌋`` (at most 8) above (AltExpM: :data:`ROWS_FOR_EXPONENTIAL_TREES`).
    """
    budget_rows = budget_in_rows(epsilon, n_hat)
    trials = int(min(max(budget_rows // ROWS_PER_TRIAL, 1), AUTO_MAX_TRIALS))
    depth = 3 if budget_rows / trials >= ROWS_FOR_DEPTH_3 else 2
    if scored and pairs and budget_rows < ROWS_PER_TRIAL:  # one literal pair, no separate target (module docstring)
        return TreeSettings(init_trials=1, depth=depth, omega=PAIR_OMEGA, target_share=None,
                            alternations=0 if alternating else 1, trial="pair",
                            significance_probability=PAIR_SIGNIFICANCE_PROBABILITY)
    if scored and pairs and budget_rows < max(rows_for_trees, ROWS_FOR_TREES):  # refined pairs (module docstring)
        refined_trials = max(trials, REFINED_PAIR_TRIALS)
        return TreeSettings(init_trials=refined_trials, depth=depth, omega=REFINED_PAIR_OMEGA,
                            target_share=None, alternations=0 if alternating else 1, trial="refined-pair",
                            pair_thresholds="on" if budget_rows / refined_trials >= ROWS_PER_TRIAL else "off")
    if alternating and budget_rows < ROWS_PER_TRIAL:
        return TreeSettings(init_trials=1, depth=1, omega=AUTO_OMEGA, target_share=ALTERNATING_LOW_TARGET_SHARE,
                            alternations=0 if scored else 1)
    pair_trials, omega = trials, AUTO_OMEGA
    if not alternating and budget_rows >= ROWS_FOR_TREES:  # fewer, larger trees trials (module docstring)
        trials = int(min(max(budget_rows // ROWS_PER_TREES_TRIAL, MIN_TREES_TRIALS), AUTO_MAX_TRIALS))
        depth = 3 if budget_rows / trials >= ROWS_FOR_DEPTH_3 else 2
        omega = TREES_OMEGA if trials >= MIN_TRIALS_FOR_TREES_OMEGA else AUTO_OMEGA
    trial = "trees"
    if scored and pairs and trials > 1:  # the pairs' top score first (pairs_first); MCMCTreePair also switches later
        trial = PAIRS_IF_WEAK if alternating else TREES_THEN_PAIRS
    return TreeSettings(init_trials=trials, depth=depth, omega=omega, target_share=min(0.3, 0.1 * trials),
                        trial=trial, pair_trials=pair_trials)


def budget_in_rows(epsilon: float, n_hat: float) -> float:
    """The run's budget in rows, ``B = ε · max(n̂, 1)`` (a non-finite product: more than any rule distinguishes).

    Examples
    --------
    >>> budget_in_rows(0.1, 2575), budget_in_rows(1.0, 0.4)
    (257.5, 1.0)
    """
    rows = float(epsilon) * max(float(n_hat), 1.0)
    return rows if math.isfinite(rows) else float(ROWS_PER_TRIAL * AUTO_MAX_TRIALS * ROWS_FOR_DEPTH_3)


def decisive_pairs(top_score: float, candidates: int, choice_epsilons: Sequence[EpsilonLike]) -> int:
    r"""How many literal pairs the budget can choose decisively, from a released top score.

    The exponential mechanism (sensitivity 1) gives a candidate of score ``u`` a weight
    ``exp(ε u / 2)``; the candidates scoring about 0 (most of them: a pair's score is a
    gain in rows, 0 for two unrelated literals) weigh about 1 each, so the choice
    lands near the top score ``M`` rather than among the ``N`` candidates when
    ``exp(ε M / 2) ≥ DECISIVE_ODDS · N``, that is ``ε M / 2 ≥ ln N + ln``
    :data:`DECISIVE_ODDS`. ``choice_epsilons[k − 1]`` is each pair's choice budget when
    the budget is split over ``k`` pairs; the answer is the largest ``k`` whose choice
    passes with the released ``top_score``, and 1 when none does (one pair on the
    whole budget is the best a weak signal can get). A function of released and public
    values only: post-processing.

    Examples
    --------
    >>> decisive_pairs(600, 360_000, [0.16, 0.08])     # strong: two pairs, each still decisive
    2
    >>> decisive_pairs(260, 340_000, [0.16, 0.08])     # weak: at 0.08 the choice is near uniform
    1
    """
    bar = math.log(max(int(candidates), 1)) + math.log(DECISIVE_ODDS)
    passing = [k for k, epsilon in enumerate(choice_epsilons, start=1)
               if float(epsilon) * float(top_score) / 2 >= bar]
    return max(passing, default=1)


def pairs_first(top_score: float, n_hat: float) -> bool:
    r"""Whether :data:`TREES_THEN_PAIRS` makes refined pairs from the start: the pairs' top score is weak.

    ``top_score`` is the released top score of the literal pairs (a gain in rows,
    :meth:`~dprm.mining.literal_pairs.PairChooser.scores`), ``n_hat`` the released row
    count: below :data:`WEAK_TOP_SCORE` of the rows, no pair of literals explains a
    large part of the data, and trees' splits below the root then fit noise while
    refined pairs make few decisive choices (module docstring). A function of released
    values only: post-processing.

    Examples
    --------
    >>> pairs_first(276, 3000), pairs_first(609, 2500)   # a weak survey table, planted relations
    (True, False)
    """
    return float(top_score) < WEAK_TOP_SCORE * float(n_hat)


def pairs_after_trees(init_trials: int, trees_trials: int = TREES_BEFORE_PAIRS) -> int:
    """Refined pairs that take the budget of the trials after ``trees_trials`` trees trials.

    Examples
    --------
    >>> [pairs_after_trees(k) for k in (3, 4, 5, 6, 8)]
    [1, 1, 2, 2, 3]
    """
    return max(1, math.ceil((init_trials - trees_trials) / TRIALS_PER_PAIR_AFTER_TREES))
