"""Non-private baselines through python-clired: the query parser, the data written, the runs.

The parser and the data conversion are tested without python-clired. The tests
that run clired itself (``exec_clired``) are skipped when python-clired (the extra
``dprm[baselines]``) is not installed; with it installed they check, on small data
without missing values, that dprm's recomputed statistics equal the counts clired
reports itself (which also checks the parser's reading of clired's syntax).
"""

from __future__ import annotations

import importlib.metadata
import shutil
import sys

import numpy as np
import pandas as pd
import pytest
from test_queries_helpers import random_query, random_view

from dprm.data import Attribute, AttributeKind, Domain, TwoViewData, View, load_two_view
from dprm.errors import DprmError, ParameterError
from dprm.evaluation import baselines
from dprm.evaluation.baselines import (
    BASELINE_ALGORITHMS,
    BaselineUnavailable,
    clired_available,
    run_clired,
    write_clired_data,
)
from dprm.evaluation.clired_output import read_clired_queries
from dprm.queries import (
    And,
    BooleanLiteral,
    CategoricalLiteral,
    Not,
    NumericLiteral,
    Or,
    Redescription,
    RedescriptionStats,
    document_redescriptions,
    to_clired,
    write_clired_queries,
)
from dprm.queries.clired_parser import parse_clired_query

COLS = ["smoker", "age", "colour", "height", "v1"]


# ---------------------------------------------------------------------- parser


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # clired's raw form (what exec_clired writes), attributes by index
        ("v0", BooleanLiteral("smoker")),
        ("! v0", BooleanLiteral("smoker", False)),
        ("!v0", BooleanLiteral("smoker", False)),
        ("¬ v0", BooleanLiteral("smoker", False)),
        ("! ! v0", BooleanLiteral("smoker")),
        ("-8.3<v1<8.1", NumericLiteral("age", ge=-8.3, le=8.1)),
        ("v1<-5.6", NumericLiteral("age", le=-5.6)),
        ("0.8<v1", NumericLiteral("age", ge=0.8)),
        ("! -11.3<v1", NumericLiteral("age", lt=-11.3)),
        ("! v1<2.5", NumericLiteral("age", gt=2.5)),
        ("! 1<v1<2", Or(NumericLiteral("age", lt=1), NumericLiteral("age", gt=2))),
        ("1e-05<v1", NumericLiteral("age", ge=1e-05)),
        ("v2=red", CategoricalLiteral("colour", "red")),
        ("v2=12", CategoricalLiteral("colour", "12")),
        ("! v2=red", Not(CategoricalLiteral("colour", "red"))),
        ("v2={red,blue}", Or(CategoricalLiteral("colour", "red"), CategoricalLiteral("colour", "blue"))),
        ("( -8.3<v1<8.1 | -1.7<v3<-1.2 ) & -11.6<v1<7.8",
         And(Or(NumericLiteral("age", ge=-8.3, le=8.1), NumericLiteral("height", ge=-1.7, le=-1.2)),
             NumericLiteral("age", ge=-11.6, le=7.8))),
        ("( ! v0 & ! 3<v1 ) | ( v0 & v1<1 )",
         Or(And(BooleanLiteral("smoker", False), NumericLiteral("age", lt=3)),
            And(BooleanLiteral("smoker"), NumericLiteral("age", le=1)))),
        ("! ( v0 | v2=red )", Not(Or(BooleanLiteral("smoker"), CategoricalLiteral("colour", "red")))),
        ("v4", BooleanLiteral("v1")),  # v<i> is an index: column 4 is named "v1"
        # the bracketed form (Siren, dprm's export), attributes by name
        ("[smoker]", BooleanLiteral("smoker")),
        ("![smoker] ∧ [colour = red]", And(BooleanLiteral("smoker", False), CategoricalLiteral("colour", "red"))),
        ("[1.5 ≤ age ≤ 3] ∨ [height < 2]", Or(NumericLiteral("age", ge=1.5, le=3), NumericLiteral("height", le=2))),
        ("[3 > age > 1.5]", NumericLiteral("age", ge=1.5, le=3)),
        ("[age > 1.5]", NumericLiteral("age", ge=1.5)),
        ("[3 ≥ age]", NumericLiteral("age", le=3)),
        ("[age < -5e-324]", NumericLiteral("age", le=-5e-324)),
        ("[colour != red]", Not(CategoricalLiteral("colour", "red"))),
        ("[colour ≠ red]", Not(CategoricalLiteral("colour", "red"))),
        ("[colour ∈ {red,blue}]", Or(CategoricalLiteral("colour", "red"), CategoricalLiteral("colour", "blue"))),
        ("[colour ∉ {red}]", Not(CategoricalLiteral("colour", "red"))),
        ("!([smoker] & [age < 3])", Not(And(BooleanLiteral("smoker"), NumericLiteral("age", le=3)))),
    ],
)
def test_parse_clired_query(text, expected):
    assert parse_clired_query(text, columns=COLS) == expected


