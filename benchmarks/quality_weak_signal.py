"""Quality of the private miners where the signal is weak (issue 13), with true statistics.

For every dataset, miner and ε, over seeded runs (seeded noise: reproducible, with the
statistics of the secure path), prints one JSON line:

* ``runs_with_kept``: runs that kept (did not prune) at least one redescription;
  ``significant_per_run``: per run, the kept ones that are truly significant (p < 0.01);
* ``kept``: kept redescriptions in all runs; ``distinct``: of those, how many are left
  after Siren's redundancy filter on their true supports (``supp(qL) ∩ supp(qR)``
  overlapping a better one by a Jaccard index above 0.9 counts once), per run, summed;
* ``median_true_jaccard``, ``significant`` (true p < 0.01), ``spearman`` (noisy vs true
  Jaccard), ``interval_coverage`` (true Jaccard inside the reported interval, the
  selection-aware band by default), ``marginal_coverage`` (inside the marginal interval
  pruning reads, where there is one), ``median_interval_width`` (of the reported one),
  over the kept ones of all runs;
* ``planted_found`` (planted data only): planted relations recovered in the pooled
  output of the runs: a kept redescription with true Jaccard ≥ 0.7 whose two queries
  each use an attribute of the relation's planted query on that side;
  ``planted_found_per_run``: how many each run found on its own;
* ``top10_excess``, ``top10_true_jaccard``: over the runs that keep something, the
  median of the top 10's median true excess Jaccard (``J − J_ind``, ``J_ind =
  e/(a+b−e)``, ``e = ab/n``) and true Jaccard, the top 10 being the first ten of what
  ``dprm mine`` shows (kept and not redundant, in the miner's order).

Datasets: ``planted`` (2,500 rows, 150 Boolean vs 40 numeric attributes, the four
relations ``disjunction, interval, thresholds, threshold-or`` of
:func:`dprm.datasets.make_planted`, 5 % broken rows; the data seed is
``--data-seed``, a list such as ``0,1,2,3,4`` measures each table in turn),
``planted-numeric`` (the same relations, 40 numeric vs 40 numeric), ``planted-heavy``
(the relations of ``planted-numeric`` with every numeric column sent through the
quantile function of a heavy-tailed law, lognormal, Pareto or exponential, drawn per
column: the same relations, now in the tail of skewed columns; bounds declared as the
columns' ranges, as a data owner would), ``planted-narrow``, ``planted-numeric-narrow`` and
``planted-heavy-narrow`` (the same with 10 columns per view: 8 of the left's and 5 of the
right's hold a relation), ``planted-mixed`` (five relations in mixed-type, heavy-tailed data
from a generator written apart from ``make_planted``: Boolean, categorical and numeric
columns, categories and tails on both sides; ``mixed_planted.py``), and the shared real data ``mammals``,
``spi``, ``nmes1988`` (types inferred; true statistics need the rows, so this is a
researcher's measurement), ``latent-heavy`` (3,000 rows, 17 vs 9
heavy-tailed numeric columns, lognormal, Pareto and counts, driven by four latent
factors both views share; bounds the ranges; no planted answer: judged by excess),
``latent-light`` (the same structure with Gaussian margins, 4,000 rows, 5 vs 5 columns),
``latent-heavy-wide`` (latent-heavy with bounds a hundred times the range, as a data
owner declares generous public bounds), ``latent-signed`` (latent-heavy with every
other column shifted by its median: negative values, tails on both sides),
``mammals-declared`` (with
``tests/data/mammals-types.json``), ``nmes1988-bounds`` (every numeric column
declared with its range as bounds, no transform; ``-bounds`` does the same for any table
read from a folder), and the held-out real tables ``randhie-s``, ``randhie1``,
``randhie3``, ``fair`` that ``make_heldout_tables.py`` writes into ``benchmarks/data``
(heavy-tailed health-care use against the person, a survey; types inferred). Miners ``cartwheels`` and
``reremi`` run without a budget (non-private); ``mst-cartwheels`` and
``aim-cartwheels`` are ``dprm evaluate``'s DP synthetic-data baseline (dpmm's MST or
AIM, (ε, δ)-DP, then cartwheels on the synthetic rows; needs ``make synthetic``), judged
on the real rows like the others.

Usage::

    python benchmarks/quality_weak_signal.py --datasets planted,mammals --epsilons 0.1,0.3,1 \\
        --miners '[["default", "default", {}], ["mcmc-tree-pair", "mcmc-tree-pair", {}]]' --runs 5 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import tempfile
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from dprm.data import load_two_view
from dprm.datasets import make_planted
from dprm.evaluation import true_statistics
from dprm.evaluation.synthetic import run_synthetic
from dprm.mining import DEFAULT_ALGORITHM, default_algorithm, default_parameters, filter_redundant, make_miner
from dprm.mining.redundancy import mark_redundant
from dprm.privacy import Accountant, SeededNoise
from dprm.queries import document_redescriptions, query_from_json
from dprm.queries.normal_form import complete_attributes, normalize

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
#: The held-out real tables ``make_heldout_tables.py`` writes (RAND HIE, Fair's affairs).
HELD_OUT = Path(__file__).resolve().parent / "data"
MAMMALS_TYPES = Path(__file__).resolve().parents[1] / "tests" / "data" / "mammals-types.json"
NON_PRIVATE = ("cartwheels", "reremi")
#: DP synthetic data (dpmm's MST / AIM, (ε, δ)-DP) and cartwheels on it: ``dprm evaluate``'s baseline.
SYNTHETIC = ("mst-cartwheels", "aim-cartwheels")
RELATIONS = ["disjunction", "interval", "thresholds", "threshold-or"]
#: The generated tables with planted relations: name → (Boolean columns of the left view, numeric columns per
#: view; a left view without Boolean columns is numeric).
PLANTED_TABLES = {"planted": (150, 40), "planted-numeric": (0, 40), "planted-heavy": (0, 40),
                  "planted-narrow": (10, 10), "planted-numeric-narrow": (0, 10), "planted-heavy-narrow": (0, 10)}
FOUND_JACCARD = 0.7


def heavy_tails(frames: list[pd.DataFrame], rng: np.random.Generator) -> dict:
    """Every numeric column (values in [0, 100]) through a heavy-tailed quantile function, in place; the types.

    A monotone map keeps every planted relation (its threshold moves with the values).
    """
    columns: dict = {"row_id": {"type": "id"}}
    for frame in frames:
        for name in frame.columns:
            if name == "row_id":
                continue
            if "_num_" not in name:
                columns[name] = {"type": "boolean"}
                continue
            u = np.clip(frame[name].to_numpy() / 100, 0.0005, 0.9995)
            law = rng.integers(3)
            if law == 0:    # lognormal
                values = np.exp(rng.uniform(1.0, 2.0) * norm.ppf(u))
            elif law == 1:  # Pareto (Lomax)
                values = (1 - u) ** (-1 / rng.uniform(1.1, 2.0)) - 1
            else:           # exponential
                values = -np.log1p(-u)
            frame[name] = np.round(values * rng.choice([1, 10, 1000]), 2)
            columns[name] = {"type": "numeric", "bounds": [0.0, float(np.nanmax(frame[name]))]}
    return {"id_column": "row_id", "columns": columns}


def latent_heavy(rng: np.random.Generator, n: int = 3000, n_left: int = 17, n_right: int = 9,
                 factors: int = 4, gaussian: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two views of heavy-tailed numeric columns driven by shared latent factors (no planted answer).

    Like incomes, populations or counts of visits: each column is a monotone heavy-tailed
    map (lognormal, Pareto or a Poisson count with a lognormal rate) of a loading on
    ``factors`` standard normal factors that both views share, plus its own noise; a
    column loads on one or two factors, some strongly, some weakly. The structure a
    miner should find is the factors' common threshold behaviour. ``gaussian``: the
    same structure with light-tailed margins (each column the standardised normal
    score itself, rounded to 0.001; the benchmark's ``latent-light``).
    """
    latent = rng.standard_normal((n, factors))

    def view(count: int, prefix: str) -> pd.DataFrame:
        columns = {"row_id": np.arange(n)}
        for j in range(count):
            loading = np.zeros(factors)
            loading[rng.choice(factors, size=rng.integers(1, 3), replace=False)] = rng.uniform(0.4, 1.0, size=1)
            signal = latent @ loading
            z = (signal + rng.standard_normal(n) * rng.uniform(0.3, 1.0)) / np.sqrt(1 + signal.var())
            if gaussian:
                columns[f"{prefix}{j}"] = np.round(z, 3)
                continue
            law = rng.integers(3)
            if law == 0:    # lognormal, e.g. incomes
                values = np.round(np.exp(rng.uniform(0.6, 1.5) * z) * rng.choice([1, 100, 10000]), 2)
            elif law == 1:  # Pareto (Lomax) tail through the normal's quantiles
                values = np.round((1 - norm.cdf(z)).clip(1e-6) ** (-1 / rng.uniform(1.5, 3.0)) - 1, 3)
            else:           # counts with a heavy-tailed rate, e.g. visits
                values = rng.poisson(np.exp(0.9 * z + rng.uniform(0.0, 1.5))).astype(float)
            columns[f"{prefix}{j}"] = values
        return pd.DataFrame(columns)

    return view(n_left, "l"), view(n_right, "r")


