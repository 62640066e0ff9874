"""The DP tree comparison harness (:mod:`dprm.evaluation.classification`).

What is tested
--------------
* loading: ``?`` and empty cells are missing, the schema (categories, classes,
  nullable columns) comes from the whole file, bad files and targets are refused;
* the one-hot encoding of the public schema (diffprivlib's and CART's input);
* the protocol: every method sees the same stratified folds; a cell's result depends
  on the master seed and the cell only (not on the other cells); embedding depths
  larger than the maximum depth are skipped, ``whole`` follows the depth; a refused
  configuration is a ``refused`` row, not a crash; the table has its columns and
  sensible values (CART beats chance on a learnable target);
* outputs: CSV/JSON agree with the table, every figure is a PNG, the report holds
  the table and the figures.

Small synthetic data and few folds: each test takes well under a second or two.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprm.errors import DataError, ParameterError
from dprm.evaluation.classification import (
    TABLE_COLUMNS,
    WHOLE,
    ClassificationResult,
    Dataset,
    GridConfig,
    Method,
    Schema,
    dataset_name,
    default_methods,
    diffprivlib_method,
    dprm_tree_method,
    fold_splits,
    load_dataset,
    one_hot,
    output_names,
    parse_embedding_depths,
    render_outputs,
    resolve_dataset,
    run_comparison,
    sklearn_cart_method,
)

UCI = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci"


def toy(n: int = 120, seed: int = 0, name: str = "toy") -> Dataset:
    """Three categorical features; the class is a function of the first (plus 10% label noise)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f: rng.choice(["a", "b", "c"], n).astype(object) for f in ("f0", "f1", "f2")})
    X.loc[rng.random(n) < 0.1, "f2"] = np.nan
    y = np.where(X["f0"] == "a", "yes", "no")
    flip = rng.random(n) < 0.1
    y[flip] = np.where(y[flip] == "yes", "no", "yes")
    schema = Schema({f: ["a", "b", "c"] for f in X.columns}, ["no", "yes"], nullable=("f2",))
    return Dataset(name, X, y.astype(str), schema)


