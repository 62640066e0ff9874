"""``dprm itemsets``: frequent itemsets mined from a density estimate of one CSV (ISON).

The run:

1. check the options (θ, δ, ε, chains, bins, seed) and that ``--output`` can be
   written; read the file's header and check the sensitive columns and the types
   file's names; nothing is learned and no budget is spent before this passes;
   the types file's ``na_values`` and ``out_of_bounds`` (with ``--na-values`` and
   ``--out-of-bounds``) are combined as every command combines them
   (:func:`dprm.data.reading.reading_options`);
2. learn the estimate: the online Hoeffding-tree chains (the file streamed in chunks),
   or with ``--epsilon`` the differentially private chains (one chain by default, each
   variable's conditional over parents chosen by the exponential mechanism, or DP trees
   with ``--structure dp-trees``)
   (:func:`dprm.itemsets.private.fit_private_estimator`; the whole file is read);
3. with ``--sensitive``: bring the estimate to t-closeness for those
   quasi-identifiers (Algorithm 1) and check it;
4. mine the itemsets with ISON, write ``--output`` (``dprm.itemsets/1``), print the
   privacy status line and the table. A listing too large is refused before it is
   made (:data:`dprm.itemsets.ison.MAX_ITEMSETS`): one line, nothing written; it reads
   only the estimate, so in a private run it comes after the release, and the line says
   that ε is spent (:func:`spent_refusal`).

Missing values (the empty cell, a declared marker) are no item. When the run declares
missing values (``na_values`` or ``out_of_bounds: clamp``, in the types file or as
options) every column not declared ``complete`` has the missing value in its public
domain (:mod:`dprm.itemsets.domains`); otherwise only an undeclared column holding one
has it, and a missing value in a declared column is an error. ``complete`` columns
are checked, and ``clamp`` makes an undeclared category missing and clamps a binned
number into its edges (:mod:`dprm.itemsets.declarations`).

The estimate without ``--epsilon`` is made of exact counts of the rows, and
t-closeness is a syntactic property, not differential privacy: the status line says
NOT private. t-closeness applied to the DP estimate is post-processing and keeps its
guarantee.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List, Optional

import typer

from dprm.cli.app import command_app
from dprm.cli.coercion import read_number
from dprm.cli.interrupts import terminate_as_interrupt
from dprm.cli.console import console, note, plural
from dprm.cli.outputs import Outputs
from dprm.cli.seeds import check_seed
from dprm.cli.itemsets_declarations import (booleans_as_text, left_out_reason, public_domains, read_frame,
                                            read_header)
from dprm.cli.views import NaValues, OutOfBounds, TypesFile
from dprm.errors import DataError, ParameterError, printable_text, short_repr

app = command_app()

DISTANCES = ("emd", "variational")
#: Largest --chains (:data:`dprm.itemsets.parameters.MAX_CHAINS`, not imported before it is needed).
MAX_CHAINS = 100
#: The parameters' ``estimate`` of a private run, by ``--structure``.
ESTIMATES = {"parents": "dp-parents", "dp-trees": "dp-trees"}
#: The values of ``--learner`` (:data:`dprm.itemsets.parameters.LEARNERS`, not imported before it is needed).
LEARNERS = ("auto", "batch", "hoeffding")
#: The values of ``--private-method`` (:data:`dprm.itemsets.private.PRIVATE_METHODS`).
PRIVATE_METHODS = ("chain", "frequent-items", "mst", "aim", "basis", "auto")
#: The methods that release a synthetic table (dpmm, in its own environment) mined by FP-growth.
SYNTHETIC_METHODS = ("mst", "aim")
#: The methods that release no estimate (no t-closeness, no top-k): the synthetic ones, and ``"basis"``, which
#: lists the itemsets from released supports (PrivBasis-style, :mod:`dprm.itemsets.private_basis`), and
#: ``"auto"``, which may (its branch is chosen on a release, after the options are checked).
NO_ESTIMATE = SYNTHETIC_METHODS + ("basis", "auto")


def parse_bins(specs: list[str] | None) -> dict[str, list[float]]:
    """``COL=e0,e1,...`` options as ``{column: edges}``.

    Examples
    --------
    >>> parse_bins(["age=0,25,50,100"])
    {'age': [0.0, 25.0, 50.0, 100.0]}
    """
    bins: dict[str, list[float]] = {}
    for spec in specs or []:
        name, sep, text = spec.partition("=")
        name = name.strip()
        try:
            edges = [read_number(x, float) for x in text.split(",")] if sep and name else []
        except ValueError:
            edges = []
        if len(edges) < 2 or not all(math.isfinite(e) for e in edges) or any(b <= a for a, b in zip(edges, edges[1:])):
            raise ParameterError(f"--bins {short_repr(spec, 60)}: give COLUMN=e0,e1,... with at least two "
                                 "increasing finite edges")
        if name in bins:
            raise ParameterError(f"--bins: column {name!r} given twice")
        bins[name] = edges
    return bins


def check_options(min_support: float, delta: float | None, sensitive: list[str] | None, chains: int,
                  epsilon: float | None, step: float, max_depth: int, seed: int | None,
                  max_seconds: float | None, max_length: int | None, distance: str) -> None:
    """Every option's range (one-line errors, before anything is read)."""
    if not (math.isfinite(min_support) and 0 < min_support <= 1):
        raise ParameterError(f"--min-support must be in (0, 1], not {min_support:g}")
    if delta is not None and not (math.isfinite(delta) and delta >= 0):
        raise ParameterError(f"--delta must be a number >= 0, not {delta:g}")
    if delta is not None and not sensitive:
        raise ParameterError("--delta needs the quasi-identifiers (--sensitive COL ...)")
    if sensitive and len(set(sensitive)) != len(sensitive):
        twice = next(c for i, c in enumerate(sensitive) if c in sensitive[:i])
        raise ParameterError(f"--sensitive: column {twice!r} is given twice")
    if distance not in DISTANCES:
        raise ParameterError(f"--distance must be one of {', '.join(DISTANCES)}, not {distance!r}")
    if not 1 <= chains <= MAX_CHAINS:
        raise ParameterError(f"--chains must be between 1 and {MAX_CHAINS}, not {chains}")
    if epsilon is not None:
        from dprm.privacy.budget import check_epsilon_range

        check_epsilon_range(epsilon, "--epsilon")
    if not (math.isfinite(step) and 0 < step <= 100):
        raise ParameterError(f"--step must be in (0, 100], not {step:g}")
    if delta is not None and 0 < delta < 1:
        from dprm.itemsets.closeness import MAX_STEPS, smallest_step

        least = smallest_step(delta)
        if step < least:  # as apply_t_closeness refuses it, but before anything is read
            raise ParameterError(f"--step must be in [{least:g}, 100] for --delta {delta:g} (a correction must bring "
                                 f"a distance of 1 below δ within {MAX_STEPS:,} steps), not {step:g}")
    if not 1 <= max_depth <= 10:
        raise ParameterError(f"--max-depth must be between 1 and 10, not {max_depth}")
    check_seed(seed)
    if max_seconds is not None and not (math.isfinite(max_seconds) and max_seconds > 0):
        raise ParameterError(f"--max-seconds must be positive, not {max_seconds:g}")
    if max_length is not None and max_length < 1:
        raise ParameterError(f"--max-length must be at least 1, not {max_length}")


