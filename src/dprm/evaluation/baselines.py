"""Non-private baselines through the real tool: python-clired's ReReMi, SplitT and LayeredT.

:func:`run_clired` runs `python-clired <https://pypi.org/project/python-clired/>`_
(6.0.9, the optional extra ``pip install 'dprm[baselines]'``) **through its command
line** ``exec_clired`` in a subprocess, on the same two-view data dprm loads (CSV or
Parquet, with its types file and id column), and converts the redescriptions it
finds into the spec's document (``dprm.redescriptions/1``, algorithm
``clired-reremi`` / ``clired-splitt`` / ``clired-layeredt``, ``guarantee: none``)
with exact statistics recomputed by dprm on the data.

Steps (all files in ``work_dir``):

1. load the data with :func:`dprm.data.load_two_view` and write each view as a
   tab-separated file for clired: columns named ``L0, L1, ...`` / ``R0, R1, ...``
   (so no dprm name can clash with clired's reserved column names such as ``id``
   or ``lat``, nor with its query syntax), each header prefixed with clired's type
   marker (``[1]`` Boolean, ``[2]`` categorical, ``[3]`` numeric) so clired types
   every column as dprm does; Booleans as ``0``/``1``, numbers exactly
   (``repr``), categories as written when they are clired tokens and as codes
   otherwise; missing values as ``NA``;
2. write the preferences file, an *actions* file and two *fields* files of dprm's
   own (the wheel lacks them, see below), and run
   ``exec_clired dprm_preferences.xml`` with ``work_dir`` as its working directory;
3. read the queries clired wrote (:mod:`dprm.evaluation.clired_output`), map
   ``v<i>`` back to the attribute names and recoded categories back, and compute
   every redescription's supports, Jaccard index and p-value on the data
   (:class:`~dprm.queries.RedescriptionStats`); clired's own figures are kept
   beside them in each redescription's ``clired`` entry.

What is broken in the python-clired 6.0.9 wheel, and how this module works around it
------------------------------------------------------------------------------------
The sdist ships five XML files that the wheel lacks: ``actions_rdefs_basic.xml``,
``fields_rdefs_basic.xml``, ``fields_vdefs_basic.xml`` (and the ``*_more.xml``
variants). Without them:

* **ReReMi never stops.** Its beam search keeps ``nextge`` (the next generation of
  candidates) as the selection the actions file defines (drop candidates with no
  attribute left to add, keep the ``batch_cap`` best); without the file the
  selection is empty of actions, so every candidate stays in the beam forever
  and the loop ``while len(nextge) > 0`` never ends (measured: 1.2 million
  "Generation 1.5 expanded" lines in 90 s on a 515-row sample of MAMMAL). The
  trees' *partial* and *final* selections and the redundancy filter are missing
  likewise.
* **An actions file alone is not enough**: the first selection that evaluates
  ``:acc:`` needs the redescription fields definitions, and ``RedProps`` opens
  ``fields_rdefs_basic.xml`` (found as ``None``: ``AttributeError: 'NoneType'
  object has no attribute 'getElementsByTagName'``).
* The queries file has no columns (its column list comes from the fields file).

dprm writes its own definitions, in clired's XML format, with the selections that
clired's documented parameters describe (:data:`ACTIONS_XML`, :data:`FIELDS_XML`).
Provenance: the format, the selection names clired looks up and the statistics they
compare are facts read from the sdist's ``actions_rdefs_basic.xml`` and
``fields_rdefs_basic.xml`` (python-clired, Apache-2.0, Esther Galbrun and Pauli Miettinen); dprm's files
are shorter, written anew for the command-line runs here, and nothing of clired is
shipped. Mechanics:
``actions_rdefs`` points at the actions file (clired reads it in addition to the
missing default), and the two fields files are placed in the working directory,
which is the first place clired looks for them (``findFile(name, ["", package
dir])``, evaluated when clired's modules are imported).

Two more traps, avoided here: clired treats every column not named ``id``/``ids``
(and a few others) as data, so a plain id column becomes a numeric attribute
(on MAMMAL, ``cell_id`` against 48 climate attributes makes ReReMi's
numeric-numeric initial-pair search run for hours); dprm writes no id column. And
relative data paths are resolved against clired's package directory, so dprm
passes absolute ones.

Runs are bounded: after ``timeout`` seconds clired gets SIGINT, on which it stops
mining and writes the redescriptions finished so far (the document's parameters
then say ``"stopped": "timeout"``); if it has not exited ``grace`` seconds later,
its process group is killed. A run that found nothing before the timeout is an
error.

Parameters comparable to the paper (section 5.3 and Table 6 of
``tree-based-dp-redescription-mining``): depth / query length 4
(``max_var_s0 = max_var_s1 = 4``), minimum support 10 (``min_itm_in``,
``min_fin_in``), at most 80 % of the rows (``min_itm_out = min_fin_out = 0.2``:
at least a fifth of the rows outside), p-value at most 0.01
(``max_fin_pval``), Jaccard at least 0.1 (``min_fin_acc``), Gini splits
(``split_criterion``); see :data:`DEFAULT_PARAMETERS`. clired evaluates
missing values in three-valued logic; dprm's statistics use dprm's semantics
(:mod:`dprm.queries.clired_parser`), which agree on data without missing values.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence
from xml.sax.saxutils import escape

import numpy as np

from dprm.data import AttributeKind, TwoViewData, View, load_two_view
from dprm.errors import DprmError, ParameterError
from dprm.evaluation.clired_output import read_clired_queries
from dprm.mining.base import not_private_block
from dprm.queries import Redescription, RedescriptionStats, canonical_key, make_document

__all__ = [
    "BASELINE_ALGORITHMS",
    "CLIRED_VERSION",
    "DEFAULT_PARAMETERS",
    "ACTIONS_XML",
    "FIELDS_XML",
    "BaselineUnavailable",
    "clired_available",
    "clired_command",
    "run_clired",
    "write_clired_data",
]

#: The baselines' names in dprm (documents' ``algorithm``; ``dprm evaluate --algorithms``).
BASELINE_ALGORITHMS: tuple[str, ...] = ("clired-reremi", "clired-splitt", "clired-layeredt")

#: The python-clired release the baselines were written for (the extra pins it).
CLIRED_VERSION = "6.0.9"

# dprm's short names -> clired's ``mining_algo``.
_MINING_ALGO = {"reremi": "reremi", "splitt": "splittrees", "layeredt": "layeredtrees"}

_INSTALL = "pip install 'dprm[baselines]' (python-clired==6.0.9)"

#: clired preferences dprm uses unless ``parameters`` says otherwise (module docstring).
DEFAULT_PARAMETERS: dict[str, Any] = {
    "max_var_s0": 4,
    "max_var_s1": 4,
    "min_itm_in": 10,
    "min_itm_out": 0.2,
    "min_fin_in": 10,
    "min_fin_out": 0.2,
    "min_fin_acc": 0.1,
    "max_fin_pval": 0.01,
    "split_criterion": "gini",
    "nb_processes": 1,
    "verbosity": 1,
}

# Preferences dprm sets itself (files, formats); a user may not override them.
_RESERVED = frozenset({
    "LHS_data", "RHS_data", "data_rep", "data_l", "data_r", "ext_l", "ext_r", "NA_str", "delim_in",
    "result_rep", "out_base", "ext_queries", "ext_support", "ext_log", "queries_file", "queries_named_file",
    "support_file", "logfile", "queries_in", "queries_out", "actions_rdefs", "fields_vdefs", "fields_rdefs",
    "mining_algo", "series_id", "pairs_store", "extensions_rep", "extensions_names",
})

_NA = "NA"
_PREFERENCES = "dprm_preferences.xml"
_ACTIONS = "dprm_actions.xml"
_OUT_BASE = "clired"

#: dprm's definitions of clired's selections (the wheel lacks clired's own file).
#: ``nextge``: the beam of ReReMi's next generation — candidates that can still be
#: extended, the ``batch_cap`` most accurate. ``partial``: the results of one
#: expansion — enough support inside (``min_itm_in``) and outside
#: (``min_itm_out``), significant (``max_fin_pval``), no redescription superseded
#: by a better one, the ``batch_out`` best. ``final``: the results kept —
#: ``min_fin_*`` thresholds, accuracy ``min_fin_acc``, p-value, sorted by accuracy,
#: superseded ones dropped. ``tree_rectangles``: trees giving the same partition
#: once. ``redundant``: clired's redundancy filter (``redundancy_*`` parameters).
ACTIONS_XML = """<?xml version="1.0" encoding="utf-8"?>
<!-- Selections for python-clired, written by dprm (dprm.evaluation.baselines). -->
<root>
<actionlist><name>nextge</name>
 <action what="filterSingle">
  <comparison><value type="item">:nbAvC:</value><operator><![CDATA[=]]></operator><value type="int">0</value></comparison>
 </action>
 <action what="sort" reverse="true"><value type="item">:acc:</value></action>
 <action what="cut"><max><cstr>batch_cap</cstr></max><direction>0</direction>
  <comparison><value type="item">:acc:</value></comparison></action>
