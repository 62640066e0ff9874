"""The evaluation of density-estimate itemset mining (Geilke & Kramer 2017): runner, table, figures, report.

Experiments (the paper's Section VII, plus the DP variant)
---------------------------------------------------------
``discovery`` (Figure 3)
    For each dataset and minimum support θ: the true frequent itemsets by pyfim's
    FP-growth (:mod:`dprm.itemsets.ground_truth`), and the TPR / FPR (both over the
    number of true itemsets, as the paper defines them) of ISON on: the Hoeffding-tree
    estimate (``ison``), the same after t-closeness with ``δ`` for the dataset's
    quasi-identifiers (``ison t-closeness``; not DP), and the DP estimate at each ε
    (``ison dp``; ε split over its trees, :mod:`dprm.itemsets.private_chain`).
``chains`` (Figure 4)
    TPR / FPR of ``ison`` against the number of chains.
``timing`` (Figure 5)
    On IBM-like synthetic streams (:mod:`dprm.datasets.transactions`) of growing
    length: seconds to learn the estimate, seconds of ISON on it, seconds of
    FP-growth on the rows (pyfim, the paper's Apriori stand-in), all at one θ.
``closeness`` (Figure 6 and Table II), on movielens
    The estimate before and after t-closeness with ``δ = 0`` for age group and
    occupation: the histogram of ``100 · f(I) / f'(I)`` over the itemsets ISON finds on
    the original estimate, and the itemsets of the smallest quasi-identifier groups
    (few people) with their estimated supports before and after, the rows those
    supports stand for, and how many rows and people of the data hold them.

Protocol and what is private
----------------------------
The online estimate learns each table by the estimator's own rule
(:meth:`DensityEstimator.fit <dprm.itemsets.estimator.DensityEstimator.fit>` with
``passes``, by default ``"auto"``): a table of fewer than
:data:`~dprm.itemsets.estimator.ROWS_TO_LEARN` rows in enough passes, each in a new
random order, that the trees see that many rows (a longer stationary stream from the
same empirical distribution; 8,124 rows of mushroom learned once give shallow trees,
and its file is sorted), a longer table once in its own order. The DP
estimate is fitted once on all rows (batch). Chain orders, reference samples and DP noise are seeded from the
master seed and the cell's name, so the evaluation is reproducible; its DP fits are
therefore not private releases. The public domains of a dataset are its declared
ones (movielens, synthetic) or, for a CSV, the values of the whole file (the
stand-in for the data owner's declaration, as in :mod:`dprm.evaluation.classification`).
This is a tool for people who may see the data: it shows row counts and true supports.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dprm.errors import DataError, ParameterError, printable_text
from dprm.json_values import plain_json

__all__ = ["ItemsetDataset", "EvalConfig", "EvalResult", "resolve_dataset", "run_evaluation", "output_names",
           "render_outputs", "MOVIELENS_GENRES"]

#: Genres of the movielens discovery table (the paper's variants have fewer variables than the
#: full 21; with all 19 genres, whose "0" is frequent, the true itemsets run into the millions).
MOVIELENS_GENRES = ("Action", "Comedy", "Drama", "Romance", "Thriller")
#: Table II: the itemsets of a small group add at most two items of its first columns besides the
#: quasi-identifiers (the number of candidates grows with the square of the columns' values).
MAX_OTHER_COLUMNS = 6
#: Table II: the quasi-identifier groups with the fewest rows examined, and the rows shown.
SMALL_GROUPS = 3
TABLE_ROWS = 25


@dataclass
class ItemsetDataset:
    """A table with public domains and its quasi-identifiers.

    Attributes
    ----------
    name : str
    data : pandas.DataFrame
        Text values.
    domains : dict of str to list of str
    quasi_identifiers : list of str
    users : numpy.ndarray, optional
        Who each row belongs to (movielens: user ids), to count people.
    """

    name: str
    data: pd.DataFrame
    domains: dict[str, list[str]]
    quasi_identifiers: list[str] = field(default_factory=list)
    users: np.ndarray | None = None


def _csv_dataset(path: Path, name: str, quasi_identifiers: Sequence[str]) -> ItemsetDataset:
    from dprm.itemsets.text_table import read_text_frame

    if not path.is_file():
        raise DataError(f"{path}: no such file", code="file_not_found", file=str(path), data_dependent=False)
    # the reader of `dprm itemsets`: an empty or undecodable file, a row with more or fewer
    # fields than the header, each one line naming the file (and the row); cells as written
    data = read_text_frame(path, str(path)).fillna("")
    if len(data) == 0:
        raise DataError(f"{path}: the file has no data rows", code="no_rows", file=str(path), data_dependent=False)
    data.columns = [str(c).strip() for c in data.columns]
    if len(set(quasi_identifiers)) != len(quasi_identifiers):
        raise ParameterError(f"{path}: a quasi-identifier is named twice: {'+'.join(quasi_identifiers)}")
    unknown = [q for q in quasi_identifiers if q not in data.columns]
    if unknown:
        raise ParameterError(f"{path}: no quasi-identifier column {unknown[0]!r}")
    domains = {c: sorted(data[c].unique()) for c in data.columns}
    return ItemsetDataset(name, data, domains, list(quasi_identifiers))


def resolve_dataset(spec: str, data_dir: str | Path, *, rows: int = 20_000, seed: int = 0) -> ItemsetDataset:
    """A dataset by name: ``mushroom`` (``DATA_DIR/uci``), ``movielens`` (``DATA_DIR/movielens``),
    ``ibm`` (synthetic, ``rows`` rows), or ``FILE.csv[:Q1+Q2]`` with its quasi-identifiers."""
    from dprm.datasets import load_movielens, make_transactions, movielens_types

    root = Path(data_dir)
    wanted = {"mushroom": root / "uci" / "mushroom.csv", "movielens": root / "movielens"}.get(spec)
    if wanted is not None and not wanted.exists():  # a named dataset: where it was looked for, how to point elsewhere
        raise DataError(f"{wanted}: no such file (--data-dir DIR, or DPRM_DATA_DIR, names the folder holding uci/ "
                        f"and movielens/)", code="file_not_found", file=str(wanted), data_dependent=False)
    if spec == "mushroom":
        return _csv_dataset(root / "uci" / "mushroom.csv", "mushroom", ["population", "habitat"])
    if spec == "movielens":
        table = load_movielens(root / "movielens", genres=MOVIELENS_GENRES, with_user=True)
        users = table.pop("user_id").to_numpy()
        types = movielens_types(MOVIELENS_GENRES)
        domains = {c: list(v["categories"]) for c, v in types["columns"].items()}
        return ItemsetDataset("movielens", table, domains, ["age_group", "occupation"], users)
    if spec == "ibm":
        stream = make_transactions(rows, rng=np.random.default_rng(seed))
        return ItemsetDataset("ibm", stream.data, stream.categories, ["x0", "x1"])
    path, _, qis = spec.partition(":")
    if not path.endswith(".csv"):
        raise ParameterError(f"unknown dataset {spec!r}: mushroom, movielens, ibm or FILE.csv[:Q1+Q2]")
    # a name that is not UTF-8 is shown with its bytes as \xNN: tables, reports and documents are UTF-8 text
    return _csv_dataset(Path(path), printable_text(Path(path).stem), [q for q in qis.split("+") if q])


@dataclass
class EvalConfig:
    """The settings of :func:`run_evaluation` (lists of values are the grid)."""

    datasets: list[ItemsetDataset]
    thetas: list[float] = field(default_factory=lambda: [0.1, 0.2, 0.3])
    epsilons: list[float] = field(default_factory=lambda: [0.1, 1.0, 10.0])
    chains: int = 3
    chain_counts: list[int] = field(default_factory=lambda: [1, 2, 3, 5])
    chains_theta: float = 0.3
    delta: float = 0.0
    dp_chains: int = 1
    dp_max_depth: int = 2
    timing_rows: list[int] = field(default_factory=lambda: [10_000, 100_000, 1_000_000])
    timing_theta: float = 0.1
    closeness_theta: float = 0.05
    passes: int | str = "auto"
    grace_period: int = 200
    split_confidence: float = 1e-7
    max_seconds: float = 300.0
    seed: int = 0

    def check(self) -> None:
        """Ranges of every setting (one-line errors); the datasets are checked by :func:`run_evaluation`."""
        for name, values in (("thetas", self.thetas), ("chains_theta", [self.chains_theta]),
                             ("timing_theta", [self.timing_theta]), ("closeness_theta", [self.closeness_theta])):
            if not values or any(not (math.isfinite(t) and 0 < t <= 1) for t in values):
                raise ParameterError(f"{name} must be in (0, 1]")
        if any(not (math.isfinite(e) and e > 0) for e in self.epsilons):
            raise ParameterError("epsilons must be positive")
        if any(not 1 <= k <= 100 for k in [self.chains, self.dp_chains, *self.chain_counts]):
            raise ParameterError("chains must be between 1 and 100")
        if not (self.passes == "auto" or (isinstance(self.passes, int) and 1 <= self.passes <= 1000)):
            raise ParameterError(f"passes must be 'auto' or in [1, 1000], not {self.passes!r}")
        if not self.grace_period >= 1:
            raise ParameterError(f"grace_period must be 1 or more, not {self.grace_period!r}")
        if not 0 < self.split_confidence < 1:
            raise ParameterError(f"split_confidence must be in (0, 1), not {self.split_confidence!r}")
        if len(set(self.chain_counts)) != len(self.chain_counts):
            raise ParameterError(f"chain_counts must not repeat a value: {list(self.chain_counts)}")
        if not (math.isfinite(self.delta) and self.delta >= 0):
            raise ParameterError("delta must be >= 0")
        if any(not 1 <= n <= 100_000_000 for n in self.timing_rows):
            raise ParameterError("timing rows must be between 1 and 100,000,000")


@dataclass
class EvalResult:
    """What :func:`run_evaluation` returns: the tidy table, the closeness tables, settings and notes."""

    table: pd.DataFrame
    deviations: pd.DataFrame
    singled_out: pd.DataFrame
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def _seed(master: int, *keys: Any) -> int:
    text = "/".join(str(k) for k in (master, *keys)).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "little") % 2**63


def _estimate(dataset: ItemsetDataset, config: EvalConfig, chains: int, seed: int) -> tuple[Any, float]:
    """The Hoeffding-tree estimate of the table, learned in ``config.passes`` passes (the estimator's rule)."""
    from dprm.itemsets import DensityEstimator

    started = time.perf_counter()
    estimator = DensityEstimator(n_chains=chains, domains=dataset.domains, grace_period=config.grace_period,
                                 split_confidence=config.split_confidence, passes=config.passes, random_state=seed)
    estimator.fit(dataset.data)
    return estimator, time.perf_counter() - started


def _row(experiment: str, dataset: str, method: str, **values: Any) -> dict[str, Any]:
    row = {"experiment": experiment, "dataset": dataset, "method": method, "epsilon": math.nan, "theta": math.nan,
           "chains": math.nan, "rows": math.nan, "tpr": math.nan, "fpr": math.nan, "precision": math.nan,
           "n_true": math.nan, "n_reported": math.nan, "learn_seconds": math.nan, "mine_seconds": math.nan,
           "truth_seconds": math.nan, "stopped_early": False}
    row.update(values)
    return row


def _mined(estimator: Any, theta: float, max_seconds: float) -> tuple[Any, float]:
    from dprm.itemsets.ison import run_ison

    run = run_ison(estimator, theta, max_seconds=max_seconds)
    return run, run.seconds


def _rates(run: Any, truth: Mapping) -> dict[str, Any]:
    from dprm.itemsets.ground_truth import itemset_rates

    r = itemset_rates(run.itemsets, truth)
    return {"tpr": r.tpr, "fpr": r.fpr, "precision": r.precision, "n_true": r.n_true, "n_reported": r.n_reported,
            "stopped_early": run.stopped_early}


def _discovery(config: EvalConfig, dataset: ItemsetDataset, truths: dict[float, tuple[dict, float]],
               tick: Callable[[], None]) -> list[dict[str, Any]]:
    from dprm.itemsets.closeness import apply_t_closeness
    from dprm.itemsets.private import fit_private_estimator

    rows = []
    estimator, learn = _estimate(dataset, config, config.chains, _seed(config.seed, dataset.name, "ison", config.chains))
    closed = None
    if dataset.quasi_identifiers:
        closed = apply_t_closeness(estimator, dataset.quasi_identifiers, config.delta)
    fits = {}
    for eps in config.epsilons:
        started = time.perf_counter()
        fits[eps] = (fit_private_estimator(dataset.data, eps, domains=dataset.domains, n_chains=config.dp_chains,
                                           max_depth=config.dp_max_depth,
                                           random_state=_seed(config.seed, dataset.name, "dp", eps)).estimator,
                     time.perf_counter() - started)
    for theta in config.thetas:
        truth, truth_seconds = truths[theta]
        common = {"theta": theta, "rows": len(dataset.data), "truth_seconds": truth_seconds}
        run, seconds = _mined(estimator, theta, config.max_seconds)
        rows.append(_row("discovery", dataset.name, "ison", chains=config.chains, learn_seconds=learn,
                         mine_seconds=seconds, **common, **_rates(run, truth)))
        tick()
        if closed is not None:
            run, seconds = _mined(closed, theta, config.max_seconds)
            rows.append(_row("discovery", dataset.name, "ison t-closeness", chains=config.chains, learn_seconds=learn,
                             mine_seconds=seconds, **common, **_rates(run, truth)))
            tick()
        for eps, (dp, fit_seconds) in fits.items():
            run, seconds = _mined(dp, theta, config.max_seconds)
            rows.append(_row("discovery", dataset.name, "ison dp", epsilon=eps, chains=config.dp_chains,
                             learn_seconds=fit_seconds, mine_seconds=seconds, **common, **_rates(run, truth)))
            tick()
    return rows


def _chains(config: EvalConfig, dataset: ItemsetDataset, truth: tuple[dict, float],
            tick: Callable[[], None]) -> list[dict[str, Any]]:
    rows = []
    for k in config.chain_counts:
        estimator, learn = _estimate(dataset, config, k, _seed(config.seed, dataset.name, "chains", k))
        run, seconds = _mined(estimator, config.chains_theta, config.max_seconds)
        rows.append(_row("chains", dataset.name, "ison", theta=config.chains_theta, chains=k, rows=len(dataset.data),
                         learn_seconds=learn, mine_seconds=seconds, truth_seconds=truth[1], **_rates(run, truth[0])))
        tick()
    return rows


def _timing(config: EvalConfig, tick: Callable[[], None]) -> list[dict[str, Any]]:
    import fim

    from dprm.datasets import make_transactions
    from dprm.itemsets import DensityEstimator

    # one untimed run first: compiling the kernels and first imports are not the learner's time
    warm = make_transactions(200, rng=np.random.default_rng(_seed(config.seed, "timing", "warm-up")))
    _mined(DensityEstimator(n_chains=config.chains, domains=warm.categories, passes=1,
                            random_state=_seed(config.seed, "timing", "warm-up")).fit(warm.data),
           config.timing_theta, config.max_seconds)
    rows = []
    for n in config.timing_rows:
        stream = make_transactions(n, rng=np.random.default_rng(_seed(config.seed, "timing")))
        estimator = DensityEstimator(n_chains=config.chains, domains=stream.categories, passes=1,  # a stream
                                     random_state=_seed(config.seed, "timing", "ison"))
        started = time.perf_counter()
        estimator.fit(stream.data)
        learn = time.perf_counter() - started
        run, seconds = _mined(estimator, config.timing_theta, config.max_seconds)
        codes = stream.data.to_numpy()
        names = np.asarray(stream.data.columns, dtype=object)
        started = time.perf_counter()
        transactions = (names + "=" + codes).tolist()
        found = fim.fpgrowth(transactions, target="s", supp=-max(1, math.ceil(config.timing_theta * n - 1e-9)),
                             report="a")
        fp_seconds = time.perf_counter() - started
        rows.append(_row("timing", "ibm", "ison", theta=config.timing_theta, chains=config.chains, rows=n,
                         learn_seconds=learn, mine_seconds=seconds, truth_seconds=fp_seconds,
                         n_reported=len(run.itemsets), n_true=len(found), stopped_early=run.stopped_early))
        tick()
    return rows


def _closeness(config: EvalConfig, dataset: ItemsetDataset) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 6 (support ratios) and Table II (itemsets of the smallest quasi-identifier groups)."""
    from dprm.itemsets.closeness import apply_t_closeness
    from dprm.itemsets.ison import run_ison

    estimator, _ = _estimate(dataset, config, config.chains, _seed(config.seed, dataset.name, "closeness"))
    closed = apply_t_closeness(estimator, dataset.quasi_identifiers, config.delta)
    run = run_ison(estimator, config.closeness_theta, max_seconds=config.max_seconds)
    deviations = pd.DataFrame([{"items": _text(s.items), "length": len(s.items), "before": s.support,
                                "after": closed.density(s.items)} for s in run.itemsets])
    if not deviations.empty:
        deviations["percent"] = 100.0 * deviations["before"] / deviations["after"].where(deviations["after"] > 0)
    # the smallest groups of the quasi-identifiers (fewest rows), their itemsets with up to two other items
    data = dataset.data
    n = len(data)
    qis = dataset.quasi_identifiers
    people = dataset.users if dataset.users is not None else np.arange(n)
    frame = pd.DataFrame({**{q: data[q] for q in qis}, "person": people})
    groups = frame.groupby(qis, observed=True)["person"].agg(["size", "nunique"]).sort_values(
        ["size", "nunique"], kind="stable")
    others = [c for c in data.columns if c not in qis][:MAX_OTHER_COLUMNS]
    records = []
    for rank, values in enumerate(list(groups.index)[:SMALL_GROUPS]):
        base = dict(zip(qis, values if isinstance(values, tuple) else (values,)))
        in_group = np.logical_and.reduce([data[q].to_numpy() == v for q, v in base.items()])
        candidates = [base]
        for i, a in enumerate(others):
            for va in dataset.domains[a]:
                candidates.append({**base, a: va})
                for b in others[i + 1:]:
                    for vb in dataset.domains[b]:
                        candidates.append({**base, a: va, b: vb})
        for items in candidates:
            mask = in_group.copy()
            for c, v in items.items():
                if c not in base:
                    mask &= data[c].to_numpy() == v
            if not mask.any():
                continue
            before, after = estimator.density(items), closed.density(items)
            records.append({"group": rank + 1, "items": _text(items), "before": before, "after": after, "rows_before": before * n,
                            "rows_after": after * n, "true_rows": int(mask.sum()),
                            "true_people": int(pd.unique(people[mask]).size)})
    singled = pd.DataFrame(records)
    if not singled.empty:
        singled = singled.sort_values(["group", "before"], ascending=[True, False], kind="stable")
        singled = singled.head(TABLE_ROWS).reset_index(drop=True)
    return deviations, singled


def _text(items: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in items.items())


def run_evaluation(config: EvalConfig, *, experiments: Sequence[str] = ("discovery", "chains", "timing", "closeness"),
                   progress: Callable[[int, int], None] | None = None) -> EvalResult:
    """Run the experiments of the module notes on ``config``; ``progress(done, total)`` after each cell."""
    from dprm.itemsets.ground_truth import frequent_itemsets

    config.check()
    if not config.datasets:
        raise ParameterError("no dataset to evaluate")
    unknown = [e for e in experiments if e not in ("discovery", "chains", "timing", "closeness")]
    if unknown:
        raise ParameterError(f"unknown experiment {unknown[0]!r}")
    methods_per_theta = 1 + len(config.epsilons)
    total = 0
    if "discovery" in experiments:
        total += sum(len(config.thetas) * (methods_per_theta + bool(d.quasi_identifiers)) for d in config.datasets)
    if "chains" in experiments:
        total += len(config.datasets) * len(config.chain_counts)
    if "timing" in experiments:
        total += len(config.timing_rows)
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    rows: list[dict[str, Any]] = []
    notes = ["TPR = |found ∩ true| / |true|, FPR = |found \\ true| / |true| (the paper's denominators; "
             "FPR can exceed 1); the truth is pyfim's FP-growth on the rows.",
             "Evaluation runs are seeded: their DP fits are not private releases; t-closeness is a syntactic "
             "property of the estimate, not differential privacy."]
    for dataset in config.datasets:
        needed = sorted(set(config.thetas if "discovery" in experiments else [])
                        | ({config.chains_theta} if "chains" in experiments else set()))
        truths = {}
        for theta in needed:
            started = time.perf_counter()
            truths[theta] = (frequent_itemsets(dataset.data, theta), time.perf_counter() - started)
        if "discovery" in experiments:
            rows += _discovery(config, dataset, truths, tick)
        if "chains" in experiments:
            rows += _chains(config, dataset, truths[config.chains_theta], tick)
    if "timing" in experiments:
        rows += _timing(config, tick)
    deviations = pd.DataFrame()
    singled = pd.DataFrame()
    if "closeness" in experiments:
        with_qis = [d for d in config.datasets if d.name == "movielens"] or \
                   [d for d in config.datasets if d.quasi_identifiers]
        if with_qis:
            deviations, singled = _closeness(config, with_qis[0])
            notes.append(f"closeness on {with_qis[0].name}: t-closeness with δ = {config.delta:g} for "
                         f"{', '.join(with_qis[0].quasi_identifiers)}")
    settings = {k: v for k, v in asdict(config).items() if k != "datasets"}
    settings["datasets"] = {d.name: {"rows": len(d.data), "columns": list(d.data.columns),
                                     "quasi_identifiers": d.quasi_identifiers} for d in config.datasets}
    settings["experiments"] = list(experiments)
    table = pd.DataFrame(rows, columns=list(_row("", "", "").keys()))
    return EvalResult(table, deviations, singled, settings, notes)


# -- outputs --------------------------------------------------------------------------------------

FIGURES = ("tpr_fpr.png", "chains.png", "time.png", "closeness.png")


def output_names() -> list[str]:
    """The files :func:`render_outputs` gives (known before the evaluation runs)."""
    return ["itemsets_eval.csv", "itemsets_eval.json", "closeness_deviation.csv", "closeness_singled_out.csv",
            *FIGURES, "report.html"]


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    return figure


def _placeholder(title: str) -> Any:
    figure = _figure(5.0, 1.6)
    figure.text(0.5, 0.5, f"{title}: not run", ha="center", va="center")
    return figure


def _method_label(row: Mapping[str, Any]) -> str:
    return f"dp ε={row['epsilon']:g}" if row["method"] == "ison dp" else str(row["method"])


def tpr_fpr_figure(table: pd.DataFrame) -> Any:
    """TPR and FPR against θ, a column of panels per dataset, a line per method (Figure 3)."""
    rows = table[table["experiment"] == "discovery"]
    if rows.empty:
        return None
    datasets = list(dict.fromkeys(rows["dataset"]))
    figure = _figure(4.0 * len(datasets), 6.0)
    axes = figure.subplots(2, len(datasets), squeeze=False)
    for j, dataset in enumerate(datasets):
        part = rows[rows["dataset"] == dataset].copy()
        part["label"] = [_method_label(r) for r in part.to_dict(orient="records")]
        for label, line in part.groupby("label", sort=False):
            line = line.sort_values("theta")
            stopped = line[line["stopped_early"].astype(bool)]
            for i, metric in enumerate(("tpr", "fpr")):
                axes[i][j].plot(line["theta"], line[metric], marker="o", label=label)
                axes[i][j].plot(stopped["theta"], stopped[metric], linestyle="none", marker="x", color="black",
                                markersize=9)
        axes[0][j].set_title(f"{dataset} (x: ISON stopped at its time limit)", fontsize=9)
        axes[0][j].set_ylabel("TPR")
        axes[1][j].set_ylabel("FPR")
        axes[1][j].set_xlabel("minimum support θ")
        axes[0][j].set_ylim(-0.02, 1.02)
    axes[0][0].legend(fontsize=7)
    figure.tight_layout()
    return figure


def chains_figure(table: pd.DataFrame) -> Any:
    """TPR and FPR against the number of chains (Figure 4)."""
    rows = table[table["experiment"] == "chains"]
    if rows.empty:
        return None
    figure = _figure(8.0, 3.2)
    axes = figure.subplots(1, 2)
    for dataset, line in rows.groupby("dataset", sort=False):
        line = line.sort_values("chains")
        axes[0].plot(line["chains"], line["tpr"], marker="o", label=dataset)
        axes[1].plot(line["chains"], line["fpr"], marker="o", label=dataset)
    for ax, name in zip(axes, ("TPR", "FPR")):
        ax.set_xlabel("chains")
        ax.set_ylabel(name)
    axes[0].legend(fontsize=7)
    figure.tight_layout()
    return figure


def time_figure(table: pd.DataFrame) -> Any:
    """Seconds against stream length: learning, ISON, FP-growth (Figure 5)."""
    rows = table[table["experiment"] == "timing"].sort_values("rows")
    if rows.empty:
        return None
    figure = _figure(5.5, 3.6)
    ax = figure.subplots()
    ax.plot(rows["rows"], rows["learn_seconds"], marker="o", label="learn the estimate")
    ax.plot(rows["rows"], rows["mine_seconds"], marker="s", label="ISON on the estimate")
    ax.plot(rows["rows"], rows["truth_seconds"], marker="^", label="FP-growth on the rows")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows of the stream")
    ax.set_ylabel("seconds")
    ax.legend(fontsize=8)
    figure.tight_layout()
    return figure


def closeness_figure(deviations: pd.DataFrame) -> Any:
    """Histogram of ``100 · f(I) / f'(I)`` over the itemsets (Figure 6)."""
    if deviations.empty or "percent" not in deviations:
        return None
    values = deviations["percent"].replace([np.inf, -np.inf], np.nan).dropna()
    figure = _figure(5.5, 3.4)
    ax = figure.subplots()
    ax.hist(values.clip(upper=300), bins=30, color="#4e79a7")
    ax.set_xlabel("100 · support before / support after t-closeness (clipped at 300)")
    ax.set_ylabel("itemsets")
    figure.tight_layout()
    return figure


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: plain_json(v, nan_as_null=True) for k, v in r.items()} for r in frame.to_dict(orient="records")]


