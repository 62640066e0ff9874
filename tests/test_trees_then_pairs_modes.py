"""MCMCTreePair's ``trees-then-pairs`` trial in every way a run is made.

``tests/test_trees_then_pairs.py`` checks the trial in-process at ε = 1; this module
checks the rest: the switch to refined pairs on a sharded engine, a server job, exact
ledgers at awkward budgets with the accountant's refusal after them, the decision as
post-processing of the run's releases (the same releases on another dataset of the
same schema give the same run), and ``dprm mine`` / ``dprm report`` on such a run.

Two tables of the same schema (8 Boolean, 6 numeric attributes): ``independent``, whose
views are drawn independently (the pairs' released top score is weak, so every trial is a
refined pair; with conftest's ``trees_first``, which lets no top score count as weak, the first two trees
trials keep nothing above independence and the rest of the budget goes to refined pairs), and
``related``, one row fewer, with two relations planted (the trees are kept).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pytest

from dprm.data import load_two_view
from dprm.data.attributes import TwoViewData
from dprm.errors import BudgetExceededError
from dprm.mining import make_miner
from dprm.mining.auto_trees import TREES_THEN_PAIRS
from dprm.privacy import Accountant, SeededNoise

ROWS = 3000
TYPES = {"columns": {**{f"a{j}": {"type": "boolean"} for j in range(8)},
                     **{f"x{j}": {"type": "numeric", "bounds": [0, 100]} for j in range(6)}}}


def _frames(n: int, related: bool, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two views: independent, or with ``a0 ↔ x0 > 50`` and ``a1 ↔ x1 > 40 ∧ x2 ≤ 70`` (3 % flipped)."""
    rng = np.random.default_rng(seed)
    left = pd.DataFrame({f"a{j}": rng.random(n) < 0.5 for j in range(8)})
    right = pd.DataFrame({f"x{j}": np.round(rng.uniform(0, 100, n), 1) for j in range(6)})
    if related:
        left["a0"] = (right["x0"] > 50) ^ (rng.random(n) < 0.03)
        left["a1"] = ((right["x1"] > 40) & (right["x2"] <= 70)) ^ (rng.random(n) < 0.03)
    return left, right


def _write(folder: Path, related: bool, seed: int) -> tuple[Path, Path, Path]:
    """The views of :func:`_frames` (``ROWS`` rows) as CSV files and their types file."""
    folder.mkdir(parents=True, exist_ok=True)
    left, right = _frames(ROWS, related, seed)
    left.to_csv(folder / "left.csv", index=False)
    right.to_csv(folder / "right.csv", index=False)
    (folder / "types.json").write_text(json.dumps(TYPES))
    return folder / "left.csv", folder / "right.csv", folder / "types.json"


@pytest.fixture(scope="module")
def independent() -> TwoViewData:
    return load_two_view(*_frames(ROWS, False, 4), types=TYPES)


@pytest.fixture(scope="module")
def related() -> TwoViewData:
    return load_two_view(*_frames(ROWS - 1, True, 2), types=TYPES)


def _switched(steps: list[str]) -> bool:
    """Whether the run made refined pairs, from the start or after its trees trials (from its ledger's steps
    or entries)."""
    return any("literal pair " in step for step in steps)


# -- 1. sharded ----------------------------------------------------------------------------


@pytest.mark.parametrize("after_trees", [False, True])
def test_the_switch_to_pairs_on_shards_gives_the_in_process_output(independent, request, after_trees: bool) -> None:
    """The kept trees run sharded in test_tree_miners_sharded.py; here the refined pairs from the start (the
    weak top score) and after the trees: the top score's, targets' and refinements' counts summed over the
    shards, the same decisions, ledger and document."""
    from test_tree_miners_sharded import PartsEngine, document

    if after_trees:
        request.getfixturevalue("trees_first")
    local = document(make_miner("mcmc-tree-pair", mcmc_iterations=300), independent)
    ledger = json.loads(local)["ledger"]
    assert json.loads(local)["document"]["parameters"]["auto"]["trial"] == TREES_THEN_PAIRS
    assert _switched(ledger) and any("pairs' top score" in entry for entry in ledger)
    assert any("sampleTreePair#1" in entry for entry in ledger) == after_trees
    engine = PartsEngine(independent, 3)
    assert document(make_miner("mcmc-tree-pair", mcmc_iterations=300), engine) == local
    assert {"gain_counts", "refinement_counts", "cell_table"} <= set(engine.opened.calls)


# -- 2. the server -------------------------------------------------------------------------


