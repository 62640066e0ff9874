"""A long listing is never held twice over (session 57): the JSON text is written as it is encoded, and the
itemsets are made from their bitsets a batch at a time, not from one code row per itemset of every column.

On the wide 2,000 × 500 table at ε = 1 and θ = 0.9 (1,982,463 itemsets) the whole text (about 3 GB
at its peak) and the code rows (2 GB) took the run to 6.8 GB."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import pandas as pd

from dprm.itemsets import ison
from dprm.itemsets.candidates import ItemCodec
from dprm.itemsets.estimator import DensityEstimator
from test_cli import run


def correlated_frame(seed: int, rows: int = 2000, columns: int = 12) -> pd.DataFrame:
    """Columns of 2 - 3 values mostly equal to the first one: hundreds of frequent itemsets at θ = 0.2."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2, rows)
    data = {}
    for j in range(columns):
        values = np.where(rng.random(rows) < 0.8, base, rng.integers(0, 3, rows))
        data[f"c{j:02d}"] = np.array(["x", "y", "z"])[values]
    return pd.DataFrame(data)


def test_the_json_is_written_as_it_is_encoded(tmp_path: Path, monkeypatch) -> None:
    table = tmp_path / "t.csv"
    correlated_frame(0).to_csv(table, index=False)
    out = tmp_path / "out.json"
    whole = []
    dumps = json.dumps

    def recording_dumps(value, *args, **kwargs):  # the text of any document with itemsets encoded at once
        text = dumps(value, *args, **kwargs)
        if isinstance(value, dict) and "itemsets" in value:
            whole.append(len(text))
        return text

    monkeypatch.setattr(json, "dumps", recording_dumps)
    code, _, stderr = run(["itemsets", table, "--min-support", "0.2", "--seed", "0", "--top", "0", "-o", out])
    assert code == 0, stderr
    document = json.loads(out.read_text(encoding="utf-8"))
    assert len(document["itemsets"]) > 500
    assert whole == []  # never the whole text in memory
    # the same bytes as the text encoded at once
    assert out.read_text(encoding="utf-8") == dumps(document, indent=1, ensure_ascii=False) + "\n"


def test_itemsets_are_decoded_a_batch_at_a_time(monkeypatch) -> None:
    estimator = DensityEstimator(n_chains=2, random_state=0).fit(correlated_frame(1))
    expected = ison.run_ison(estimator, 0.2)
    assert len(expected.itemsets) > 200
    decoded = []
    decode = ItemCodec.decode

    def recording_decode(self, items):
        decoded.append(len(items))
        return decode(self, items)

    monkeypatch.setattr(ItemCodec, "decode", recording_decode)
    monkeypatch.setattr(ison, "DECODE_BATCH", 50, raising=False)  # the old code had none
    got = ison.run_ison(estimator, 0.2)
    assert [(s.items, s.support) for s in got.itemsets] == [(s.items, s.support) for s in expected.itemsets]
    assert max(decoded) <= max(50, ison.BATCH)  # ISON's batches of candidates, and the listing's of 50
    assert len(got.itemsets) not in decoded  # no code row of every itemset at once


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_listing_order_is_the_key_sort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    itemsets = []
    for _ in range(3000):  # many ties of length and support (a sample's shares), some of items too
        k = int(rng.integers(1, 4))
        columns = sorted(rng.choice(["a", "b", "c", "d", "e"], size=k, replace=False).tolist())
        itemsets.append(ison.Itemset({c: str(rng.choice(["x", "y"])) for c in columns},
                                     float(rng.choice([0.25, 0.5, -0.0, 0.0, 0.125]))))
    expected = sorted(itemsets, key=lambda s: (len(s.items), -s.support, list(s.items.items())))
    got = ison.listing_order(itemsets)
    assert [id(s) for s in got] == [id(s) for s in expected]
    assert ison.listing_order([]) == []


def test_the_listing_is_sorted_without_a_key_of_every_itemset(monkeypatch) -> None:
    """Sorting the listing takes no key of each itemset's items at once (about 570 bytes an itemset on the wide
    table: the peak of its run), and the run's listing is the same."""
    estimator = DensityEstimator(n_chains=2, random_state=0).fit(correlated_frame(2))
    expected = ison.run_ison(estimator, 0.2)
    n = len(expected.itemsets)
    assert n > 200
    sorted_at_once = []
    sort = list.sort

    class RecordingList(list):
        def sort(self, *args, **kwargs):
            sorted_at_once.append(len(self))
            return sort(self, *args, **kwargs)

    if hasattr(ison._Miner, "found_itemsets"):
        found_itemsets = ison._Miner.found_itemsets
        monkeypatch.setattr(ison._Miner, "found_itemsets", lambda self: RecordingList(found_itemsets(self)))
    else:  # the old code made the listing with itemsets_of_rows
        itemsets_of_rows = ison.itemsets_of_rows
        monkeypatch.setattr(ison, "itemsets_of_rows", lambda *a: RecordingList(itemsets_of_rows(*a)))
    got = ison.run_ison(estimator, 0.2)
    assert [(s.items, s.support) for s in got.itemsets] == [(s.items, s.support) for s in expected.itemsets]
    assert n not in sorted_at_once


def test_the_document_holds_each_itemsets_items_once() -> None:
    from dprm.itemsets.document import itemsets_document

    listing = [ison.Itemset({"a": "x", "b": "y"}, 0.5), ison.Itemset({"a": "x"}, 0.75)]
    document = itemsets_document(listing, {}, {})
    assert [entry["items"] for entry in document["itemsets"]] == [{"a": "x"}, {"a": "x", "b": "y"}]
    assert document["itemsets"][0]["items"] is listing[1].items  # not a copy of every itemset's items
    other = itemsets_document([ison.Itemset({"a": 1}, 0.5)], {}, {})  # items not text: written as text
    assert other["itemsets"][0]["items"] == {"a": "1"}