def write_csv(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- loading ---------------------------------------------------------------------------------------


def test_load_dataset_missing_values_and_schema(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "d.csv", "label,a,b\nyes,x,?\nno,y,\nyes,z,u\n")
    data = load_dataset(path, "label")
    assert data.name == "d" and data.n_rows == 3
    assert data.schema.categories == {"a": ["x", "y", "z"], "b": ["u"]}
    assert data.schema.classes == ["no", "yes"]
    assert data.schema.nullable == ("b",)
    assert data.X["b"].isna().tolist() == [True, True, False]
    assert data.y.tolist() == ["yes", "no", "yes"]


@pytest.mark.parametrize("text, target, fragment", [
    ("label,a\nyes,x\nyes,y\n", "label", "only one class"),
    ("label,a\nyes,x\nno,y\n", "klass", "no target column 'klass'"),
    ("label,a\n?,x\nno,y\nyes,y\n", "label", "missing values"),
])
def test_load_dataset_refuses(tmp_path: Path, text: str, target: str, fragment: str) -> None:
    path = write_csv(tmp_path / "d.csv", text)
    with pytest.raises(DataError, match=fragment):
        load_dataset(path, target)


def test_resolve_dataset_names_and_files(tmp_path: Path) -> None:
    write_csv(tmp_path / "vote.csv", "class,a\nd,y\nr,n\n")
    assert resolve_dataset("vote", tmp_path).schema.classes == ["d", "r"]
    path = write_csv(tmp_path / "other.csv", "t,a\np,y\nq,n\n")
    assert resolve_dataset(f"{path}:t", tmp_path).name == "other"
    assert dataset_name(f"{path}:t") == "other" and dataset_name("mushroom") == "mushroom"
    with pytest.raises(ParameterError, match="unknown dataset"):
        resolve_dataset("nosuch", tmp_path)
    with pytest.raises(DataError, match="no such file"):
        resolve_dataset("mushroom", tmp_path)


@pytest.mark.skipif(not UCI.exists(), reason="shared UCI data not present")
def test_uci_files_load_with_their_schema() -> None:
    vote = resolve_dataset("vote", UCI)
    assert vote.X.shape == (435, 16) and vote.schema.classes == ["democrat", "republican"]
    assert all(c == ["n", "y"] for c in vote.schema.categories.values())
    mushroom = resolve_dataset("mushroom", UCI)
    assert mushroom.schema.nullable == ("stalk-root",)
    # 22 features, 116 categories plus one missing column: the diffprivlib encoding's width
    assert one_hot(mushroom.X.head(3), mushroom.schema).shape == (3, 117)


# -- encoding and methods ----------------------------------------------------------------------------


def test_one_hot_uses_the_schema_only() -> None:
    schema = Schema({"a": ["x", "y"], "b": ["u", "v"]}, ["p", "q"], nullable=("b",))
    X = pd.DataFrame({"a": ["y", "x", "unknown"], "b": ["v", np.nan, "u"]})
    encoded = one_hot(X, schema)
    assert encoded.tolist() == [[0, 1, 0, 1, 0], [1, 0, 0, 0, 1], [0, 0, 1, 0, 0]]
    # the same rows alone give the same encoding (nothing is learnt from the data)
    assert one_hot(X.iloc[[2]], schema).tolist() == [encoded[2].tolist()]


def test_parse_embedding_depths() -> None:
    assert parse_embedding_depths("1,2,whole") == [1, 2, WHOLE]
    for bad in ("0", "x", ""):
        with pytest.raises(ParameterError):
            parse_embedding_depths(bad)


def test_default_methods_names_and_kinds() -> None:
    methods, notes = default_methods([1, WHOLE], ["dprm", "paper"])
    names = [m.name for m in methods]
    assert names[:4] == ["dprm d=1", "dprm d=whole", "paper d=1", "paper d=whole"]
    assert "sklearn CART" in names
    assert ("diffprivlib" in names) == (diffprivlib_method() is not None)
    assert ("diffprivlib" in names) != bool(notes)
    assert [m.private for m in methods if m.name == "sklearn CART"] == [False]


def test_method_applies_by_embedding_depth() -> None:
    assert not dprm_tree_method(3).applies(2) and dprm_tree_method(3).applies(3)
    assert dprm_tree_method(WHOLE).applies(1) and dprm_tree_method(WHOLE).embedding_at(7) == 7.0
    assert np.isnan(sklearn_cart_method().embedding_at(4))


def test_diffprivlib_factory_declares_bounds_and_classes() -> None:
    method = diffprivlib_method()
    if method is None:
        pytest.skip("diffprivlib not installed")
    data = toy()
    model = method.factory(1.0, 3, 0, data.schema)
    tree = model.steps[-1][1]
    width = one_hot(data.X.head(1), data.schema).shape[1]
    assert tree.bounds[0].tolist() == [0.0] * width and tree.bounds[1].tolist() == [1.0] * width
    assert list(tree.classes) == ["no", "yes"]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither a PrivacyLeakWarning nor any other
        model.fit(data.X, data.y)


# -- the protocol --------------------------------------------------------------------------------------


def test_fold_splits_are_stratified_partitions() -> None:
    y = np.array(["a"] * 30 + ["b"] * 10)
    splits = fold_splits(y, 5, 2, seed=3)
    assert len(splits) == 2
    for folds in splits:
        tests = np.concatenate([test for _, test in folds])
        assert sorted(tests.tolist()) == list(range(40))
        assert all((y[test] == "b").sum() == 2 for _, test in folds)
    assert not np.array_equal(splits[0][0][1], splits[1][0][1])  # the repeats reshuffle
    again = fold_splits(y, 5, 2, seed=3)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(splits[1], again[1]))
    with pytest.raises(DataError, match="fewer rows"):
        fold_splits(y, 11, 1, seed=0)