def test_a_server_job_of_the_default_miner_spends_its_charge_exactly(tmp_path: Path) -> None:
    """A job on a table large enough for trees-then-pairs: done, its ledger rows the releases only (no
    unspent rest) adding up to the charged 0.7 exactly, and the guarantee of what ran: chains with exact
    releases, or (the weak top score's refined pairs) exact releases only."""
    pytest.importorskip("fastapi")
    from sqlalchemy import select

    from dprm.server import budget, jobs
    from dprm.server.database import Database
    from dprm.server.datasets import register_dataset
    from dprm.server.supervisor import Supervisor
    from dprm.server.tables import jobs as jobs_table, ledger
    from dprm.server.units import epsilon_units
    from server_support import setup_server_db

    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    db = Database(url)
    supervisor = Supervisor(db, workers=1, warm=False)
    try:
        register_dataset(db, "weak", *_write(tmp_path / "weak", False, 4))
        with db.write() as connection:
            budget.set_budget(connection, 1, 2, epsilon_units("1"))
        parameters = {"mcmc_iterations": 300}
        body = {"dataset": "weak", "algorithm": "mcmc-tree-pair", "epsilon": "0.7", "parameters": parameters,
                "dummy": False}
        job, created = jobs.submit(db, 1, 2, algorithm="mcmc-tree-pair", parameters=parameters,
                                   units=epsilon_units("0.7"), dummy=False, dummy_rows=None, idempotency_key=None,
                                   digest=jobs.request_digest(body))
        assert created
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            supervisor.round()
            with db.read() as connection:
                row = connection.execute(select(jobs_table).where(jobs_table.c.id == job.id)).one()
                rows = connection.execute(select(ledger).where(ledger.c.job_id == job.id)).all()
            if row.status not in ("queued", "running"):
                break
            time.sleep(0.2)
    finally:
        supervisor.stop()
        db.dispose()
    assert row.status == "done", row.owner_error
    document = json.loads(row.result)
    assert document["parameters"]["auto"]["trial"] == TREES_THEN_PAIRS
    steps = [r.step for r in rows]
    chains = any(step.startswith("sampleTreePair#") for step in steps)
    assert document["privacy"]["guarantee"] == ("pure-dp-on-mcmc-convergence" if chains else "pure-dp")
    assert document["privacy"]["private"]
    assert document["privacy"]["epsilon"] == 0.7 and "unspent" not in document["privacy"]
    assert steps == [entry["step"] for entry in document["privacy"]["ledger"]]  # every release, no rest row
    assert sum((Fraction(r.epsilon_exact) for r in rows), Fraction(0)) == Fraction(7, 10)
    # every outcome (the server's noise is secure): the pairs' top score first, then refined pairs at once,
    # or two trees trials and then trees or refined pairs
    assert steps.index("pairs' top score") < min(k for k, step in enumerate(steps) if "literal pair " in step
                                                 or step.startswith("sampleTreePair#"))
    if chains:
        assert {"sampleTreePair#1", "sampleTreePair#2"} <= set(steps)
        assert _switched(steps) != ("sampleTreePair#3" in steps)
    else:
        assert _switched(steps)


# -- 3. exact ledgers and the refusal --------------------------------------------------------


@pytest.mark.parametrize("dataset, epsilon, switches, after_trees", [
    ("independent", Fraction(10, 7), True, False),  # the weak top score: refined pairs only
    ("independent", Fraction(10, 7), True, True),   # trees trials, then refined pairs
    ("related", "0.7", False, False),               # the trees kept
])
def test_the_ledger_adds_up_exactly_and_the_rest_is_refused(request, dataset: str, epsilon: Any,
                                                            switches: bool, after_trees: bool) -> None:
    """At budgets that are no short binary fractions the releases add up to ε exactly every way; what
    the accountant has left after it (a third, less than ε) refuses the next run before any release."""
    if after_trees:
        request.getfixturevalue("trees_first")
    data = request.getfixturevalue(dataset)
    exact = Fraction(epsilon)
    accountant = Accountant(exact + Fraction(1, 3), SeededNoise(np.random.default_rng(0)))
    miner = make_miner("mcmc-tree-pair", epsilon=epsilon, mcmc_iterations=300)
    miner.fit(data, accountant=accountant, rng=np.random.default_rng(1))
    assert miner.settings_["trial"] == TREES_THEN_PAIRS
    assert _switched([entry.step for entry in accountant.ledger]) == switches
    chains = any(entry.step.startswith("sampleTreePair#") for entry in accountant.ledger)
    assert chains == (after_trees or not switches)
    assert sum((entry.epsilon for entry in accountant.ledger), Fraction(0)) == exact
    assert accountant.remaining() == Fraction(1, 3) and miner.privacy_["epsilon"] == float(exact)
    released = list(accountant.ledger)
    again = make_miner("mcmc-tree-pair", epsilon=epsilon, mcmc_iterations=300)
    with pytest.raises(BudgetExceededError):
        again.fit(data, accountant=accountant, rng=np.random.default_rng(1))
    assert accountant.ledger == released and not hasattr(again, "redescriptions_")


# -- 4. the decision is post-processing ------------------------------------------------------


