"""Queries on the terminal: cut between literals, never inside one (issue: '[prec_07 >' / '72.7]')."""

from __future__ import annotations

import numpy as np
import pytest

from dprm.cli.display import _query_tokens, field_lines, wrap_query


def _random_query(rng: np.random.Generator) -> str:
    literals = [f"[attribute_{rng.integers(100)} {op} {rng.normal() * 100:.1f}]" for op in rng.choice(["≤", ">"], 8)]
    literals += [f"[city = {name}]" for name in rng.choice(["New York", "Los Angeles", "Rio de Janeiro"], 3)]
    literals += ["smoker", "¬diabetic"]
    rng.shuffle(literals)
    text = literals[0]
    for literal in literals[1:]:
        text = f"({text} {rng.choice(['∧', '∨'])} {literal})"
    return text


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("width", [40, 80, 120])
def test_lines_keep_every_literal_whole_and_fit(seed: int, width: int) -> None:
    text = _random_query(np.random.default_rng(seed))
    lines = wrap_query(text, width, "     L: ")
    assert lines[0].startswith("     L: ")
    assert " ".join(line.strip() for line in lines) == "L: " + text
    for line in lines:
        assert line.count("[") == line.count("]"), line  # no literal cut in two
        assert len(line) <= width or len(_query_tokens(line.strip()) or []) == 1, line  # a lone long literal
    assert all(line.startswith(" " * 8) for line in lines[1:])


def test_a_short_query_is_one_line() -> None:
    assert wrap_query("smoker ∧ [age > 40]", 80, "  L: ") == ["  L: smoker ∧ [age > 40]"]


def test_report_of_a_mine_output_counts_as_mine_did(tmp_path) -> None:
    """dprm report says what dprm mine's title said: all, the redundant not shown, the kept after pruning."""
    import re

    from test_cli import run

    data = tmp_path / "data"
    assert run(["datasets", "make-planted", data, "--rows", "800", "--seed", "3"])[0] == 0
    result = tmp_path / "run.json"
    code, out, err = run(["mine", data / "left.csv", data / "right.csv", "--types", data / "types.json",
                          "--epsilon", "2", "--seed", "5", "-o", result])  # trees trials: redundant ones too
    assert code == 0, err
    title = re.search(r"([\d,]+) redescriptions(?: \(([\d,]+) redundant not shown\))?, ([\d,]+) kept after pruning",
                      out)
    assert title is not None, out
    total, redundant, kept = title.groups()
    code, _, err = run(["report", "--run", result, "-o", tmp_path / "run.html"])
    assert code == 0, err
    page = (tmp_path / "run.html").read_text(encoding="utf-8")
    shown = f" ({redundant} redundant, not shown by dprm mine)" if redundant else ""
    assert f"{total}{shown}, {kept} kept after pruning" in page
    assert redundant is not None and int(redundant) > 0  # the redundant rows are counted and ordered below
    assert "Not differentially private (see the reasons)" in page  # the guarantee label explained
    statuses = re.findall(r'<td>(kept|redundant|pruned)</td>', page)
    assert statuses.count("kept") == int(kept) and statuses.count("redundant") == int(redundant)
    assert statuses == sorted(statuses, key=["kept", "redundant", "pruned"].index)  # kept first


@pytest.mark.parametrize("width", [40, 60, 80, 200])
def test_a_statistics_line_wraps_between_fields_never_inside_one(width: int) -> None:
    fields = [("  4. J = 0.545 [0.45, 0.64]", "bold"), ("excess 0.43", ""), ("|L| 1,172", ""), ("|R| 165", ""),
              ("|L∩R| 119", ""), ("p 2.1e-31", ""), ("pruned", "yellow")]
    lines = [line.plain for line in field_lines(fields, width)]
    assert all(len(line) <= width for line in lines)
    assert [f for line in lines for f in line.strip().split("   ")] == [f.strip() for f, _ in fields]  # whole, in order
    assert all(line.startswith("     ") for line in lines[1:])
    assert (len(lines) == 1) == (width == 200)