class Recorder:
    """A method whose classifiers record the training rows they saw and the seed they got."""

    def __init__(self) -> None:
        self.seen: list[tuple[int | None, tuple[int, ...]]] = []

    def method(self, name: str = "recorder") -> Method:
        from sklearn.dummy import DummyClassifier

        recorder = self

        class Recording(DummyClassifier):
            def fit(self, X, y, sample_weight=None):  # noqa: ANN001
                recorder.seen.append((self.random_state, tuple(X.index)))
                return super().fit(X, y)

        return Method(name, lambda e, d, r, s: Recording(strategy="most_frequent", random_state=r))


def test_every_method_sees_the_same_folds_and_seeds_depend_on_the_cell() -> None:
    data = toy()
    first, second = Recorder(), Recorder()
    config = GridConfig([data], [first.method("m1"), second.method("m2")], epsilons=[1.0], depths=[2],
                        folds=3, repeats=2, seed=5)
    run_comparison(config)
    assert [rows for _, rows in first.seen] == [rows for _, rows in second.seen]
    assert len(first.seen) == 6
    seeds = [seed for seed, _ in first.seen]
    assert len(set(seeds)) == 6  # one seed per fit
    assert seeds != [seed for seed, _ in second.seen]  # and per method


def test_a_cell_does_not_depend_on_the_rest_of_the_grid() -> None:
    data = toy()
    small = run_comparison(GridConfig([data], [dprm_tree_method(1)], epsilons=[1.0], depths=[2], folds=3,
                                      repeats=1, seed=11)).table
    large = run_comparison(GridConfig([data], [sklearn_cart_method(), dprm_tree_method(1)], epsilons=[0.5, 1.0],
                                      depths=[1, 2], folds=3, repeats=1, seed=11)).table
    cell = large[(large["method"] == "dprm d=1") & (large["epsilon"] == 1.0) & (large["max_depth"] == 2)]
    assert cell["accuracy_mean"].item() == small["accuracy_mean"].item()
    other_seed = run_comparison(GridConfig([data], [dprm_tree_method(1)], epsilons=[1.0], depths=[2], folds=3,
                                           repeats=1, seed=12)).table
    assert other_seed["fits"].item() == 3


def test_grid_rows_values_and_skipped_cells() -> None:
    data = toy(200)
    methods = [dprm_tree_method(2), dprm_tree_method(WHOLE), sklearn_cart_method()]
    config = GridConfig([data], methods, epsilons=[0.5, 5.0], depths=[1, 2], folds=4, repeats=2, seed=0)
    table = run_comparison(config).table
    assert list(table.columns) == list(TABLE_COLUMNS)
    accuracy = table[table["experiment"] == "accuracy"]
    # d=2 only at depth 2 (2 eps); whole at both depths (2 x 2); CART once per depth (2)
    counts = accuracy.groupby("method").size().to_dict()
    assert counts == {"dprm d=2": 2, "dprm d=whole": 4, "sklearn CART": 2}
    whole = accuracy[accuracy["method"] == "dprm d=whole"]
    assert (whole["embedding_depth"] == whole["max_depth"]).all()
    assert accuracy.loc[accuracy["method"] == "sklearn CART", "epsilon"].isna().all()
    assert (accuracy["fits"] == 8).all() and (accuracy["status"] == "ok").all()
    assert accuracy["accuracy_mean"].between(0, 1).all() and (accuracy["fit_seconds_mean"] > 0).all()
    assert (accuracy["rows"] == 150).all()  # 3/4 of 200 rows per training fold
    cart = accuracy[accuracy["method"] == "sklearn CART"]
    assert (cart["accuracy_mean"] > 0.8).all()  # the target is f0 == "a" with 10% noise
    assert accuracy["accuracy_repeat_std"].notna().all()