@app.command()
@terminate_as_interrupt()  # SIGTERM ends the run as Ctrl-C does: "interrupted", 130, nothing written
def itemsets(
    learn: Path = typer.Argument(..., metavar="LEARN.csv", show_default=False,
                                 help="The stream: a CSV file, one row per entity (read in chunks)."),
    min_support: float = typer.Option(..., "--min-support", metavar="θ", show_default=False,
                                      help="Least estimated share of rows of a reported itemset, in (0, 1]."),
    sensitive: Optional[List[str]] = typer.Option(
        None, "--sensitive", metavar="COL",
        help="A quasi-identifier: bring the estimate to t-closeness for it (repeatable). "
             "t-closeness is a syntactic property, not differential privacy."),
    delta: Optional[float] = typer.Option(None, "--delta", metavar="δ",
                                          help="Allowed distance from the global distribution (>= 0; default 0)."),
    distance: Optional[str] = typer.Option(
        None, "--distance", metavar="emd|variational",
        help="Distance of t-closeness: Earth Mover's (categories in domain order; the default) or variational."),
    step: Optional[float] = typer.Option(
        None, "--step", metavar="PERCENT",
        help="t-closeness correction per step, percent of the remaining difference (default 10; in (0, 100], "
             "at least 100·(1 - δ^(1/100,000)) so that a correction ends within 100,000 steps: "
             "0.0047 at δ = 0.01)."),
    chains: Optional[int] = typer.Option(
        None, "--chains", metavar="K",
        help="Classifier chains of the ensemble (default 3; with --epsilon 1: every chain splits the budget)."),
    learner: Optional[str] = typer.Option(
        None, "--learner", metavar="auto|batch|hoeffding",
        help="batch: every tree grown from the whole file at once (split decisions from its exact statistics); "
             "hoeffding: the online Hoeffding trees over --passes shuffled passes. auto: batch for a file of "
             "fewer than 200,000 rows (unless --passes is a number), hoeffding for a longer one (a stream); the "
             "default. Not with --epsilon."),
    passes: str = typer.Option("auto", "--passes", metavar="auto|P",
                               help="Hoeffding learner: passes over the file's rows, each in a new random order (a "
                                    "longer stationary stream). auto: enough passes that the trees see at least "
                                    "200,000 rows; a file that long is learned once, in its own order, like a stream "
                                    "(docs/itemsets.md)."),
    grace_period: Optional[int] = typer.Option(
        None, "--grace-period", metavar="N", help="Rows a Hoeffding-tree leaf sees between split tests (default 200)."),
    split_confidence: Optional[float] = typer.Option(
        None, "--split-confidence", metavar="D",
        help="Hoeffding bound's δ: smaller splits later, on surer evidence (default 1e-7)."),
    tie_threshold: Optional[float] = typer.Option(
        None, "--tie-threshold", metavar="T",
        help="Split on the best attribute once the Hoeffding bound falls below T (default 0.1)."),
    epsilon: Optional[float] = typer.Option(
        None, "--epsilon", metavar="ε",
        help="Fit the chains from differentially private releases, spending ε (needs --types declaring every "
             "column)."),
    structure: Optional[str] = typer.Option(
        None, "--structure", metavar="parents|dp-trees",
        help="With --epsilon: each conditional of the chain over parents chosen by the exponential mechanism "
             "(with the chain's order; the default), or a DP decision tree."),
    max_depth: Optional[int] = typer.Option(
        None, "--max-depth", metavar="D", help="With --epsilon --structure dp-trees: depth of the DP trees (default 2)."),
    private_method: Optional[str] = typer.Option(
        None, "--private-method", metavar="chain|frequent-items|mst|aim|basis|auto",
        help="With --epsilon (default: auto, or chain where an estimate is needed: with --sensitive, --top-k, "
             "--chains or --structure): the chain over every declared category (chain), or, with --structure "
             "parents, the one-way histograms first (10 % of ε) and the chain over the items that can reach "
             "--min-support (frequent-items), or a synthetic table from dpmm's MST / AIM (its own environment, "
             "DPRM_DPMM_PYTHON; (ε, δ = 1e-9)-DP) mined by FP-growth (mst, aim), or noisy histograms of a few "
             "sets of items covering the frequent itemsets, each support summed from their cells with its noise "
             "(basis, PrivBasis-style; no estimate), or the one-way histograms first and then basis's release or "
             "the chain, whichever their noisy counts predict the better (auto)."),
    types: TypesFile = None,
    na_values: NaValues = None,
    out_of_bounds: OutOfBounds = None,
    bins: Optional[List[str]] = typer.Option(
        None, "--bins", metavar="COL=e0,e1,...",
        help="Public bin edges of a numeric column (repeatable); numeric columns without bins are refused."),
    categorical_integers: bool = typer.Option(
        False, "--categorical-integers",
        help="Read every undeclared column of at most 20 distinct integer codes (1..10, say) as categorical, "
             "its categories in numeric order (read off the data: with --epsilon the result is NOT private)."),
    max_length: Optional[int] = typer.Option(None, "--max-length", metavar="L", help="Longest itemset reported."),
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds", metavar="S",
                                                help="Stop ISON after about S seconds (itemsets found so far)."),
    top: int = typer.Option(20, "--top", metavar="N", help="Itemsets printed (the JSON has all)."),
    top_k: Optional[int] = typer.Option(
        None, "--top-k", metavar="K",
        help="Report only the K itemsets of largest estimated support among those reaching θ (dense data: "
             "found without listing every frequent itemset)."),
    seed: Optional[int] = typer.Option(None, "--seed", metavar="N",
                                       help="Seed of the chain orders and samples; with --epsilon also of the "
                                            "noise: then NOT private."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE.json", dir_okay=False,
                                          help="Write the itemsets (format dprm.itemsets/1) here."),
) -> None:
    """Mine frequent itemsets from an online density estimate of LEARN.csv (ISON, Geilke & Kramer 2017).

    The estimate is an ensemble of classifier chains of Hoeffding trees learned from
    the stream; itemsets are read off its structure, not off the data. The first line
    says whether the result is differentially private: only with --epsilon and a
    types file declaring every column's categories.
    """
    from dprm.itemsets.document import itemsets_document

    sensitive = list(sensitive or [])
    check_mode_options(epsilon=epsilon, sensitive=sensitive, private_method=private_method, structure=structure,
                       max_depth=max_depth, chains=chains, learner=learner, passes=passes, grace_period=grace_period,
                       split_confidence=split_confidence, tie_threshold=tie_threshold, distance=distance, step=step)
    learner = "auto" if learner is None else learner
    grace_period = 200 if grace_period is None else grace_period
    split_confidence = 1e-7 if split_confidence is None else split_confidence
    max_depth = 2 if max_depth is None else max_depth
    distance = "emd" if distance is None else distance
    step = 10.0 if step is None else step
    if private_method is None:
        private_method = default_private_method(sensitive, top_k, chains, structure)
    structure = "parents" if structure is None else structure
    chains = chains if chains is not None else (1 if epsilon is not None else 3)
    if structure not in ("parents", "dp-trees"):
        raise ParameterError(f"--structure must be parents or dp-trees, not {structure!r}")
    if private_method not in PRIVATE_METHODS or (private_method == "frequent-items" and structure != "parents"):
        raise ParameterError(f"--private-method must be one of {', '.join(PRIVATE_METHODS)} (frequent-items with "
                             f"--structure parents), not {private_method!r}")
    if epsilon is not None and private_method in NO_ESTIMATE and (sensitive or top_k is not None):
        what = {"basis": "lists the itemsets from released supports",
                "auto": "may list the itemsets from released supports"}.get(private_method,
                                                                          "mines the synthetic rows with FP-growth")
        raise ParameterError(f"--private-method {private_method} {what}: --sensitive and --top-k need an estimate "
                             "(chain or frequent-items)")
    check_options(min_support, delta, sensitive, chains, epsilon, step, max_depth, seed, max_seconds,
                  max_length, distance)
    passes_rule = check_learning_options(passes, epsilon, grace_period, split_confidence, tie_threshold, top, top_k)
    if learner not in LEARNERS:
        raise ParameterError(f"--learner must be one of {', '.join(LEARNERS)}, not {learner!r}")
    if out_of_bounds not in (None, "error", "clamp"):
        raise ParameterError(f"--out-of-bounds must be 'error' or 'clamp', not {out_of_bounds!r}")
    bin_edges = parse_bins(bins)
    outputs = Outputs(inputs=[learn, types])
    result: dict[str, Any] = {}
    outputs.add(output, lambda path: write_document(path, result["document"]))
    outputs.check()

    table = read_columns(learn, types, bin_edges, sensitive, epsilon, na_values, out_of_bounds)
    if categorical_integers:  # every undeclared column of integer codes, else the types file's categorical ones
        table.categorical_integers = True
    parameters: dict[str, Any] = {"input": printable_text(learn), "min_support": min_support, "chains": chains,
                                  "estimate": ESTIMATES[structure] if epsilon is not None else "hoeffding-trees",
                                  "epsilon": epsilon, "sensitive": sensitive,
                                  "delta": (0.0 if delta is None else delta) if sensitive else None,
                                  "distance": distance if sensitive else None, "step": step if sensitive else None,
                                  "bins": bin_edges, "max_length": max_length, "max_seconds": max_seconds,
                                  "seed": seed, "na_values": table.na_values,
                                  "out_of_bounds": "clamp" if table.clamp else "error", "missing": table.missing}
    released = None  # the synthetic rows (mst, aim) or the bases (basis), which no estimate stands for
    if epsilon is not None:
        parameters["private_method"] = private_method
        if private_method in SYNTHETIC_METHODS:
            parameters["estimate"] = f"dp-synthetic-{private_method}"
        elif private_method == "basis":
            parameters["estimate"] = "dp-basis"
        estimator, privacy, released = fit_private(learn, table, bin_edges, epsilon, chains, structure, max_depth,
                                                   seed, parameters)
    else:
        estimator, privacy = fit_online(learn, table, bin_edges, chains, passes_rule, grace_period, split_confidence,
                                        tie_threshold, seed, bool(sensitive), parameters, learner,
                                        top_k_reference_rows(min_support) if top_k is not None else None)
    if sensitive:
        from dprm.itemsets.closeness import apply_t_closeness, check_t_closeness

        estimator = apply_t_closeness(estimator, sensitive, 0.0 if delta is None else delta, distance, step)
        report = check_t_closeness(estimator, sensitive, 0.0 if delta is None else delta, distance)
        parameters["t_closeness_check"] = {"ok": report.ok, "nodes_checked": report.nodes_checked,
                                           "max_distance": report.max_distance}
    try:
        run, noise = mine(estimator, released, min_support, max_length, max_seconds, top_k, parameters)
    except ParameterError as error:
        raise spent_refusal(error, epsilon) from None
    result["document"] = itemsets_document(run.itemsets, parameters, privacy, noise)
    written = outputs.commit()
    for message in table.notes:
        note(message)
    print_result(run, privacy, parameters, output, written, top)


