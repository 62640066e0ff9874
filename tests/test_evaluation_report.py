"""Figures and HTML reports of experiments and runs (dprm.evaluation.figures / report, dprm report).

Fixtures: a small experiment directory built from real miners on make_planted data
with true statistics (the layout of ``dprm evaluate``), and synthetic tables with the
documented columns (several data sizes, a failed run, extra columns). The figures
are checked against the tables they plot; the HTML is parsed with html.parser.
"""

from __future__ import annotations

import re

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import math
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprm.cli import main
from dprm.data import load_two_view
from dprm.datasets import make_planted
from dprm.errors import DataError, DprmError
from dprm.evaluation import true_statistics
from dprm.evaluation.algorithms import run_seed
from dprm.evaluation.budgets import epsilon_label
from dprm.evaluation.figures import (
    FIGURE_NAMES,
    REDESCRIPTION_COLUMNS,
    RUN_COLUMNS,
    build_figures,
    distribution_figure,
    histogram_figure,
    method_label,
    read_experiment,
    runtime_figure,
    scatter_figure,
    write_figures,
)
from dprm.evaluation.report import experiment_summary, ledger_summary, write_experiment_report, write_run_report
from dprm.mining import make_miner
from dprm.privacy import Accountant, SeededNoise
from dprm.queries import (
    BooleanLiteral,
    CategoricalLiteral,
    Redescription,
    RedescriptionStats,
    make_document,
    write_document,
)

ALPHA = 0.01

# ------------------------------------------------------------------ fixtures


def planted_data(rows: int = 1000, seed: int = 0):
    planted = make_planted(rows, n_left_boolean=6, n_right_numeric=4, n_planted=2, random_state=seed)
    return planted, load_two_view(planted.left, planted.right, types=planted.types)


def build_real_experiment(out: Path, rows: int = 1000, seed: int = 0) -> Path:
    """An experiment directory as ``dprm evaluate`` writes it, from real runs."""
    _, data = planted_data(rows, seed)
    plan = [("cartwheels", None, 0), ("alt-expm", 1.0, 0), ("alt-expm", 1.0, 1), ("alt-expm", 0.5, 0)]
    reds, runs = [], []
    for algorithm, epsilon, run in plan:
        choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence([seed, run]).spawn(2))
        parameters = {"depth": 2, "init_trials": 2}
        if epsilon is not None:
            parameters["epsilon"] = epsilon
        miner = make_miner(algorithm, **parameters)
        accountant = Accountant(epsilon, SeededNoise(noise)) if epsilon is not None else None
        miner.fit(data, accountant=accountant, rng=choices)
        document = miner.document({"seed": run})
        folder = out / "runs" / algorithm / ("none" if epsilon is None else f"{epsilon:g}")
        folder.mkdir(parents=True, exist_ok=True)
        write_document(document, folder / f"{run}.json")
        frame = true_statistics(document, data)
        frame.insert(0, "algorithm", algorithm)
        frame.insert(1, "epsilon", math.nan if epsilon is None else epsilon)
        frame.insert(2, "run", run)
        frame["significant"] = frame["true_pvalue"] < ALPHA
        reds.append(frame)
        runs.append({"algorithm": algorithm, "epsilon": epsilon, "run": run,
                     "seed": run_seed(seed, algorithm, epsilon_label(epsilon), run),
                     "seconds": 0.1 + run,
                     "peak_mb": 80.0, "returned": len(frame), "kept": int((~frame["pruned"]).sum()),
                     "rows": data.n_rows, "status": "ok", "message": ""})
    pd.concat([r for r in reds if len(r)], ignore_index=True).to_csv(out / "redescriptions.csv", index=False)
    pd.DataFrame(runs).to_csv(out / "runs.csv", index=False)
    (out / "experiment.json").write_text(json.dumps(manifest_of(["cartwheels", "alt-expm"], "1x2,0.5x1", seed)))
    return out


def manifest_of(algorithms: list[str], budgets: str, seed: int) -> dict:
    """An ``experiment.json`` as ``dprm evaluate`` writes it (the data files' entries made up)."""
    entry = {"path": "left.csv", "sha256": "0" * 64, "bytes": 10}
    return {"format": "dprm.experiment/1", "data": {"left": entry, "right": dict(entry, path="right.csv"),
                                                    "types": None, "id_column": None},
            "algorithms": algorithms, "budgets": budgets, "parameters": {"depth": 2}, "seed": seed,
            "alpha": ALPHA, "timeout": None, "noise": "seeded noise", "created": "2026-01-01T00:00:00+00:00",
            "dprm_version": "0"}


@pytest.fixture(scope="module")
def real_dir(tmp_path_factory) -> Path:
    return build_real_experiment(tmp_path_factory.mktemp("experiment"))


def build_synthetic(out: Path, rng: np.random.Generator, rows: int = 1000,
                    methods: tuple = (("alpha-miner", 1.0), ("alpha-miner", 0.1), ("beta-miner", 1.0),
                                      ("baseline", None))) -> Path:
    """Tables with the documented columns (and extra ones), random statistics, one failed run."""
    out.mkdir(parents=True, exist_ok=True)
    reds, runs = [], []
    for algorithm, epsilon in methods:
        for run in range(3):
            n = int(rng.integers(0, 12))
            true = rng.uniform(0, 1, n)
            noisy = true if epsilon is None else np.clip(true + rng.normal(0, 0.1 / epsilon, n), -0.2, 1.3)
            pruned = np.zeros(n, bool) if epsilon is None else rng.random(n) < 0.4
            pvalue = 10.0 ** rng.uniform(-6, 0, n)
            failed = algorithm == "beta-miner" and run == 2
            if failed:
                n = 0
            for i in range(n):
                reds.append({"algorithm": algorithm, "epsilon": epsilon, "run": run, "index": i,
                             "pruned": bool(pruned[i]), "noisy_jaccard": noisy[i], "true_jaccard": true[i],
                             "noisy_intersection": 50.0, "true_intersection": 48, "true_pvalue": pvalue[i],
                             "left_text": "x", "extra_column": "ignored"})
            runs.append({"algorithm": algorithm, "epsilon": epsilon, "run": run, "seed": run,
                         "seconds": math.nan if failed else float(rng.uniform(0.5, 2.0)) * rows / 1000,
                         "peak_mb": 90.0, "returned": n, "kept": int((~pruned[:n]).sum()), "rows": rows,
                         "status": "failed" if failed else "ok", "message": "boom" if failed else ""})
    columns = list(REDESCRIPTION_COLUMNS) + ["left_text", "extra_column"]
    pd.DataFrame(reds, columns=columns).to_csv(out / "redescriptions.csv", index=False)
    pd.DataFrame(runs).to_csv(out / "runs.csv", index=False)
    return out


# ------------------------------------------------------------------ HTML parsing