def frame_range_types(frames: list[pd.DataFrame]) -> dict:
    """Every numeric column of ``frames`` declared with its range (from 0) as bounds, no transform."""
    columns: dict = {"row_id": {"type": "id"}}
    for frame in frames:
        for name in frame.columns:
            if name != "row_id":
                columns[name] = {"type": "numeric", "bounds": [min(0.0, float(frame[name].min())),
                                                               float(frame[name].max())]}
    return {"id_column": "row_id", "columns": columns}


def range_types(folder: Path) -> dict:
    """Every numeric column of ``folder``'s views declared with its range as bounds (no transform)."""
    columns: dict = {}
    for side in ("left", "right"):
        frame = pd.read_csv(folder / f"{side}.csv")
        for name in frame.columns:
            if name != "row_id" and frame[name].dtype.kind in "if":
                low, high = float(frame[name].min()), float(frame[name].max())
                columns[name] = {"type": "numeric", "bounds": [min(0.0, low), high]}
    return {"id_column": "row_id", "columns": {"row_id": "id", **columns}}


def relations_touched(redescription, planted: list, complete: frozenset[str]) -> set[int]:
    """The planted relations whose attributes both of the redescription's queries use, in shortest form.

    The queries are first put in their normal form with the attributes that have no missing
    value in the rows (a researcher's measurement: it reads the data): a printed query such
    as ``([r_num_0 ≤ 60.6] ∧ [r_num_4 > 48.5]) ∨ ([r_num_0 ≤ 60.6] ∧ [r_num_4 ≤ 48.5])`` says
    nothing about ``r_num_4`` (it is ``[r_num_0 ≤ 60.6]``) and must not count for its relation.
    """
    left = normalize(redescription.left, complete=complete).attributes()
    right = normalize(redescription.right, complete=complete).attributes()
    return {k for k, (a, b) in enumerate(planted) if left & a.attributes() and right & b.attributes()}