def write_document(path: Path, document: dict[str, Any]) -> None:
    r"""Write the itemsets JSON to ``path`` as it is encoded: the text ``json.dumps(document, indent=1,
    ensure_ascii=False) + "\n"``, without holding it.

    An indented encoding is Python's own, which builds a list of every piece of the text
    before joining them: about 1.6 KB a listed itemset at the peak, 3 GB for the 1,982,463
    itemsets of session 57's wide table, while every itemset was held as well.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_document(Path(folder) / "a.json", {"itemsets": [{"items": {"é": "x"}, "support": 0.5}]})
    ...     text = (Path(folder) / "a.json").read_text(encoding="utf-8")
    >>> text == json.dumps({"itemsets": [{"items": {"é": "x"}, "support": 0.5}]}, indent=1, ensure_ascii=False) + "\n"
    True
    """
    with path.open("w", encoding="utf-8") as stream:
        json.dump(document, stream, indent=1, ensure_ascii=False)
        stream.write("\n")


def spent_refusal(error: ParameterError, epsilon: float | None) -> ParameterError:
    """A refusal of the mining (ISON's listing too large, :mod:`dprm.itemsets.ison`) as the command says it: in a
    private run, with what was spent.

    The mining reads the released estimate alone (post-processing), so its refusal depends on
    the rows only through that release; but the release came first and its ``ε`` is spent,
    although no itemset and no ledger is written. Without ``--epsilon`` nothing was spent.

    Examples
    --------
    >>> print(spent_refusal(ParameterError("too many itemsets"), 0.5))
    too many itemsets (the refusal reads only the released estimate, which was released first: ε = 0.5 is spent)
    >>> print(spent_refusal(ParameterError("too many itemsets"), None))
    too many itemsets
    """
    if epsilon is None:
        return error
    return ParameterError(f"{error} (the refusal reads only the released estimate, which was released first: "
                          f"ε = {epsilon:g} is spent)")