class Page(HTMLParser):
    """Collects what the tests look at: images, tables (rows of cell texts), ids, links."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.images: dict[str, str] = {}
        self.tables: dict[str, list[list[str]]] = {}
        self.ids: list[str] = []
        self.urls: list[str] = []
        self.tags: list[str] = []
        self.missing_figures: list[str] = []
        self.text: list[str] = []
        self.svg_titles: list[str] = []
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_body = False
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        for key in ("src", "href"):
            if key in attrs:
                self.urls.append(attrs[key])
        if tag == "img":
            self.images[attrs.get("data-figure", "")] = attrs["src"]
        if "data-missing-figure" in attrs:
            self.missing_figures.append(attrs["data-missing-figure"])
        if tag == "table":
            self._table = attrs.get("id", f"table{len(self.tables)}")
            self.tables[self._table] = []
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = []
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "tbody":
            self._in_body = False
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._in_title:
            self.svg_titles.append(data)


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def assert_offline(path: Path, page: Page) -> None:
    """No resource from the network: only data: URLs and in-page anchors."""
    for url in page.urls:
        assert url.startswith("data:") or url.startswith("#"), url
    assert "link" not in page.tags
    text = path.read_text(encoding="utf-8").replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "http://" not in text and "https://" not in text and "//cdn" not in text


# ------------------------------------------------------------------ reading tables


@pytest.mark.parametrize("table,column", [("redescriptions.csv", c) for c in REDESCRIPTION_COLUMNS]
                         + [("runs.csv", c) for c in RUN_COLUMNS])
def test_a_missing_required_column_is_one_line_naming_file_and_column(tmp_path, table, column) -> None:
    out = build_synthetic(tmp_path / "exp", np.random.default_rng(0))
    frame = pd.read_csv(out / table)
    frame.drop(columns=[column]).to_csv(out / table, index=False)
    with pytest.raises(DataError) as error:
        read_experiment(out)
    message = str(error.value)
    assert "\n" not in message and table in message and repr(column) in message


def test_bad_directories_and_values_are_one_line_errors(tmp_path) -> None:
    with pytest.raises(DataError, match="no such directory"):
        read_experiment(tmp_path / "absent")
    (tmp_path / "file").write_text("x")
    with pytest.raises(DataError, match="not a directory"):
        read_experiment(tmp_path / "file")
    with pytest.raises(DataError, match="redescriptions.csv: not found"):
        read_experiment(tmp_path)
    unfinished = tmp_path / "unfinished"  # interrupted: experiment.json written, no tables yet
    unfinished.mkdir()
    (unfinished / "experiment.json").write_text("{}")
    with pytest.raises(DataError, match="has not finished .* run the same dprm evaluate command again"):
        read_experiment(unfinished)
    out = build_synthetic(tmp_path / "exp", np.random.default_rng(1))
    frame = pd.read_csv(out / "redescriptions.csv")
    frame["pruned"] = frame["pruned"].astype(object)
    frame.loc[0, "pruned"] = "maybe"
    frame.to_csv(out / "redescriptions.csv", index=False)
    with pytest.raises(DataError, match="'pruned' holds 'maybe'"):
        read_experiment(out)
    build_synthetic(out, np.random.default_rng(1))
    runs = pd.read_csv(out / "runs.csv")
    runs["seconds"] = runs["seconds"].astype(object)
    runs.loc[0, "seconds"] = "fast"
    runs.to_csv(out / "runs.csv", index=False)
    with pytest.raises(DataError, match="'seconds' holds 'fast'"):
        read_experiment(out)
    for value in ("nan", "-1", "inf"):  # 'nan' was read as nothing: a phantom non-private row
        build_synthetic(out, np.random.default_rng(1))
        frame = pd.read_csv(out / "redescriptions.csv", dtype={"epsilon": str}, keep_default_na=False)
        frame.loc[0, "epsilon"] = value
        frame.to_csv(out / "redescriptions.csv", index=False)
        with pytest.raises(DataError, match=f"'epsilon' holds '{value}', expected a positive number"):
            read_experiment(out)
    build_synthetic(out, np.random.default_rng(1))
    (out / "runs.csv").write_text("")
    with pytest.raises(DataError, match="runs.csv: empty file"):
        read_experiment(out)


@pytest.mark.parametrize("table,cut", [("runs.csv", 150), ("redescriptions.csv", 700)])
def test_a_table_cut_mid_row_is_refused_naming_file_and_row(tmp_path, table, cut) -> None:
    out = build_synthetic(tmp_path / "exp", np.random.default_rng(3))
    text = (out / table).read_bytes()
    header = text.split(b"\n", 1)[0].decode().split(",")
    (out / table).write_bytes(text[:cut])  # an interrupted copy: the last row is short (was read as missing values)
    rows = text[:cut].decode().splitlines()
    short = len(rows[-1].split(","))
    assert short < len(header)
    code, err = run_cli(["report", out, "--output", tmp_path / "r.html", "--no-figures"])
    assert code == 2 and err.count("\n") == 1
    assert f"{out / table}: row {len(rows) - 1} has {short} fields but the header has {len(header)}" in err
    assert not (tmp_path / "r.html").exists()
    (out / table).write_bytes(text + text.splitlines()[1] + b",extra\n")  # a long row too
    with pytest.raises(DataError, match=f"row {len(text.splitlines())} has {len(header) + 1} fields"):
        read_experiment(out)


@pytest.mark.parametrize("table,column", [("redescriptions.csv", "noisy_jaccard"),
                                          ("redescriptions.csv", "true_jaccard"),
                                          ("redescriptions.csv", "true_pvalue"), ("runs.csv", "kept"),
                                          ("runs.csv", "rows"), ("runs.csv", "seconds")])
@pytest.mark.parametrize("value", ["inf", "-Infinity", "nan", "1e999"])
def test_a_number_that_is_not_finite_is_refused_naming_file_column_row_and_value(tmp_path, table, column,
                                                                                 value) -> None:
    out = build_synthetic(tmp_path / "exp", np.random.default_rng(4))
    frame = pd.read_csv(out / table, dtype=str, keep_default_na=False)
    frame.loc[2, column] = value  # was an internal error in the figures (inf) or int() (kept, rows)
    frame.to_csv(out / table, index=False)
    code, err = run_cli(["report", out, "--output", tmp_path / "r.html"])
    assert code == 2 and err.count("\n") == 1
    assert f"{out / table}: column {column!r} holds {value!r} in row 3, expected a finite number" in err
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "figures").exists()


def _repeat_first_row(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([frame, frame.iloc[[0]]], ignore_index=True)


def _cell(column: str, value: str, row: int = 2):
    def edit(frame: pd.DataFrame) -> pd.DataFrame:
        frame.loc[row, column] = value
        return frame
    return edit


def _kept_above_returned(frame: pd.DataFrame) -> pd.DataFrame:
    frame.loc[2, "kept"] = str(int(frame.loc[2, "returned"]) + 1)
    return frame


# hand-edited tables the summaries counted as they were (a row twice, a Jaccard index of 1.5, ...)
TABLE_REFUSED = [
    ("redescription-twice", "redescriptions.csv", _repeat_first_row,
     "row {rows} repeats row 1 (the same algorithm, epsilon, run, index): each redescription has one row"),
    ("run-twice", "runs.csv", _repeat_first_row, "row {rows} repeats row 1 (the same algorithm, epsilon, run): "
                                                  "each run has one row"),
    ("true-jaccard-1.5", "redescriptions.csv", _cell("true_jaccard", "1.5"),
     "column 'true_jaccard' holds 1.5 in row 3, expected a number in [0, 1]"),
    ("true-pvalue-negative", "redescriptions.csv", _cell("true_pvalue", "-1"),
     "column 'true_pvalue' holds -1 in row 3, expected a number in [0, 1]"),
    ("index-fraction", "redescriptions.csv", _cell("index", "0.5"),
     "column 'index' holds 0.5 in row 3, expected a whole number >= 0"),
    ("kept-negative", "runs.csv", _cell("kept", "-3"), "column 'kept' holds -3 in row 3, expected a whole number >= 0"),
    ("seconds-negative", "runs.csv", _cell("seconds", "-5"), "column 'seconds' holds -5 in row 3, expected a number >= 0"),
    ("run-fraction", "runs.csv", _cell("run", "1.5"), "column 'run' holds 1.5 in row 3, expected a whole number >= 0"),
    ("run-empty", "runs.csv", _cell("run", ""), "column 'run' is empty in row 3, expected a whole number >= 0"),
    ("kept-above-returned", "runs.csv", _kept_above_returned, "column 'kept' holds "),
]


@pytest.mark.parametrize("name, table, edit, fragment", TABLE_REFUSED, ids=[r[0] for r in TABLE_REFUSED])
def test_a_value_out_of_range_or_a_repeated_row_is_refused_naming_file_row_and_column(real_dir, tmp_path, name,
                                                                                      table, edit, fragment) -> None:
    out = tmp_path / "exp"
    shutil.copytree(real_dir, out)
    frame = edit(pd.read_csv(out / table, dtype=str, keep_default_na=False))
    frame.to_csv(out / table, index=False)
    code, err = run_cli(["report", out, "--output", tmp_path / "r.html"])
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {out / table}: {fragment.format(rows=len(frame))}"), err
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "figures").exists()


def test_tables_are_read_with_extra_columns_and_non_private_epsilon(tmp_path) -> None:
    out = build_synthetic(tmp_path / "exp", np.random.default_rng(2))
    experiment = read_experiment(out)
    raw = pd.read_csv(out / "redescriptions.csv")
    assert len(experiment.redescriptions) == len(raw)
    assert "extra_column" in experiment.redescriptions.columns
    baseline = experiment.redescriptions[experiment.redescriptions["algorithm"] == "baseline"]
    assert baseline["epsilon"].isna().all() and set(baseline["method"]) == {"baseline (non-private)"}
    assert experiment.runs["ok"].sum() == (pd.read_csv(out / "runs.csv")["status"] == "ok").sum()


# ------------------------------------------------------------------ figures agree with the data


def panel_of(figure, algorithm: str, epsilon: float):
    label = method_label(algorithm, epsilon)
    found = [ax for ax in figure.axes if ax.get_visible() and ax.get_title().split("\n")[0] == label]
    assert len(found) == 1, label
    return found[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scatter_has_one_point_per_row_with_kept_and_pruned_apart(tmp_path, seed) -> None:
    out = build_synthetic(tmp_path / "exp", np.random.default_rng(seed))
    experiment = read_experiment(out)
    frame = experiment.redescriptions
    figure = scatter_figure(frame)
    total = sum(len(c.get_offsets()) for ax in figure.axes for c in ax.collections)
    assert total == len(pd.read_csv(out / "redescriptions.csv").dropna(subset=["true_jaccard", "noisy_jaccard"]))
    raw = pd.read_csv(out / "redescriptions.csv")
    for (algorithm, epsilon), group in raw.groupby(["algorithm", raw["epsilon"].fillna(-1)]):
        epsilon = math.nan if epsilon == -1 else epsilon
        kept_points, pruned_points = (c.get_offsets() for c in panel_of(figure, algorithm, epsilon).collections)
        for points, rows in ((kept_points, group[~group["pruned"]]), (pruned_points, group[group["pruned"]])):
            expected = np.sort(rows[["true_jaccard", "noisy_jaccard"]].to_numpy(), axis=0)
            assert np.allclose(np.sort(np.asarray(points), axis=0), expected)


@pytest.mark.parametrize("seed", [3, 4])
def test_histogram_parts_count_pruned_insignificant_significant(tmp_path, seed) -> None:
    out = build_synthetic(tmp_path / "exp", np.random.default_rng(seed))
    raw = pd.read_csv(out / "redescriptions.csv")
    figure = histogram_figure(read_experiment(out).redescriptions, alpha=ALPHA)
    for (algorithm, epsilon), group in raw.groupby(["algorithm", raw["epsilon"].fillna(-1)]):
        ax = panel_of(figure, algorithm, math.nan if epsilon == -1 else epsilon)
        heights = [sum(bar.get_height() for bar in part) for part in ax.containers]
        kept = group[~group["pruned"]]
        assert heights == [group["pruned"].sum(), (kept["true_pvalue"] >= ALPHA).sum(),
                           (kept["true_pvalue"] < ALPHA).sum()]
        # each bar of a part counts the rows in its bin
        significant = kept[kept["true_pvalue"] < ALPHA]["true_jaccard"].to_numpy()
        counts, _ = np.histogram(significant, bins=np.linspace(0, 1, 21))
        assert [bar.get_height() for bar in ax.containers[2]] == list(counts)


def test_distributions_count_kept_values_per_method_and_errors_only_for_private(tmp_path) -> None:
    out = build_synthetic(tmp_path / "exp", np.random.default_rng(5))
    frame = read_experiment(out).redescriptions
    raw = pd.read_csv(out / "redescriptions.csv")
    kept = raw[~raw["pruned"]]
    labels = [t.get_text() for t in distribution_figure(frame, "true_jaccard").axes[0].get_yticklabels()]
    for algorithm, epsilon in {(a, e) for a, e in zip(raw["algorithm"], raw["epsilon"])}:
        mine = kept[(kept["algorithm"] == algorithm)
                    & (kept["epsilon"].isna() if pd.isna(epsilon) else kept["epsilon"] == epsilon)]
        assert f"{method_label(algorithm, epsilon)}\nn = {len(mine)}" in labels
    error_labels = [t.get_text() for t in distribution_figure(frame, "abs_error_jaccard").axes[0].get_yticklabels()]
    assert not any("non-private" in label for label in error_labels)
    assert len(error_labels) == raw.loc[raw["epsilon"].notna(), ["algorithm", "epsilon"]].drop_duplicates().shape[0]


def test_runtime_plots_finished_runs_and_their_median_per_size(tmp_path) -> None:
    rng = np.random.default_rng(6)
    small = build_synthetic(tmp_path / "k1", rng, rows=1000)
    large = build_synthetic(tmp_path / "k4", rng, rows=4000)
    experiment = read_experiment([small, large])
    figure = runtime_figure(experiment.runs)
    ax = figure.axes[0]
    runs = pd.concat([pd.read_csv(small / "runs.csv"), pd.read_csv(large / "runs.csv")])
    finished = runs[runs["status"] == "ok"]
    assert sum(len(c.get_offsets()) for c in ax.collections) == len(finished)
    for line in ax.get_lines():
        algorithm = line.get_label().split(" (")[0]
        medians = finished[finished["algorithm"] == algorithm].groupby("rows")["seconds"].median()
        assert list(line.get_xdata()) == list(medians.index) and np.allclose(line.get_ydata(), medians.to_numpy())
    assert ax.get_xscale() == "linear"  # sizes within a factor of ten


def test_no_figure_without_data(tmp_path) -> None:
    out = build_synthetic(tmp_path / "exp", np.random.default_rng(7))
    frame = pd.read_csv(out / "redescriptions.csv")
    frame["pruned"] = True  # nothing kept: no distributions
    frame.to_csv(out / "redescriptions.csv", index=False)
    runs = pd.read_csv(out / "runs.csv").drop(columns=["rows"])
    runs["kept"] = 0  # as the redescriptions say
    runs.to_csv(out / "runs.csv", index=False)
    figures = build_figures(read_experiment(out))
    assert [name for name, f in figures.items() if f is None] == ["box_true_jaccard", "box_abs_error_jaccard",
                                                                  "runtime"]
    report = write_experiment_report(out)
    assert sorted(p.name for p in (out / "figures").iterdir()) == sorted(
        f"{n}.{x}" for n in ("scatter_jaccard", "histogram_true_jaccard") for x in ("png", "svg"))
    page = parse(report)
    assert sorted(page.missing_figures) == ["box_abs_error_jaccard", "box_true_jaccard", "runtime"]
    assert "runs.csv has no 'rows' column" in "".join(page.text)


@pytest.fixture(scope="module")
def real_report(real_dir, tmp_path_factory) -> Path:
    """The report of the real experiment, written once (figures beside it)."""
    output = tmp_path_factory.mktemp("report") / "report.html"
    assert write_experiment_report(real_dir, output) == output
    return output


def _rounded(svg: bytes) -> bytes:
    """SVG text with every decimal number rounded to 3 places."""
    return re.sub(rb"\d+\.\d+", lambda m: b"%.3f" % float(m.group(0)), svg)


def test_figures_are_written_as_png_and_svg_deterministically(real_dir, real_report) -> None:
    from dprm.evaluation.figures import render_figure

    folder = real_report.parent / "figures"
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{name}.{fmt}" for name in FIGURE_NAMES
                                                              for fmt in ("png", "svg"))
    assert (folder / "scatter_jaccard.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # drawn again from the tables: byte-identical files
    again = histogram_figure(read_experiment(real_dir).redescriptions, alpha=ALPHA)
    # the same drawing; text positions may differ in the 6th decimal (layout state)
    assert _rounded(render_figure(again, "svg")) == _rounded((folder / "histogram_true_jaccard.svg").read_bytes())
    assert render_figure(again, "png") == (folder / "histogram_true_jaccard.png").read_bytes()


def test_write_figures_returns_the_files_it_wrote(tmp_path) -> None:
    out = build_synthetic(tmp_path / "exp", np.random.default_rng(10), methods=(("alpha-miner", 1.0),))
    written = write_figures(out)
    assert written == [out / "figures" / f"{name}.{fmt}" for name in FIGURE_NAMES for fmt in ("png", "svg")]
    assert all(p.stat().st_size > 0 for p in written)


# ------------------------------------------------------------------ experiment report


def test_experiment_report_embeds_every_figure_and_matches_the_tables(real_dir, real_report) -> None:
    output = real_report
    tmp_path = output.parent
    page = parse(output)
    assert_offline(output, page)
    # every figure embedded, the same PNG as the file written beside the report
    assert set(page.images) == set(FIGURE_NAMES)
    for name, src in page.images.items():
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]) == (tmp_path / "figures" / f"{name}.png").read_bytes()
    # the summary: one row per method; kept counts recomputed from the CSV independently
    raw = pd.read_csv(real_dir / "redescriptions.csv")
    runs = pd.read_csv(real_dir / "runs.csv")
    rows = page.tables["summary"]
    assert len(rows) == len(runs[["algorithm", "epsilon"]].drop_duplicates())
    for row in rows:
        algorithm, budget = row[0], row[1]
        epsilon = math.nan if budget == "non-private" else float(budget.split("= ")[1])
        mine = raw[(raw["algorithm"] == algorithm)
                   & (raw["epsilon"].isna() if math.isnan(epsilon) else raw["epsilon"] == epsilon)]
        their_runs = runs[(runs["algorithm"] == algorithm)
                          & (runs["epsilon"].isna() if math.isnan(epsilon) else runs["epsilon"] == epsilon)]
        assert int(row[2]) == len(their_runs)
        assert int(row[5].replace(",", "")) == len(mine)
        assert int(row[6].replace(",", "")) == int((~mine["pruned"]).sum())
    # every run listed with its exact seed; the privacy table has one row per algorithm and budget
    assert len(page.tables["runs"]) == len(runs)
    assert sorted(row[3] for row in page.tables["runs"]) == sorted(str(s) for s in runs["seed"])
    assert len(page.tables["privacy"]) == len(runs[["algorithm", "epsilon"]].drop_duplicates())
    assert "pure-dp" in "".join(page.text) and "none" in [r[2] for r in page.tables["privacy"]]


def test_the_ledger_by_mechanism_visibly_adds_up_to_epsilon(real_dir, real_report) -> None:
    """Each mechanism's share is printed exactly (AltExpM at ε = 1 spends e.g. 0.63175 with the
    exponential mechanism, once printed 0.632 beside 0.0525, 0.045 and 0.271, which add up to
    1.0005): the printed shares add up to the printed total, which is the run's ε."""
    page = parse(real_report)
    checked = 0
    for row in page.tables["privacy"]:
        if row[5] == "0":  # cartwheels: no ledger
            continue
        shares = [Fraction(value) for value, _ in re.findall(r"ε (\S+) in (\d+) ×", row[7])]
        assert len(shares) >= 2, row
        assert sum(shares) == Fraction(row[6]) == Fraction(row[1]), row
        checked += 1
    assert checked == 2  # alt-expm at ε 1 and 0.5