@lru_cache(maxsize=None)
def dataset(name: str, data_seed: int):
    """``(TwoViewData, planted queries or None)``."""
    if name in PLANTED_TABLES:
        n_left_boolean, n_numeric = PLANTED_TABLES[name]
        planted = make_planted(2500, n_left_boolean=n_left_boolean, n_left_numeric=0 if n_left_boolean else n_numeric,
                               n_right_numeric=n_numeric, relations=RELATIONS, noise=0.05, random_state=data_seed)
        types = planted.types
        if name.startswith("planted-heavy"):
            types = heavy_tails([planted.left, planted.right], np.random.default_rng(data_seed + 1000))
        data = load_two_view(planted.left, planted.right, types=types)
        return data, [(query_from_json(a), query_from_json(b)) for a, b in planted.planted]
    if name == "planted-mixed":
        from mixed_planted import planted_mixed  # the benchmarks' own generator (same folder)

        left, right, types, planted = planted_mixed(data_seed)
        return load_two_view(left, right, types=types), planted
    if name == "mammals-declared":
        folder = SHARED / "mammals"
        return load_two_view(folder / "left.csv", folder / "right.csv", types=MAMMALS_TYPES,
                             duplicate_names="rename"), None
    if name == "latent-heavy":
        left, right = latent_heavy(np.random.default_rng(data_seed))
        return load_two_view(left, right, types=frame_range_types([left, right])), None
    if name == "latent-heavy-wide":  # a data owner's generous public bounds: 100 times the range
        left, right = latent_heavy(np.random.default_rng(data_seed))
        types = frame_range_types([left, right])
        for column in types["columns"].values():
            if "bounds" in column:
                column["bounds"] = [column["bounds"][0], 100 * column["bounds"][1]]
        return load_two_view(left, right, types=types), None
    if name == "latent-signed":  # every other column shifted by its median: negative values, signed tails
        left, right = latent_heavy(np.random.default_rng(data_seed))
        for frame in (left, right):
            for column in frame.columns[1::2]:
                frame[column] = np.round(frame[column] - frame[column].median(), 3)
        types = frame_range_types([left, right])
        for frame in (left, right):
            for column in frame.columns[1:]:
                types["columns"][column]["bounds"] = [float(frame[column].min()), float(frame[column].max())]
        return load_two_view(left, right, types=types), None
    if name == "latent-light":
        left, right = latent_heavy(np.random.default_rng(data_seed), n=4000, n_left=5, n_right=5, gaussian=True)
        return load_two_view(left, right, types=frame_range_types([left, right])), None
    base = name.removesuffix("-bounds")
    folder = SHARED / base if (SHARED / base).is_dir() else HELD_OUT / base
    if name.endswith("-bounds"):  # every numeric column declared with its range, no transform
        return load_two_view(folder / "left.csv", folder / "right.csv", types=range_types(folder)), None
    return load_two_view(folder / "left.csv", folder / "right.csv", duplicate_names="rename"), None