</actionlist>
<actionlist><name>partial</name>
 <action what="filterSingle" reverse="true">
  <comparison><value type="item">:len:I</value><operator><![CDATA[>=]]></operator><value><cstr>min_itm_in</cstr></value></comparison>
  <comparison><value type="item">:len:O</value><operator><![CDATA[>=]]></operator><value><cstr>min_itm_out</cstr></value></comparison>
  <comparison><value type="item">:pval:</value><operator><![CDATA[<=]]></operator><value><cstr>max_fin_pval</cstr></value></comparison>
 </action>
 <action what="sort" reverse="true"><value type="item">:acc:</value><value type="item" flip="true">BOTH:len:q</value></action>
 <action what="filterPairs"><max>0</max><value type="pair">:superceding:</value></action>
 <action what="cut"><max><cstr>batch_out</cstr></max><direction>1</direction>
  <comparison><value type="item">:acc:</value></comparison>
  <comparison><value type="item" flip="true">BOTH:len:q</value></comparison></action>
</actionlist>
<actionlist><name>final</name>
 <action what="filterSingle" reverse="true">
  <comparison><value type="item">BOTH:len:q</value><operator><![CDATA[>=]]></operator><value><cstr>min_fin_var</cstr></value></comparison>
  <comparison><value type="item">:len:I</value><operator><![CDATA[>=]]></operator><value><cstr>min_fin_in</cstr></value></comparison>
  <comparison><value type="item">:len:O</value><operator><![CDATA[>=]]></operator><value><cstr>min_fin_out</cstr></value></comparison>
  <comparison><value type="item">:acc:</value><operator><![CDATA[>=]]></operator><value><cstr>min_fin_acc</cstr></value></comparison>
  <comparison><value type="item">:pval:</value><operator><![CDATA[<=]]></operator><value><cstr>max_fin_pval</cstr></value></comparison>
 </action>
 <action what="sort" reverse="true"><value type="item">:acc:</value><value type="item" flip="true">BOTH:len:q</value></action>
 <action what="filterPairs"><max>0</max><value type="pair">:superceding:</value></action>