class TapeNoise:
    """Seeded noise that records every draw's result, or replays a recording (``tape``).

    Replaying, each draw returns the recorded result of the same kind and size (the
    mechanisms then release what they released in the recorded run, whatever the
    data) and fails if the run asks for another kind or size.
    """

    secure = False

    def __init__(self, seed: int, tape: list | None = None) -> None:
        self._inner = SeededNoise(np.random.default_rng(seed))
        self.replaying = tape is not None
        self.tape: list = list(tape) if tape is not None else []

    def _draw(self, kind: str, size: Any, draw: Callable[[], Any]) -> Any:
        if not self.replaying:
            self.tape.append((kind, size, draw()))
            return self.tape[-1][2]
        recorded_kind, recorded_size, result = self.tape.pop(0)
        assert (recorded_kind, recorded_size) == (kind, size)
        return result.copy() if isinstance(result, np.ndarray) else result

    def discrete_laplace(self, values: npt.ArrayLike, scale: float) -> np.ndarray:
        return self._draw("laplace", np.shape(values), lambda: self._inner.discrete_laplace(values, scale))

    def noisy_max(self, scores: npt.ArrayLike, scale: float, sampler: str = "gumbel") -> int:
        return self._draw("max", len(scores), lambda: self._inner.noisy_max(scores, scale, sampler))

    def noisy_max_many(self, score_vectors: Sequence[npt.ArrayLike], scale: float,
                       sampler: str = "gumbel") -> np.ndarray:
        return self._draw("max many", tuple(len(s) for s in score_vectors),
                          lambda: self._inner.noisy_max_many(score_vectors, scale, sampler))

    def uniform(self, size: int) -> np.ndarray:
        return self._draw("uniform", size, lambda: self._inner.uniform(size))

    def gumbel(self, size: int) -> np.ndarray:
        return self._draw("gumbel", size, lambda: self._inner.gumbel(size))


def test_the_same_releases_on_another_table_make_the_same_run(independent, related, monkeypatch) -> None:
    """Post-processing: a run on ``related`` given every release of a run on ``independent`` (counts, choices
    and the chains' trees) switches to pairs as that run did, and writes its document and ledger; and the
    other way round, the trees kept. So the decision and the pairs after it read the rows only through
    the charged mechanisms (the two tables differ in every row and in their number)."""
    import dprm.trees.private as private

    run_chain = private.ChainJob.run
    chains: list = []
    replay = [False]

    def recorded(job: private.ChainJob, advance: Callable[[int], None] | None = None, cancelled=None) -> list:
        if replay[0]:
            return chains.pop(0)
        chains.append(run_chain(job, advance, cancelled))
        return chains[-1]

    monkeypatch.setattr(private.ChainJob, "run", recorded)

    def run(data: TwoViewData, noise: TapeNoise) -> tuple[str, list[str]]:
        accountant = Accountant(1, noise)
        miner = make_miner("mcmc-tree-pair", mcmc_iterations=300)
        miner.fit(data, accountant=accountant, rng=np.random.default_rng(5))
        steps = [entry.step for entry in accountant.ledger]
        return json.dumps({"document": miner.document(), "ledger": [str(e) for e in accountant.ledger]},
                          sort_keys=True, default=str), steps

    for recorded_on, replayed_on, switches in ((independent, related, True), (related, independent, False)):
        chains.clear()
        replay[0] = False
        noise = TapeNoise(1)
        original, steps = run(recorded_on, noise)
        assert _switched(steps) == switches
        replay[0] = True
        replayed = TapeNoise(1, noise.tape)
        own, _ = run(replayed_on, replayed)
        assert own == original and replayed.tape == [] and chains == []  # every release replayed, no more
        replay[0] = False
        _, own_steps = run(replayed_on, TapeNoise(1))
        assert _switched(own_steps) != switches  # on its own releases the other table decides the other way


# -- 5. the command line ---------------------------------------------------------------------


def test_dprm_mine_says_the_switch_and_dprm_report_reads_its_output(tmp_path: Path) -> None:
    """The auto note names the trial and the switch has its own note; the output says the trial in
    ``parameters.auto`` and the pairs in its ledger, and ``dprm report --run`` shows both."""
    from test_cli import run

    left, right, types = _write(tmp_path, False, 4)
    output = tmp_path / "out.json"
    code, out, err = run(["mine", left, right, "--types", types, "--seed", "3", "--mcmc-iterations", "300",
                          "--output", output])
    assert code == 0, err
    said = " ".join(out.split())
    assert "trial trees-then-pairs" in said
    assert re.search(r"trial trees-then-pairs: the released top score of the pairs \(-?\d+ rows\) is below 0\.15 "
                     r"of the rows, so the trials are refined pairs", said)
    document = json.loads(output.read_text())
    assert document["parameters"]["auto"]["trial"] == TREES_THEN_PAIRS
    steps = [entry["step"] for entry in document["privacy"]["ledger"]]
    assert _switched(steps) and document["privacy"]["epsilon"] == 1.0
    code, _, err = run(["report", "--run", output, "-o", tmp_path / "run.html", "--no-figures"])
    assert code == 0, err
    page = (tmp_path / "run.html").read_text()
    assert TREES_THEN_PAIRS in page and "literal pair 1" in page and "top score" in page