def one_run(job: tuple) -> dict:
    name, data_seed, label, algorithm, parameters, epsilon, seed = job
    data, planted = dataset(name, data_seed)
    choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    if algorithm == DEFAULT_ALGORITHM:
        algorithm, parameters = default_algorithm(epsilon), {**default_parameters(epsilon), **parameters}
    if algorithm in SYNTHETIC:
        with tempfile.TemporaryDirectory() as work:
            document = run_synthetic(algorithm, data, epsilon=epsilon, seed=seed, work_dir=work, parameters=parameters)
        redescriptions = document_redescriptions(document)
    else:
        if algorithm in NON_PRIVATE:
            miner = make_miner(algorithm, **parameters).fit(data, rng=choices)
        else:
            miner = make_miner(algorithm, **{**parameters, "epsilon": epsilon})
            miner.fit(data, accountant=Accountant(miner.epsilon, SeededNoise(noise)), rng=choices)
        document, redescriptions = miner.document(), miner.redescriptions_
    frame = true_statistics(document, data)
    shown = [i for i, r in enumerate(mark_redundant(redescriptions, max_overlap=0.9))
             if not r.pruned and not r.extra.get("redundant")]
    top = frame.set_index("index").loc[shown[:10]] if shown else frame.iloc[:0]
    top10 = (float(top.true_excess_jaccard.median()), float(top.true_jaccard.median())) if len(top) else None
    kept_reds = [r for r in redescriptions if not r.pruned]
    distinct = len(filter_redundant(kept_reds, data=data, max_overlap=0.9))
    found, best = set(), {}
    if planted:
        kept_rows = frame[~frame.pruned.astype(bool)]
        complete = complete_attributes(*data.views)
        for position, true_j in zip(kept_rows["index"], kept_rows.true_jaccard):
            for k in relations_touched(redescriptions[int(position)], planted, complete):
                best[k] = max(best.get(k, 0.0), float(true_j))
                if true_j >= FOUND_JACCARD:
                    found.add(k)
    frame = frame[~frame.pruned.astype(bool)].copy()
    marginal = [redescriptions[int(i)].extra.get("interval", {}).get("jaccard_marginal") for i in frame["index"]]
    frame["marginal_covers"] = [None if m is None else bool(m[0] <= t <= m[1])
                                for m, t in zip(marginal, frame.true_jaccard)]
    has_interval = {"jaccard_low", "jaccard_high"} <= set(frame.columns)
    frame["interval_width"] = frame.jaccard_high - frame.jaccard_low if has_interval else np.nan
    return {"job": job, "frame": frame, "distinct": distinct, "found": found, "best": best, "algorithm": algorithm,
            "top10": top10}


