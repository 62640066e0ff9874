"""Reading run documents for reports and experiments: one reader, the privacy block consistent, values in range.

The fuzz round's documents (a real ``dprm mine`` output, edited): ``dprm report --run``
and ``dprm evaluate`` resuming an experiment showed each as a properly private run, or
read it with a reader of their own (NaN, repeated keys, another algorithm's run).
"""

from __future__ import annotations

import json
import math
import re
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from test_evaluation_report import run_cli

from dprm.datasets import make_planted, write_planted
from dprm.errors import DprmError
from dprm.evaluation.run_documents import check_run_document, read_run_document
from dprm.mining import make_miner
from dprm.mining.serenade.race import ExtensionRace
from dprm.privacy import (
    NEIGHBOURING,
    MetropolisHastings,
    SecureNoise,
    StructuredExponentialMechanism,
    WeightedReservoir,
    mechanism_guarantee,
)
from dprm.privacy.accountant import Accountant
from dprm.queries.document import NEIGHBOURING as DOCUMENT_NEIGHBOURING


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("planted")
    write_planted(make_planted(300, n_left_boolean=6, n_right_numeric=4, n_planted=2, random_state=11), directory)
    return directory


def _mined(planted: Path, algorithm: str, **parameters) -> dict:
    from dprm.data import load_two_view

    data = load_two_view(planted / "left.csv", planted / "right.csv", types=planted / "types.json")
    miner = make_miner(algorithm, **parameters)
    accountant = Accountant(1, SecureNoise()) if "epsilon" in miner.parameter_names() else None
    miner.fit(data, accountant=accountant, rng=np.random.default_rng())
    return json.loads(json.dumps(miner.document({"seed": None})))


@pytest.fixture(scope="module")
def private_doc(planted) -> dict:
    # A private run takes an unseeded generator (a seeded one is labelled not private), and
    # about one run in 40 keeps nothing here; the tests edit the first redescription.
    for _ in range(10):
        doc = _mined(planted, "alt-expm", depth=2, init_trials=2)
        if doc["redescriptions"]:
            break
    assert doc["redescriptions"]
    assert doc["privacy"]["guarantee"] == "pure-dp" and len(doc["privacy"]["ledger"]) >= 3
    return doc


@pytest.fixture(scope="module")
def cartwheels_doc(planted) -> dict:
    return _mined(planted, "cartwheels", depth=2, init_trials=2, alternations=1)