def check_mode_options(*, epsilon: float | None, sensitive: list[str], private_method: str | None,
                       structure: str | None, max_depth: int | None, chains: int | None, learner: str | None,
                       passes: str, grace_period: int | None, split_confidence: float | None,
                       tie_threshold: float | None, distance: str | None, step: float | None) -> None:
    """Refuse an option the chosen mode does not use, in one line saying why (before anything is read).

    An option that would have no effect is refused rather than ignored, and the JSON's
    parameters then hold only what was used: the DP estimate's settings (``--private-method``,
    ``--structure``, ``--max-depth``) need ``--epsilon``; the online estimate's
    (``--learner``, ``--grace-period``, ``--split-confidence``, ``--tie-threshold``, and
    ``--passes`` in :func:`check_learning_options`) are not for it; ``--learner batch``
    grows each tree from the whole file in one pass (no Hoeffding setting, no passes);
    ``--max-depth`` is the DP trees' (``--structure dp-trees``); ``--chains`` is the
    chain's, which ``--private-method basis``, ``mst`` and ``aim`` do not build and ``auto``
    builds only when its released items ask for it; t-closeness's
    ``--distance`` and ``--step`` (as ``--delta``) need ``--sensitive``. ``None``: not given.

    Raises
    ------
    ParameterError
        The first option given that its mode does not use.

    Examples
    --------
    >>> check_mode_options(epsilon=None, sensitive=[], private_method="mst", structure=None, max_depth=None,
    ...                    chains=None, learner=None, passes="auto", grace_period=None, split_confidence=None,
    ...                    tie_threshold=None, distance=None, step=None)
    Traceback (most recent call last):
    ...
    dprm.errors.ParameterError: --private-method is a setting of the DP estimate: it needs --epsilon (without it the estimate is the online Hoeffding-tree one, not private)
    """
    online = {"--learner": learner, "--grace-period": grace_period, "--split-confidence": split_confidence,
              "--tie-threshold": tie_threshold}
    if epsilon is None:
        for option, value in {"--private-method": private_method, "--structure": structure,
                              "--max-depth": max_depth}.items():
            if value is not None:
                raise ParameterError(f"{option} is a setting of the DP estimate: it needs --epsilon (without it the "
                                     "estimate is the online Hoeffding-tree one, not private)")
    else:
        for option, value in online.items():
            if value is not None:
                raise ParameterError(f"{option} is for the online estimate; the DP estimate (--epsilon) learns no "
                                     "Hoeffding tree")
        if max_depth is not None and structure != "dp-trees":
            raise ParameterError("--max-depth is the depth of the DP trees: it needs --structure dp-trees")
        if chains is not None and private_method in ("basis", "mst", "aim"):
            raise ParameterError(f"--chains is a setting of the chain; --private-method {private_method} builds no "
                                 "chain")
        if chains is not None and private_method == "auto":
            raise ParameterError("--chains is a setting of the chain; --private-method auto builds one only when its "
                                 "released items ask for it (name --private-method chain to set the chains)")
    if learner == "batch":
        used = {"--passes": None if passes == "auto" else passes, **online, "--learner": None}
        for option, value in used.items():
            if value is not None:
                raise ParameterError(f"{option} is for the Hoeffding learner; --learner batch grows each tree from "
                                     "the whole file at once, in one pass")
    if not sensitive:
        for option, value in {"--distance": distance, "--step": step}.items():
            if value is not None:
                raise ParameterError(f"{option} is a setting of t-closeness: it needs the quasi-identifiers "
                                     "(--sensitive COL ...)")


