"""private_method="mst" / "aim": dpmm's synthetic table, charged before it runs, mined by FP-growth.

Most tests replace the worker run (``dprm.privacy.dpmm_runner.run_dpmm``) by a
recorder that returns codes drawn from the request's domain, so they run in
milliseconds and check what this side owns: the budget charged whole before the
worker starts, the ledger adding up exactly, the request holding nothing but the codes
and the public domain (the same on neighbouring datasets, the row count never sent),
the guarantee labels, the noise scales' derivation, and the command line. The real
worker is exercised by ``tests/test_synthetic_baseline.py`` (a run on a tiny table takes
minutes on a loaded machine: too slow here) and by ``benchmarks/quality_itemsets_private.py``.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import dprm.privacy.dpmm_runner as dpmm_module
from dprm.errors import ParameterError
from dprm.privacy.dpmm_runner import SyntheticUnavailable
from dprm.itemsets.private import fit_private_estimator
from dprm.itemsets.private_synthetic import (DEFAULT_DELTA, SEEDED_SYNTHETIC_REASON, SYNTHETIC_GUARANTEE, cdp_delta,
                                             cdp_rho, mst_sigma, noise_scales)
from dprm.privacy import Accountant, SecureNoise
from dprm.privacy.accountant import combine_guarantees

DOMAINS = {"a": ["x", "y", "z"], "b": ["u", "v"], "c": ["k", "l"]}


def _table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y"], p=[0.7, 0.3], size=n)  # "z" is declared but absent
    b = np.where(a == "x", "u", rng.choice(["u", "v"], size=n))
    return pd.DataFrame({"a": a, "b": b, "c": rng.choice(["k", "l"], size=n)})


class FakeWorker:
    """Stands for the dpmm run: records each request and the ledger at that moment; returns codes."""

    def __init__(self, accountant: Accountant | None = None) -> None:
        self.requests: list[dict] = []
        self.accountant = accountant

    def __call__(self, model, codes, domain, *, python, work, epsilon, delta, seed, n_iters, timeout):
        spent = None if self.accountant is None else self.accountant.spent()
        self.requests.append({"model": model, "codes": codes.copy(), "domain": dict(domain), "epsilon": epsilon,
                              "delta": delta, "seed": seed, "spent_before": spent})
        rng = np.random.default_rng(0)
        rows = {c: rng.integers(0, size, size=50) for c, size in domain.items()}
        rows["c0"][:40], rows["c0"][40:] = 0, 1  # a frequent item to mine: 40 of 50 rows
        return pd.DataFrame(rows), {"cliques": [[c] for c in domain], "seconds": 0.0, "rows": 50,
                                    "measured": [[[c], 3.0] for c in domain]}


@pytest.fixture
def fake(monkeypatch, tmp_path):
    python = tmp_path / "python"
    python.write_text("")
    monkeypatch.setenv("DPRM_DPMM_PYTHON", str(python))
    worker = FakeWorker()
    monkeypatch.setattr(dpmm_module, "run_dpmm", worker)
    return worker


@pytest.mark.parametrize("method", ["mst", "aim"])
def test_the_whole_budget_is_charged_once_before_the_worker_runs(fake, method):
    accountant = Accountant(Fraction(3, 10), SecureNoise())
    fake.accountant = accountant
    fit = fit_private_estimator(_table(), "0.3", domains=DOMAINS, private_method=method, accountant=accountant)
    assert fake.requests[0]["spent_before"] == Fraction(3, 10)  # charged before the worker started
    assert accountant.spent() == Fraction(3, 10) and len(accountant.ledger) == 1
    ledger = fit.privacy["ledger"]
    assert len(ledger) == 1 and ledger[0]["epsilon"] == 0.3 and ledger[0]["delta"] == DEFAULT_DELTA
    assert sum(Fraction(e["epsilon"]) for e in ledger) == Fraction(0.3)
    assert fit.privacy["guarantee"] == SYNTHETIC_GUARANTEE and fit.privacy["private"]
    assert fit.privacy["delta"] == DEFAULT_DELTA
    assert fake.requests[0]["model"] == method and fake.requests[0]["epsilon"] == 0.3
    assert fake.requests[0]["seed"] is None
    # The synthetic rows come back as the declared categories' text, and the estimate covers them.
    assert set(fit.synthetic.columns) == set(DOMAINS)
    assert all(set(fit.synthetic[c]) <= set(DOMAINS[c]) for c in DOMAINS)
    assert fit.parameters["synthetic_rows"] == 50 and fit.parameters["private_method"] == method
    assert fit.estimator.density({"a": "x"}) > 0.5


def test_the_request_is_the_same_public_domain_on_neighbouring_datasets(fake):
    """Only the codes depend on the rows: the domain, ε, δ and the model are the same for D and D ± one row."""
    data = _table(60)
    neighbours = [data.drop(index=0), pd.concat([data, pd.DataFrame({"a": ["z"], "b": ["v"], "c": ["l"]})])]
    for table in [data, *neighbours]:
        fit_private_estimator(table, 1.0, domains=DOMAINS, private_method="mst",
                              accountant=Accountant(1, SecureNoise()))
    first = fake.requests[0]
    for request in fake.requests[1:]:
        assert {k: v for k, v in request.items() if k != "codes"} == {k: v for k, v in first.items() if k != "codes"}
    assert [len(r["codes"]) for r in fake.requests] == [60, 59, 61]
    assert first["domain"] == {"c0": 3, "c1": 2, "c2": 2}  # "z" declared, absent from D: still a code
    assert "rows" not in first and "n" not in first


def test_seeded_or_undeclared_runs_say_why_they_are_not_private(fake):
    fit = fit_private_estimator(_table(), 1.0, domains=DOMAINS, private_method="mst", random_state=4)
    assert fit.privacy["guarantee"] == "none" and SEEDED_SYNTHETIC_REASON in fit.privacy["reasons"]
    assert isinstance(fake.requests[-1]["seed"], int)
    fit = fit_private_estimator(_table(), 1.0, domains={"a": DOMAINS["a"]}, private_method="aim",
                                accountant=Accountant(1, SecureNoise()))
    assert fit.privacy["guarantee"] == "none" and any("read off the data" in r for r in fit.privacy["reasons"])


def test_a_missing_environment_is_one_line_and_spends_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("DPRM_DPMM_PYTHON", str(tmp_path / "no-such-python"))
    accountant = Accountant(1, SecureNoise())
    with pytest.raises(SyntheticUnavailable) as caught:
        fit_private_estimator(_table(), 1.0, domains=DOMAINS, private_method="mst", accountant=accountant)
    assert "\n" not in str(caught.value) and "DPRM_DPMM_PYTHON" in str(caught.value)
    assert accountant.ledger == [] and accountant.spent() == 0


def test_an_unknown_method_is_refused():
    with pytest.raises(ParameterError, match="private_method"):
        fit_private_estimator(_table(), 1.0, domains=DOMAINS, private_method="privbayes")


def test_zcdp_conversion_and_mst_noise_scale():
    """ρ is the largest whose δ bound holds; MST's n marginals at σ spend n/(2σ²) = ρ/3 (sensitivity 1 each)."""
    for eps in (0.1, 1.0, 3.0):
        rho = cdp_rho(eps, 1e-9)
        assert cdp_delta(rho, eps) <= 1e-9 < cdp_delta(rho * 1.001, eps)
    assert cdp_rho(0.1, 1e-9) < cdp_rho(1.0, 1e-9) < cdp_rho(3.0, 1e-9)
    for n in (2, 10, 22):
        sigma = mst_sigma(1.0, 1e-9, n)
        assert n / (2 * sigma**2) == pytest.approx(cdp_rho(1.0, 1e-9) / 3)
    aim = noise_scales("aim", {"measured": [[[0], 12.0], [[0, 1], 30.5]]}, 1.0, 1e-9, 2)
    assert aim == {"gaussian_min": 12.0, "gaussian_max": 30.5, "marginals": 2}