</actionlist>
<actionlist><name>postprocess</name><list><name>final</name></list></actionlist>
<actionlist><name>tree_rectangles</name>
 <action what="filterPairs"><max>0</max><value type="pair">:sameRectangles:</value></action>
</actionlist>
<actionlist><name>redundant</name>
 <action what="filterPairs"><reverse><cstr>redundancy_reverse</cstr></reverse><max>0</max>
  <comparison><value type="pair">active:<cstr>redundancy_how</cstr>:<cstr>redundancy_which</cstr></value>
   <operator><![CDATA[>]]></operator><value><cstr>redundancy_threshold</cstr></value></comparison>
 </action>
</actionlist>
</root>
"""

#: dprm's field definitions for clired: the columns of the queries file (the two
#: queries by column index, clired's accuracy, p-value and support cardinalities).
FIELDS_XML = {
    "fields_rdefs_basic.xml": """<?xml version="1.0" encoding="utf-8"?>
<!-- Columns of python-clired's queries file, written by dprm (dprm.evaluation.baselines). -->
<root>
<fieldlist><name>basic</name>
 <field><name>LHS:query:</name></field>
 <field><name>RHS:query:</name></field>
 <field><name>:acc:</name></field>
 <field><name>:pval:</name></field>
 <field><name>:card:Exo</name></field>
 <field><name>:card:Eox</name></field>
 <field><name>:card:Exx</name></field>
 <field><name>:card:Eoo</name></field>
