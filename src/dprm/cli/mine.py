"""``dprm mine``: mine redescriptions of two views, privately or not.

The miner options are not written out here: they are generated from the miners'
own signatures and specs (:mod:`dprm.cli.miner_options`), with each option's help,
the algorithms it applies to and their defaults, so that a parameter added to a
miner is an option at once. The run:

1. check the options: the algorithm, the miner's parameters and their bounds
   (:meth:`~dprm.mining.Miner.check_parameters`), and that every output file can be
   written; nothing is read and no budget is spent before this passes;
2. load the views, printing each silent change of the data layer as a ``note:``;
3. mine, with a progress bar on runs longer than a second;
4. write the outputs (all or none), then print the privacy status line, the table
   (redundant redescriptions hidden by default) and the miner's notes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

import typer

from dprm.cli.app import command_app
from dprm.cli.console import console, note, plural
from dprm.cli.interrupts import terminate_as_interrupt
from dprm.cli.miner_options import given_parameters, option_parameters, option_table, with_options
from dprm.cli.outputs import Outputs
from dprm.cli.seeds import check_seed
from dprm.cli.views import (DuplicateColumns, EngineOption, IdColumn, LeftView, NaValues, OutOfBounds, RightView,
                            ShardsOption, TypesFile, check_engine, load_views, open_engine, print_notes)
from dprm.errors import DataError, ParameterError, short_repr

app = command_app()

#: Upper bound of --top: redescriptions printed.
MAX_TOP = 1_000_000



@lru_cache(maxsize=1)
def _algorithms() -> dict[str, Any]:
    from dprm.mining import ALGORITHMS

    return ALGORITHMS


def miner_options() -> dict[str, dict[str, Any]]:
    """Every miner parameter: its kind, the algorithms it applies to and their defaults."""
    return option_table(_algorithms())


def mine(
    left: LeftView,
    right: RightView,
    algorithm: Optional[str] = typer.Option(
        None, "--algorithm", "-a", metavar="NAME",
        help="The miner: cartwheels, reremi (not private); alt-expm, alt-mcmc, mcmc-tree-pair, serenade-cs, "
             "serenade-es, serenade-es-nosens (private). Default: the private default miner, mcmc-tree-pair with "
             "initial targets chosen by their association with the other view and trials, depth and budget "
             "shares set from epsilon and the noisy row count (options given override them)."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", metavar="ε",
                                            help="Privacy budget of a private algorithm, spent exactly "
                                                 "(default 1)."),
    seed: Optional[int] = typer.Option(None, "--seed", metavar="N",
                                       help="Seed: the run is reproducible, and then NOT private."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE.json", dir_okay=False,
                                          help="Write every redescription, the parameters and the ledger here."),
    clired: Optional[Path] = typer.Option(None, "--clired", metavar="FILE", dir_okay=False,
                                          help="Also write the queries in Siren/clired's format here."),
    id_column: IdColumn = None,
    types: TypesFile = None,
    duplicate_columns: DuplicateColumns = "rename",
    na_values: NaValues = None,
    out_of_bounds: OutOfBounds = None,
    top: int = typer.Option(20, "--top", metavar="N", help="Redescriptions shown in the table."),
    redundant: str = typer.Option(
        "hide", "--redundant", metavar="hide|show",
        help="Redescriptions covering nearly the same entities as a better one: 'hide' them from the "
             "table, or 'show' all. Private runs judge this from the released values only."),
    max_overlap: float = typer.Option(
        0.9, "--max-overlap", metavar="X",
        help="Redundant: the Jaccard index of the entities (L ∩ R) two redescriptions describe is above X, "
             "in (0, 1]."),
    mark_redundant: bool = typer.Option(
        True, "--mark-redundant/--no-mark-redundant",
        help="Mark the ones the table leaves out as redundant in the JSON (\"redundant\": true), so that "
             "dprm report counts as the table does; the JSON always has all."),
    engine: EngineOption = "in-process",
    shards: ShardsOption = 2,
    **miner_parameters: Any,
) -> None:
    """Mine redescriptions of two views LEFT and RIGHT.

    Private algorithms spend exactly --epsilon and need a types file declaring the
    public domains; the first line of output says whether the run is private.
    Sizes are in rows (--min-support) or shares of rows (--max-support) as stated.
    """
    from dprm.mining import default_algorithm, default_parameters, make_miner

    algorithms = _algorithms()
    defaults: dict[str, Any] = {}
    chose_default = algorithm is None
    if chose_default:  # the default private miner (dprm.mining.default)
        algorithm, defaults = default_algorithm(epsilon), default_parameters(epsilon)
    if algorithm not in algorithms:
        raise ParameterError(f"unknown algorithm {short_repr(algorithm)}; choose one of: {', '.join(algorithms)}")
    given = {**defaults, **given_parameters(algorithms, algorithm, miner_parameters)}
    private_algorithm = "epsilon" in miner_options() and algorithm in miner_options()["epsilon"]["defaults"]
    if epsilon is not None:
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ParameterError(f"--epsilon must be finite and positive, not {epsilon}")
        if private_algorithm:
            given["epsilon"] = epsilon
    check_seed(seed)
    if not 0 <= top <= MAX_TOP:
        raise ParameterError(f"--top must be between 0 and {MAX_TOP:,}, not {top}")
    if redundant not in ("hide", "show"):
        raise ParameterError(f"--redundant must be 'hide' or 'show', not {redundant!r}")
    if not (math.isfinite(max_overlap) and 0 < max_overlap <= 1):
        raise ParameterError(f"--max-overlap must be in (0, 1], not {max_overlap}")
    redundancy = Redundancy(max_overlap=max_overlap, exact=not private_algorithm)
    miner = make_miner(algorithm, **given)  # checks every parameter and its bounds
    address = check_engine(engine, shards)
    if address is not None and not getattr(miner, "counts_through_engine", False):
        from dprm.mining import sharded_algorithms

        raise ParameterError(f"{algorithm} does not run on --engine ray yet ({', '.join(sharded_algorithms())} do)")
    if epsilon is not None and not private_algorithm:
        note(f"{algorithm} is not private; --epsilon is ignored")
    if private_algorithm and types is not None:  # before any row is read or any budget spent
        from dprm.data.loading import check_declared_columns
        from dprm.data.types_file import read_types_file

        spec = read_types_file(types)
        try:
            spec.check_public_domains()
        except DataError:  # a column in neither file is said to be one first, as inspect says (headers only)
            check_declared_columns(spec, left, right, duplicate_columns)
            raise
    outputs = Outputs(inputs=[left, right, types])
    outputs.add(output, lambda path: _write_document(miner, seed, path, redundancy if mark_redundant else None))
    outputs.add(clired, lambda path: _write_clired(miner, path))
    outputs.check()

    options = dict(id_column=id_column, types=types, duplicate_columns=duplicate_columns, na_values=na_values,
                   out_of_bounds=out_of_bounds)
    if address is None:
        with terminate_as_interrupt():  # SIGTERM ends the run as Ctrl-C does: "interrupted", 130, nothing written
            data = load_views(left, right, **options)
            redundancy.data, redundancy.declared_complete = data, _declared_complete(data)
            _check_clired(clired, data)
            _fit(miner, data, seed, algorithm, private_algorithm)
    else:  # sharded: the rows stay in the shards; only the schema is here
        with terminate_as_interrupt(), open_engine(address, shards, left, right, **options) as sharded:
            data = sharded.schema
            redundancy.declared_complete = _declared_complete(data)
            _check_clired(clired, data)
            _fit(miner, sharded, seed, algorithm, private_algorithm)
        if redundancy.exact and (redundant == "hide" or mark_redundant):
            note("redundant redescriptions are judged from their statistics only: with --engine ray the rows "
                 "stay in the shards (in-process, from their supports; the lists may differ)")
    written = outputs.commit()
    print_notes(data)

    from dprm.cli.display import displayed, print_redescriptions, print_status

    private = print_status(miner.privacy_, output, getattr(miner, "epsilon", None))
    shown, hidden = miner.redescriptions_, 0
    if redundant == "hide":
        shown = redundancy.shown(miner.redescriptions_)
        hidden = len(miner.redescriptions_) - len(shown)
    print_redescriptions(shown, top, noisy=private_algorithm, private=private, hidden=hidden,
                         complete=redundancy.complete())
    if chose_default:
        console.print(f"[dim]default miner: {algorithm} with scored initial targets and auto settings "
                      f"(--algorithm chooses another)[/dim]", soft_wrap=True)
    for message in miner.notes_:
        console.print(f"[dim]{message}[/dim]")
    if not redundancy.exact:
        categories = {a.name: a.domain.categories for view in data.views for a in view
                      if a.domain.categories is not None}
        hint = completeness_hint(displayed(shown, top), redundancy.declared_complete, categories)
        if hint:
            console.print(f"[dim]{hint}[/dim]", soft_wrap=True)
    for path in written:
        what = plural(len(miner.redescriptions_), "redescription") if path == output else "the queries in Siren/clired's format"
        console.print(f"wrote {what} to {path}", soft_wrap=True)


def _fit(miner: Any, data: Any, seed: int | None, algorithm: str, private_algorithm: bool) -> None:
    """Fit ``miner`` with secure noise (or seeded noise with ``seed``) and a progress bar."""
    import numpy as np

    from dprm.cli.progress import WorkProgress
    from dprm.privacy import Accountant, SecureNoise, SeededNoise

    choices, noise = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    accountant = None
    if private_algorithm:
        accountant = Accountant(miner.epsilon, SecureNoise() if seed is None else SeededNoise(noise))
    with WorkProgress(f"mining with {algorithm}") as progress:
        miner.fit(data, accountant=accountant, rng=choices, progress=progress)


@dataclass
class Redundancy:
    """The redundancy filter as the options set it (:mod:`dprm.mining.redundancy`).

    ``exact``: the run is not private, so overlaps may be computed on the rows (and
    completeness of attributes read off them); otherwise the filter is
    post-processing of the released queries and statistics and never sees ``data``.
    """

    max_overlap: float
    exact: bool
    data: Any = None
    #: The attributes the types file declares complete (public; set once the schema is read).
    declared_complete: frozenset = frozenset()

    def _arguments(self) -> dict[str, Any]:
        from dprm.queries import complete_attributes

        if self.exact and self.data is not None:
            return {"data": self.data, "complete": complete_attributes(*self.data.views)}
        # a private run: only what the types file declares complete (public), never read off the rows
        return {"data": None, "complete": self.declared_complete}

    def complete(self) -> frozenset:
        """The attributes the listing may treat as having no missing value: read off the rows only when not private."""
        return self._arguments()["complete"]

    def shown(self, redescriptions: list) -> list:
        """The redescriptions left after deduplication and the filter, in their order."""
        from dprm.mining.redundancy import deduplicate, filter_redundant

        arguments = self._arguments()
        unique = deduplicate(redescriptions, complete=arguments["complete"])
        return filter_redundant(unique, max_overlap=self.max_overlap, **arguments)

    def marked(self, redescriptions: list) -> list:
        """Every redescription, those :meth:`shown` leaves out with ``"redundant": true``."""
        from dprm.mining.redundancy import mark_redundant

        return mark_redundant(redescriptions, max_overlap=self.max_overlap, **self._arguments())

    def basis(self) -> str:
        """What the filter judged overlaps from (the document's ``parameters.redundancy``)."""
        if not self.exact:
            return "released values (post-processing)"
        if self.data is None:  # --engine ray: the rows stay in the shards
            return "statistics only (the rows stay in the shards)"
        return "true supports"

    def parameters(self) -> dict[str, Any]:
        return {"max_overlap": self.max_overlap, "redundancy": self.basis()}


def _declared_complete(data: Any) -> frozenset:
    """The attributes the types file declares complete (``"complete": true``), a public fact."""
    return frozenset(a.name for view in data.views for a in view if a.domain.complete)


def completeness_hint(shown: list, declared: frozenset,
                      categories: Mapping[str, Sequence[str]] | None = None) -> str | None:
    """A line for a private run whose shown queries would be shorter with more attributes declared complete.

    A private run may simplify a query such as ``(a ∧ b) ∨ (a ∧ [b = false])`` to ``a``
    only for attributes the types file declares complete (``b`` could be missing on some
    rows, where neither ``b`` nor ``[b = false]`` holds). Likewise a tree's branch "not
    ``c = v``" of a categorical column is the disjunction of its other categories
    (``categories``: each categorical attribute's public categories), one negated
    literal where ``c`` is declared complete (:mod:`dprm.trees.leaf_queries`).
    Post-processing: it reads the released queries and the public declarations only,
    never the rows, and assumes nothing of them: it says what a declaration would change.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B, Redescription, RedescriptionStats
    >>> stats = RedescriptionStats.from_counts(5, 5, 4)
    >>> long = Redescription((B("a") & B("b")) | (B("a") & B("b", False)), B("c"), stats)
    >>> hint = completeness_hint([long], frozenset())
    >>> hint.startswith("1 of the 1 queries shown would print shorter"), hint.endswith("e.g. b")
    (True, True)
    >>> completeness_hint([long], frozenset({"b"})) is None
    True
    >>> from dprm.queries import CategoricalLiteral as C
    >>> branch = Redescription(C("c", "x") | C("c", "y"), B("d"), stats)   # c's categories but "z"
    >>> completeness_hint([branch], frozenset(), {"c": ("x", "y", "z")}).endswith("e.g. c")
    True
    >>> completeness_hint([branch], frozenset(), {"c": ("x", "y", "z", "w")}) is None   # not a branch
    True
    """
    shorter, attributes = 0, set()
    for r in shown:
        used = r.left.attributes() | r.right.attributes()
        now, ideal = r.normalized(declared), r.normalized(used | declared)
        branches = _category_branches(r, declared, categories or {})
        if branches or len(str(ideal.left)) + len(str(ideal.right)) < len(str(now.left)) + len(str(now.right)):
            shorter += 1
            attributes |= (used - declared - ideal.left.attributes() - ideal.right.attributes()) | branches
    if not shorter:
        return None
    names = ", ".join(sorted(attributes)[:5]) + (", ..." if len(attributes) > 5 else "")
    return (f"{shorter} of the {len(shown)} queries shown would print shorter if a types file (--types) declared their "
            f"attributes complete (\"complete\": true: no missing value, checked at load time; docs/data.md)"
            + (f", e.g. {names}" if names else ""))


def _category_branches(redescription: Any, declared: frozenset, categories: Mapping[str, Sequence[str]]) -> set:
    """Undeclared categorical attributes of which a query holds a disjunction of all categories but one."""
    from dprm.queries import CategoricalLiteral, Or

    found = set()
    for query in (*redescription.left.iter_nodes(), *redescription.right.iter_nodes()):
        if not isinstance(query, Or):
            continue
        named: dict[str, set] = {}
        for operand in query.children():
            if isinstance(operand, CategoricalLiteral) and operand.attr not in declared:
                named.setdefault(operand.attr, set()).add(operand.category)
        found |= {name for name, values in named.items()
                  if len(values) >= 2 and len(set(categories.get(name, ())) - values) == 1
                  and values <= set(categories.get(name, ()))}
    return found


def _write_document(miner: Any, seed: int | None, path: Path, redundancy: Redundancy | None) -> None:
    from dprm.queries import make_document, write_document

    document = miner.document({"seed": seed})
    if redundancy is not None:
        document = make_document(document["algorithm"], {**document["parameters"], **redundancy.parameters()},
                                 document["privacy"], redundancy.marked(miner.redescriptions_))
    write_document(document, path, validate=False)  # make_document has validated it


def _check_clired(path: Path | None, data: Any) -> None:
    """Refuse ``--clired`` before mining when some attribute or category has no clired spelling."""
    from dprm.queries.clired import clired_problem

    if path is None:
        return
    for view in data.views:
        for attribute in view:
            problem = clired_problem(attribute.name, attribute.domain.categories or ())
            if problem is not None:
                raise ParameterError(f"--clired {path}: {problem} (leave out --clired, or rename it)")


def _write_clired(miner: Any, path: Path) -> None:
    from dprm.queries import write_clired_queries

    write_clired_queries(miner.redescriptions_, path)


app.command("mine")(with_options(mine, "mine", option_parameters(_algorithms())))