def _edited(doc: dict, path: Path, edit) -> Path:
    doc = json.loads(json.dumps(doc))
    edit(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _cut(doc):  # a ledger cut to its first releases
    doc["privacy"]["ledger"] = doc["privacy"]["ledger"][:2]


def _cartwheels_private(doc):
    doc["privacy"].update(guarantee="pure-dp", private=True, reasons=[], epsilon=1.0,
                          ledger=[{"step": "counts", "mechanism": "discrete-laplace count", "epsilon": 1.0}])


def _chain(doc):  # a chain's release under the label of exact mechanisms
    doc["privacy"]["ledger"][0]["mechanism"] = "exponential (MCMC)"


def _unspent_on_top(doc):
    doc["privacy"]["unspent"] = 0.5


REFUSED = [
    ("ledger-cut", _cut, "the ledger's epsilons add up to"),
    ("ledger-emptied", lambda d: d["privacy"].update(ledger=[]), "privacy.private is true but privacy.ledger lists "
                                                                  "no release"),
    ("seeded-pure", lambda d: d["parameters"].update(seed=7), "parameters.seed is 7: a seeded run is not private, but "
                                                              "privacy.guarantee is 'pure-dp' (it must be 'none')"),
    ("epsilon-10000", lambda d: d["privacy"].update(epsilon=10000), "not privacy.epsilon 10000"),
    ("parameters-epsilon", lambda d: d["parameters"].update(epsilon=5), "parameters.epsilon 5 is not the run's "
                                                                         "budget, privacy.epsilon 1"),
    ("mcmc-as-pure", _chain, "privacy.guarantee is 'pure-dp', more than the ledger's releases guarantee "
                             "('pure-dp-on-mcmc-convergence': exponential (MCMC))"),
    ("unspent-lots", lambda d: d["privacy"].update(unspent="lots"), "privacy.unspent must be a finite number >= 0"),
    ("unspent-negative", lambda d: d["privacy"].update(unspent=-3), "privacy.unspent must be a finite number >= 0"),
    ("unspent-on-top", _unspent_on_top, "parameters.epsilon 1 is not the run's budget, privacy.epsilon 1 + "
                                        "privacy.unspent 0.5 = 1.5"),
    ("jaccard-7.5", lambda d: d["redescriptions"][0]["noisy"].update(jaccard=7.5),
     "redescriptions[0].noisy.jaccard: must be in [0, 1], got 7.5"),
    ("p-value-negative", lambda d: d["redescriptions"][0]["noisy"].update(p_value=-1),
     "redescriptions[0].noisy.p_value: must be in [0, 1], got -1"),
    ("support-negative", lambda d: d["redescriptions"][0]["noisy"].update(support_left=-2.5),
     "redescriptions[0].noisy.support_left: must be >= 0 (a number of rows), got -2.5"),
    ("neighbouring-swap", lambda d: d["privacy"].update(neighbouring="swap"),
     "privacy.neighbouring is 'swap', expected 'add-remove-one-row'"),
    # counts no two sets of rows have (every writer's are sizes of sets, or clipped so): were accepted
    ("intersection-over-support", lambda d: _noisy(d, intersection=d["redescriptions"][0]["noisy"]["support_left"] + 1),
     "redescriptions[0].noisy.intersection: "),
    ("union-under-support", lambda d: _noisy(d, union=d["redescriptions"][0]["noisy"]["support_right"] / 2),
     "redescriptions[0].noisy.union: "),
]


def _noisy(doc: dict, index: int = 0, **values) -> None:
    """Set counts of a redescription's ``noisy`` block."""
    doc["redescriptions"][index]["noisy"].update(values)


def _over_rows(doc: dict, rows: int) -> None:
    """The first redescription's left support one row more than ``rows``, its union as the other counts make it."""
    noisy = doc["redescriptions"][0]["noisy"]
    _noisy(doc, support_left=rows + 1, union=rows + 1 + noisy["support_right"] - noisy["intersection"])


@pytest.mark.parametrize("name, edit, fragment", REFUSED, ids=[r[0] for r in REFUSED])
def test_report_run_refuses_an_inconsistent_document_in_one_line(private_doc, tmp_path, name, edit, fragment):
    edited = _edited(private_doc, tmp_path / "run.json", edit)
    code, err = run_cli(["report", "--run", edited, "--output", tmp_path / "run.html", "--no-figures"])
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {edited}: ") and fragment in err, err
    assert not (tmp_path / "run.html").exists()


def test_inconsistent_counts_name_the_field_and_the_count_they_contradict(private_doc, tmp_path):
    noisy = private_doc["redescriptions"][0]["noisy"]
    for values, message in (
            ({"intersection": noisy["support_right"] + 0.5, "support_left": noisy["support_right"] + 1},
             f"redescriptions[0].noisy.intersection: {noisy['support_right'] + 0.5!r} is more than support_right "
             f"{noisy['support_right']!r} (the rows both queries hold are rows of each)"),
            ({"union": noisy["support_left"] - 1},
             f"redescriptions[0].noisy.union: {noisy['support_left'] - 1!r} is less than support_left"),
            ({"union": noisy["support_left"] + noisy["support_right"] + 1},
             "redescriptions[0].noisy.union: ")):
        edited = _edited(private_doc, tmp_path / "run.json", lambda d: _noisy(d, **values))
        code, err = run_cli(["report", "--run", edited, "--output", tmp_path / "run.html", "--no-figures"])
        assert code == 2 and err.startswith(f"error: {edited}: {message}") and err.count("\n") == 1, err
        assert not (tmp_path / "run.html").exists()
    assert "is more than support_left + support_right" in err


def test_a_count_above_the_rows_a_document_states_is_refused_where_the_counts_are_exact(
        cartwheels_doc, private_doc, planted, tmp_path):
    """A support above the data's rows was accepted: refused where the rows bound the counts, never a noisy count."""
    def with_rows(doc):
        doc["run"] = {"rows": 300}  # what dprm evaluate writes beside a run: the data's 300 rows

    def report(path: Path) -> tuple[int, str]:
        return run_cli(["report", "--run", path, "--output", tmp_path / "run.html", "--no-figures"])

    assert report(_edited(cartwheels_doc, tmp_path / "cw.json", with_rows)) == (0, "")
    edited = _edited(cartwheels_doc, tmp_path / "cw.json", lambda d: (with_rows(d), _over_rows(d, 300)))
    code, err = report(edited)
    assert code == 2 and err == (f"error: {edited}: redescriptions[0].noisy.support_left: 301 is more than the 300 "
                                 "rows of the data (run.rows, the rows cartwheels counted exactly)\n"), err
    # a private run's released counts may exceed the rows (noise): accepted
    assert report(_edited(private_doc, tmp_path / "p.json", lambda d: (with_rows(d), _over_rows(d, 300)))) == (0, "")
    # Serenade's public data size: its counts are clipped to parameters.rows
    serenade = _mined(planted, "serenade-es", data_size="public", rows=300)
    assert serenade["parameters"]["rows"] == 300 and serenade["redescriptions"]
    assert report(_edited(serenade, tmp_path / "s.json", lambda d: None)) == (0, "")
    edited = _edited(serenade, tmp_path / "s.json", lambda d: _over_rows(d, 300))
    code, err = report(edited)
    assert code == 2 and err == (f"error: {edited}: redescriptions[0].noisy.support_left: 301 is more than the 300 "
                                 "rows of the data (parameters.rows, with data_size 'public')\n"), err


@pytest.mark.parametrize("edit, fragment", [
    (lambda d: d["privacy"].update(guarantee="pure-dp", private=True, reasons=[]),
     "privacy.private is true but privacy.ledger lists no release"),  # relabelled, the ledger empty
    (_cartwheels_private, "privacy.guarantee is 'pure-dp', but cartwheels is not a private algorithm (its "
                          "guarantee is 'none')"),
], ids=["empty-ledger", "with-a-ledger"])
def test_report_run_refuses_a_non_private_algorithm_labelled_private(cartwheels_doc, tmp_path, edit, fragment):
    assert cartwheels_doc["privacy"]["guarantee"] == "none"
    edited = _edited(cartwheels_doc, tmp_path / "cw.json", edit)
    code, err = run_cli(["report", "--run", edited, "--output", tmp_path / "cw.html", "--no-figures"])
    assert code == 2 and err.count("\n") == 1 and fragment in err, err
    assert not (tmp_path / "cw.html").exists()


def test_a_byte_order_mark_is_read_past_as_in_a_types_file(private_doc, tmp_path):
    """report --run said "Unexpected UTF-8 BOM" where a types file with one was read."""
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(private_doc).encode("utf-8"))
    assert read_run_document(path)[0] == private_doc
    assert run_cli(["report", "--run", path, "--output", tmp_path / "bom.html", "--no-figures"]) == (0, "")