def test_refused_configuration_is_a_row_not_a_crash() -> None:
    def refuse(epsilon, max_depth, random_state, schema):  # noqa: ANN001
        raise ValueError("max_depth too large for this method")

    table = run_comparison(GridConfig([toy()], [Method("refuser", refuse), sklearn_cart_method()],
                                      epsilons=[1.0], depths=[1], folds=2, repeats=1)).table
    row = table[table["method"] == "refuser"].iloc[0]
    assert row["status"] == "refused" and "too large" in row["message"] and row["fits"] == 0
    assert table.loc[table["method"] == "sklearn CART", "status"].item() == "ok"


def test_grid_checks_its_parameters() -> None:
    for kwargs in ({"epsilons": [0.0]}, {"depths": [0]}, {"folds": 1}, {"jobs": 0}):
        with pytest.raises(ParameterError):
            run_comparison(GridConfig([toy()], [sklearn_cart_method()], **kwargs))
    with pytest.raises(ParameterError, match="unique"):
        run_comparison(GridConfig([toy()], [sklearn_cart_method(), sklearn_cart_method()]))


def test_fit_time_experiment_rows() -> None:
    data = toy(60)
    config = GridConfig([data], [dprm_tree_method(1), sklearn_cart_method()], epsilons=[1.0], depths=[1],
                        folds=2, repeats=1, timing_dataset=data, timing_rows=[30, 90], timing_depth=2,
                        timing_repeats=2)
    table = run_comparison(config).table
    timing = table[table["experiment"] == "fit_time"]
    assert sorted(timing["rows"].tolist()) == [30, 30, 90, 90]  # 90 > 60 rows: drawn with replacement
    assert (timing["fits"] == 2).all() and timing["accuracy_mean"].isna().all()
    assert (timing["max_depth"] == 2).all()


# -- outputs --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_result() -> ClassificationResult:
    data, other = toy(90), toy(90, seed=1, name="other")
    config = GridConfig([data, other], [dprm_tree_method(1), dprm_tree_method(WHOLE), sklearn_cart_method()],
                        epsilons=[0.5, 2.0], depths=[1, 2], folds=3, repeats=2, seed=1, timing_dataset=data,
                        timing_rows=[40, 80], timing_depth=2, timing_repeats=1)
    return run_comparison(config)


def test_outputs_csv_json_figures_report(small_result: ClassificationResult) -> None:
    files = render_outputs(small_result)
    assert list(files) == output_names(["toy", "other"], True)
    table = pd.read_csv(io.BytesIO(files["classification.csv"]))
    assert len(table) == len(small_result.table) and list(table.columns) == list(TABLE_COLUMNS)
    document = json.loads(files["classification.json"])
    assert len(document["rows"]) == len(table) and document["settings"]["folds"] == 3
    assert any("not a private release" in n for n in document["notes"])
    for name in ("accuracy_toy.png", "accuracy_other.png", "fit_time.png"):
        assert files[name][:4] == b"\x89PNG"
    html = files["report.html"].decode("utf-8")
    assert html.count('data-figure="accuracy_') == 2 and 'data-figure="fit_time"' in html
    sortable = html[html.index('<table class="sortable"'):]
    sortable = sortable[:sortable.index("</table>")]
    assert sortable.count("<tr>") == len(table) + 1  # a row per cell and the header


def test_figure_of_a_dataset_without_cells_is_a_placeholder() -> None:
    def refuse(epsilon, max_depth, random_state, schema):  # noqa: ANN001
        raise ValueError("no")

    result = run_comparison(GridConfig([toy()], [Method("refuser", refuse)], epsilons=[1.0], depths=[1],
                                       folds=2, repeats=1))
    files = render_outputs(result)
    assert files["accuracy_toy.png"][:4] == b"\x89PNG"
    assert any("refused on 1 cell" in n for n in result.notes)