@pytest.mark.parametrize("algorithm", ["cartwheels", "alt-mcmc", "serenade-es"])
def test_every_redescription_says_its_excess_over_independence(tmp_path, algorithm: str) -> None:
    """J_ind from the reported supports and the (released) row count; excess = J − J_ind; its interval shifted."""
    import json

    from dprm.queries import independence_jaccard
    from test_cli import run

    data = tmp_path / "data"
    assert run(["datasets", "make-planted", data, "--rows", "600", "--seed", "3"])[0] == 0
    result = tmp_path / "run.json"
    # CARTwheels with 4 of its default 20 trials: every redescription is checked, however many
    extra = ["--max-support", "0.5", "--init-trials", "4"] if algorithm == "cartwheels" else ["--epsilon", "1"]
    code, out, err = run(["mine", data / "left.csv", data / "right.csv", "--types", data / "types.json",
                          "-a", algorithm, "--seed", "5", "-o", result, *extra])
    assert code == 0, err
    redescriptions = json.loads(result.read_text())["redescriptions"]
    assert redescriptions and all("independence" in r for r in redescriptions)
    for r in redescriptions:
        entry, noisy = r["independence"], r["noisy"]
        assert entry["excess"] == pytest.approx(noisy["jaccard"] - entry["jaccard"], abs=2e-3)
        if algorithm == "cartwheels":  # exact: the baseline of the true sizes over the 600 rows
            assert entry["jaccard"] == pytest.approx(
                independence_jaccard(noisy["support_left"], noisy["support_right"], 600), abs=1e-3)
        if "interval" in r and "excess_interval" in entry:
            low, high = r["interval"]["jaccard"]
            assert entry["excess_interval"] == pytest.approx([low - entry["jaccard"], high - entry["jaccard"]],
                                                             abs=2e-3)
    assert "excess" in out
    if algorithm == "alt-mcmc":  # a released excess is shown with its interval, as J is
        import re

        assert re.search(r"excess -?\d\.\d\d \[-?\d\.\d\d, -?\d\.\d\d\]", out), out


def test_a_declared_complete_column_is_checked_and_used_by_the_normal_form(tmp_path) -> None:
    """``"complete": true`` in the types file: a missing value is refused; a private run prints normal forms."""
    import json

    from dprm.queries import normalize, query_from_json
    from test_cli import assert_one_error_line, run, write

    data = tmp_path / "data"
    assert run(["datasets", "make-planted", data, "--rows", "600", "--seed", "3"])[0] == 0
    types = json.loads((data / "types.json").read_text())
    columns = {name: ({"type": entry} if isinstance(entry, str) else dict(entry)) | {"complete": True}
               for name, entry in types["columns"].items()}
    complete_types = write(tmp_path / "complete.json", json.dumps({**types, "columns": columns}))
    result = tmp_path / "run.json"
    code, _, err = run(["mine", data / "left.csv", data / "right.csv", "--types", complete_types,
                        "-a", "mcmc-tree-pair", "--seed", "5", "-o", result])
    assert code == 0, err
    redescriptions = json.loads(result.read_text())["redescriptions"]
    assert redescriptions
    for r in redescriptions:
        for side in ("left", "right"):
            query = query_from_json(r[side])
            assert normalize(query, set(columns)) == query  # already in the normal form of complete columns
    # the declaration is checked against the rows: one missing value is an error naming the column and row
    left = (data / "left.csv").read_text().splitlines()
    header, first = left[0].split(","), left[1].split(",")
    first[1] = ""
    holed = write(tmp_path / "left.csv", "\n".join([left[0], ",".join(first), *left[2:]]) + "\n")
    code, out, err = run(["mine", holed, data / "right.csv", "--types", complete_types, "--epsilon", "1"])
    assert code == 2
    assert_one_error_line(err, f"column '{header[1]}'", "row 1", "declares the column complete")
    bad = write(tmp_path / "bad.json", json.dumps({"columns": {header[1]: {"type": "boolean", "complete": "yes"}}}))
    code, _, err = run(["mine", data / "left.csv", data / "right.csv", "--types", bad])
    assert code == 2 and "'complete' must be true or false" in err


def test_a_private_run_says_which_declarations_would_shorten_its_queries(tmp_path, shared_data) -> None:
    """Without ``"complete": true`` a private run cannot simplify ``(a ∧ b) ∨ (a ∧ [b = false])``; it says so
    in one line naming attributes, and no more once the types file declares every column complete."""
    import json
    from pathlib import Path

    from test_cli import run, write

    views = [shared_data / "mammals" / "left.csv", shared_data / "mammals" / "right.csv"]
    types_path = Path(__file__).parent / "data" / "mammals-types.json"
    hint = "queries shown would print shorter if a types file (--types) declared their attributes complete"
    code, out, err = run(["mine", *views, "--types", types_path, "--seed", "3", "--top", "5"])
    assert code == 0, err
    line = next(line for line in out.splitlines() if hint in line)
    types = json.loads(types_path.read_text())
    named = [name for name in line.split("e.g. ")[1].split(", ") if name != "..."]
    assert named and set(named) <= set(types["columns"])
    columns = {name: ({"type": entry} if isinstance(entry, str) else dict(entry)) | {"complete": True}
               for name, entry in types["columns"].items()}
    complete_types = write(tmp_path / "complete.json", json.dumps({**types, "columns": columns}))
    code, out, err = run(["mine", *views, "--types", complete_types, "--seed", "3", "--top", "5"])
    assert code == 0 and hint not in out, err