def test_a_consistent_unspent_rest_is_read_and_shown_beside_the_ledger_total(private_doc, tmp_path):
    """A run that stopped early (dprm's miners: privacy.epsilon is what was spent, the rest stated)."""
    def early(doc):
        doc["privacy"]["ledger"] = doc["privacy"]["ledger"][:-1]  # the last release not made
        spent = math.fsum(e["epsilon"] for e in doc["privacy"]["ledger"])
        doc["privacy"].update(epsilon=spent, unspent=1 - spent)

    edited = _edited(private_doc, tmp_path / "early.json", early)
    privacy = json.loads(edited.read_text())["privacy"]
    assert 0 < privacy["unspent"] < 1 and json.loads(edited.read_text())["parameters"]["epsilon"] == 1
    assert run_cli(["report", "--run", edited, "--output", tmp_path / "early.html", "--no-figures"]) == (0, "")
    text = (tmp_path / "early.html").read_text(encoding="utf-8")
    shown = re.search(r"Privacy ledger: (\d+) releases, ε ([^<]+) in all, ε ([^<]+) left unspent</summary>", text)
    assert shown and int(shown.group(1)) == len(privacy["ledger"])
    for written, value in zip(shown.groups()[1:], (privacy["epsilon"], privacy["unspent"])):
        shown_value = written.split(" (≈")[0].lstrip("≈")  # exact where short, else rounded after ≈
        assert float(Fraction(shown_value)) == pytest.approx(value, rel=1e-2)
    assert "left unspent" not in write_report_of(private_doc, tmp_path)  # a run that spent it all: nothing