</fieldlist>
</root>
""",
    "fields_vdefs_basic.xml": """<?xml version="1.0" encoding="utf-8"?>
<!-- No variable fields are needed on the command line; written by dprm. -->
<root></root>
""",
}


class BaselineUnavailable(DprmError, ImportError):
    """python-clired (or its command line) is not installed; the message says how to install it.

    Also an :class:`ImportError`, so code that treats a missing optional dependency
    as an import error handles it too.
    """


# ---------------------------------------------------------------------- locating clired


def _installed_version() -> str | None:
    try:
        return importlib.metadata.version("python-clired")
    except importlib.metadata.PackageNotFoundError:
        return None


def clired_command() -> list[str]:
    """The command line that runs python-clired's ``exec_clired``.

    The ``exec_clired`` script beside the running Python (same environment) or on
    ``PATH``; failing that, ``python -m blocks.mine.exec_clired`` when the module is
    importable.

    Raises
    ------
    BaselineUnavailable
        When python-clired is not installed.
    """
    if _installed_version() is None:
        raise BaselineUnavailable(f"python-clired is not installed: {_INSTALL}")
    here = Path(sys.executable).parent
    for candidate in (here / "exec_clired", here / "exec_clired.exe"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return [str(candidate)]
    found = shutil.which("exec_clired")
    if found is not None:
        return [found]
    try:
        spec = importlib.util.find_spec("blocks.mine.exec_clired")
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        return [sys.executable, "-m", "blocks.mine.exec_clired"]
    raise BaselineUnavailable(f"python-clired is installed but its command exec_clired is missing: {_INSTALL}")


def clired_available() -> bool:
    """True when python-clired and its command line ``exec_clired`` can be run here.

    Examples
    --------
    >>> isinstance(clired_available(), bool)
    True
    """
    try:
        clired_command()
    except BaselineUnavailable:
        return False
    return True


def _known_parameters() -> frozenset[str] | None:
    """The preference names clired defines (from the ``*_confdef.xml`` files it installs)."""
    try:
        spec = importlib.util.find_spec("blocks.mine")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    names: set[str] = set()
    for folder in spec.submodule_search_locations:
        for path in list(Path(folder).glob("*_confdef.xml")) + list(Path(folder).parent.glob("*/*_confdef.xml")):
            try:
                text = path.read_text(encoding="utf-8")
            except OSError:
                continue
            names.update(re.findall(r"<parameter>\s*<name>([^<]+)</name>", text))
    return frozenset(names) or None


# ---------------------------------------------------------------------- data for clired

# clired's STRING token (its grammar, redquery_parser.py) minus the characters dprm's
# reader treats as special ('?', '@') and quotes; a number is a category too.
_TOKEN_SPECIAL = "<>=!\\[\\]\\(\\)\\{\\}&|,\\n\\t\\r\"'?@\u2227\u2228\u2264\u2265\u2208\u2209\u2260\u00ac"
_SAFE_CATEGORY = re.compile(rf"([^{_TOKEN_SPECIAL} \d][^{_TOKEN_SPECIAL}]*(?<! )|\d+\.?\d*)\Z")
_TYPE_MARK = {AttributeKind.BOOLEAN: 1, AttributeKind.CATEGORICAL: 2, AttributeKind.NUMERIC: 3}


def _category_tokens(categories: Sequence[str]) -> list[str]:
    """The token written for each category: itself when safe, else a code not otherwise used."""
    taken = {c for c in categories if _SAFE_CATEGORY.match(c) and c != _NA}
    tokens = []
    for k, c in enumerate(categories):
        if c in taken:
            tokens.append(c)
            continue
        code, extra = f"dprm_category_{k}", 0
        while code in taken:
            extra += 1
            code = f"dprm_category_{k}_{extra}"
        taken.add(code)
        tokens.append(code)
    return tokens


def _write_view(view: View, prefix: str, path: Path) -> dict[str, dict[str, str]]:
    """Write one view for clired; return the recoded categories ``{attr: {token: category}}``."""
    header, columns, recoded = [], [], {}
    n_rows = view.attributes[0].n_rows if view.attributes else 0
    for i, a in enumerate(view.attributes):
        header.append(f"[{_TYPE_MARK[a.kind]}]{prefix}{i}")
        missing = a.missing
        if a.kind is AttributeKind.NUMERIC:
            cells = [repr(float(x)) for x in a.values]
        elif a.kind is AttributeKind.BOOLEAN:
            cells = ["1" if x == 1 else "0" for x in a.values]
        else:
            tokens = _category_tokens(list(a.domain.categories or ()))
            recoded[a.name] = {t: c for t, c in zip(tokens, a.domain.categories or ()) if t != c}
            cells = [tokens[x] if x >= 0 else _NA for x in a.values]
        columns.append([_NA if m else c for c, m in zip(cells, missing)])
    lines = ["\t".join(header)]
    lines.extend("\t".join(col[r] for col in columns) for r in range(n_rows))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {k: v for k, v in recoded.items() if v}


def write_clired_data(data: TwoViewData, work_dir: str | os.PathLike) -> tuple[Path, Path, dict[str, dict[str, str]]]:
    """Write both views of ``data`` as python-clired input files (module docstring, step 1).

    Returns
    -------
    left_path, right_path : Path
        ``work_dir/left.csv`` and ``work_dir/right.csv``, tab-separated (clired reads
        any other extension as another format).
    categories : dict
        ``{attribute: {token: category}}`` for the categories written as codes.

    Examples
    --------
    >>> import pandas as pd, tempfile
    >>> from dprm.data import load_two_view
    >>> data = load_two_view(pd.DataFrame({"smoker": [1, 0, 1], "state": ["CA", "New York", None]}),
    ...                      pd.DataFrame({"age": [30.5, 41.0, None]}))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     left, right, cats = write_clired_data(data, d)
    ...     print(left.read_text().replace("\\t", ";"), right.read_text(), cats, sep="")
    [1]L0;[2]L1
    1;CA
    0;New York
    1;NA
    [3]R0
    30.5
    41.0
    NA
    {}
    """
    work = Path(work_dir)
    left, right = work / "left.csv", work / "right.csv"  # clired reads other extensions as another format
    categories = _write_view(data.left, "L", left)
    categories.update(_write_view(data.right, "R", right))
    return left, right, categories


# ---------------------------------------------------------------------- running clired


def _preference_values(value: Any) -> list[str]:
    if isinstance(value, (list, tuple, set, frozenset)):
        return [v for item in value for v in _preference_values(item)]
    if isinstance(value, (bool, np.bool_)):
        return ["yes" if value else "no"]
    if isinstance(value, (int, np.integer)):
        return [str(int(value))]
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ParameterError(f"clired parameter value must be finite, got {value!r}")
        return [repr(float(value))]
    if isinstance(value, str):
        return [value]
    raise ParameterError(f"clired parameter value must be text, a number, yes/no or a list, got {value!r}")


def _preferences_xml(preferences: Mapping[str, Any]) -> str:
    parts = ["<root>"]
    for name, value in preferences.items():
        values = "".join(f"<value>{escape(v)}</value>" for v in _preference_values(value))
        parts.append(f"<parameter><name>{escape(name)}</name>{values}</parameter>")
    parts.append("</root>")
    return "\n".join(parts) + "\n"


def _algorithm(algorithm: str) -> str:
    short = algorithm.removeprefix("clired-") if isinstance(algorithm, str) else algorithm
    if short not in _MINING_ALGO:
        raise ParameterError(
            f"unknown clired algorithm {algorithm!r}; expected one of {', '.join(BASELINE_ALGORITHMS)} "
            f"(or {', '.join(_MINING_ALGO)})")
    return short


def _check_parameters(parameters: Mapping[str, Any], known: frozenset[str] | None = None) -> dict[str, Any]:
    """Validate clired preferences: names (not dprm's own; among ``known`` when given) and values."""
    out = {}
    for name, value in parameters.items():
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name):
            raise ParameterError(f"clired parameter name {name!r} is not a name")
        if name in _RESERVED:
            raise ParameterError(f"clired parameter {name!r} is set by dprm and cannot be given")
        if known is not None and name not in known:
            raise ParameterError(f"unknown clired parameter {name!r} (see exec_clired --config)")
        _preference_values(value)  # validates the value
        out[name] = value
    return out