def test_ledger_summary_sums_exactly_and_prints_what_it_sums() -> None:
    """Thirds and tenths as a document holds them (floats): exact per mechanism, shown exactly."""
    third = float(Fraction(1, 3))
    ledger = [{"step": "a", "mechanism": "m", "epsilon": third}, {"step": "b", "mechanism": "n", "epsilon": third},
              {"step": "c", "mechanism": "m", "epsilon": third},
              {"step": "d", "mechanism": "t", "epsilon": 0.1}, {"step": "e", "mechanism": "t", "epsilon": 0.2}]
    summary = ledger_summary(ledger)
    assert [(s["mechanism"], s["steps"], s["epsilon"], s["shown"]) for s in summary] == [
        ("m", 2, Fraction(2, 3), "2/3"), ("n", 1, Fraction(1, 3), "1/3"), ("t", 2, Fraction(3, 10), "0.3")]
    assert sum(s["epsilon"] for s in summary) == Fraction(13, 10)
    assert ledger_summary([{"mechanism": "m", "epsilon": "x"}])[0]["shown"] == "–"


def test_summary_figures_agree_with_summary_functions(tmp_path) -> None:
    from dprm.evaluation import summarise

    out = build_synthetic(tmp_path / "exp", np.random.default_rng(8))
    experiment = read_experiment(out)
    table = experiment_summary(experiment)
    raw = pd.read_csv(out / "redescriptions.csv")
    raw["epsilon"] = raw["epsilon"].fillna(-1)
    expected = summarise(raw, by=["algorithm", "epsilon"])
    for _, row in table.iterrows():
        epsilon = -1 if math.isnan(row["epsilon"]) else row["epsilon"]
        match = expected[(expected["algorithm"] == row["algorithm"]) & (expected["epsilon"] == epsilon)]
        if match.empty:
            assert row["returned"] == 0
            continue
        for column in ("median_true_jaccard", "share_significant", "spearman_rho", "median_abs_error_jaccard"):
            assert np.isclose(row[column], match.iloc[0][column], equal_nan=True), column
    runs = pd.read_csv(out / "runs.csv")
    beta = table[table["algorithm"] == "beta-miner"].iloc[0]
    assert beta["failed"] == 1
    finished = runs[(runs["algorithm"] == "beta-miner") & (runs["status"] == "ok")]
    assert beta["runs_with_results"] == (finished["kept"] >= 1).mean()


