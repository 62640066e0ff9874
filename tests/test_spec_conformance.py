"""Every miner's document against spec/redescriptions.md, checked by a validator written from the spec alone.

The validator below uses none of dprm's code (the spec: "any program must be able
to re-evaluate a returned redescription on the data from this file alone"): it
checks the document's fields, types and ranges, the privacy block (guarantee
labels, ``private`` against the guarantee, reasons, a ledger whose epsilons add up
to ``privacy.epsilon`` or, with ``unspent``, to the budget), and it re-evaluates
every query of a non-private run on the CSV files with the spec's semantics (a
literal over a missing value is false, ``not`` is the complement) against the
exact statistics written. The runs: every algorithm ``dprm mine -a`` offers (and
the default), private at two budgets, seeded and not, on planted data with missing
values and numeric attributes on both sides; also the round trip of the JSON and
of the clired queries file through dprm's readers on column names with spaces,
quotes and non-ASCII letters and categories like ``#2``.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from test_cli import run

SIX = ("support_left", "support_right", "intersection", "union", "jaccard", "p_value")
BASES = ("pure-dp", "pure-dp-on-mcmc-convergence", "none")
BOUNDS = ("gt", "ge", "lt", "le")
NON_PRIVATE = ("cartwheels", "reremi")
PRIVATE = ("alt-expm", "alt-mcmc", "mcmc-tree-pair", "serenade-cs", "serenade-es", "serenade-es-nosens", "default")
MCMC = ("alt-mcmc", "mcmc-tree-pair", "default")


def _number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def query_problems(query: object, columns: set[str], where: str) -> list[str]:
    """What in ``query`` is not one of the spec's query forms over ``columns``."""
    if not isinstance(query, dict):
        return [f"{where}: not an object"]
    operators = [k for k in ("not", "and", "or") if k in query]
    if operators:
        op = operators[0]
        if len(query) != 1:
            return [f"{where}: keys {sorted(query)}"]
        if op == "not":
            return query_problems(query["not"], columns, f"{where}.not")
        if not isinstance(query[op], list) or len(query[op]) < 2:
            return [f"{where}.{op}: not a list of two or more"]
        return [p for i, q in enumerate(query[op]) for p in query_problems(q, columns, f"{where}.{op}[{i}]")]
    if "attr" not in query or set(query) - {"attr", "eq", *BOUNDS}:
        return [f"{where}: keys {sorted(query)}"]
    problems = [] if query["attr"] in columns else [f"{where}: {query['attr']!r} is no column of this side"]
    if "eq" in query:
        if len(query) != 2 or not isinstance(query["eq"], (bool, str)):
            problems.append(f"{where}: literal {query}")
    elif not all(_number(query[k]) for k in BOUNDS if k in query) or len(query) == 1:
        problems.append(f"{where}: interval {query}")
    return problems


