"""Redescriptions and the dprm.redescriptions/1 document: round trip, atomic write, errors."""

from __future__ import annotations

import copy
import json
import os
import re

import numpy as np
import pytest
from test_queries_helpers import random_query, random_view

from dprm.errors import DprmError, ParameterError
from dprm.queries import (
    FORMAT,
    BooleanLiteral,
    CategoricalLiteral,
    NumericLiteral,
    Redescription,
    RedescriptionStats,
    make_document,
    read_document,
    write_document,
)

PRIVACY = {
    "epsilon": 1.0,
    "neighbouring": "add-remove-one-row",
    "guarantee": "pure-dp",
    "private": True,
    "reasons": [],
    "ledger": [{"step": "count#1", "epsilon": 1.0, "mechanism": "discrete Laplace"}],
}
#: The block of a non-private run that spent nothing (a baseline's).
NOT_PRIVATE = {"epsilon": None, "neighbouring": "add-remove-one-row", "guarantee": "none", "private": False,
               "reasons": ["x is not a private algorithm"], "ledger": []}


def sample_redescriptions(seed: int = 0, count: int = 5) -> list[Redescription]:
    rng = np.random.default_rng(seed)
    view = random_view(rng)
    out = []
    for i in range(count):
        sl, sr = rng.uniform(-5, 100, 2)
        stats = RedescriptionStats.from_counts(sl, sr, rng.uniform(-5, 80), rng.uniform(50, 200) if i % 2 else None)
        extra = {"jaccard_ci": [0.1, 0.9]} if i == 1 else {}
        out.append(Redescription(random_query(rng, view), random_query(rng, view), stats, bool(i % 3 == 0), extra))
    return out


def test_redescription_json_has_spec_keys():
    r = Redescription(
        ~BooleanLiteral("Hypertension") & CategoricalLiteral("State", "CA"),
        NumericLiteral("BirthY", le=1950),
        RedescriptionStats(812.4, 790.1, 701.3, 901.2, 0.778, 1e-9),
        extra={"ci": {"jaccard": [0.7, 0.85]}},
    )
    obj = r.to_json()
    assert list(obj) == ["left", "right", "left_text", "right_text", "noisy", "pruned", "ci"]
    assert obj["left_text"] == "¬Hypertension ∧ [State = CA]"
    assert obj["right"] == {"attr": "BirthY", "le": 1950}
    assert obj["noisy"] == {
        "support_left": 812.4, "support_right": 790.1, "intersection": 701.3,
        "union": 901.2, "jaccard": 0.778, "p_value": 1e-9,
    }
    assert Redescription.from_json(json.loads(json.dumps(obj))) == r
    with pytest.raises(ParameterError, match="'noisy'"):
        Redescription(r.left, r.right, r.stats, extra={"noisy": 1})
    with pytest.raises(ParameterError, match="pruned"):
        Redescription(r.left, r.right, r.stats, pruned=1)


@pytest.mark.parametrize("seed", range(3))
def test_document_round_trip(tmp_path, seed):
    reds = sample_redescriptions(seed)
    doc = make_document("alt-exp-m", {"epsilon": 1.0, "depth": 3}, PRIVACY, reds)
    assert doc["format"] == FORMAT == "dprm.redescriptions/1"
    path = tmp_path / "out.json"
    write_document(doc, path)
    read_doc, read_reds = read_document(path)
    assert read_doc == doc
    assert read_reds == reds
    assert "NaN" not in path.read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


def test_unknown_p_value_written_as_null(tmp_path):
    r = Redescription(BooleanLiteral("a"), BooleanLiteral("b"), RedescriptionStats.from_counts(3.5, 2.5, 1.5))
    path = tmp_path / "out.json"
    write_document(make_document("x", {}, NOT_PRIVATE, [r]), path)
    assert json.loads(path.read_text())["redescriptions"][0]["noisy"]["p_value"] is None
    assert read_document(path)[1] == [r]


def test_numpy_values_are_written(tmp_path):
    r = Redescription(BooleanLiteral("a"), BooleanLiteral("b"), RedescriptionStats.from_counts(3, 2, 1),
                      extra={"ci": np.array([0.25, 0.5]), "k": np.int64(3)})
    doc = make_document("x", {"seed": np.int64(4)}, NOT_PRIVATE, [r])
    write_document(doc, tmp_path / "a.json")
    doc_back, reds = read_document(tmp_path / "a.json")
    assert doc_back["parameters"] == {"seed": 4} and reds[0].extra == {"ci": [0.25, 0.5], "k": 3}