def test_several_directories_are_combined(tmp_path) -> None:
    rng = np.random.default_rng(9)
    first = build_synthetic(tmp_path / "size1", rng, rows=500)
    second = build_synthetic(tmp_path / "size2", rng, rows=8000)
    output = tmp_path / "both.html"
    write_experiment_report([first, second], output, figures=False)
    page = parse(output)
    runs = pd.concat([pd.read_csv(first / "runs.csv"), pd.read_csv(second / "runs.csv")])
    assert len(page.tables["runs"]) == len(runs)
    assert {row[0] for row in page.tables["summary"]} == {"size1", "size2"}  # experiment column first
    assert "runtime" in page.images
    assert not (tmp_path / "figures").exists()


# ------------------------------------------------------------------ run report


def hostile_document(tmp_path: Path) -> Path:
    """A document whose attribute names and categories are HTML."""
    name = '<script>alert("x")</script>'
    r = Redescription(BooleanLiteral(name), CategoricalLiteral("state", "<b>&amp;"),
                      RedescriptionStats.from_counts(10.4, 12.2, 8.9), pruned=False,
                      extra={"interval": {"confidence": 0.9, "jaccard": [0.3, 0.9]}})
    path = tmp_path / "hostile.json"
    write_document(make_document("demo", {"note": "<i>"}, {"epsilon": 1.0, "guarantee": "pure-dp",
                                                            "neighbouring": "add-remove-one-row", "private": True,
                                                            "reasons": [], "ledger": [
                                                                {"step": "counts", "epsilon": 1.0,
                                                                 "mechanism": "discrete-laplace count"}]}, [r]), path)
    return path