def test_parentheses_up_to_the_limit_are_parsed():
    assert parse_clired_query("(" * 64 + "v0" + ")" * 64, columns=COLS) == parse_clired_query("v0", columns=COLS)


def test_parse_names_with_spaces_and_without_columns():
    q = parse_clired_query("[Birth year < 1950] & [has diabetes] & [blood type = A positive]")
    assert q == And(NumericLiteral("Birth year", le=1950), BooleanLiteral("has diabetes"),
                    CategoricalLiteral("blood type", "A positive"))
    assert parse_clired_query("[1950 < Birth year]") == NumericLiteral("Birth year", ge=1950)


def test_parse_recoded_categories():
    codes = {"colour": {"dprm_category_0": "a & b"}}
    assert parse_clired_query("v2=dprm_category_0 | v2=red", columns=COLS, categories=codes) == Or(
        CategoricalLiteral("colour", "a & b"), CategoricalLiteral("colour", "red"))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[smoker] & [age < 1] | [colour = red]", "mixed"),
        ("( v0 & v1<2", "expected ')'"),
        ("v0 )", "unexpected ')'"),
        ("[]", "empty"),
        ("", "empty"),
        ("v9", "column v9 does not exist"),
        ("[weight < 3]", "unknown attribute 'weight'"),
        ("?v1", "anonymous"),
        ("[@2020 < v1]", "time values"),
        ("[age < three]", "'three' is not a number"),
        ("[1 < age > 3]", "both sides"),
        ("v0 &", "expected a literal"),
        ("(" * 65 + "v0" + ")" * 65, "parentheses nested more than 64 deep"),  # 600 levels: RecursionError
        ("(" * 3000 + "v0" + ")" * 3000, "parentheses nested more than 64 deep"),
    ],
)
def test_parse_errors_are_one_line(text, needle):
    with pytest.raises(DprmError) as info:
        parse_clired_query(text, columns=COLS)
    message = str(info.value)
    assert needle in message and "\n" not in message and repr(text) in message


def test_negated_literal_is_false_on_missing_values_as_in_clired():
    view = View("left", [Attribute("a", "left", AttributeKind.BOOLEAN, np.array([1, 0, -1], dtype=np.int8)),
                         Attribute("x", "left", AttributeKind.NUMERIC, np.array([1.0, 5.0, np.nan]))])
    assert parse_clired_query("![a]").support(view).tolist() == [False, True, False]
    assert parse_clired_query("! 2<x<6").support(view).tolist() == [True, False, False]
    assert parse_clired_query("!([a] & [x < 2])").support(view).tolist() == [False, True, True]  # a group: Not


NAMES = {"boolean": ["smoker", "has diabetes"], "categorical": ["blood type", "State"],
         "numeric": ["Birth year", "x_1"]}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("by_index", [False, True])
@pytest.mark.parametrize("ascii", [True, False])
def test_round_trip_with_dprm_export(tmp_path, seed, by_index, ascii):
    """dprm's own clired export, read back: the same supports (data without missing values)."""
    rng = np.random.default_rng(seed)
    view = random_view(rng, n_rows=50, missing=0.0, names=NAMES)
    columns = view.names
    reds, checked = [], 0
    while len(reds) < 12:
        left, right = random_query(rng, view, depth=4), random_query(rng, view, depth=3)
        try:
            for q in (left, right):
                to_clired(q)
        except DprmError:  # an interval holding no float value cannot be written
            continue
        stats = RedescriptionStats.from_supports(left.support(view), right.support(view))
        reds.append(Redescription(left, right, stats))
    path = tmp_path / "out.queries"
    write_clired_queries(reds, path, columns=(columns, columns) if by_index else None, ascii=ascii)
    lines = read_clired_queries(path, columns=(columns, columns))
    assert len(lines) == len(reds)
    for red, line in zip(reds, lines):
        for original, parsed in ((red.left, line.left), (red.right, line.right)):
            assert np.array_equal(original.support(view), parsed.support(view)), (to_clired(original), parsed)
            checked += 1
        assert int(line.fields["card_Exx"]) == red.stats.intersection
    assert checked == 2 * len(reds)