def check_learning_options(passes: str, epsilon: float | None, grace_period: int, split_confidence: float,
                           tie_threshold: float | None, top: int, top_k: int | None = None) -> int | str:
    """The options of the online estimate and ``--top`` (one-line errors); the passes rule (``auto`` or a number)."""
    from dprm.itemsets.parameters import parse_passes

    passes_rule = parse_passes(passes, option="--passes")
    if passes_rule != "auto" and epsilon is not None:
        raise ParameterError("--passes is for the online estimate; the DP estimate (--epsilon) reads the rows once")
    if grace_period < 1:
        raise ParameterError(f"--grace-period must be >= 1, not {grace_period}")
    if not (math.isfinite(split_confidence) and 0 < split_confidence < 1):
        raise ParameterError(f"--split-confidence must be in (0, 1), not {split_confidence:g}")
    if tie_threshold is not None and not (math.isfinite(tie_threshold) and tie_threshold >= 0):
        raise ParameterError(f"--tie-threshold must be a number >= 0, not {tie_threshold:g}")
    if top < 0:
        raise ParameterError(f"--top must be >= 0, not {top}")
    if top_k is not None and top_k < 1:
        raise ParameterError(f"--top-k must be at least 1, not {top_k}")
    return passes_rule


@dataclass
class Columns:
    """The columns of LEARN.csv to mine and what the types file declares of them (:func:`read_columns`).

    ``missing``: the columns whose public domain has the missing value (no item): every
    column not declared complete when the run declares missing values
    (:attr:`~dprm.cli.itemsets_declarations.Declarations.declares_missing`), else none
    (an undeclared column holding a missing value has it too, read off the data by the
    estimator).
    """

    names: list[str]
    domains: dict[str, list[str]]
    ignored: list[str]
    booleans: list[str]
    notes: list[str]
    #: ``--categorical-integers`` (True), else the columns the types file declares categorical without categories.
    categorical_integers: bool | list[str] = False
    #: The columns declared numeric and their declared bounds (checked: numbers within them; clamped, or not).
    numeric: dict[str, tuple[float, float] | None] = field(default_factory=dict)
    markers: tuple[str, ...] = ("",)
    na_values: list[str] = field(default_factory=list)
    clamp: bool = False
    missing: list[str] = field(default_factory=list)
    complete: list[str] = field(default_factory=list)
    types_source: str | None = None

    @property
    def read_whole(self) -> bool:
        """Whether the file is read as one table here (:func:`prepared_frame`) rather than by the estimator:
        columns left out or read as Booleans, declared markers, complete or numeric columns, or clamping."""
        return bool(self.ignored or self.booleans or len(self.markers) > 1 or self.complete or self.clamp
                    or self.numeric)