def support(query: dict, frame: pd.DataFrame) -> np.ndarray:
    """The rows where ``query`` holds, by the spec's semantics."""
    if "not" in query:
        return ~support(query["not"], frame)
    if "and" in query or "or" in query:
        combine = np.logical_and if "and" in query else np.logical_or
        return combine.reduce([support(q, frame) for q in query.get("and", query.get("or"))])
    column = frame[query["attr"]]
    present = column.notna().to_numpy()
    value = query.get("eq")
    if isinstance(value, bool):
        truth = column.astype(str).str.strip().str.lower().isin(["1", "1.0", "true"]).to_numpy()
        return present & (truth == value)
    if isinstance(value, str):
        if pd.api.types.is_numeric_dtype(column):
            return present & (column.to_numpy(dtype=float) == float(value))
        return present & (column.astype(str).to_numpy() == value)
    x = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        tests = {"gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal}
        return present & np.logical_and.reduce([tests[k](x, query[k]) for k in BOUNDS if k in query] + [present])


def exact_statistics(left: dict, right: dict, frames: tuple[pd.DataFrame, pd.DataFrame]) -> dict[str, float]:
    """The spec's statistics of a redescription on the data."""
    sl, sr = support(left, frames[0]), support(right, frames[1])
    n, a, b, i, u = len(sl), int(sl.sum()), int(sr.sum()), int((sl & sr).sum()), int((sl | sr).sum())
    return {"support_left": a, "support_right": b, "intersection": i, "union": u, "jaccard": i / u if u else 0.0,
            "p_value": float(binom.sf(i - 1, n, (a / n) * (b / n)))}


def document_problems(doc: dict, *, epsilon: float | None, seed: int | None, private_algorithm: bool,
                      frames: tuple[pd.DataFrame, pd.DataFrame], mcmc: bool = False) -> list[str]:
    """Every way ``doc`` deviates from spec/redescriptions.md (empty: it conforms)."""
    problems = []
    if doc.get("format") != "dprm.redescriptions/1":
        problems.append(f"format {doc.get('format')!r}")
    missing = [k for k in ("algorithm", "parameters", "privacy", "redescriptions") if k not in doc]
    privacy = doc.get("privacy", {})
    missing += [f"privacy.{k}" for k in ("epsilon", "neighbouring", "guarantee", "private", "reasons", "ledger")
                if k not in privacy]
    if missing:
        return problems + [f"missing {missing}"]
    if not isinstance(doc["algorithm"], str) or not isinstance(doc["parameters"], dict):
        problems.append("algorithm or parameters of the wrong type")
    if privacy["neighbouring"] != "add-remove-one-row":
        problems.append(f"neighbouring {privacy['neighbouring']!r}")
    label = privacy["guarantee"]
    base, *qualifiers = label.split("; ") if isinstance(label, str) else [None]
    if base not in BASES or (base == "none" and qualifiers) or not all(q and q.strip() == q for q in qualifiers):
        problems.append(f"guarantee {label!r}")
    if privacy["private"] is not (base != "none"):
        problems.append(f"private {privacy['private']!r} beside guarantee {label!r}")
    reasons = privacy["reasons"]
    if not isinstance(reasons, list) or not all(isinstance(r, str) and r for r in reasons):
        problems.append(f"reasons {reasons!r}")
    elif (base == "none") != bool(reasons):
        problems.append(f"guarantee {label!r} with reasons {reasons!r}")
    ledger = privacy["ledger"]
    for i, entry in enumerate(ledger):
        if not (isinstance(entry, dict) and {"step", "epsilon", "mechanism"} <= set(entry)
                and isinstance(entry["step"], str) and isinstance(entry["mechanism"], str)
                and _number(entry["epsilon"]) and entry["epsilon"] >= 0):
            problems.append(f"ledger[{i}] {entry!r}")
    if problems:
        return problems
    total = math.fsum(entry["epsilon"] for entry in ledger)
    if private_algorithm:
        spent, unspent = privacy["epsilon"], privacy.get("unspent")
        if not _number(spent):
            return problems + [f"privacy.epsilon {spent!r} in a private algorithm's run"]
        if not (math.isclose(total, spent, rel_tol=1e-12) or (
                _number(unspent) and math.isclose(total + unspent, spent, rel_tol=1e-12))):
            problems.append(f"the ledger adds up to {total!r}, privacy.epsilon is {spent!r} (unspent {unspent!r})")
        budget = spent + unspent if _number(unspent) and math.isclose(total, spent, rel_tol=1e-12) else spent
        if epsilon is not None and not math.isclose(budget, epsilon, rel_tol=1e-12):
            problems.append(f"the run's budget is {budget!r}, --epsilon was {epsilon!r}")
        if epsilon is not None and doc["parameters"].get("epsilon") != epsilon:
            problems.append(f"parameters.epsilon {doc['parameters'].get('epsilon')!r}, --epsilon was {epsilon!r}")
        if seed is None and base == "none":
            problems.append(f"an unseeded private run with declared domains says none: {reasons}")
        chain = any("MCMC" in entry["mechanism"] for entry in ledger)
        if base != "none" and (chain != (base == "pure-dp-on-mcmc-convergence") or (chain and not mcmc)):
            problems.append(f"guarantee {label!r} beside the ledger's mechanisms")
    elif base != "none" or ledger:
        problems.append(f"a non-private algorithm says {label!r} with {len(ledger)} releases")
    if seed is not None:
        if base != "none":
            problems.append(f"a seeded run says {label!r}")
        if doc["parameters"].get("seed") != seed:
            problems.append(f"parameters.seed {doc['parameters'].get('seed')!r}, --seed was {seed}")
    for j, found in enumerate(doc["redescriptions"]):
        where = f"redescriptions[{j}]"
        absent = [k for k in ("left", "right", "left_text", "right_text", "noisy", "pruned") if k not in found]
        if absent:
            problems.append(f"{where}: missing {absent}")
            continue
        for side, frame in zip(("left", "right"), frames):
            problems += query_problems(found[side], set(frame.columns), f"{where}.{side}")
            if not isinstance(found[f"{side}_text"], str) or not found[f"{side}_text"]:
                problems.append(f"{where}.{side}_text {found[f'{side}_text']!r}")
        if not isinstance(found["pruned"], bool):
            problems.append(f"{where}.pruned {found['pruned']!r}")
        noisy = found["noisy"]
        if not isinstance(noisy, dict) or set(noisy) - set(SIX) or not all(_number(v) for v in noisy.values()):
            problems.append(f"{where}.noisy {noisy!r}")
            continue
        problems += [f"{where}.noisy.{k} {noisy[k]!r} outside [0, 1]"
                     for k in ("jaccard", "p_value") if k in noisy and not 0 <= noisy[k] <= 1]
        if not private_algorithm and not problems:  # exact values: they must be the queries' statistics
            exact = exact_statistics(found["left"], found["right"], frames)
            problems += [f"{where}.noisy.{k} is {v!r}, the queries' value {exact[k]!r}" for k, v in noisy.items()
                         if not math.isclose(v, exact[k], rel_tol=1e-9, abs_tol=1e-12)]
    return problems


def _frames(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return tuple(pd.read_csv(folder / f"{side}.csv", keep_default_na=False, na_values=[""]).iloc[:, 1:]
                 for side in ("left", "right"))


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("planted")
    code, _, err = run(["datasets", "make-planted", folder, "--rows", "300", "--seed", "4", "--missing", "0.05",
                        "--relations", "conjunction,interval,disjunction", "--left-numeric", "3",
                        "--right-boolean", "3"])
    assert code == 0, err
    return folder


CASES = ([(a, None, None) for a in NON_PRIVATE] + [(a, None, 5) for a in NON_PRIVATE]
         + [(a, e, s) for a in PRIVATE for e, s in ((0.5, None), (2.0, None), (2.0, 7))])


@pytest.mark.parametrize(("algorithm", "epsilon", "seed"), CASES)
def test_every_miner_writes_the_spec(planted: Path, tmp_path: Path, algorithm: str, epsilon, seed) -> None:
    args = ["mine", planted / "left.csv", planted / "right.csv", "--types", planted / "types.json",
            "-o", tmp_path / "out.json", "--clired", tmp_path / "out.queries"]
    args += [] if algorithm == "default" else ["-a", algorithm]
    args += [] if epsilon is None else ["--epsilon", epsilon]
    args += [] if seed is None else ["--seed", seed]
    args += ["--mcmc-iterations", "200"] if algorithm in MCMC else []
    code, _, err = run(args)
    assert code == 0, err
    doc = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert document_problems(doc, epsilon=epsilon, seed=seed, private_algorithm=algorithm not in NON_PRIVATE,
                             frames=_frames(planted), mcmc=algorithm in MCMC) == []
    assert algorithm == "default" or doc["algorithm"] == algorithm
    _assert_round_trips(tmp_path / "out", _frames(planted))


def _assert_round_trips(base: Path, frames: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    """dprm's reader gives the document's queries back; each clired query holds on the same rows.

    The same rows among those without a missing value of its attributes: clired's logic is three-valued (a
    negated literal is false on a missing value), so ``¬[A = false]`` is written ``[A]``
    (:mod:`dprm.queries.clired`).
    """
    from dprm.queries import query_to_json
    from dprm.queries.clired_parser import parse_clired_query
    from dprm.queries.document import read_document

    doc, found = read_document(base.with_suffix(".json"))
    written = doc["redescriptions"]
    assert [(query_to_json(r.left), query_to_json(r.right)) for r in found] == [(w["left"], w["right"]) for w in written]
    lines = base.with_suffix(".queries").read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t")[:3] == ["rid", "query_LHS", "query_RHS"] and len(lines) == len(written) + 1
    for line, w in zip(lines[1:], written):
        cells = line.split("\t")
        for text, side, frame in ((cells[1], "left", frames[0]), (cells[2], "right", frames[1])):
            read = query_to_json(parse_clired_query(text, columns=list(frame.columns)))
            complete = frame[sorted({lit["attr"] for lit in _literals(w[side])})].notna().all(axis=1).to_numpy()
            assert complete.sum() > len(frame) / 2
            same = support(read, frame) == support(w[side], frame)
            assert same[complete].all(), (text, w[f"{side}_text"])


def test_odd_names_and_categories_survive_both_round_trips(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 300
    z = rng.random(n) < 0.4
    categories = np.array(["#2", "it's", "Zürich", "a b", 'q"z'])
    left = pd.DataFrame({"id": range(n), "has space": (z ^ (rng.random(n) < 0.05)).astype(int),
                         "quote'd \"x\"": rng.integers(0, 2, n), "Grün é": rng.integers(0, 2, n),
                         "colour": np.where(z, categories[0], rng.choice(categories[1:], n))})
    right = pd.DataFrame({"id": range(n), "t5": np.where(z, rng.normal(70, 5, n), rng.normal(30, 10, n)).round(2),
                          "ß-wert": rng.integers(0, 2, n), "#3": (z ^ (rng.random(n) < 0.1)).astype(int)})
    left.to_csv(tmp_path / "left.csv", index=False)
    right.to_csv(tmp_path / "right.csv", index=False)
    frames = _frames(tmp_path)
    for algorithm in ("reremi", "serenade-cs"):
        base = tmp_path / algorithm
        code, _, err = run(["mine", "-a", algorithm, tmp_path / "left.csv", tmp_path / "right.csv",
                            "-o", base.with_suffix(".json"), "--clired", base.with_suffix(".queries")])
        assert code == 0, err
        doc = json.loads(base.with_suffix(".json").read_text(encoding="utf-8"))
        assert doc["redescriptions"]
        assert document_problems(doc, epsilon=None, seed=None, private_algorithm=False, frames=frames) == [] \
            if algorithm == "reremi" else doc["privacy"]["guarantee"] == "none"  # domains read off the data
        _assert_round_trips(base, frames)
    attributes = {q["attr"] for w in json.loads((tmp_path / "reremi.json").read_text())["redescriptions"]
                  for q in _literals(w["left"])}
    assert {"colour", "has space"} & attributes


def _literals(query: dict) -> list[dict]:
    if "not" in query:
        return _literals(query["not"])
    if "and" in query or "or" in query:
        return [lit for q in query.get("and", query.get("or")) for lit in _literals(q)]
    return [query]


def test_the_validator_finds_each_kind_of_deviation(planted: Path, tmp_path: Path) -> None:
    """The checks above can fail: a conforming document, changed in one place each, is refused."""
    code, _, err = run(["mine", "-a", "alt-expm", "--epsilon", "1", planted / "left.csv", planted / "right.csv",
                        "--types", planted / "types.json", "-o", tmp_path / "p.json"])
    assert code == 0, err
    code, _, err = run(["mine", "-a", "reremi", planted / "left.csv", planted / "right.csv", "-o", tmp_path / "n.json"])
    assert code == 0, err
    private, exact = (json.loads((tmp_path / name).read_text()) for name in ("p.json", "n.json"))
    frames = _frames(planted)
    assert document_problems(private, epsilon=1.0, seed=None, private_algorithm=True, frames=frames) == []
    assert document_problems(exact, epsilon=None, seed=None, private_algorithm=False, frames=frames) == []

    def changed(doc: dict, edit) -> dict:
        doc = copy.deepcopy(doc)
        edit(doc)
        return doc

    private_edits = [
        lambda d: d["privacy"]["ledger"][0].update(epsilon=d["privacy"]["ledger"][0]["epsilon"] + 0.01),
        lambda d: d["privacy"].update(private=False),
        lambda d: d["privacy"].update(guarantee="pure-dp;"),
        lambda d: d["privacy"].update(reasons=["seeded"]),
        lambda d: d["privacy"].update(neighbouring="replace-one-row"),
        lambda d: d["parameters"].update(epsilon=2.0),
        lambda d: d["redescriptions"][0].update(left={"attr": "no such", "eq": True}),
        lambda d: d["redescriptions"][0].update(left={"and": [{"attr": "l_bool_0", "eq": True}]}),
        lambda d: d["redescriptions"][0]["noisy"].update(jaccard=1.5),
        lambda d: d["redescriptions"][0].pop("pruned"),
    ]
    for edit in private_edits:
        assert document_problems(changed(private, edit), epsilon=1.0, seed=None, private_algorithm=True,
                                 frames=frames) != []
    wrong_count = changed(exact, lambda d: d["redescriptions"][0]["noisy"].update(
        intersection=d["redescriptions"][0]["noisy"]["intersection"] + 1))
    assert document_problems(wrong_count, epsilon=None, seed=None, private_algorithm=False, frames=frames) != []
    other_query = changed(exact, lambda d: d["redescriptions"][0].update(left={"not": d["redescriptions"][0]["left"]}))
    assert document_problems(other_query, epsilon=None, seed=None, private_algorithm=False, frames=frames) != []