def test_read_clired_queries_formats_and_errors(tmp_path):
    path = tmp_path / "a.queries"
    path.write_text("query_LHS\tquery_RHS\tacc\tcard_Exx\nv0 | ! v0\t0.8<v1\t0.5\t3\n\n", encoding="utf-8")
    [line] = read_clired_queries(path, columns=(COLS, COLS))
    assert line.left == Or(BooleanLiteral("smoker"), BooleanLiteral("smoker", False))
    assert line.right == NumericLiteral("age", ge=0.8)
    assert line.fields == {"acc": "0.5", "card_Exx": "3"} and line.line == 2
    path.write_text("[smoker]\t[age < 3]\n", encoding="utf-8")  # no header: the first two columns
    assert read_clired_queries(path)[0].right == NumericLiteral("age", le=3)
    path.write_text("query_LHS\tquery_RHS\nv0\tv1 & | v0\n", encoding="utf-8")
    with pytest.raises(DprmError, match=r"a\.queries: line 2: clired query 'v1 & \| v0'"):
        read_clired_queries(path, columns=(COLS, COLS))
    with pytest.raises(DprmError, match="cannot read"):
        read_clired_queries(tmp_path / "missing.queries")


# ---------------------------------------------------------------------- data for clired


def test_write_clired_data_types_values_and_recoded_categories(tmp_path):
    cats = ("red", "a & b", "NA", " lead", "12", "x=1", "dprm_category_1")
    left = View("left", [
        Attribute("id", "left", AttributeKind.BOOLEAN, np.array([1, 0, -1, 1], dtype=np.int8)),
        Attribute("colour", "left", AttributeKind.CATEGORICAL, np.array([0, 1, 2, -1], dtype=np.int32),
                  Domain(categories=cats)),
    ])
    values = np.array([0.1 + 0.2, -5e-324, np.nan, 1e300])
    right = View("right", [Attribute("lat", "right", AttributeKind.NUMERIC, values)])
    lpath, rpath, recoded = write_clired_data(TwoViewData(left, right), tmp_path)
    assert lpath.suffix == rpath.suffix == ".csv"  # clired reads any other extension as another format
    lrows = [line.split("\t") for line in lpath.read_text().splitlines()]
    rrows = rpath.read_text().splitlines()
    # generic names with clired's type marks: "id" and "lat" cannot be taken for clired's special columns
    assert lrows[0] == ["[1]L0", "[2]L1"] and rrows[0] == "[3]R0"
    assert [r[0] for r in lrows[1:]] == ["1", "0", "NA", "1"]
    assert [float(x) for x in rrows[1:3] + rrows[4:]] == [0.1 + 0.2, -5e-324, 1e300] and rrows[3] == "NA"
    tokens = [r[1] for r in lrows[1:]]
    assert tokens[0] == "red" and tokens[3] == "NA"
    # unsafe categories ("a & b", "NA", " lead", "x=1") are written as codes, mapped back on reading
    mapping = recoded["colour"]
    assert set(mapping.values()) == {"a & b", "NA", " lead", "x=1"}
    assert all(code not in cats for code in mapping) and len(set(mapping)) == len(mapping)
    for token, category in zip(tokens[:3], cats[:3]):
        parsed = parse_clired_query(f"v1={token}", columns=["id", "colour"], categories=recoded)
        assert parsed == CategoricalLiteral("colour", category)


def test_preferences_xml():
    xml = baselines._preferences_xml({"ops_query_s0": ["conjunction", "disjunction"], "amnesic": False,
                                      "max_inits": 5, "min_itm_out": 0.2, "logfile": "a<b"})
    assert "<name>ops_query_s0</name><value>conjunction</value><value>disjunction</value>" in xml
    assert "<value>no</value>" in xml and "<value>5</value>" in xml and "<value>0.2</value>" in xml
    assert "<value>a&lt;b</value>" in xml
    with pytest.raises(ParameterError):
        baselines._preferences_xml({"min_itm_out": float("nan")})


# ---------------------------------------------------------------------- absence and bad input


def _no_clired(monkeypatch, tmp_path):
    def not_found(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_found)


def test_absent_clired_is_a_clear_one_line_error(monkeypatch, tmp_path):
    _no_clired(monkeypatch, tmp_path)
    assert clired_available() is False
    with pytest.raises(BaselineUnavailable) as info:
        run_clired("clired-reremi", tmp_path / "l.csv", tmp_path / "r.csv", work_dir=tmp_path / "w")
    message = str(info.value)
    assert "python-clired is not installed" in message and "pip install 'dprm[baselines]'" in message
    assert "\n" not in message
    assert isinstance(info.value, DprmError) and isinstance(info.value, ImportError)
    assert not (tmp_path / "w").exists()