def read_columns(learn: Path, types: Path | None, bin_edges: dict[str, list[float]], sensitive: list[str],
                 epsilon: float | None, na_values: list[str] | None = None, out_of_bounds: str | None = None
                 ) -> Columns:
    """The file's header and the types file: the columns to mine, checked against ``--sensitive`` and ``--bins``."""
    header = read_header(learn)
    declared = public_domains(types, header, bin_edges, na_values, out_of_bounds)
    columns = [c for c in header if c not in declared.ignored]
    if not columns:
        raise DataError(f"{types}: every column of {learn} is ignored (ignore / id): nothing to mine",
                        code="no_columns", file=str(types), data_dependent=False)
    for name in list(sensitive) + list(bin_edges):
        reason = left_out_reason(declared, name, types)
        if reason is not None:  # the file has it: not "no column"
            option = "--sensitive" if name in sensitive else "--bins"
            raise ParameterError(f"{option} {name}: {reason}")
        if name not in columns:
            raise ParameterError(f"no column {name!r} in {learn} (columns: {', '.join(columns)})")
    notes: list[str] = []
    if epsilon is not None and any(c not in declared.domains and c not in bin_edges for c in columns):
        notes.append("some columns' categories are not declared (--types): they are read off the data and the "
                     "result is NOT private")
    complete = [c for c in columns if c in declared.complete]
    missing = [c for c in columns if c not in complete] if declared.declares_missing else []
    return Columns(columns, declared.domains, declared.ignored, declared.booleans, notes,
                   categorical_integers=[c for c in declared.categorical if c in columns] or False,
                   numeric={c: bounds for c, bounds in declared.numeric.items() if c in columns},
                   markers=declared.markers,
                   na_values=declared.na_values, clamp=declared.clamp, missing=missing, complete=complete,
                   types_source=declared.source)


def prepared_frame(learn: Path, table: Columns, bin_edges: dict[str, list[float]], *,
                   allow_empty: bool = False) -> Any:
    """LEARN.csv as one table of text, read as the types file says: missing markers, Booleans, complete
    columns checked, values outside their domains clamped (``out_of_bounds: clamp``; its notes added to
    ``table.notes``)."""
    from dprm.itemsets.declarations import check_complete, check_numbers, clamp_to_domains

    source = str(learn)
    frame = read_frame(learn, table.names, allow_empty=allow_empty, na_values=table.markers)
    check_complete(frame, table.complete, source=source, types_source=str(table.types_source))
    frame = booleans_as_text(frame, table.booleans, source)
    frame, notes = check_numbers(frame, table.numeric, clamp=table.clamp, source=source)  # as dprm mine does
    table.notes.extend(notes)
    if table.clamp:
        frame, notes = clamp_to_domains(frame, table.domains, bin_edges, missing=table.missing, source=source)
        table.notes.extend(notes)
    return frame


def mine(estimator: Any, released: Any, min_support: float, max_length: int | None, max_seconds: float | None,
         top_k: int | None, parameters: dict[str, Any]) -> tuple[Any, list[dict[str, Any]] | None]:
    """The itemsets: of the released rows or bases, the top ``k``, or every one ISON finds; the run's
    settings are added to ``parameters``. Also each itemset's noise (``basis``), else None."""
    if released is not None and parameters.get("estimate") == "dp-basis":
        run, noise = basis_run(released, min_support, max_length)
        parameters.update(stopped_early=False, candidates=0, found_per_iteration=[])
        return run, noise
    if released is not None:
        parameters.update(stopped_early=False, candidates=0, found_per_iteration=[])
        return synthetic_run(released, min_support, max_length), None
    if top_k is not None:
        from dprm.itemsets.top_k import run_top_k

        found = run_top_k(estimator, top_k, min_support, max_length, max_seconds)
        parameters.update(top_k=top_k, top_k_threshold=found.threshold, ison_runs=found.runs,
                          stopped_early=found.run.stopped_early or found.run.too_many, candidates=found.candidates,
                          found_per_iteration=found.run.found_per_iteration)
        return found.run, None
    from dprm.itemsets.ison import run_ison

    run = run_ison(estimator, min_support, max_length, max_seconds)
    parameters.update(stopped_early=run.stopped_early, candidates=run.candidates,
                      found_per_iteration=run.found_per_iteration)
    return run, None