def _stop(process: subprocess.Popen, grace: float) -> None:
    """SIGINT (clired writes what it found), then SIGKILL to the group after ``grace`` seconds."""
    for sig, wait in ((signal.SIGINT, grace), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def _number(text: str) -> float | int | str:
    try:
        value = float(text)
    except ValueError:
        return text
    if not math.isfinite(value):
        return text
    return int(value) if re.fullmatch(r"[+-]?\d+", text.strip()) else value


def _run_clired_process(command: list[str], work: Path, log: Path, err: Path, timeout: float | None,
                        grace: float) -> tuple[float, int | None, str | None]:
    """Run clired on ``work``'s preferences, its output in ``log`` and ``err``; ``(seconds, exit code, stopped)``.

    ``stopped`` is ``"timeout"`` when clired was stopped after ``timeout`` seconds
    (then given ``grace`` seconds to finish writing), else None. An interruption here
    stops clired at once and is passed on.
    """
    stopped = None
    start = time.perf_counter()
    with open(log, "w", encoding="utf-8") as out, open(err, "w", encoding="utf-8") as errors:
        try:
            process = subprocess.Popen([*command, str(work / _PREFERENCES)], cwd=work, stdout=out,
                                       stderr=errors, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            raise BaselineUnavailable(f"cannot run {command[0]} ({error.strerror or error}): {_INSTALL}") from None
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stopped = "timeout"
            _stop(process, grace)
        except BaseException:
            _stop(process, 0)
            raise
    seconds = time.perf_counter() - start
    return seconds, process.returncode, stopped


def _exact_redescriptions(lines: list, data: TwoViewData) -> list[Redescription]:
    """The redescriptions of clired's query lines (duplicates dropped), with exact statistics on ``data``.

    clired's own figures of each line are kept in ``extra["clired"]``.
    """
    redescriptions, seen = [], set()
    supports: dict[tuple[int, str], np.ndarray] = {}
    for line in lines:
        key = (canonical_key(line.left), canonical_key(line.right))
        if key in seen:
            continue
        seen.add(key)
        masks = []
        for side, query in ((0, line.left), (1, line.right)):
            cache_key = (side, key[side])
            if cache_key not in supports:
                supports[cache_key] = query.support(data.views[side])
            masks.append(supports[cache_key])
        stats = RedescriptionStats.from_supports(*masks)
        clired_figures = {k: _number(v) for k, v in line.fields.items() if v not in ("", "-")}
        redescriptions.append(Redescription(line.left, line.right, stats, extra={"clired": clired_figures}))
    return redescriptions


def run_clired(
    algorithm: str,
    left_path: str | os.PathLike,
    right_path: str | os.PathLike,
    *,
    work_dir: str | os.PathLike,
    timeout: float | None = 600,
    types: str | os.PathLike | None = None,
    id_column: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    grace: float = 30.0,
    duplicate_names: str = "rename",
    **clired_parameters: Any,
) -> dict:
    """Mine with python-clired through its command line; return the spec's document.

    Parameters
    ----------
    algorithm : str
        ``"clired-reremi"``, ``"clired-splitt"`` or ``"clired-layeredt"`` (or
        ``"reremi"``, ``"splitt"``, ``"layeredt"``).
    left_path, right_path : path-like
        The views, as dprm loads them (:func:`dprm.data.load_two_view`).
    work_dir : path-like
        Directory for clired's input, preferences, log and output (created if
        missing; its files are overwritten).
    timeout : float, optional
        Seconds clired may mine (default 600; None: no limit). Then it is stopped
        and the redescriptions it finished are used (module docstring).
    types : path-like, optional
        dprm types file of the data.
    id_column : str, optional
        Id column of both views (default: dprm's auto-detection).
    parameters : mapping, optional
        clired preferences (names as in ``exec_clired --config``) over
        :data:`DEFAULT_PARAMETERS`; lists give multiple-option values, booleans
        yes/no.
    grace : float
        Seconds clired gets to write its results after the timeout's SIGINT.
    duplicate_names : {"rename", "error"}
        A column name twice in one file: renamed ``name.1``, ... (default, as the
        experiment runner loads data) or an error (:func:`dprm.data.load_two_view`).
    **clired_parameters
        More clired preferences, as keywords (merged into ``parameters``).

    Returns
    -------
    dict
        The document (``dprm.redescriptions/1``): algorithm ``clired-...``, the
        preferences used, ``privacy.guarantee = "none"``, each redescription with
        exact statistics (``noisy`` holds the exact values) and clired's own figures
        in ``clired``. A top-level ``notes`` list says what to know.

    Raises
    ------
    BaselineUnavailable
        python-clired is not installed (one line, with how to install it).
    ParameterError
        Unknown algorithm or clired parameter.
    DataError, DprmError
        The data cannot be loaded; clired failed (its last log line) or found
        nothing before the timeout.
    """
    short = _algorithm(algorithm)
    given = {**dict(parameters or {}), **clired_parameters}
    _check_parameters(given)
    command = clired_command()
    version = _installed_version()
    user = _check_parameters(given, _known_parameters())
    if timeout is not None and (not isinstance(timeout, (int, float)) or not timeout > 0):
        raise ParameterError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if not (isinstance(grace, (int, float)) and grace >= 0):
        raise ParameterError(f"grace must be a non-negative number of seconds, got {grace!r}")

    data = load_two_view(left_path, right_path, types=types, id_column=id_column, duplicate_names=duplicate_names)
    work = Path(work_dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    left_file, right_file, categories = write_clired_data(data, work)
    for name, text in FIELDS_XML.items():
        (work / name).write_text(text, encoding="utf-8")
    (work / _ACTIONS).write_text(ACTIONS_XML, encoding="utf-8")
    queries_file = work / f"{_OUT_BASE}.queries"
    queries_file.unlink(missing_ok=True)

    preferences = {**DEFAULT_PARAMETERS, **user}
    files = {
        "LHS_data": str(left_file), "RHS_data": str(right_file), "NA_str": _NA, "delim_in": "TAB",
        "result_rep": str(work) + os.sep, "out_base": _OUT_BASE, "logfile": "-",
        "actions_rdefs": str(work / _ACTIONS), "mining_algo": _MINING_ALGO[short],
    }
    (work / _PREFERENCES).write_text(_preferences_xml({**files, **preferences}), encoding="utf-8")

    log, err = work / "clired.log", work / "clired.err"
    seconds, returncode, stopped = _run_clired_process(command, work, log, err, timeout, grace)
    if not queries_file.exists():
        if stopped is not None:
            raise DprmError(f"python-clired {short} found nothing within the timeout of {timeout:g} s "
                            f"(log: {log}); give it more time")
        if returncode != 0:
            raise DprmError(f"python-clired {short} failed (exit {returncode}): "
                            f"{_last_line(err) or _last_line(log)} (log: {err})")
    columns = ([a.name for a in data.left], [a.name for a in data.right])
    lines = read_clired_queries(queries_file, columns=columns, categories=categories) if queries_file.exists() else []

    redescriptions = _exact_redescriptions(lines, data)

    notes = [f"python-clired {version} {_MINING_ALGO[short]} is not private: every statistic is exact "
             "(recomputed by dprm on the data)"]
    if stopped is not None:
        notes.append(f"python-clired was stopped after {timeout:g} s; these are the redescriptions it had finished")
    if any(a.missing.any() for v in data.views for a in v):
        notes.append("the data has missing values: clired's own figures (entry 'clired') use its three-valued "
                     "logic and may differ from dprm's statistics")
    document = make_document(
        f"clired-{short}",
        {"clired_algorithm": _MINING_ALGO[short], "clired_version": version, **preferences,
         "timeout": timeout, "stopped": stopped, "clired_seconds": round(seconds, 3)},
        not_private_block(f"clired-{short} is not a private algorithm: every statistic is exact"),
        redescriptions,
    )
    document["notes"] = notes
    return document