def test_run_report_escapes_every_text_from_files(tmp_path) -> None:
    output = write_run_report(hostile_document(tmp_path), tmp_path / "run.html")
    text = output.read_text(encoding="utf-8")
    assert '<script>alert("x")' not in text and "<b>&amp;" not in text
    page = parse(output)
    assert_offline(output, page)
    assert page.tags.count("script") == 1  # the page's own sorting script only
    assert '<script>alert("x")</script>' in "".join(page.text)
    assert "0.3" in page.tables["redescriptions"][0] and "0.9" in page.tables["redescriptions"][0]


def test_run_report_without_data_shows_released_values_only(real_dir, tmp_path) -> None:
    document = real_dir / "runs" / "alt-expm" / "1" / "0.json"
    doc = json.loads(document.read_text())
    output = write_run_report(document, tmp_path / "run.html")
    page = parse(output)
    assert_offline(output, page)
    rows = page.tables["redescriptions"]
    assert len(rows) == len(doc["redescriptions"])
    assert len(rows[0]) == 10  # no true-statistics columns (J, its interval, excess J, counts, p)
    assert "svg" not in page.tags
    assert [i for i in page.ids if i.startswith("r") and i[1:].isdigit()] == \
        [f"r{i}" for i, r in enumerate(doc["redescriptions"]) if not r["pruned"]] + \
        [f"r{i}" for i, r in enumerate(doc["redescriptions"]) if r["pruned"]]
    listed = [r for r in doc["redescriptions"] if not r["pruned"]] + [r for r in doc["redescriptions"] if r["pruned"]]
    assert [row[1] for row in rows] == sorted((row[1] for row in rows), key=lambda status: status == "pruned")
    for row, r in zip(rows, listed):  # kept first, then pruned, as dprm mine lists them
        assert row[1] == ("pruned" if r["pruned"] else "kept")
        assert row[2] == f"{r['noisy']['jaccard']:.3g}"
        if "interval" in r:
            assert row[3] == f"{r['interval']['jaccard'][0]:.3g}" or float(row[3]) == pytest.approx(
                r["interval"]["jaccard"][0], abs=1e-3)


def test_run_report_of_a_dummy_job_says_it_is_about_synthesised_rows(real_dir, tmp_path) -> None:
    """A server's dummy job (free, on rows drawn from the public schema) read as an ε-DP result of the data."""
    doc = json.loads((real_dir / "runs" / "alt-expm" / "1" / "0.json").read_text())
    doc["parameters"]["dummy"] = True
    (tmp_path / "dummy.json").write_text(json.dumps(doc))
    text = write_run_report(tmp_path / "dummy.json", tmp_path / "dummy.html").read_text()
    assert ('<p class="note"><b>Dummy data</b>: this run mined rows synthesised from the dataset\'s public schema '
            '(independent draws, no row of the data), so its results say nothing about the data.</p>') in text
    doc["parameters"]["dummy"] = False
    (tmp_path / "real.json").write_text(json.dumps(doc))
    assert "Dummy data" not in write_run_report(tmp_path / "real.json", tmp_path / "real.html").read_text()


def test_run_report_with_data_shows_true_statistics_and_support_bars(real_dir, tmp_path) -> None:
    _, data = planted_data()
    document = real_dir / "runs" / "alt-expm" / "1" / "0.json"
    output = write_run_report(document, tmp_path / "run.html", data, data_source="left.csv, right.csv")
    page = parse(output)
    truth = true_statistics(document, data)
    rows = page.tables["redescriptions"]
    assert len(rows[0]) == 16
    assert "Contains true statistics" in "".join(page.text)
    by_number = {int(row[0]): row for row in rows}
    for t in truth.itertuples():
        row = by_number[t.index]  # the report's number is the table's index (the document's position)
        assert int(row[11].replace(",", "")) == t.true_support_left
        assert int(row[13].replace(",", "")) == t.true_intersection
    # one bar per redescription; its counts are the true ones
    titles = [t for t in page.svg_titles if t.startswith("L only")]
    assert len(titles) == len(truth)
    expected = {f"L only {t.true_support_left - t.true_intersection}, L∩R {t.true_intersection}, "
                f"R only {t.true_support_right - t.true_intersection}, neither {data.n_rows - t.true_union}"
                for t in truth.itertuples()}
    assert set(titles) == expected