def test_failed_write_keeps_old_file(tmp_path):
    path = tmp_path / "out.json"
    write_document(make_document("x", {}, NOT_PRIVATE, sample_redescriptions()), path)
    before = path.read_bytes()
    bad = make_document("x", {"alpha": float("nan")}, NOT_PRIVATE, [])
    with pytest.raises(DprmError, match=r"out\.json: cannot write a number that is not finite"):
        write_document(bad, path)
    bad = make_document("x", {"f": object()}, NOT_PRIVATE, [])
    with pytest.raises(DprmError, match=r"out\.json: cannot write"):
        write_document(bad, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    with pytest.raises(DprmError, match="cannot write"):
        write_document(make_document("x", {}, NOT_PRIVATE, []), tmp_path / "missing-dir" / "out.json")


def test_existing_file_mode_is_kept(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")
    os.chmod(path, 0o640)
    write_document(make_document("x", {}, NOT_PRIVATE, []), path)
    assert path.stat().st_mode & 0o777 == 0o640
    assert read_document(path)[1] == []


def _valid_doc() -> dict:
    return make_document("alt-exp-m", {"epsilon": 1.0}, PRIVACY, sample_redescriptions(count=5))


def _set(path: list, value):
    def mutate(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _delete(path: list):
    def mutate(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return mutate


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (_set(["redescriptions", 3, "left"], {"attr": "a", "eq": True, "foo": 1}),
         "out.json: redescriptions[3].left: unknown key 'foo'"),
        (_set(["redescriptions", 0, "right"], {"and": [{"attr": "a", "eq": True}]}),
         "out.json: redescriptions[0].right.and: needs two or more queries, got 1"),
        (_set(["redescriptions", 2, "noisy", "jaccard"], "high"),
         "out.json: redescriptions[2].noisy.jaccard: must be a finite number, got 'high'"),
        (_delete(["redescriptions", 1, "noisy", "union"]), "out.json: redescriptions[1].noisy: missing key 'union'"),
        # counts no two sets of rows have: every writer's are sizes of sets, or clipped so (were accepted)
        (_set(["redescriptions", 2, "noisy", "intersection"], 1e6),
         "out.json: redescriptions[2].noisy.intersection: 1000000.0 is more than support_left "),
        (_set(["redescriptions", 3, "noisy", "union"], 0.0),
         "out.json: redescriptions[3].noisy.union: 0.0 is less than support_left "),
        (_set(["redescriptions", 4, "noisy", "union"], 1e6),
         "out.json: redescriptions[4].noisy.union: 1000000.0 is more than support_left + support_right "),
        (_delete(["redescriptions", 4, "pruned"]), "out.json: redescriptions[4]: missing key 'pruned'"),
        (_set(["redescriptions", 4, "pruned"], "no"), "out.json: redescriptions[4].pruned: must be true or false"),
        (_set(["redescriptions", 1], []), "out.json: redescriptions[1]: must be a JSON object"),
        (_set(["format"], "dprm.redescriptions/2"), "out.json: format is 'dprm.redescriptions/2'"),
        (_delete(["privacy"]), "out.json: missing key 'privacy'"),
        (_set(["privacy", "guarantee"], "probably"), "out.json: privacy.guarantee is 'probably'"),
        (_set(["redescriptions"], {}), "out.json: redescriptions must be a list"),
        (_set(["algorithm"], ""), "out.json: algorithm must be a non-empty string"),
        (_set(["parameters"], [1]), "out.json: parameters must be a JSON object"),
        # the documented optional keys, refused as pruned is (a report showed them as nothing, or "1e+310%")
        (_set(["redescriptions", 1, "redundant"], "yes"),
         "out.json: redescriptions[1].redundant: must be true or false, got 'yes'"),
        (_set(["redescriptions", 0, "interval"], "x"),
         "out.json: redescriptions[0].interval: must be a JSON object, got 'x'"),
        (_set(["redescriptions", 2, "interval"], {"confidence": 1e308, "jaccard": [0.1, 0.2]}),
         "out.json: redescriptions[2].interval.confidence: must be a number in (0, 1), got 1e+308"),
        (_set(["redescriptions", 2, "interval"], {"confidence": True}),
         "out.json: redescriptions[2].interval.confidence: must be a number in (0, 1), got True"),
        (_set(["redescriptions", 3, "interval"], {"confidence": 0.95, "jaccard": [0.1]}),
         "out.json: redescriptions[3].interval.jaccard: must be [low, high], two finite numbers, got [0.1]"),
        (_set(["redescriptions", 3, "interval"], {"confidence": 0.95, "p_value": ["0", 1]}),
         "out.json: redescriptions[3].interval.p_value: must be [low, high], two finite numbers, got ['0', 1]"),
        (_set(["redescriptions", 3, "interval"], {"jaccard": {"low": 0.1, "high": "x"}}),
         "out.json: redescriptions[3].interval.jaccard: must be [low, high], two finite numbers, got {'low': 0.1, "),
        (_set(["redescriptions", 3, "interval"], {"significance": {"max_pvalue": 0.01, "probability": 2}}),
         "out.json: redescriptions[3].interval.significance: must be {\"max_pvalue\": a number in (0, 1], "
         "\"probability\": a number in [0, 1]}, got {'max_pvalue': 0.01, "),
        (_set(["redescriptions", 3, "interval"], {"significance": 0.97}),
         "out.json: redescriptions[3].interval.significance: must be {\"max_pvalue\""),
        (_set(["redescriptions", 4, "interval"], [0.1, 0.2, 0.3]),
         "out.json: redescriptions[4].interval: must be a JSON object, or [low, high] of two finite numbers, "
         "got [0.1, "),
    ],
)
def test_malformed_documents(tmp_path, monkeypatch, mutate, message):
    doc = copy.deepcopy(_valid_doc())
    mutate(doc)
    monkeypatch.chdir(tmp_path)
    with open("out.json", "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
    with pytest.raises(DprmError) as info:
        read_document("out.json")
    text = str(info.value)
    assert text.startswith(message) and "\n" not in text
    with pytest.raises(DprmError):  # what cannot be read is not written either
        write_document(doc, "other.json")
    assert not os.path.exists("other.json")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "bad.json: not valid JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
        ('{"format": NaN}', "bad.json: not valid JSON: NaN is not allowed"),
        ('{"format": 1, "format": 2}', "bad.json: not valid JSON: duplicate key 'format'"),
        ("[]", "bad.json: the document must be a JSON object"),
    ],
)
def test_unreadable_documents(tmp_path, monkeypatch, content, message):
    monkeypatch.chdir(tmp_path)
    with open("bad.json", "w", encoding="utf-8") as fh:
        fh.write(content)
    with pytest.raises(DprmError) as info:
        read_document("bad.json")
    assert str(info.value).startswith(message)


def test_missing_file(tmp_path):
    with pytest.raises(DprmError, match=r"nope\.json: cannot read: No such file"):
        read_document(tmp_path / "nope.json")


def test_huge_number_in_noisy_block(tmp_path):
    path = tmp_path / "out.json"
    write_document(_valid_doc(), path)
    text, count = re.subn(r'"jaccard": [^,\n]+', '"jaccard": 1e999', path.read_text(), count=1)
    assert count == 1
    path.write_text(text)
    with pytest.raises(DprmError, match=r"^.*out\.json: redescriptions\[0\]\.noisy\.jaccard: must be a finite number, got inf$"):
        read_document(path)


@pytest.mark.parametrize("change, fragment", [
    ({"private": True, "guarantee": "none"}, "privacy.private is true but privacy.guarantee is 'none'"),
    ({"private": False, "guarantee": "pure-dp; floating-point selection"}, "privacy.private is false"),
    ({"ledger": [{"step": "a", "epsilon": 0.75, "mechanism": "m"}, {"step": "b", "epsilon": 0.5, "mechanism": "m"}]},
     "the ledger's epsilons add up to 1.25, not privacy.epsilon 1"),
    # the fuzz round's: each was shown as a run that spent its whole budget privately
    ({"ledger": [{"step": "a", "epsilon": 0.368, "mechanism": "m"}]},  # a ledger cut to 3 of 8 releases
     "the ledger's epsilons add up to 0.368, not privacy.epsilon 1 (a run that stops early states the rest as "
     "privacy.unspent)"),
    ({"ledger": []}, "privacy.private is true but privacy.ledger lists no release"),
    ({"epsilon": 10000}, "the ledger's epsilons add up to 1, not privacy.epsilon 10000"),
    ({"ledger": [{"step": "a", "epsilon": 0.25, "mechanism": "m"}], "unspent": 0.5},
     "the ledger's epsilons (0.25) add up to neither privacy.epsilon 1 nor, with privacy.unspent 0.5, to it"),
    ({"unspent": "lots"}, "privacy.unspent must be a finite number >= 0 (the budget a run left unspent, beside "
                          "privacy.epsilon), got 'lots'"),
    ({"unspent": -3}, "privacy.unspent must be a finite number >= 0"),
    ({"unspent": None}, "privacy.unspent must be a finite number >= 0"),
    ({"delta": 0.5}, "privacy.delta is given, but privacy.guarantee 'pure-dp' is pure ε-DP (δ belongs to approx-dp)"),
])
def test_a_privacy_block_that_contradicts_itself_is_refused(tmp_path, change, fragment):
    good = make_document("x", {}, {**PRIVACY, "private": True}, sample_redescriptions(count=1))
    path = tmp_path / "good.json"
    path.write_text(json.dumps(good))
    read_document(path)  # consistent: private and pure-dp, the ledger adds up to ε
    early = {**PRIVACY, "private": True, "ledger": [{"step": "a", "epsilon": 0.25, "mechanism": "m"}], "unspent": 0.75}
    path.write_text(json.dumps({**good, "privacy": early}))
    read_document(path)  # an early stop spends less, and states the rest (the spec's form)
    spent = {**early, "epsilon": 0.25}
    path.write_text(json.dumps({**good, "parameters": {"epsilon": 1}, "privacy": spent}))
    read_document(path)  # the miners' form: privacy.epsilon is what was spent, the rest beside it
    path.write_text(json.dumps({**good, "privacy": {**good["privacy"], **change}}))
    with pytest.raises(DprmError, match=re.escape(fragment)):
        read_document(path)


@pytest.mark.parametrize("change", [{"epsilon": 10**400},
                                    {"ledger": [{"step": "a", "epsilon": 10**400, "mechanism": "m"}]}],
                         ids=["epsilon", "ledger"])
def test_a_privacy_epsilon_beyond_the_float_range_is_one_line(tmp_path, change):
    """float(10**400) overflowed while checking that the ledger adds up: an internal error before."""
    good = make_document("x", {}, {**PRIVACY, "private": True}, sample_redescriptions(count=1))
    path = tmp_path / "run.json"
    path.write_text(json.dumps({**good, "privacy": {**good["privacy"], **change}}))
    with pytest.raises(DprmError) as info:
        read_document(path)
    assert "epsilon must be a finite number >= 0" in str(info.value) and str(info.value).endswith("...")
    assert len(str(info.value)) < len(str(path)) + 160  # the value cut short, not 401 digits


def test_a_huge_noisy_integer_is_echoed_short(tmp_path):
    path = tmp_path / "out.json"
    write_document(_valid_doc(), path)
    text, count = re.subn(r'"jaccard": [^,\n]+', '"jaccard": 1' + "0" * 400, path.read_text(), count=1)
    assert count == 1
    path.write_text(text)
    with pytest.raises(DprmError, match=r"noisy\.jaccard: must be a finite number, got 1000+\.\.\.$"):
        read_document(path)


@pytest.mark.parametrize("where", ["seed", "count"])
def test_an_integer_past_pythons_digit_limit_is_one_short_line(tmp_path, where):
    """Python's ValueError told the user to call sys.set_int_max_str_digits()."""
    path = tmp_path / "out.json"
    write_document(_valid_doc(), path)
    huge = "9" * 5000
    text = path.read_text()
    if where == "seed":
        text = text.replace('"epsilon": 1.0', f'"epsilon": 1.0, "seed": {huge}', 1)
    else:
        text, count = re.subn(r'"jaccard": [^,\n]+', f'"jaccard": -{huge}', text, count=1)
        assert count == 1
    path.write_text(text)
    with pytest.raises(DprmError) as info:
        read_document(path)
    message = str(info.value)
    assert message.startswith(f"{path}: holds an integer of 5000 digits (") and "set_int_max_str_digits" not in message
    assert message.endswith("; no value of a redescriptions document needs more than 4300")
    assert len(message) < len(str(path)) + 160


_ONE = {"step": "a", "epsilon": 0.5, "mechanism": "m"}


@pytest.mark.parametrize("change, fragment", [
    # the fuzz round's reports: each was shown as a guarantee the run does not have
    ({"epsilon": "1"}, "privacy.epsilon must be a finite number >= 0 (null only with an empty ledger), got '1'"),
    ({"ledger": [{"step": "extra", "mechanism": "m"}]}, "privacy.ledger[0]: missing key 'epsilon'"),
    ({"private": "yes", "guarantee": "none"}, "privacy.private must be true or false, got 'yes'"),
    ({"ledger": [_ONE, {**_ONE, "epsilon": -5.0}]}, "privacy.ledger[1].epsilon must be a finite number >= 0, got -5.0"),
    ({"ledger": "x"}, "privacy.ledger must be a list of releases, got 'x'"),
    ({"reasons": "x"}, "privacy.reasons must be a list of strings, got 'x'"),
    ({"epsilon": True}, "privacy.epsilon must be a finite number >= 0"),
    ({"epsilon": None}, "privacy.epsilon must be a finite number >= 0 (null only with an empty ledger), got None"),
    ({"neighbouring": 3}, "privacy.neighbouring is 3, expected 'add-remove-one-row' (the spec's one neighbouring "
                          "relation)"),
    ({"neighbouring": "swap"}, "privacy.neighbouring is 'swap', expected 'add-remove-one-row'"),
    ({"ledger": [{**_ONE, "step": 1}]}, "privacy.ledger[0].step must be a non-empty string, got 1"),
    ({"ledger": [_ONE, 0.5]}, "privacy.ledger[1] must be a JSON object, got 0.5"),
    ({"ledger": [{**_ONE, "epsilon": "0.5"}]}, "privacy.ledger[0].epsilon must be a finite number >= 0, got '0.5'"),
    ({"reasons": ["seeded"]}, "privacy.reasons lists why the run is not private, but privacy.private is true"),
    ({"guarantee": "approx-dp"}, "privacy.delta must be a number in [0, 1] (required by approx-dp), got None"),
    ({"delta": 2}, "privacy.delta must be a number in [0, 1] (required by approx-dp), got 2"),
])
def test_a_privacy_block_of_another_form_is_refused_naming_the_key(tmp_path, change, fragment):
    good = make_document("x", {}, PRIVACY, sample_redescriptions(count=1))
    path = tmp_path / "out.json"
    path.write_text(json.dumps({**good, "privacy": {**PRIVACY, **change}}))
    with pytest.raises(DprmError, match="^" + re.escape(f"{path}: {fragment}")):
        read_document(path)


@pytest.mark.parametrize("key", ["epsilon", "neighbouring", "guarantee", "private", "reasons", "ledger"])
def test_a_privacy_block_without_a_key_is_refused(tmp_path, key):
    """``private: true`` with no guarantee, or no guarantee at all, is no statement of privacy."""
    good = make_document("x", {}, PRIVACY, sample_redescriptions(count=1))
    path = tmp_path / "out.json"
    path.write_text(json.dumps({**good, "privacy": {k: v for k, v in PRIVACY.items() if k != key}}))
    with pytest.raises(DprmError, match=re.escape(f"{path}: privacy: missing key {key!r}")):
        read_document(path)
    with pytest.raises(DprmError, match=re.escape(f"privacy: missing key {key!r}")):
        make_document("x", {}, {k: v for k, v in PRIVACY.items() if k != key}, [])  # nor written


def test_a_baseline_that_spent_nothing_has_a_null_epsilon(tmp_path):
    path = tmp_path / "out.json"
    write_document(make_document("x", {}, NOT_PRIVATE, sample_redescriptions(count=1)), path)
    assert read_document(path)[0]["privacy"]["epsilon"] is None
    approx = {**PRIVACY, "guarantee": "approx-dp; floating-point selection", "delta": 1e-6}
    write_document(make_document("x", {}, approx, []), path)
    assert read_document(path)[0]["privacy"]["delta"] == 1e-6