def test_approx_dp_is_weaker_than_pure_dp_and_keeps_its_qualifier():
    assert combine_guarantees(["pure-dp", SYNTHETIC_GUARANTEE]) == SYNTHETIC_GUARANTEE
    assert combine_guarantees(["pure-dp-on-mcmc-convergence", "approx-dp"]) == "approx-dp"
    assert combine_guarantees(["approx-dp", "none"]) == "none"


def test_command_line_mines_the_synthetic_rows_and_shows_the_noise(fake, tmp_path):
    from test_cli import run

    csv, types, out = tmp_path / "t.csv", tmp_path / "types.json", tmp_path / "out.json"
    _table().to_csv(csv, index=False)
    types.write_text(json.dumps({"columns": {c: {"categories": v} for c, v in DOMAINS.items()}}))
    code, stdout, stderr = run(["itemsets", csv, "--min-support", "0.5", "--epsilon", "1", "--types", types,
                                "--private-method", "mst", "--output", out])
    assert code == 0, stderr
    assert stdout.splitlines()[0].startswith("private: ε = 1 spent, δ = 1e-09 (approx-dp; floating-point selection)")
    assert "noise (mst; Gaussian scale, zCDP, δ = 1e-09): 3 measured marginals ±" in stdout
    document = json.loads(out.read_text())
    assert document["parameters"]["estimate"] == "dp-synthetic-mst"
    assert document["privacy"]["guarantee"] == SYNTHETIC_GUARANTEE
    assert sum(e["epsilon"] for e in document["privacy"]["ledger"]) == 1.0
    # FP-growth on the 50 synthetic rows: a = x holds in 40 of them (the fake's frequent item).
    assert {"items": {"a": "x"}, "support": 0.8} in document["itemsets"]
    code, _, stderr = run(["itemsets", csv, "--min-support", "0.5", "--epsilon", "1", "--types", types,
                           "--private-method", "mst", "--top-k", "3"])
    assert code == 2 and "--top-k need an estimate" in stderr