def test_run_report_numbers_redescriptions_as_the_experiment_table_indexes_them(real_dir, tmp_path) -> None:
    """The run report's ``#`` (table, cards, anchors) is ``redescriptions.csv``'s ``index``: the position in
    the document's list, from 0 (it numbered from 1, so #3 in the report was index 2 in the table)."""
    document = real_dir / "runs" / "alt-expm" / "1" / "0.json"
    page = parse(write_run_report(document, tmp_path / "run.html"))
    table = pd.read_csv(real_dir / "redescriptions.csv")
    table = table[(table["algorithm"] == "alt-expm") & (table["epsilon"] == 1.0) & (table["run"] == 0)]
    assert len(table) >= 2
    by_number = {int(row[0]): row for row in page.tables["redescriptions"]}
    assert sorted(by_number) == sorted(table["index"]) == list(range(len(table)))
    for row in table.itertuples():
        shown = by_number[row.index]
        assert shown[1] == ("pruned" if row.pruned else "kept")
        assert float(shown[2]) == pytest.approx(row.noisy_jaccard, rel=1e-2, abs=1e-3)
    assert "r0" in page.ids
    headings = [t for t in page.text if re.match(r"#\d+: J = ", t)]
    assert sorted(int(t[1:].split(":")[0]) for t in headings) == list(range(len(table)))


def test_run_report_ledger_entries_visibly_add_up_to_the_total(real_dir, tmp_path) -> None:
    document = real_dir / "runs" / "alt-expm" / "1" / "0.json"
    page = parse(write_run_report(document, tmp_path / "run.html"))
    entries = [Fraction(row[2].split(" (≈")[0]) for row in page.tables["ledger"]]
    assert len(entries) >= 4 and Fraction("0.005625") in entries  # printed 0.00562 before
    for row, entry in zip(page.tables["ledger"], entries):  # a long fraction is followed by its rounded value
        assert (" (≈" in row[2]) == (entry.denominator > 1000 and "." not in row[2].split(" ")[0])
    total = re.search(r"releases, ε (\S+) in all", "".join(page.text)).group(1)
    assert sum(entries) == Fraction(total) == 1


def test_run_report_refuses_a_file_not_following_the_spec(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "dprm.redescriptions/1", "algorithm": "x"}))
    output = tmp_path / "out.html"
    output.write_text("old")
    with pytest.raises(DprmError, match="missing key 'parameters'"):
        write_run_report(bad, output)
    assert output.read_text() == "old"


def test_run_report_shows_each_excess_over_independence_with_its_interval(real_dir, tmp_path) -> None:
    document = real_dir / "runs" / "alt-expm" / "1" / "0.json"
    doc = json.loads(document.read_text())
    text = write_run_report(document, tmp_path / "run.html").read_text()
    shown = re.findall(r"Excess over independence (-?[0-9.]+) \[(-?[0-9.]+), (-?[0-9.]+)\]", text)
    expected = [r["independence"] for r in doc["redescriptions"] if "excess_interval" in r["independence"]]
    assert shown and len(shown) == len(expected)
    assert sorted(float(x) for x, _, _ in shown) == pytest.approx(sorted(e["excess"] for e in expected), abs=1e-3)


def test_run_report_names_the_document_of_a_query_the_data_cannot_answer(real_dir, tmp_path) -> None:
    _, data = planted_data()
    document = json.loads((real_dir / "runs" / "alt-expm" / "1" / "0.json").read_text())
    document["redescriptions"][0]["left"] = {"attr": "no_such_column", "eq": True}
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document))
    with pytest.raises(DprmError) as info:
        write_run_report(edited, tmp_path / "run.html", data)
    message = str(info.value)
    assert message.startswith(f"{edited}: redescriptions[0].left: ") and "'no_such_column'" in message
    assert not (tmp_path / "run.html").exists()


@pytest.mark.parametrize("epsilon", [1e308, 20_000, 10**400])
def test_run_report_refuses_a_private_epsilon_outside_the_budgets_dprm_takes(real_dir, tmp_path, epsilon) -> None:
    """privacy.epsilon 1e308 was shown as a private run (the miners take 0.0001 to 10,000)."""
    document = json.loads((real_dir / "runs" / "alt-expm" / "1" / "0.json").read_text())
    document["privacy"]["epsilon"] = document["parameters"]["epsilon"] = epsilon
    document["privacy"]["ledger"] = [{"step": "everything", "mechanism": "discrete-laplace count", "epsilon": epsilon}]
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document))
    code, err = run_cli(["report", "--run", edited, "--output", tmp_path / "run.html", "--no-figures"])
    assert code == 2 and err.count("\n") == 1
    if epsilon == 10**400:  # the spec's own check: not a finite number
        assert f"{edited}: privacy.epsilon must be a finite number >= 0" in err
    else:
        assert f"{edited}: privacy.epsilon must be between 0.0001 and 10000" in err and f"not {epsilon:g}" in err
    assert not (tmp_path / "run.html").exists()


# ------------------------------------------------------------------ command line


def run_cli(args: list) -> tuple[int, str]:
    import contextlib
    import io

    err = io.StringIO()
    code = 0
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            main([str(a) for a in args])
        except SystemExit as done:
            code = 0 if done.code is None else done.code
    return code, err.getvalue()


def test_cli_report_of_an_experiment_and_of_a_run(real_dir, tmp_path) -> None:
    output = tmp_path / "exp.html"
    assert run_cli(["report", real_dir, "--output", output, "--no-figures"]) == (0, "")
    assert set(parse(output).images) == set(FIGURE_NAMES)
    assert not (tmp_path / "figures").exists()
    planted, _ = planted_data()
    left, right = tmp_path / "left.csv", tmp_path / "right.csv"
    planted.left.to_csv(left, index=False)
    planted.right.to_csv(right, index=False)
    types = tmp_path / "types.json"
    types.write_text(json.dumps(planted.types))
    document = real_dir / "runs" / "cartwheels" / "none" / "0.json"
    run_html = tmp_path / "run.html"
    code, err = run_cli(["report", "--run", document, "--data", left, right, "--types", types, "-o", run_html])
    assert (code, err) == (0, "")
    doc = json.loads(document.read_text())
    rows = parse(run_html).tables["redescriptions"]
    assert len(rows) == len(doc["redescriptions"]) and all(len(row) == 16 for row in rows)  # with true statistics


@pytest.mark.parametrize("args,fragment", [
    (["report"], "give experiment directories"),
    (["report", "{tmp}/absent"], "no such directory"),
    (["report", "{tmp}"], "redescriptions.csv: not found"),
    (["report", "--run", "{tmp}/absent.json"], "no such file"),
    (["report", "--run", "{tmp}/bad.json"], "missing key"),
    (["report", "{real}", "--types", "t.json"], "--types applies only with --run"),
    (["report", "{real}", "--run", "{tmp}/bad.json"], "not both"),
    (["report", "--run", "{tmp}/bad.json", "--types", "t.json"], "only with --data"),
    (["report", "{real}", "--output", "{tmp}/absent/r.html"], "does not exist"),
    (["report", "{real}", "{real}/", "--output", "{tmp}/r.html"], "given twice"),  # its runs counted twice
    (["report", "{real}", "--output", "{real}/experiment.json"], "is an input of this command"),  # was replaced
    (["report", "--run", "{tmp}/bad.json", "--output", "{tmp}/bad.json"], "is an input of this command"),
])
def test_cli_errors_are_one_line_and_write_nothing(real_dir, tmp_path, args, fragment) -> None:
    (tmp_path / "bad.json").write_text("{}")
    before = sorted(p.name for p in tmp_path.iterdir())
    code, err = run_cli([a.format(tmp=tmp_path, real=real_dir) for a in args])
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_an_experiment_without_any_redescription_still_has_a_report(tmp_path) -> None:
    out = build_synthetic(tmp_path / "exp", np.random.default_rng(11))
    header = (out / "redescriptions.csv").read_text().splitlines()[0]
    (out / "redescriptions.csv").write_text(header + "\n")
    runs = pd.read_csv(out / "runs.csv")
    runs[["returned", "kept"]] = 0  # no run returned any
    runs.to_csv(out / "runs.csv", index=False)
    page = parse(write_experiment_report(out, figures=False))
    assert list(page.images) == ["runtime"]
    assert sorted(page.missing_figures) == sorted(set(FIGURE_NAMES) - {"runtime"})
    runs = pd.read_csv(out / "runs.csv")
    assert len(page.tables["summary"]) == len(runs[["algorithm", "epsilon"]].drop_duplicates())
    assert all(row[5] == "0" and row[6] == "0" for row in page.tables["summary"])  # returned, kept