def write_report_of(doc: dict, tmp_path: Path) -> str:
    path = _edited(doc, tmp_path / "full.json", lambda d: None)
    assert run_cli(["report", "--run", path, "--output", tmp_path / "full.html", "--no-figures"]) == (0, "")
    return (tmp_path / "full.html").read_text(encoding="utf-8")


def test_every_mechanism_label_agrees_with_its_class():
    """The names the ledger carries map to what the classes guarantee (Serenade's race lives above privacy)."""
    for mechanism in (MetropolisHastings(1), WeightedReservoir(1), WeightedReservoir(1, k=3),
                      StructuredExponentialMechanism(1, 1), ExtensionRace(1, 1, max_age=2)):
        assert mechanism_guarantee(mechanism.name) == mechanism.guarantee, mechanism.name
        assert mechanism_guarantee(f"{mechanism.name}, parallel over 4 disjoint parts") == mechanism.guarantee
    assert mechanism_guarantee("discrete-laplace histogram") == "pure-dp"
    assert DOCUMENT_NEIGHBOURING == NEIGHBOURING


def test_check_run_document_is_what_the_readers_apply(private_doc):
    check_run_document(private_doc, "run.json", algorithm="alt-expm")
    with pytest.raises(DprmError, match=r"^run\.json: algorithm is 'alt-expm', but the document is under "
                                         r"runs/serenade-es/ \(a run of another algorithm\)$"):
        check_run_document(private_doc, "run.json", algorithm="serenade-es")


# -- dprm evaluate resuming an experiment ------------------------------------------------


@pytest.fixture(scope="module")
def experiment(planted, tmp_path_factory) -> tuple[Path, list[str]]:
    # The runs are private (no --seed: a seeded run is labelled "none"), so now and then
    # the first finds nothing; the edits below need a redescription: a fresh experiment then.
    for _ in range(5):
        out = tmp_path_factory.mktemp("experiment") / "exp"
        args = ["evaluate", str(planted / "left.csv"), str(planted / "right.csv"), "--algorithms", "alt-expm",
                "--budgets", "5x2", "--jobs", "1", "--out", str(out), "--types", str(planted / "types.json"),
                "-p", '{"init_trials": 2, "depth": 2}', "--no-reports"]
        assert run_cli(args) == (0, "")
        if json.loads((out / "runs" / "alt-expm" / "5" / "1.json").read_text())["redescriptions"]:
            break
    return out, args


def _text_edit(old: str, new: str):
    def edit(path: Path) -> None:
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return edit


def _json_edit(change):
    def edit(path: Path) -> None:
        doc = json.loads(path.read_text(encoding="utf-8"))
        change(doc)
        path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return edit


