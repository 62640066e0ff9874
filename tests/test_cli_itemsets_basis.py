"""``dprm itemsets --private-method basis``: the PrivBasis-style release on the command line.

The run lists the itemsets whose released supports reach θ, each with its noise
(``support_sd``, a 95 % ``interval``, ``by_closure``), spends exactly ε (the ledger),
prints the releases' noise scales, and refuses what needs an estimate (``--top-k``,
``--sensitive``) before anything is read or spent.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest

from dprm.itemsets.document import read_itemsets
from dprm.itemsets.ground_truth import frequent_itemsets
from test_cli import run
from test_cli_itemsets import write_table


@pytest.fixture
def table(tmp_path: Path) -> tuple[Path, Path, pd.DataFrame]:
    """age -> job -> likes, 6,000 rows, and a types file declaring every column."""
    return write_table(tmp_path, "table.csv")


def test_basis_lists_the_frequent_itemsets_with_their_noise_and_spends_exactly_epsilon(table, tmp_path) -> None:
    csv, types, frame = table
    out = tmp_path / "basis.json"
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.2", "--epsilon", "2", "--types", types,
                                "--private-method", "basis", "--output", out])
    assert code == 0, stderr
    assert stdout.startswith("private: ε = 2 spent (pure-dp)")
    assert "noise (basis; discrete Laplace scale): one-way histograms ±" in stdout
    document = json.loads(out.read_text())
    parameters, privacy = document["parameters"], document["privacy"]
    assert parameters["estimate"] == "dp-basis" and parameters["private_method"] == "basis"
    assert parameters["noise_scale"]["items"] > 0 and privacy["private"] is True
    assert sum(Fraction(e["epsilon"]).limit_denominator(10**9) for e in privacy["ledger"]) == 2
    found = read_itemsets(document)
    assert found, "the planted itemsets reach 0.2 by far"
    truth = frequent_itemsets(frame, 0.2)
    # the most frequent true items (age=young 0.6, likes=yes ~0.7) are listed, with supports near the truth
    for items in ({"age": "young"}, {"likes": "yes"}):
        listed = [s for s in found if s.items == items]
        assert listed and abs(listed[0].support - truth[frozenset(items.items())]) < 0.05
    for entry in document["itemsets"]:
        low, high = entry["interval"]
        assert entry["support_sd"] >= 0 and low <= entry["support"] <= high or entry["support"] in (0.0, 1.0)
        assert isinstance(entry["by_closure"], bool) and 0.0 <= entry["support"] <= 1.0


def test_basis_keeps_max_length_and_its_seeded_run_is_reproducible(table, tmp_path) -> None:
    csv, types, _ = table
    outputs = []
    for name in ("a.json", "b.json"):
        out = tmp_path / name
        code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.1", "--epsilon", "1", "--types", types,
                                    "--private-method", "basis", "--max-length", "1", "--seed", "4", "--output", out])
        assert code == 0, stderr
        assert stdout.startswith("NOT private:") and "seeded noise" in stdout.splitlines()[0]
        outputs.append(json.loads(out.read_text()))
    assert outputs[0]["itemsets"] == outputs[1]["itemsets"]
    assert outputs[0]["itemsets"] and all(len(e["items"]) == 1 for e in outputs[0]["itemsets"])


@pytest.mark.parametrize("extra", [["--top-k", "3"], ["--sensitive", "age"]])
@pytest.mark.parametrize(("method", "why"), [("basis", "lists the itemsets from released supports"),
                                             ("auto", "may list the itemsets from released supports")])
def test_basis_and_auto_refuse_what_needs_an_estimate_before_spending(table, tmp_path, extra, method, why) -> None:
    csv, types, _ = table
    out = tmp_path / "never.json"
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.2", "--epsilon", "1", "--types", types,
                                "--private-method", method, "--output", out] + extra)
    assert code == 2 and stdout == "" and not out.exists()
    assert stderr.strip().splitlines() == [stderr.strip()] and why in stderr


@pytest.mark.parametrize(("epsilon", "seed", "choice", "estimate"),
                         [("2", [], "basis", "dp-basis"), ("0.001", ["--seed", "3"], "chain", "dp-parents")])
def test_auto_runs_the_branch_its_items_choose_and_spends_exactly_epsilon(table, tmp_path, epsilon, seed, choice,
                                                                          estimate) -> None:
    """ε = 2: a pair's noise in the one basis is far below θ·n̂ (basis); ε = 0.001: far above (the chain)."""
    csv, types, _ = table
    out = tmp_path / "auto.json"
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.2", "--epsilon", epsilon, "--types", types,
                                "--private-method", "auto", "--output", out] + seed)
    assert code == 0, stderr
    assert stdout.startswith(f"private: ε = {epsilon} spent (pure-dp)" if not seed else "NOT private:")
    document = json.loads(out.read_text())
    parameters, privacy = document["parameters"], document["privacy"]
    assert parameters["private_method"] == "auto" and parameters["auto_choice"] == choice
    assert parameters["estimate"] == estimate and parameters["pair_noise"] >= 0
    assert sum(Fraction(e["epsilon"]).limit_denominator(10**9) for e in privacy["ledger"]) == Fraction(epsilon)
    assert privacy["ledger"][0]["step"].startswith("items")
    if choice == "basis":  # the itemsets come with their noise, as with --private-method basis
        assert document["itemsets"] and all("support_sd" in entry for entry in document["itemsets"])
        assert "supports are summed from the bases' noisy cells" in stdout
    else:
        assert all("support_sd" not in entry for entry in document["itemsets"])


def test_basis_lists_no_itemset_below_theta_but_by_closure(tmp_path) -> None:
    """An itemset the heavy cells list is reported with their sum, not a plain sum below θ (the fuzz round's vote)."""
    from test_itemsets_private_auto import _prototypes

    codes = _prototypes(400, 10, 1)
    columns = [f"c{j}" for j in range(codes.shape[1])]
    csv, types, out = tmp_path / "proto.csv", tmp_path / "types.json", tmp_path / "out.json"
    pd.DataFrame({c: [f"v{v}" for v in codes[:, j]] for j, c in enumerate(columns)}).to_csv(csv, index=False)
    types.write_text(json.dumps({"columns": {c: {"type": "categorical", "categories": ["v0", "v1", "v2"]}
                                             for c in columns}}))
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.3", "--epsilon", "1", "--types", types,
                                "--private-method", "basis", "--seed", "1", "--output", out])
    assert code == 0, stderr
    document = json.loads(out.read_text())
    assert len(document["itemsets"]) > 100
    below = [entry for entry in document["itemsets"] if entry["support"] < 0.3 and not entry["by_closure"]]
    assert not below, below[:3]