def test_a_bad_alpha_in_the_manifest_is_refused(tmp_path) -> None:
    from dprm.errors import DataError
    from dprm.evaluation.figures import Experiment, experiment_alpha

    for value in (5, "abc", 0, True):
        with pytest.raises(DataError, match=r"alpha is .*, expected a number in \(0, 1\)"):
            experiment_alpha(Experiment([], pd.DataFrame(), pd.DataFrame(), [{"alpha": value}]))  # was 0.01
    assert experiment_alpha(Experiment([], pd.DataFrame(), pd.DataFrame(), [{}])) == 0.01


def _edit_manifest(edit):
    def apply(text: str) -> str:
        manifest = json.loads(text)
        edit(manifest)
        return json.dumps(manifest)
    return apply


@pytest.mark.parametrize("change, fragment", [
    (lambda text: text[:-5], "experiment.json: cannot read the experiment manifest (not valid JSON"),
    (lambda text: text.replace('"seed": 0', '"seed": NaN'), "NaN is not allowed"),
    (lambda text: text.replace('"seed": 0', '"seed": 0, "seed": 0'), "seed"),  # a key twice
    (lambda text: text.replace('"format": "dprm.experiment/1"', '"format": "x"'), "not a dprm experiment manifest"),
    (_edit_manifest(lambda m: m.pop("data")), "experiment.json: data is missing"),
    (_edit_manifest(lambda m: m.pop("algorithms")), "experiment.json: algorithms is missing"),
    (_edit_manifest(lambda m: m.update(algorithms="alt-expm")), "experiment.json: algorithms must be a non-empty list"),
    (_edit_manifest(lambda m: m.update(algorithms=["alt-expm", "../x"])), "experiment.json: algorithms[1] must be"),
    (_edit_manifest(lambda m: m.update(seed="0")), "experiment.json: seed must be a whole number"),
    (_edit_manifest(lambda m: m.update(seed=-1)), "experiment.json: seed must be a whole number"),
    (_edit_manifest(lambda m: m.update(alpha=5)), "experiment.json: alpha must be a number in (0, 1), not 5"),
    (_edit_manifest(lambda m: m.update(budgets="1x")), "experiment.json: budgets"),
    (_edit_manifest(lambda m: m.update(parameters=[])), "experiment.json: parameters must be a JSON object"),
    (_edit_manifest(lambda m: m.update(noise=3)), "experiment.json: noise must be a text"),
    # consistent in itself, not with the tables
    (_edit_manifest(lambda m: m.update(algorithms=["alt-expm"])),
     "runs.csv: row 1 is run 0 of cartwheels at ε none, which"),
    (_edit_manifest(lambda m: m.update(budgets="1x1,0.5x1")), "runs.csv: row 3 is run 1 of alt-expm at ε 1, which"),
    (_edit_manifest(lambda m: m.update(budgets="1x2,0.5x2")),
     "runs.csv: has no row for run 1 of alt-expm at ε 0.5, which"),
    (_edit_manifest(lambda m: m.update(seed=1)), "runs.csv: column 'seed' holds"),
])
def test_a_damaged_or_edited_manifest_is_one_line_naming_file_and_field(real_dir, tmp_path, change,
                                                                          fragment) -> None:
    """experiment.json was read with json.loads and trusted: NaN, a key twice, a wrong type or a manifest
    that is not the tables' experiment went into the report."""
    out = tmp_path / "exp"
    shutil.copytree(real_dir, out, ignore=shutil.ignore_patterns("*.html", "figures"))
    manifest = out / "experiment.json"
    manifest.write_text(change(manifest.read_text()))
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    code, err = run_cli(["report", out])
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {out}/") and fragment in lines[0], err
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before  # no report, no figures


@pytest.mark.parametrize("edit, fragment", [
    (lambda runs, reds: (runs.assign(returned=runs["returned"] + 1), reds), "column 'returned' holds"),
    (lambda runs, reds: (runs.assign(kept=runs["returned"]), reds.assign(pruned=True)), "column 'kept' holds"),
    (lambda runs, reds: (runs[runs["algorithm"] != "cartwheels"], reds),
     "redescriptions.csv: row 1 is a redescription of run 0 of cartwheels at ε none, which"),
])
def test_tables_that_disagree_on_the_runs_are_refused(real_dir, tmp_path, edit, fragment) -> None:
    """A run's returned and kept redescriptions are its rows of redescriptions.csv (the summary counted both)."""
    out = tmp_path / "exp"
    shutil.copytree(real_dir, out, ignore=shutil.ignore_patterns("*.html", "figures"))
    (out / "experiment.json").unlink()  # the tables alone: checked against each other
    runs, reds = edit(pd.read_csv(out / "runs.csv"), pd.read_csv(out / "redescriptions.csv"))
    runs.to_csv(out / "runs.csv", index=False)
    reds.to_csv(out / "redescriptions.csv", index=False)
    with pytest.raises(DataError, match=re.escape(fragment)):
        read_experiment(out)


def test_an_unchanged_manifest_is_read_as_written(real_dir) -> None:
    experiment = read_experiment(real_dir)
    assert experiment.metadata == [json.loads((real_dir / "experiment.json").read_text())]
    assert read_experiment(real_dir).metadata[0]["algorithms"] == ["cartwheels", "alt-expm"]


# ------------------------------------------------------------------ privacy table: which document