def basis_run(release: Any, min_support: float, max_length: int | None) -> tuple[Any, list[dict[str, Any]]]:
    """The itemsets a PrivBasis-style release lists at θ (post-processing), as an ISON-like run, and each one's
    noise: ``support_sd`` (the standard deviation of its summed cells' noise, as a share of the rows), the 95 %
    ``interval`` and ``by_closure`` (listed as a subset of a listed itemset, not on its own count).

    The support is the released count over the released number of rows, clipped to [0, 1]
    (post-processing); the interval is not clipped.
    """
    from dprm.itemsets.ison import IsonRun, Itemset

    order = {name: j for j, (name, _) in enumerate(release.names)}
    listed = [entry for entry in release.named_itemsets(min_support)
              if max_length is None or len(entry["items"]) <= max_length]
    pairs = [(Itemset(dict(sorted(entry["items"].items(), key=lambda item: order[item[0]])),
                      min(max(float(entry["support"]), 0.0), 1.0)),
              {"support_sd": float(entry["support_sd"]), "interval": [float(v) for v in entry["interval"]],
               "by_closure": bool(entry["by_closure"])}) for entry in listed]
    pairs.sort(key=lambda pair: (len(pair[0].items), -pair[0].support, list(pair[0].items.items())))
    return IsonRun([itemset for itemset, _ in pairs]), [noise for _, noise in pairs]


def default_private_method(sensitive: list[str], top_k: int | None, chains: int | None, structure: str | None
                           ) -> str:
    """``--private-method`` when not given: ``"auto"``, or ``"chain"`` where the run needs an estimate.

    ``auto`` (the items' histograms, then one basis or the chain) is the measured better
    release at θ = 0.3 (docs/itemsets.md, eighth round: mushroom at ε = 1 TPR 0.83 against
    the chain's 0.43; nmes and rwas ahead; level at ε = 0.1), but its basis branch lists
    itemsets from released supports without an estimate: t-closeness (``--sensitive``),
    ``--top-k``, ``--chains`` and ``--structure`` (settings of the chain) ask for the chain.

    Examples
    --------
    >>> default_private_method([], None, None, None)
    'auto'
    >>> default_private_method(["age"], None, None, None), default_private_method([], 10, None, None)
    ('chain', 'chain')
    >>> default_private_method([], None, 2, None), default_private_method([], None, None, "parents")
    ('chain', 'chain')
    """
    asks_for_chain = bool(sensitive) or top_k is not None or chains is not None or structure is not None
    return "chain" if asks_for_chain else "auto"


def fit_private(learn: Path, table: Columns, bin_edges: dict[str, list[float]], epsilon: float, chains: int,
                structure: str, max_depth: int, seed: int | None, parameters: dict[str, Any]
                ) -> tuple[Any, dict, Any]:
    """The DP estimate of the whole file (None with ``basis``), its privacy block and what was released
    instead of an estimate: the synthetic rows (mst, aim), the bases (basis), else None.

    Its settings are added to ``parameters``.
    """
    from dprm.itemsets.private import fit_private_estimator

    # No rows reach the private fit, which releases noise only when every domain is declared
    # (refusing would tell n = 0 from n = 1) and refuses otherwise.
    frame = prepared_frame(learn, table, bin_edges, allow_empty=True)
    fit = fit_private_estimator(frame, epsilon, domains=table.domains, bins=bin_edges, missing=table.missing or None,
                                n_chains=chains, structure=structure, max_depth=max_depth, random_state=seed,
                                source=str(learn),
                                categorical_integers=table.categorical_integers,
                                min_support=parameters["min_support"],
                                private_method=parameters.get("private_method", "chain"))
    parameters.update(private_method=fit.parameters["private_method"], noise_scale=fit.parameters["noise"],
                      items=fit.parameters.get("items"))
    if "auto_choice" in fit.parameters:  # "auto": the branch its items' release chose
        parameters.update(auto_choice=fit.parameters["auto_choice"], pair_noise=fit.parameters["pair_noise"])
    if fit.bases is not None:
        parameters.update({key: fit.parameters[key] for key in ("bases", "basis_cells", "edges", "cliques")},
                          estimate="dp-basis")
        return None, fit.privacy, fit.bases
    parameters.update(structure=structure, max_depth=max_depth, max_parents=fit.parameters["max_parents"],
                      epsilon_per_tree=fit.parameters["epsilon_per_tree"], orders=fit.parameters["orders"])
    if fit.synthetic is not None:
        parameters.update(dp_delta=fit.parameters["delta"], synthetic_rows=fit.parameters["synthetic_rows"],
                          marginals=fit.parameters["marginals"])
    return fit.estimator, fit.privacy, fit.synthetic


def synthetic_run(synthetic: Any, min_support: float, max_length: int | None) -> Any:
    """FP-growth's itemsets of the released synthetic rows (post-processing) as an ISON-like run."""
    from dprm.itemsets.ground_truth import frequent_itemsets
    from dprm.itemsets.ison import IsonRun, Itemset

    found = frequent_itemsets(synthetic, min_support, max_length=max_length) if len(synthetic) else {}
    order = {c: j for j, c in enumerate(synthetic.columns)}
    itemsets = [Itemset(dict(sorted(items, key=lambda item: order[item[0]])), float(support))
                for items, support in found.items()]
    itemsets.sort(key=lambda s: (len(s.items), -s.support))
    return IsonRun(itemsets)


