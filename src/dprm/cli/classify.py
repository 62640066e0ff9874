"""``dprm classify``: fit a differentially private decision tree on one CSV and print it.

The run:

1. check the options (ε, depths, search, folds, seed) and that ``--output`` can be
   written; nothing is read and no budget is spent before this passes;
2. read the file with the data layer's checks (types file, missing markers, values
   outside declared domains, non-finite numbers) and pick the target column;
3. fit :class:`dprm.classifier.DPDecisionTreeClassifier` on all rows (the private
   release);
4. unless ``--cv 0``: cross-validate the same configuration. That refits on folds, is
   an evaluation for people who may see the data, and is *not* part of the private
   release (each fold's fit spends its own ε on its fold). The folds reuse the
   schema of step 3's fit (each feature's kind, categories and bounds, declared or
   read off the whole file, and the classes), never one read off a fold's rows: a
   text column whose only values fall outside a fold's training rows stays text;
5. write ``--output`` (the released tree and its ledger), print the privacy status
   line, the tree and the cross-validated accuracy. Nothing is written or printed
   before every step above has succeeded: an error is one line and leaves no file.

Feature domains and classes are public when the types file declares them
(categories of categorical columns, bounds of numeric ones, the target's
categories); otherwise they are read off the data and the status line says the fit
is not private.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

import typer

from dprm.cli.app import command_app
from dprm.cli.interrupts import terminate_as_interrupt
from dprm.cli.console import console, note
from dprm.cli.outputs import Outputs
from dprm.cli.coercion import read_number
from dprm.cli.seeds import check_seed
from dprm.cli.views import NaValues, OutOfBounds, TableIdColumn, TypesFile
from dprm.errors import DataError, ParameterError, printable_text, short_repr
from dprm.json_values import plain_json

app = command_app()

#: Largest ``--max-depth`` (the estimator's bound).
MAX_DEPTH = 30
#: Largest ``--cv``.
MAX_FOLDS = 100
SEARCHES = ("auto", "exhaustive", "mcmc")
VARIANTS = ("dprm", "paper")


@app.command()
@terminate_as_interrupt()  # SIGTERM ends the run as Ctrl-C does: "interrupted", 130, nothing written
def classify(
    learn: Path = typer.Argument(..., metavar="LEARN.csv", show_default=False,
                                 help="The data: a CSV (or Parquet) file, one row per entity."),
    target: str = typer.Option(..., "--target", metavar="COL", show_default=False, help="The class column."),
    epsilon: float = typer.Option(..., "--epsilon", metavar="ε", show_default=False,
                                  help="Privacy budget of the fit (all of it by default; with an embedding depth below --max-depth, computations a tree never reaches are not charged)."),
    max_depth: str = typer.Option("auto", "--max-depth", metavar="D|auto",
                                  help=f"Levels of splits at most (1 to {MAX_DEPTH}; auto: 8 with --variant dprm, "
                                       "5 with --variant paper)."),
    embedding_depth: str = typer.Option("auto", "--embedding-depth", metavar="d|auto",
                                        help="Levels grown by one private computation (at most --max-depth; "
                                             "= --max-depth grows the whole tree in one; auto: the whole tree "
                                             "with --variant dprm, 1 with --variant paper)."),
    search: str = typer.Option("auto", "--search", metavar="auto|exhaustive|mcmc",
                               help="Exact draw over all subtrees, Metropolis-Hastings, or exact when small."),
    variant: str = typer.Option("dprm", "--variant", metavar="dprm|paper",
                                help="dprm's scores and budget split, or the paper's (docs/classifier.md)."),
    types: TypesFile = None,
    id_column: TableIdColumn = None,
    na_values: NaValues = None,
    out_of_bounds: OutOfBounds = None,
    cv: int = typer.Option(10, "--cv", metavar="K",
                           help="Folds of the cross-validated accuracy (not private; 0: none)."),
    seed: Optional[int] = typer.Option(None, "--seed", metavar="N",
                                       help="Seed: the fit is reproducible, and then NOT private."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", metavar="FILE.json", dir_okay=False,
                                          help="Write the released tree, its parameters and ledger here."),
) -> None:
    """Fit a differentially private decision tree (Bai et al. 2017) on LEARN.csv and print it.

    The tree is fitted on all rows with budget --epsilon; the first line says whether
    the fit is private (it needs a types file declaring the features' domains and the
    target's categories). The cross-validated accuracy is printed after it: an
    evaluation for people who may see the data, outside the private release.
    """
    max_depth, embedding_depth = _check_options(epsilon, max_depth, embedding_depth, search, variant, cv, seed)
    outputs = Outputs(inputs=[learn, types])
    fitted: dict[str, Any] = {}
    outputs.add(output, lambda path: path.write_text(json.dumps(fitted["document"], indent=1, ensure_ascii=False,
                                                                default=str) + "\n", encoding="utf-8"))
    outputs.check()

    X, y, categories, bounds, classes, notes = _load(learn, target, types, na_values, out_of_bounds, id_column)
    if cv and cv > 1:
        _check_folds(y, cv)
    parameters = {"epsilon": epsilon, "max_depth": max_depth, "embedding_depth": embedding_depth,
                  "search": search, "variant": variant}
    clf = _estimator(parameters, categories, bounds, classes, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "not private: ..." is the status line's
        try:
            clf.fit(X, y)
        except ParameterError as error:
            raise ParameterError(_in_option_names(str(error))) from None
    # the depth used, as an explicit --embedding-depth would have recorded it, unless the
    # small-budget rule chose the release (an explicit depth turns the rule off)
    if clf.release_ == "tree" and "rows" not in [entry["step"] for entry in clf.ledger_]:
        parameters["embedding_depth"] = clf.embedding_depth_
    parameters["max_depth"] = clf.max_depth_  # "auto" as the depth it chose: an explicit one reproduces it
    fitted["document"] = _document(clf, parameters, learn, target, seed)
    scores = _cross_validate(parameters, clf, seed, X, y, cv) if cv and cv > 1 else None
    written = outputs.commit()
    for message in notes:
        note(message)

    from dprm.cli.display import print_status
    from dprm.classifier import export_text

    print_status(_privacy(clf), output, epsilon)
    console.print(f"tree: maximum depth {clf.max_depth_}, embedding depth {clf.embedding_depth_}, "
                  f"search {clf.search_}, variant {variant}, release {clf.release_}", soft_wrap=True)
    console.print(export_text(clf), soft_wrap=True, markup=False, highlight=False)
    for path in written:
        console.print(f"wrote the released tree to {path}", soft_wrap=True)
    if scores is not None:
        _print_cv(scores, parameters["epsilon"])


def _check_options(epsilon: float, max_depth: str, embedding_depth: str, search: str, variant: str,
                   cv: int, seed: int | None) -> tuple[int | str, int | str]:
    """Refuse bad options before any data is read; returns the maximum and embedding depths (ints or ``"auto"``)."""
    from dprm.classifier.parameters import auto_max_depth
    from dprm.privacy.budget import check_epsilon_range

    check_epsilon_range(epsilon, "--epsilon")
    given: int | str = str(max_depth).strip()
    if given != "auto":
        try:
            given = read_number(given, int)
        except ValueError:
            given = 0
        if not 1 <= given <= MAX_DEPTH:
            raise ParameterError(f"--max-depth must be between 1 and {MAX_DEPTH} or 'auto', not "
                                 f"{short_repr(str(max_depth))}")
    max_depth = auto_max_depth(variant) if given == "auto" else given  # for the embedding depth's check
    depth: int | str = str(embedding_depth).strip()
    if depth != "auto":
        try:
            depth = read_number(depth, int)
        except ValueError:
            depth = 0
        if not 1 <= depth <= max_depth:
            raise ParameterError(f"--embedding-depth must be 'auto' or between 1 and --max-depth ({max_depth}), "
                                 f"not {short_repr(str(embedding_depth))}")
    if search not in SEARCHES:
        raise ParameterError(f"--search must be one of {', '.join(SEARCHES)}, not {search!r}")
    if variant not in VARIANTS:
        raise ParameterError(f"--variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
    if not (cv == 0 or 2 <= cv <= MAX_FOLDS):
        raise ParameterError(f"--cv must be 0 (no cross-validation) or between 2 and {MAX_FOLDS}, not {cv}")
    check_seed(seed)
    return given, depth


def _load(learn: Path, target: str, types: Path | None, na_values: Any, out_of_bounds: str | None,
          id_column: str | None = None
          ) -> tuple[Any, Any, dict[str, list], dict[str, tuple[float, float]], list | None, list[str]]:
    """The features (a DataFrame), labels, declared domains and classes, and the data layer's notes.

    The id column is not a feature: ``--id-column``, else the types file's ``id_column``
    (or its column of type ``id``), else a first column named ``ids``, as ``dprm mine``
    finds it in one view (:func:`dprm.data.read_view`).
    """
    import numpy as np
    import pandas as pd

    from dprm.data import AttributeKind, read_view
    from dprm.data.loading import SIREN_ID_NAMES
    from dprm.data.reading import reading_options
    from dprm.data.types_file import ColumnSpec, ColumnType, TypesSpec, read_types_file

    if out_of_bounds not in (None, "error", "clamp"):
        raise ParameterError(f"--out-of-bounds must be 'error' or 'clamp', not {short_repr(out_of_bounds)}")
    spec = read_types_file(types) if types is not None else TypesSpec()
    try:
        spec.check_public_domains()  # the fit is private: a declared domain must be whole (before any row is read)
    except DataError:  # a column not in the file is said to be one first (its header only)
        from dprm.data.loading import check_declared_columns

        check_declared_columns(spec, learn)
        raise
    declared_target = spec.get(target)
    if declared_target is not None and declared_target.type is ColumnType.NUMERIC:
        raise DataError(f"{spec.source}: the target column {short_repr(target)} is declared numeric; a classifier's "
                        "target holds classes: declare it categorical with its categories (or boolean)",
                        code="bad_types_file", file=spec.source, column=target, data_dependent=False)
    declared_classes = declared_target.categories if declared_target is not None else None
    if declared_classes is not None and len(declared_classes) < 2:
        raise DataError(f"{spec.source}: column {short_repr(target)}: the target's declared categories are its "
                        f"classes, and a classifier needs at least two, not {len(declared_classes)}",
                        code="bad_types_file", file=spec.source, column=target, data_dependent=False)
    markers = [part for item in na_values or [] for part in item.split(",")] or None
    if target in (id_column, spec.id_column):
        named = "--id-column" if target == id_column else spec.source
        raise ParameterError(f"--target {short_repr(target)} is the id column ({named}); a classifier's target "
                             "holds classes")
    try:
        view = read_view(learn, "left", id_column=id_column, types=spec, na_values=markers,
                         out_of_bounds=out_of_bounds, duplicate_names="error", all_types_here=True, keep_constant=True)
    except DataError as error:
        if (error.code not in ("inexact_number", "number_underflow") or error.column != target
                or target in spec.columns):
            raise
        # classes beyond 2^53 that no float tells apart (9007199254740993, …992), or one that reads as 0 though it
        # is not (1e-400): read as written, categories
        spec = replace(spec, columns={**spec.columns, target: ColumnSpec(ColumnType.CATEGORICAL)})
        view = read_view(learn, "left", id_column=id_column, types=spec, na_values=markers,
                         out_of_bounds=out_of_bounds, duplicate_names="error", all_types_here=True, keep_constant=True)
    if target not in spec.columns and any(a.name == target and a.kind is AttributeKind.BOOLEAN for a in view):
        # classes as written (0 / 1, yes / no), not the Boolean reading's false / true
        spec = replace(spec, columns={**spec.columns, target: ColumnSpec(ColumnType.CATEGORICAL)})
        view = read_view(learn, "left", id_column=id_column, types=spec, na_values=markers,
                         out_of_bounds=out_of_bounds, duplicate_names="error", all_types_here=True, keep_constant=True)
    source = view.source
    if target not in view:  # constant columns are kept (keep_constant): not here means not in the file
        shown = ", ".join(view.names)
        named = short_repr(target)
        hint = f" (a first column named {named} is the id column)" if target.lower() in SIREN_ID_NAMES else ""
        raise DataError(f"{source}: no target column {named}{hint}; columns: {shown}", data_dependent=False)
    columns: dict[str, Any] = {}
    categories: dict[str, list] = {}
    bounds: dict[str, tuple[float, float]] = {}
    classes: list | None = None
    labels = None
    for attribute in view:
        values, declared = _decode(attribute)
        if attribute.name == target:
            missing = np.flatnonzero(pd.isna(pd.Series(values)).to_numpy())
            if missing.size:
                row = int(missing[0]) + 1  # data rows counted from 1, as the data layer does
                raise DataError(f"{source}: the target column {short_repr(target)} has missing values, e.g. row {row}",
                                column=target, row=row)
            if attribute.kind is AttributeKind.NUMERIC:  # whole numbers are classes "0", "1", ..., not 0.0, 1.0
                markers_read = reading_options(spec, markers, out_of_bounds)[0]
                values = _whole_number_classes(learn, target, markers_read, source)
            labels = np.asarray(values, dtype=object).astype(str)
            if declared is not None and attribute.kind is not AttributeKind.NUMERIC:
                classes = [str(c) for c in declared]
            continue
        columns[attribute.name] = values
        if declared is not None:
            if attribute.kind is AttributeKind.NUMERIC:
                bounds[attribute.name] = declared
            else:
                categories[attribute.name] = list(declared)
    if not columns:
        raise DataError(f"{source}: no feature column besides the target {short_repr(target)}", data_dependent=False)
    assert labels is not None
    if np.unique(labels).size < 2 and classes is None:  # declared classes: fit, whatever the rows hold
        raise DataError(f"{source}: the target column {short_repr(target)} has only one class; "
                        "a classifier needs at least two (or declare its classes)", column=target)
    return pd.DataFrame(columns), labels, categories, bounds, classes, _feature_notes(view, target)


def _feature_notes(view: Any, target: str) -> list[str]:
    """The view's notes, less the target's in the note on constant columns kept (those are features).

    The target is not a feature, and its classes are not the data layer's numbers: the
    classes ``9007199254740993`` and ``9007199254740992`` are one float64 (a constant
    column there).
    """
    from dprm.data.loading import left_out_notes

    if target not in view.constant:
        return list(view.notes)
    empty = [name for name in view.constant if view[name].missing.all()]
    with_target = left_out_notes(view.source, view.constant, empty, "kept")
    features = [name for name in view.constant if name != target]
    return ([note for note in view.notes if note not in with_target]
            + left_out_notes(view.source, features, [name for name in empty if name != target], "kept"))


def _whole_number_classes(learn: Path, target: str, markers: tuple[str, ...], source: str) -> list[str]:
    """The labels of a target the data layer reads as numbers: one per row, exact, as the file writes them.

    Never through float64 and int64 (``1e20`` and ``2e20`` would be one class, ``1e300``
    the class ``-2**63``, ``2**53 + 1`` the class ``2**53``): the target column is read
    again as the file holds it. Integers (a column of integers, a cell written in
    digits) are named by their canonical text, exactly (:func:`~dprm.data.category_text.integer_text`:
    ``1``, ``1.0``, ``01`` and ``+1`` are the class ``"1"``); a whole number written
    otherwise (``1e20``) keeps its spelling, and two spellings of one number are one
    class, named by its digits when a cell writes them, else by its first spelling in
    the file. A file without text cells (Parquet) gives its floats' texts
    (:func:`~dprm.data.category_text.number_text`).

    Raises
    ------
    DataError
        A number that is not whole (a measurement, not a class code), naming the row.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "d.csv"
    ...     _ = path.write_text("a,y\\n0,1e20\\n1,1.0\\n2,2E+20\\n3,200000000000000000000\\n")
    ...     _whole_number_classes(path, "y", ("",), "d.csv")
    ['1e20', '1', '200000000000000000000', '200000000000000000000']
    """
    from decimal import Decimal, InvalidOperation

    import pyarrow as pa

    from dprm.data.category_text import integer_text, number_text
    from dprm.data.reading import read_table

    raw = read_table(learn, "left", "error", markers)
    column = raw.table.column(target)
    if pa.types.is_integer(column.type):
        return [str(value) for value in column.to_pylist()]  # Python ints: exact
    numbers = column.to_pylist()
    cells = raw.cells_as_written(target)
    if cells is None or len(cells) != len(numbers):
        cells = [None] * len(numbers)
    keys: list[str] = []
    names: dict[str, str] = {}  # a number's class: its digits where a cell writes them, else its first spelling
    for row, (number, cell) in enumerate(zip(numbers, cells), start=1):
        written = cell.strip() if cell is not None else None
        exact = None
        if written is not None:
            try:
                exact = Decimal(written)
            except InvalidOperation:
                written = None
        if exact is None:
            exact = Decimal(number)  # a float, exactly
        if exact != exact.to_integral_value():  # a measurement, not class codes
            shown = written if written is not None and len(written) <= 30 else number_text(number)
            raise DataError(f"{source}: the target column {short_repr(target)} holds numbers that are not whole "
                            f"(row {row}: {shown}); a classifier needs classes: "
                            "declare its categories in a types file", column=target, row=row)
        key = str(int(exact))  # at most 309 digits: the data layer refused numbers beyond the floats
        digits = integer_text(written) if written is not None else None
        if digits is not None:
            names[key] = digits
        elif key not in names:
            names[key] = written if written is not None else number_text(number)
        keys.append(key)
    return [names[key] for key in keys]


def _decode(attribute: Any) -> tuple[Any, Any]:
    """An attribute's values for the estimator, and its declared domain (None when read off the data).

    Categorical codes become their category texts, Booleans ``"false"``/``"true"``,
    missing values NaN; numbers stay numbers.
    """
    import numpy as np

    from dprm.data import AttributeKind

    declared = attribute.domain.declared
    if attribute.kind is AttributeKind.NUMERIC:
        return attribute.values.astype(np.float64), (tuple(attribute.domain.bounds) if declared else None)
    if attribute.kind is AttributeKind.BOOLEAN:
        texts = np.array(["false", "true"], dtype=object)
        domain: tuple[str, ...] = ("false", "true")
    else:
        domain = tuple(str(c) for c in attribute.domain.categories or ())
        texts = np.array(domain, dtype=object)
    codes = attribute.values.astype(np.int64)
    values = np.full(codes.shape, np.nan, dtype=object)
    present = codes >= 0
    values[present] = texts[codes[present]]
    return values, (domain if declared else None)


def _check_folds(y: Any, folds: int) -> None:
    import numpy as np

    _, counts = np.unique(y, return_counts=True)
    if counts.min() < folds:
        raise DataError(f"--cv {folds}: a class has only {counts.min()} rows; give fewer folds or --cv 0")


def _in_option_names(message: str) -> str:
    """The estimator's message with its parameter names written as this command's options.

    Examples
    --------
    >>> _in_option_names("use search='mcmc' or a smaller embedding_depth")
    'use --search mcmc or a smaller --embedding-depth'
    """
    for python, option in (("search='mcmc'", "--search mcmc"), ("variant='dprm'", "--variant dprm"),
                           ("variant='paper'", "--variant paper"), ("embedding_depth", "--embedding-depth"),
                           ("max_depth", "--max-depth")):
        message = message.replace(python, option)
    return message


def _estimator(parameters: dict[str, Any], categories: dict, bounds: dict, classes: list | None,
               seed: int | None) -> Any:
    from dprm.classifier import DPDecisionTreeClassifier

    return DPDecisionTreeClassifier(**parameters, categories=categories or None, bounds=bounds or None,
                                    classes=classes, random_state=seed)


def _privacy(clf: Any) -> dict[str, Any]:
    """The spec's privacy block, its keys in the spec's order."""
    from dprm.privacy.accountant import NEIGHBOURING

    return {"epsilon": float(clf.privacy_spent_), "neighbouring": NEIGHBOURING, "guarantee": clf.guarantee_,
            "private": bool(clf.private_), "reasons": list(clf.privacy_reasons_), "ledger": list(clf.ledger_)}


def _document(clf: Any, parameters: dict[str, Any], learn: Path, target: str, seed: int | None) -> dict[str, Any]:
    """The released model: parameters, public domains, the tree (text and arrays), privacy block.

    Only released values: the structure and the noisy counts (no exact count, no
    cross-validation result).
    """
    from dprm.classifier import export_text

    tree = clf.tree_
    domains = [{"name": d.name, "kind": d.kind, "categories": plain_json(d.categories), "low": d.low,
                "high": d.high, "thresholds": None if d.thresholds is None else plain_json(d.thresholds),
                "from_data": bool(d.from_data)} for d in clf.domains_]
    return {
        # the document's name of the model, kept as written since before dprm.classifier (a stable output)
        "model": "dprm.trees.DPDecisionTreeClassifier",
        "data": {"file": printable_text(learn), "target": target},
        "parameters": {**parameters, "seed": seed, "search_used": clf.search_, "release_used": clf.release_},
        "classes": plain_json(clf.classes_),
        "features": domains,
        "tree": {
            "text": export_text(clf),
            "feature": plain_json(tree.feature), "threshold": plain_json(tree.threshold),
            "child_start": plain_json(tree.child_start), "n_children": plain_json(tree.n_children),
            "children": plain_json(tree.children), "depth": plain_json(tree.depth),
            "noisy_counts": plain_json(tree.noisy_counts), "proba": plain_json(tree.proba),
        },
        "privacy": plain_json(_privacy(clf)),
    }


def _fold_schema(clf: Any) -> tuple[dict[str, list], dict[str, tuple[float, float]], list]:
    """The fitted model's schema as declarations for the folds: categories, bounds and classes.

    Those of the fit on all rows: declared by the types file or read off the whole file.
    A fold reading them off its own training rows could give a column another kind (a
    text column without a value there would read as numeric) or other categories than
    the test rows hold.
    """
    from dprm.classifier.encoding import CATEGORICAL

    categories = {d.name: list(d.categories) for d in clf.domains_ if d.kind == CATEGORICAL}
    bounds = {d.name: (d.low, d.high) for d in clf.domains_ if d.kind != CATEGORICAL}
    return categories, bounds, list(clf.classes_)


def _cross_validate(parameters: dict[str, Any], clf: Any, seed: int | None, X: Any, y: Any,
                    folds: int) -> list[float]:
    """Accuracy of each of ``folds`` stratified folds, refitting ``parameters`` on the others.

    Every fold uses the schema of ``clf``, the fit on all rows (:func:`_fold_schema`).
    """
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    categories, bounds, classes = _fold_schema(clf)
    splitter = StratifiedKFold(n_splits=folds, shuffle=True,
                               random_state=None if seed is None else seed % 2**32)
    scores = []
    for fold, (train, test) in enumerate(splitter.split(np.zeros((len(y), 1)), y)):
        model = _estimator(parameters, categories, bounds, classes,
                           None if seed is None else (seed + 1 + fold) % 2**63)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                model.fit(X.iloc[train], y[train])
            except ParameterError as error:
                raise ParameterError(_in_option_names(str(error))) from None
        scores.append(float(np.mean(model.predict(X.iloc[test]) == y[test])))
    return scores


def _print_cv(scores: list[float], epsilon: float) -> None:
    """The cross-validated accuracy (mean ± standard deviation over folds), marked not private."""
    import numpy as np

    folds = len(scores)
    console.print(f"cross-validated accuracy ({folds} folds): {np.mean(scores):.3f} ± {np.std(scores, ddof=1):.3f} "
                  f"(std over folds)", soft_wrap=True)
    console.print(f"[dim]NOT private: the cross-validation is an evaluation for people who may see the data; it "
                  f"refits on {folds} folds, each spending ε = {epsilon:g} on its fold, and is not "
                  f"part of the private release[/dim]", soft_wrap=True)