def _mark_failed(out: Path, algorithm: str, epsilon: float, run: int, *, keep_document: bool = False) -> None:
    """Record run ``run`` of ``algorithm`` at ``epsilon`` as failed, as ``dprm evaluate`` writes a failed run.

    Its rows leave the tables and its ``runs.csv`` row says ``failed``; the folder gets
    its ``RUN.failed.json``, and loses its document unless ``keep_document`` (a run
    redone and finished after the tables were written, by a resume interrupted before
    it wrote them again).
    """
    runs, reds = pd.read_csv(out / "runs.csv"), pd.read_csv(out / "redescriptions.csv")
    this = (runs["algorithm"] == algorithm) & (runs["epsilon"] == epsilon) & (runs["run"] == run)
    runs.loc[this, ["returned", "kept"]] = np.nan
    runs["status"], runs["message"] = runs["status"].astype(object), runs["message"].astype(object)
    runs.loc[this, "status"], runs.loc[this, "message"] = "failed", "MemoryError"
    gone = (reds["algorithm"] == algorithm) & (reds["epsilon"] == epsilon) & (reds["run"] == run)
    runs.to_csv(out / "runs.csv", index=False)
    reds[~gone].to_csv(out / "redescriptions.csv", index=False)
    folder = out / "runs" / algorithm / epsilon_label(epsilon)
    (folder / f"{run}.failed.json").write_text(json.dumps({"status": "failed", "message": "MemoryError"}))
    if not keep_document:
        (folder / f"{run}.json").unlink()


def _privacy_rows(out: Path) -> tuple[list[list[str]], str]:
    assert write_experiment_report(out, out / "report.html", figures=False) == out / "report.html"
    page = parse(out / "report.html")
    return page.tables["privacy"], " ".join(" ".join(page.text).split())


def test_privacy_table_says_a_method_without_a_finished_run_has_no_document(real_dir, tmp_path) -> None:
    """Each run of alt-expm at ε 0.5 failed: its folder holds 0.failed.json only. The page read that
    file as the method's document and said it could not ("missing key 'format'"), as if a document
    were damaged; now it says the method has no finished run."""
    out = tmp_path / "exp"
    shutil.copytree(real_dir, out, ignore=shutil.ignore_patterns("*.html", "figures"))
    _mark_failed(out, "alt-expm", 0.5, 0)
    rows, text = _privacy_rows(out)
    assert [(r[0], r[1]) for r in rows] == [("cartwheels", "–"), ("alt-expm", "1")]
    assert "Could not read a run document" not in text and "failed.json" not in text
    assert "No run document: " in text and "alt-expm, ε = 0.5: no finished run (1 in runs.csv, none finished)" in text


def test_privacy_table_reads_the_first_run_the_tables_count(real_dir, tmp_path) -> None:
    """Run 0 of alt-expm at ε 1 is failed in the tables, but its folder holds a 0.json (a resume
    interrupted after the run finished, before the tables were written again). The page showed that
    document, of a run the tables do not count; now the first finished run's, 1.json."""
    out = tmp_path / "exp"
    shutil.copytree(real_dir, out, ignore=shutil.ignore_patterns("*.html", "figures"))
    _mark_failed(out, "alt-expm", 1.0, 0, keep_document=True)
    rows, text = _privacy_rows(out)
    assert [(r[0], r[1], r[-1]) for r in rows] == [
        ("cartwheels", "–", "runs/cartwheels/none/0.json"), ("alt-expm", "1", "runs/alt-expm/1/1.json"),
        ("alt-expm", "0.5", "runs/alt-expm/0.5/0.json")]
    assert "Could not read" not in text and "No run document" not in text


def test_privacy_table_refuses_a_document_of_another_budget_in_a_budgets_folder(real_dir, tmp_path) -> None:
    """A run at ε 0.5 copied into runs/alt-expm/1/: the page listed ε 0.5 twice and ε 1 not at all;
    now the document is named as another budget's and left out."""
    out = tmp_path / "exp"
    shutil.copytree(real_dir, out, ignore=shutil.ignore_patterns("*.html", "figures"))
    shutil.copyfile(out / "runs/alt-expm/0.5/0.json", out / "runs/alt-expm/1/0.json")
    rows, text = _privacy_rows(out)
    assert [(r[0], r[1]) for r in rows] == [("cartwheels", "–"), ("alt-expm", "0.5")]
    assert ("runs/alt-expm/1/0.json: the run's budget (privacy.epsilon 0.5) is not its folder's epsilon 1 "
            "(a run of another budget)") in text


# ------------------------------------------------------------------ the report and its figures: all or none


def _tree(path: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry under ``path`` (hidden ones too): a file's inode and bytes, a folder's inode."""
    return {str(p.relative_to(path)): (p.stat().st_ino, p.read_bytes() if p.is_file() else b"")
            for p in sorted(path.rglob("*"))}


def test_a_report_rewritten_without_a_figure_leaves_no_earlier_figure_beside_it(tmp_path) -> None:
    """A report written where an earlier one was, of an experiment without private methods (no error figure),
    left the earlier report's box_abs_error_jaccard.png and .svg in figures/ beside it: a folder that was a
    mix of two reports. Now figures/ holds the new report's figures only; other files stay."""
    private = build_synthetic(tmp_path / "private", np.random.default_rng(1))
    baseline = build_synthetic(tmp_path / "baseline", np.random.default_rng(2), methods=(("baseline", None),))
    out = tmp_path / "out"
    out.mkdir()
    write_experiment_report(private, out / "report.html")
    (out / "figures" / "notes.txt").write_text("mine")
    assert {"box_abs_error_jaccard.png", "box_abs_error_jaccard.svg"} <= {p.name for p in (out / "figures").iterdir()}
    write_experiment_report(baseline, out / "report.html")
    embedded = set(parse(out / "report.html").images)
    assert "box_abs_error_jaccard" not in embedded
    assert sorted(p.name for p in (out / "figures").iterdir()) == sorted(
        [f"{name}.{fmt}" for name in embedded for fmt in ("png", "svg")] + ["notes.txt"])


#: Run in the child before dprm: the second file written under WAIT_UNDER waits in its flush to disk,
#: after the child says READY, for the test's signal.
_WAIT_IN_SECOND_FLUSH = """
import os, sys, time
flushes, fsync = [], os.fsync
def waiting_fsync(fd):
    if os.readlink(f"/proc/self/fd/{fd}").startswith(os.environ["WAIT_UNDER"]):
        flushes.append(fd)
        if len(flushes) == 2:
            print("READY", flush=True)
            time.sleep(120)
    return fsync(fd)
os.fsync = waiting_fsync
from dprm.cli import main
sys.argv[0] = "dprm"
main(sys.argv[1:])
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_report_stopped_while_it_writes_leaves_the_earlier_report_and_figures_whole(real_dir, tmp_path,
                                                                                      sig) -> None:
    """``dprm report DIR`` rerun and stopped once its first figure file was written: Ctrl-C left that figure
    replaced beside the earlier report and the earlier figures (a mix), SIGTERM killed it at once (exit -15,
    no word) with a temporary file left in figures/ too. Now the report and its figures are written all or
    none, SIGTERM ends the command as Ctrl-C does: one line ``interrupted``, exit 130, the folder as it was."""
    out = tmp_path / "exp"
    shutil.copytree(real_dir, out, ignore=shutil.ignore_patterns("*.html", "figures"))
    write_experiment_report(out)
    before = _tree(out)
    process = subprocess.Popen([sys.executable, "-c", _WAIT_IN_SECOND_FLUSH, "report", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, PYTHONUNBUFFERED="1", WAIT_UNDER=str(out)),
                               # SIGINT as a terminal gives it (a test run in the background ignores it)
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        line = process.stdout.readline()
        assert line == "READY\n", (line, process.communicate(timeout=30))
        process.send_signal(sig)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert (process.returncode, err) == (130, "interrupted\n")
    assert _tree(out) == before