def top_k_reference_rows(min_support: float) -> int:
    """The reference samples' rows of a ``--top-k`` run (:func:`dprm.itemsets.top_k.reference_rows`)."""
    from dprm.itemsets.top_k import reference_rows

    return reference_rows(min_support)


def fit_online(learn: Path, table: Columns, bin_edges: dict[str, list[float]], chains: int, passes_rule: int | str,
               grace_period: int, split_confidence: float, tie_threshold: float | None, seed: int | None,
               t_closeness: bool, parameters: dict[str, Any], learner: str = "auto",
               reference_rows: int | None = None) -> tuple[Any, dict]:
    """The online estimate (the file streamed in chunks) and its privacy block; its settings added to ``parameters``.

    ``reference_rows``: the rows of each chain's reference sample (``--top-k``), else the estimate's default.
    """
    from dprm.itemsets import DensityEstimator
    from dprm.itemsets.document import not_private_block

    extra: dict[str, Any] = {} if tie_threshold is None else {"tie_threshold": tie_threshold}
    if reference_rows is not None:
        extra["n_samples"] = reference_rows
        parameters["reference_rows"] = reference_rows
    estimator = DensityEstimator(n_chains=chains, domains=table.domains or None, bins=bin_edges or None,
                                 missing=table.missing or None, grace_period=grace_period,
                                 split_confidence=split_confidence, passes=passes_rule, learner=learner, random_state=seed,
                                 categorical_integers=table.categorical_integers, **extra)
    estimator.fit(prepared_frame(learn, table, bin_edges) if table.read_whole else learn, name=str(learn))
    hoeffding = estimator.learner_ == "hoeffding"  # the batch learner makes no Hoeffding test: its settings null
    parameters.update(learner=estimator.learner_, rows_learned=estimator.n_seen_, passes=estimator.passes_,
                      passes_rule=passes_rule,
                      grace_period=grace_period if hoeffding else None,
                      split_confidence=split_confidence if hoeffding else None,
                      tie_threshold=estimator.tie_threshold if hoeffding else None,
                      orders=[[estimator.columns_[j] for j in c.order] for c in estimator.chains_])
    return estimator, not_private_block(t_closeness=t_closeness)


def print_result(run: Any, privacy: dict, parameters: dict[str, Any], output: Path | None, written: list[Path],
                 top: int) -> None:
    """The status line, the t-closeness check, the itemsets found by length, the top itemsets, the files written."""
    from dprm.cli.display import print_status
    from dprm.itemsets.document import itemsets_table

    print_status(privacy, output, parameters["epsilon"])
    noise = parameters.get("noise_scale") or {}
    scales = [f"{what} ±{noise[key]:.3g} rows" for key, what in (("items", "one-way histograms"),
                                                                 ("pairs", "pairs' two-way histograms"),
                                                                 ("tables", "tables per cell")) if noise.get(key)]
    if scales:
        source = "summed from the bases' noisy cells (post-processing; each with its noise in the JSON)" \
            if parameters.get("estimate") == "dp-basis" else "read off the noisy estimate (post-processing)"
        console.print(f"noise ({parameters['private_method']}; discrete Laplace scale): {', '.join(scales)}; the "
                      f"supports are {source}", soft_wrap=True)
    if noise.get("marginals"):
        low, high = noise["gaussian_min"], noise["gaussian_max"]
        spread = f"±{low:.3g} rows" if math.isclose(low, high) else f"±{low:.3g} to ±{high:.3g} rows"
        console.print(f"noise ({parameters['private_method']}; Gaussian scale, zCDP, "
                      f"δ = {parameters['dp_delta']:g}): {plural(noise['marginals'], 'measured marginal')} {spread}; "
                      "the supports are those of "
                      f"{parameters['synthetic_rows']} synthetic rows (post-processing, no interval)", soft_wrap=True)
    sensitive = parameters["sensitive"]
    if sensitive:
        check = parameters["t_closeness_check"]
        console.print(f"t-closeness (δ = {parameters['delta']:g}, {parameters['distance']}) for "
                      f"{', '.join(sensitive)}: {'every' if check['ok'] else 'NOT every'} node of "
                      f"{plural(check['nodes_checked'], 'node')} checked is within δ", soft_wrap=True)
    lengths: dict[int, int] = {}
    for s in run.itemsets:
        lengths[len(s.items)] = lengths.get(len(s.items), 0) + 1
    by_length = ", ".join(f"{n} of length {k}" for k, n in sorted(lengths.items()))
    stopped = " (stopped early: --max-seconds)" if run.stopped_early else ""
    if parameters.get("top_k") is not None:
        stopped += (f" (--top-k {parameters['top_k']}: those of largest support, found at threshold "
                    f"{parameters['top_k_threshold']:.4g})")
    console.print(f"{plural(len(run.itemsets), 'itemset')} with estimated support >= {parameters['min_support']:g}"
                  f"{': ' + by_length if by_length else ''}{stopped}", soft_wrap=True)
    if top and run.itemsets:
        ranked = sorted(run.itemsets, key=lambda s: (-s.support, len(s.items)))
        console.print(itemsets_table(ranked, top), soft_wrap=True, markup=False, highlight=False)
    for path in written:
        console.print(f"wrote the itemsets to {path}", soft_wrap=True)