def report_html(result: EvalResult, figures: Mapping[str, bytes]) -> str:
    """A self-contained HTML page: settings, notes, figures, the tables."""
    from dprm.evaluation.html_page import Column, definition_table, html_table, notes_and_figures, page

    parts = ["<h2>Settings</h2>", definition_table(list(result.settings.items()))]
    parts += notes_and_figures(result.notes, figures)
    columns = [Column("experiment", "experiment"), Column("dataset", "dataset"), Column("method", "method"),
               Column("epsilon", "ε", "float"), Column("theta", "θ", "float"), Column("chains", "chains", "int"),
               Column("rows", "rows", "int"), Column("tpr", "TPR", "float"), Column("fpr", "FPR", "float"),
               Column("precision", "precision", "float"), Column("n_true", "true", "int"),
               Column("n_reported", "found", "int"), Column("learn_seconds", "learn s", "float"),
               Column("mine_seconds", "ISON s", "float"), Column("truth_seconds", "FP-growth s", "float"),
               Column("stopped_early", "stopped")]
    parts += ["<h2>Results</h2>", html_table(columns, result.table.to_dict(orient="records"),
                                             caption="one row per cell; click a header to sort")]
    if not result.singled_out.empty:
        columns = [Column("group", "group", "int"), Column("items", "itemset"), Column("before", "support before", "float"),
                   Column("after", "support after", "float"), Column("rows_before", "rows (before)", "float"),
                   Column("rows_after", "rows (after)", "float"), Column("true_rows", "true rows", "int"),
                   Column("true_people", "true people", "int")]
        parts += ["<h2>Table II: itemsets of the smallest quasi-identifier groups, before and after t-closeness</h2>",
                  html_table(columns, result.singled_out.to_dict(orient="records"),
                             caption="rows = support × number of rows; people: distinct users holding the itemset")]
    return page("Itemsets on density estimates: evaluation", "\n".join(parts),
                subtitle="Geilke & Kramer (ICBK 2017), Figures 3–6 and Table II, with dprm's DP variant")


def render_outputs(result: EvalResult) -> dict[str, bytes]:
    """Every file of :func:`output_names` by name."""
    from dprm.evaluation.figures import render_figure

    figures = {}
    for name, build, source in (("tpr_fpr.png", tpr_fpr_figure, result.table),
                                ("chains.png", chains_figure, result.table),
                                ("time.png", time_figure, result.table),
                                ("closeness.png", closeness_figure, result.deviations)):
        figure = build(source) or _placeholder(name.removesuffix(".png"))
        figures[name] = render_figure(figure, "png")
    document = {"settings": result.settings, "notes": result.notes, "rows": _records(result.table),
                "closeness_singled_out": _records(result.singled_out)}
    out = {"itemsets_eval.csv": result.table.to_csv(index=False).encode("utf-8"),
           "itemsets_eval.json": (json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n").encode(),
           "closeness_deviation.csv": result.deviations.to_csv(index=False).encode("utf-8"),
           "closeness_singled_out.csv": result.singled_out.to_csv(index=False).encode("utf-8")}
    out.update(figures)
    out["report.html"] = report_html(result, figures).encode("utf-8")
    return out