def summary(results: list[dict], runs: int, relations: int) -> dict:
    """The figures of the module docstring over one group's runs (``relations``: planted ones, 0 if none)."""
    frames = [r["frame"] for r in results]
    kept = pd.concat(frames) if frames else pd.DataFrame()
    n = len(kept)
    rho = kept[["noisy_jaccard", "true_jaccard"]].corr("spearman").iloc[0, 1] if n > 2 else float("nan")
    coverage = (kept["true_jaccard_in_interval"].astype(float).mean()
                if n and "true_jaccard_in_interval" in kept else float("nan"))
    marginal = kept["marginal_covers"].dropna().astype(float) if n else pd.Series(dtype=float)
    figures = {
        "runs_with_kept": f"{sum(len(f) > 0 for f in frames)}/{runs}",
        "kept": n,
        "significant_per_run": [int((f.true_pvalue < 0.01).sum()) if len(f) else 0 for f in frames],
        "distinct": sum(r["distinct"] for r in results),
        "median_true_jaccard": round(float(kept.true_jaccard.median()), 3) if n else None,
        "significant": round(float((kept.true_pvalue < 0.01).mean()), 3) if n else None,
        "spearman": None if np.isnan(rho) else round(float(rho), 3),
        "interval_coverage": None if np.isnan(coverage) else round(float(coverage), 3),
        "marginal_coverage": round(float(marginal.mean()), 3) if len(marginal) else None,
        "median_interval_width": round(float(kept.interval_width.median()), 3)
        if n and kept.interval_width.notna().any() else None,
        "algorithms": sorted({r["algorithm"] for r in results}),
    }
    tops = [r["top10"] for r in results if r["top10"] is not None]
    figures["top10_excess"] = round(float(np.median([t[0] for t in tops])), 3) if tops else None
    figures["top10_true_jaccard"] = round(float(np.median([t[1] for t in tops])), 3) if tops else None
    if relations:
        figures["planted_found"] = f"{len(set().union(*(r['found'] for r in results)))}/{relations}"
        figures["planted_found_per_run"] = [len(r["found"]) for r in results]
        figures["planted_best_true_jaccard"] = [round(max((r["best"].get(k, 0.0) for r in results), default=0.0), 3)
                                                for k in range(relations)]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="planted,mammals")
    parser.add_argument("--epsilons", default="0.1,0.3,1")
    parser.add_argument("--miners", default=json.dumps([["default", DEFAULT_ALGORITHM, {}]]),
                        help="JSON list of [label, algorithm, parameters]; algorithm 'default' is dprm mine's "
                             "default miner")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--data-seed", default="0",
                        help="seed of the generated tables; a comma-separated list measures each (one line per "
                             "data seed, with its 'data_seed')")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    miners = json.loads(args.miners)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    seeds = range(args.first_seed, args.first_seed + args.runs)
    data_seeds = [int(s) for s in args.data_seed.split(",")]
    for name in args.datasets.split(","):
        for data_seed in data_seeds:
            jobs = [(name, data_seed, label, algorithm, parameters, epsilon, seed)
                    for label, algorithm, parameters in miners for epsilon in epsilons for seed in seeds]
            with ProcessPoolExecutor(args.jobs) as pool:
                results = list(pool.map(one_run, jobs))
            for label, algorithm, parameters in miners:
                for epsilon in epsilons:
                    group = [r for r in results if r["job"][2] == label and r["job"][5] == epsilon]
                    figures = summary(group, args.runs, len(dataset(name, data_seed)[1] or ()))
                    line = {"dataset": name, "miner": label, "epsilon": epsilon, **figures}
                    if len(data_seeds) > 1:
                        line["data_seed"] = data_seed
                    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
