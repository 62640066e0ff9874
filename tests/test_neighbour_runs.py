"""Whole private runs on neighbouring datasets: what a run says besides its released values is the same.

A private miner's output is its releases (the ledger's mechanisms) and what it computes
from them. Everything else it writes (the ledger's steps and shares, the privacy block's
label and reasons, the parameters it states, its notes) or raises must not depend on the
rows: otherwise one row more or less would show through it, uncharged. Each miner runs
here, with the same seeded noise, on a small declared table and on the table with one row
added that reaches the edges a data-dependent branch would look at: a new category, a
value near a numeric bound, a Boolean's other value (a column constant on the table), or
every value missing. The two runs' released values differ (the row count's, at least),
while their structure must not: the tree miners' notes are compared word for word (at
these budgets every number in them is the same function of the releases on both
tables), Serenade's with their numbers masked (their unions' cap, steepness and score
range are functions of the released row count, which differs by the added row).

At larger budgets the released row count itself can move a public rule across a
threshold (the number of trials ``⌊ε·n̂/600⌋``, Serenade's ``k``); the budgets here stay
clear of those: post-processing of a release may differ, and that is not what this
checks.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dprm.data import load_two_view
from dprm.mining import make_miner
from dprm.privacy import Accountant, SeededNoise

TYPES = {"columns": {"a": {"type": "boolean"}, "x": {"type": "numeric", "bounds": [0, 1000]},
                     "c": {"type": "categorical", "categories": ["p", "q", "r"]},
                     "b": {"type": "boolean"}, "y": {"type": "numeric", "bounds": [0, 10]}}}

#: The rows added: values no row of the table holds (a new category, a Boolean's other value, a
#: number near its bound), and a row missing everywhere.
EDGE_ROWS = {
    "new values": ({"a": True, "x": 999.0, "c": "r"}, {"b": True, "y": 9.5}),
    "all missing": ({"a": None, "x": np.nan, "c": None}, {"b": None, "y": np.nan}),
}

PRIVATE_MINERS = ("mcmc-tree-pair", "alt-expm", "alt-mcmc", "serenade-cs", "serenade-es")
NUMBER = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")


def _table() -> tuple[pd.DataFrame, pd.DataFrame]:
    """60 rows: ``a`` always False, ``y`` constant, ``c`` never ``r``, one ``x`` missing."""
    rng = np.random.default_rng(0)
    n = 60
    left = pd.DataFrame({"a": np.zeros(n, dtype=bool), "x": rng.uniform(0, 5, n), "c": rng.choice(["p", "q"], n)})
    right = pd.DataFrame({"b": rng.integers(0, 2, n).astype(bool), "y": np.full(n, 3.0)})
    left.loc[5, "x"] = np.nan
    return left, right


def _with_row(frame: pd.DataFrame, row: dict[str, Any]) -> pd.DataFrame:
    return pd.concat([frame, pd.DataFrame([row])], ignore_index=True)


def _run(left: pd.DataFrame, right: pd.DataFrame, algorithm: str, epsilon: float, seed: int) -> dict[str, Any]:
    """What the run says besides its released values (and the released values, apart)."""
    try:
        data = load_two_view(left, right, types=TYPES)
        miner = make_miner(algorithm, epsilon=epsilon)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            miner.fit(data, accountant=Accountant(epsilon, SeededNoise(np.random.default_rng(seed))),
                      rng=np.random.default_rng(seed + 7))
        document = miner.document()
    except Exception as error:  # noqa: BLE001 - an error is part of what a run says
        return {"error": f"{type(error).__name__}: {error}"}
    privacy = document["privacy"]
    notes = list(miner.notes_)
    if algorithm.startswith("serenade"):
        notes = [NUMBER.sub("#", note) for note in notes]
    return {
        "ledger": [(e["step"], e["epsilon"], e["mechanism"]) for e in privacy["ledger"]],
        "privacy": {key: value for key, value in privacy.items() if key not in ("ledger", "unspent")},
        "unspent": "unspent" in privacy,
        "parameters": sorted(document["parameters"]),
        "chosen": sorted(document["parameters"].get("chosen") or {}),
        "notes": notes,
        "warnings": sorted(str(w.message) for w in caught),
        # released values: the redescriptions, and the released row count (the tree miners' and
        # Serenade's own attribute: the documents of this small table often keep no redescription)
        "released": (document["redescriptions"], getattr(miner, "_data_size", None), getattr(miner, "_n_hat", None)),
    }


@pytest.mark.parametrize("edge", sorted(EDGE_ROWS))
@pytest.mark.parametrize("algorithm", PRIVATE_MINERS)
def test_a_private_run_says_the_same_on_neighbouring_datasets_but_its_released_values(algorithm: str,
                                                                                    edge: str) -> None:
    left, right = _table()
    added_left, added_right = EDGE_ROWS[edge]
    released_differ = False
    for epsilon in (0.1, 3.0, 15.0):
        for seed in (0, 1):
            small = _run(left, right, algorithm, epsilon, seed)
            large = _run(_with_row(left, added_left), _with_row(right, added_right), algorithm, epsilon, seed)
            assert "error" not in small and "error" not in large, (small, large)
            for key in small:
                if key != "released":
                    assert small[key] == large[key], (epsilon, seed, key)
            released_differ |= small["released"] != large["released"]
    assert released_differ  # the check can fail: the neighbours' runs are not the same run


def test_the_comparison_sees_a_note_that_reads_the_rows(monkeypatch) -> None:
    """The check above can fail: a note that counts the rows (here a miner's note made to say how
    many rows it read) differs between the neighbours, and the comparison sees it."""
    from dprm.mining.private_trees import PrivateTreeMiner

    finish = PrivateTreeMiner._finish_fit

    def leaky(self, data, accountant, tracker):
        finish(self, data, accountant, tracker)
        self.notes_ = [*self.notes_, f"read {self._n_rows} rows"]

    monkeypatch.setattr(PrivateTreeMiner, "_finish_fit", leaky)
    left, right = _table()
    added_left, added_right = EDGE_ROWS["new values"]
    small = _run(left, right, "alt-expm", 3.0, 0)
    large = _run(_with_row(left, added_left), _with_row(right, added_right), "alt-expm", 3.0, 0)
    assert small["ledger"] == large["ledger"] and small["notes"] != large["notes"]