def test_a_redescription_negating_an_earlier_one_is_marked_as_its_complement(tmp_path) -> None:
    """``¬L ↔ ¬R`` beside ``L ↔ R`` is the same finding: the table says which number it complements."""
    import json
    import re

    from dprm.cli.display import complements
    from dprm.queries import Not, document_redescriptions
    from dprm.queries.normal_form import canonical_key
    from test_cli import run, write

    data = tmp_path / "data"
    assert run(["datasets", "make-planted", data, "--rows", "600", "--seed", "3"])[0] == 0
    types = json.loads((data / "types.json").read_text())
    columns = {name: ({"type": entry} if isinstance(entry, str) else dict(entry)) | {"complete": True}
               for name, entry in types["columns"].items() if entry != "id" and name != types.get("id_column")}
    complete_types = write(tmp_path / "complete.json", json.dumps({**types, "columns": {**types["columns"], **columns}}))
    result = tmp_path / "run.json"
    code, out, err = run(["mine", data / "left.csv", data / "right.csv", "--types", complete_types, "--epsilon", "1",
                          "--seed", "5", "--top", "100", "-o", result])
    assert code == 0, err
    marks, shown = {}, []
    for line in out.splitlines():  # each block starts "  N. J = ..."; its statistics may wrap to the next line
        if head := re.match(r"\s*(\d+)\. J = ", line):
            shown.append(int(head.group(1)))
        if mark := re.search(r"complement of (\d+)", line):
            marks[shown[-1]] = int(mark.group(1))
    assert marks, out  # planted relations are listed with their complements at ε = 1
    assert all(b < a for a, b in marks.items())
    document = json.loads(result.read_text())
    kept = [r for r in document_redescriptions(document) if not r.extra.get("redundant")]
    kept = sorted(kept, key=lambda r: r.pruned)[:len(shown)]
    complete = set(columns)
    for a, b in marks.items():  # the marked one is the earlier one negated on both sides
        later, earlier = kept[a - 1], kept[b - 1]
        assert canonical_key(Not(later.left), complete) == canonical_key(earlier.left, complete)
        assert canonical_key(Not(later.right), complete) == canonical_key(earlier.right, complete)
    assert complements(kept, complete) == {a - 1: b - 1 for a, b in marks.items()}


def test_multi_word_boolean_names_are_never_cut() -> None:
    from dprm.queries import BooleanLiteral as B, to_text

    names = ["House mouse", "Small Asian Mongoose", "Eurasian Lynx", "Moose", "Marbled Polecat", "Brown bear"]
    query = B(names[0])
    for name in names[1:]:
        query = query & B(name) if len(name) % 2 else query | B(name)
    lines = wrap_query(to_text(query), 30, "  L: ")
    assert len(lines) > 2
    for line in lines:
        words = line.strip().removeprefix("L: ")
        assert words.count("[") == words.count("]"), line


def test_a_noisy_p_value_is_shown_as_the_upper_end_of_its_interval(tmp_path) -> None:
    """A p-value of noisy counts alone can look decisive; the table shows the pessimistic end instead."""
    import json
    import re

    from test_cli import run

    data = tmp_path / "data"
    assert run(["datasets", "make-planted", data, "--rows", "600", "--seed", "3"])[0] == 0
    result = tmp_path / "run.json"
    code, out, err = run(["mine", data / "left.csv", data / "right.csv", "--types", data / "types.json",
                          "-a", "alt-mcmc", "--epsilon", "1", "--seed", "5", "--top", "1000", "--redundant", "show", "-o", result])
    assert code == 0, err
    released = json.loads(result.read_text())["redescriptions"]
    shown = re.findall(r"\|L∩R\| [\d,]+ +p(?: ≤)? (\S+)", out)
    assert released and len(shown) == len(released)
    highs = sorted(float(r["interval"]["p_value"][1]) for r in released)
    assert sorted(float(p) for p in shown) == pytest.approx(highs, rel=0.05)
    assert "p ≤ " in out and not re.search(r"\|L∩R\| [\d,]+ +p \d", out)
    # beside it, what pruning's significance rule reads: the probability that p ≤ max-pvalue
    sure = [float(x) for x in re.findall(r"P\(p ≤ 0\.01\) ([01]\.\d\d)", out)]
    assert len(sure) == len(released)
    assert sorted(sure) == pytest.approx(sorted(r["interval"]["significance"]["probability"] for r in released),
                                         abs=0.006)


def test_the_report_shows_a_released_p_value_with_its_interval(tmp_path) -> None:
    import re

    from test_cli import run

    data = tmp_path / "data"
    assert run(["datasets", "make-planted", data, "--rows", "600", "--seed", "3"])[0] == 0
    result = tmp_path / "run.json"
    assert run(["mine", data / "left.csv", data / "right.csv", "--types", data / "types.json",
                "-a", "alt-mcmc", "--epsilon", "1", "--seed", "5", "-o", result])[0] == 0
    code, _, err = run(["report", "--run", result, "-o", tmp_path / "run.html"])
    assert code == 0, err
    page = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert re.search(r"p-value \S+ \[\S+, \S+\]( · P\(p ≤ 0\.01\) [01]\.\d\d)</div>", page), page[:2000]