RESUME_REFUSED = [
    ("nan", _text_edit('"jaccard": ', '"jaccard": NaN, "x": '), "not valid JSON: NaN is not allowed"),
    ("duplicate-key", _text_edit('"algorithm": "alt-expm"', '"algorithm": "alt-expm", "algorithm": "alt-expm"'),
     "not valid JSON: duplicate key 'algorithm'"),
    ("other-algorithm", _json_edit(lambda d: d.update(algorithm="serenade-es")),
     "algorithm is 'serenade-es', but the document is under runs/alt-expm/ (a run of another algorithm)"),
    ("ledger-cut", _json_edit(lambda d: d["privacy"].update(ledger=d["privacy"]["ledger"][:2])),
     "the ledger's epsilons add up to"),
    ("other-budget", _json_edit(lambda d: (d["privacy"].update(epsilon=2.5), d["parameters"].update(epsilon=2.5),
                                           d["privacy"].update(ledger=[{"step": "a", "epsilon": 2.5,
                                                                        "mechanism": "discrete-laplace count"}]))),
     "the run's budget (privacy.epsilon 2.5) is not its folder's epsilon 5 (a run of another budget)"),
    ("jaccard-7.5", _json_edit(lambda d: d["redescriptions"][0]["noisy"].update(jaccard=7.5)),
     "redescriptions[0].noisy.jaccard: must be in [0, 1], got 7.5"),
    ("intersection-over-support", _json_edit(lambda d: _noisy(
        d, intersection=d["redescriptions"][0]["noisy"]["support_left"] + 1)),
     "redescriptions[0].noisy.intersection: "),
    # refused before any run is mined (it failed the tables after the other runs had run)
    ("absent-attribute", _json_edit(lambda d: _rename_first_attribute(d["redescriptions"][0]["left"], "zz_absent")),
     "redescriptions[0].left: query uses attribute 'zz_absent', which the left view does not have"),
    # the run block went into runs.csv as it was (or was an internal error, exit 1)
    ("run-kept-99", _json_edit(lambda d: d["run"].update(kept=99)), "run.kept is 99, but "),
    ("run-returned-negative", _json_edit(lambda d: d["run"].update(returned=-4)),
     "run.returned must be a whole number >= 0, not -4"),
    ("run-rows-negative", _json_edit(lambda d: d["run"].update(rows=-7)), "run.rows must be a whole number >= 0, not -7"),
    ("run-seconds-negative", _json_edit(lambda d: d["run"].update(seconds=-1e308)),
     "run.seconds must be a finite number >= 0, not -1e+308"),
    ("run-seconds-text", _json_edit(lambda d: d["run"].update(seconds="abc")),
     "run.seconds must be a finite number >= 0, not 'abc'"),
    ("run-peak-1e300", _json_edit(lambda d: d["run"].update(peak_mb=1e300)),
     "run.peak_mb is 1e+300, more memory than a 64-bit address space holds"),
    ("run-null", _json_edit(lambda d: d.update(run=None)), "run must be a JSON object (the run block dprm evaluate "
                                                           "writes), not null"),
    # another experiment's run (another master seed, seed or data) was skipped as this one, done before
    ("run-other-master-seed", _json_edit(lambda d: d["run"].update(master_seed=d["run"]["master_seed"] + 1)),
     "(the experiment's master seed): a run of another experiment"),
    ("run-other-seed", _json_edit(lambda d: d["run"].update(seed=d["run"]["seed"] + 1)),
     "(the seed of run 1 of alt-expm at ε 5): a run of another experiment"),
    ("run-other-rows", _json_edit(lambda d: d["run"].update(rows=299)),
     "run.rows is 299, not 300 (the rows of the data): a run of another experiment"),
]

#: What only the experiment refuses: the document alone is consistent (``dprm report --run`` reads no data).
EXPERIMENT_ONLY = {"other-budget", "other-algorithm", "absent-attribute", "run-other-master-seed", "run-other-seed",
                   "run-other-rows"}


def _rename_first_attribute(query: dict, name: str) -> bool:
    """Rename the first literal's attribute of a query's JSON in place; whether one was found."""
    if "attr" in query:
        query["attr"] = name
        return True
    children = query.get("and") or query.get("or") or ([query["not"]] if "not" in query else [])
    return any(_rename_first_attribute(child, name) for child in children)


@pytest.mark.parametrize("name, edit, fragment", RESUME_REFUSED, ids=[r[0] for r in RESUME_REFUSED])
def test_evaluate_refuses_a_run_document_report_would_refuse_and_writes_nothing(experiment, tmp_path, capsys,
                                                                                name, edit, fragment):
    source, args = experiment
    out = tmp_path / "exp"
    shutil.copytree(source, out)
    document = out / "runs" / "alt-expm" / "5" / "1.json"
    assert json.loads(document.read_text())["redescriptions"], "the run found no redescription to edit"
    edit(document)
    before = sorted((p.relative_to(out), p.stat().st_mtime_ns) for p in out.rglob("*"))
    code, err = run_cli([*(str(out) if a == str(source) else a for a in args)])
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: {document}: ") and fragment in err, err
    assert sorted((p.relative_to(out), p.stat().st_mtime_ns) for p in out.rglob("*")) == before  # nothing written
    code, err = run_cli(["report", "--run", document, "--output", tmp_path / "run.html", "--no-figures"])
    if name not in EXPERIMENT_ONLY:
        assert code == 2 and fragment in err, err  # the same reader


def test_evaluate_resumes_an_untouched_experiment(experiment, tmp_path):
    source, args = experiment
    out = tmp_path / "exp"
    shutil.copytree(source, out)
    assert run_cli([*(str(out) if a == str(source) else a for a in args)]) == (0, "")