def test_installed_without_command_is_unavailable(monkeypatch, tmp_path):
    monkeypatch.setattr(baselines, "_installed_version", lambda: "6.0.9")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(baselines.importlib.util, "find_spec", lambda name: None)
    assert clired_available() is False
    with pytest.raises(BaselineUnavailable, match="exec_clired is missing.*pip install"):
        baselines.clired_command()


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"algorithm": "clired-cartwheel"}, "unknown clired algorithm 'clired-cartwheel'"),
        ({"parameters": {"LHS_data": "x.csv"}}, "'LHS_data' is set by dprm"),
        ({"parameters": {"max inits": 3}}, "is not a name"),
        ({"max_inits": object()}, "must be text, a number"),
        ({"timeout": -1}, "timeout must be a positive number"),
    ],
)
def test_bad_parameters(monkeypatch, tmp_path, kwargs, needle):
    monkeypatch.setattr(baselines, "clired_command", lambda: ["exec_clired"])
    monkeypatch.setattr(baselines, "_known_parameters", lambda: None)
    kwargs = {"algorithm": "clired-splitt", **kwargs}
    with pytest.raises(ParameterError, match=needle):
        run_clired(kwargs.pop("algorithm"), tmp_path / "l.csv", tmp_path / "r.csv", work_dir=tmp_path, **kwargs)


def test_algorithm_names():
    assert BASELINE_ALGORITHMS == ("clired-reremi", "clired-splitt", "clired-layeredt")
    assert [baselines._algorithm(a) for a in ("clired-splitt", "layeredt")] == ["splitt", "layeredt"]


# ---------------------------------------------------------------------- real runs of python-clired


@pytest.fixture(scope="module")
def clired():
    pytest.importorskip("blocks.mine.exec_clired", reason="python-clired (dprm[baselines]) is not installed")
    if not clired_available():
        pytest.skip("python-clired's command exec_clired is not available")


@pytest.fixture(scope="module")
def small_data(tmp_path_factory):
    """300 rows; left: 8 Boolean attributes and a categorical one; right: 4 numeric.

    Rows where b0 and b1 hold have x0 in [0, 1) (a planted redescription).
    """
    rng = np.random.default_rng(7)
    n = 300
    left = pd.DataFrame({f"b{i}": rng.integers(0, 2, n) for i in range(8)})
    left["kind"] = rng.choice(["red", "blue", "a & b"], n)
    group = (left["b0"] == 1) & (left["b1"] == 1)
    right = pd.DataFrame({f"x{i}": np.round(rng.uniform(1, 10, n), 1) for i in range(4)})
    right.loc[group, "x0"] = np.round(rng.uniform(0, 0.9, group.sum()), 2)
    folder = tmp_path_factory.mktemp("clired_data")
    left.to_csv(folder / "left.csv", index=False)
    right.to_parquet(folder / "right.parquet")
    return folder / "left.csv", folder / "right.parquet"


@pytest.mark.parametrize("algorithm", BASELINE_ALGORITHMS)
def test_run_clired_statistics_agree_with_clired(clired, small_data, tmp_path, algorithm):
    left, right = small_data
    doc = run_clired(algorithm, left, right, work_dir=tmp_path, timeout=300, max_inits=8)
    reds = document_redescriptions(doc)
    assert doc["algorithm"] == algorithm and doc["privacy"]["guarantee"] == "none"
    assert doc["parameters"]["stopped"] is None and doc["parameters"]["max_inits"] == 8
    assert doc["parameters"]["max_var_s0"] == 4 and doc["privacy"]["ledger"] == []
    assert reds, "clired found nothing on data with a planted redescription"
    data = load_two_view(left, right)
    n = data.n_rows
    for red in reds:
        exact = RedescriptionStats.from_supports(red.left.support(data.left), red.right.support(data.right))
        assert red.stats == exact
        figures = red.extra["clired"]  # clired's own counts (no missing values: same semantics)
        assert figures["card_Exx"] == exact.intersection
        assert figures["card_Exo"] == exact.support_left - exact.intersection
        assert figures["card_Eox"] == exact.support_right - exact.intersection
        assert figures["card_Eoo"] == n - exact.union
        assert abs(figures["acc"] - exact.jaccard) < 1e-3
        assert exact.intersection >= 10 and n - exact.union >= 0.2 * n  # the final filter (min_fin_in, min_fin_out)
        assert exact.p_value <= 0.01 and exact.jaccard >= 0.1
    assert max(r.stats.jaccard for r in reds) > 0.5


def test_run_clired_timeout_stops_the_process(clired, small_data, tmp_path):
    left, right = small_data
    try:
        doc = run_clired("clired-reremi", left, right, work_dir=tmp_path, timeout=0.5, grace=5)
    except DprmError as err:
        assert "found nothing within the timeout of 0.5 s" in str(err)
    else:  # clired finished some expansions before the SIGINT
        assert doc["parameters"]["stopped"] == "timeout"
        assert any("stopped after" in note for note in doc["notes"])
