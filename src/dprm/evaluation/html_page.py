"""Building blocks of dprm's self-contained HTML reports: page, tables, numbers, bars.

Everything a report needs is inline: the style sheet, a few lines of JavaScript
that sort a table when its header is clicked, figures as ``data:`` URLs or inline
SVG. No file, font or script is loaded from anywhere, so a report opens offline
and can be mailed as one file.

Every piece of text that reaches the page goes through :func:`escape` (attribute
names and category values come from user files); the helpers here escape what
they are given, callers pass plain text.
"""

from __future__ import annotations

import base64
import html
import math
import os
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from dprm.errors import DataError, DprmError, printable_text
from dprm.files import write_atomic

__all__ = [
    "escape",
    "format_value",
    "exact_number",
    "format_exact",
    "Column",
    "html_table",
    "flatten",
    "definition_table",
    "png_image",
    "notes_and_figures",
    "support_bar",
    "page",
    "write_text_atomic",
    "write_bytes_atomic",
    "check_output",
]


def escape(text: Any) -> str:
    """HTML-escaped text of any value (quotes too, so it is safe inside attributes).

    Examples
    --------
    A text holding bytes that are not UTF-8 (a path named so, read by Python with
    surrogate escapes) shows them as ``\\xNN`` (:func:`dprm.errors.printable_text`):
    the page is UTF-8 and could not hold them.

    >>> escape('<b a="1">R&D</b>')
    '&lt;b a=&quot;1&quot;&gt;R&amp;D&lt;/b&gt;'
    >>> escape(os.fsdecode(b"/data/ev\\xff"))
    '/data/ev\\\\xff'
    """
    return html.escape(printable_text(str(text)), quote=True)


def _is_missing(value: Any) -> bool:
    """True for None, NaN and ``pandas.NA`` (scalars only)."""
    if value is None:
        return True
    if isinstance(value, (str, bytes, list, tuple, dict)):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def format_value(value: Any, kind: str = "auto") -> str:
    """Plain text of a table cell.

    Parameters
    ----------
    value : Any
        The value; ``None``, NaN and ``pandas.NA`` are shown as an en dash.
    kind : {"auto", "int", "float", "p", "share", "text"}
        ``"float"``: three significant digits; ``"p"``: p-values (two significant
        digits, scientific below 0.001); ``"share"``: a percentage; ``"int"``: an
        integer with thousands separators; ``"auto"``: by the value's type.

    Examples
    --------
    >>> [format_value(v) for v in (3, 0.123456, float("nan"), True, "x")]
    ['3', '0.123', '–', 'yes', 'x']
    >>> format_value(2.3e-12, "p"), format_value(0.04, "p"), format_value(0.25, "share")
    ('2.3e-12', '0.04', '25%')
    >>> format_value(1234567.0, "int"), format_value(12580.5), format_value(2e-5)
    ('1,234,567', '12,580', '2.00e-05')
    """
    if _is_missing(value):
        return "–"
    if kind == "text" or isinstance(value, str):
        return str(value)
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "yes" if value else "no"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return "–"
    if kind == "int" or (kind == "auto" and number.is_integer() and abs(number) < 1e15
                         and not isinstance(value, float)):
        return f"{int(round(number)):,}"
    if kind == "p":
        return f"{number:.2g}" if number >= 1e-3 or number == 0 else f"{number:.1e}".replace("e-0", "e-")
    if kind == "share":
        return f"{100 * number:.0f}%"
    if abs(number) >= 1e15 or (number != 0 and abs(number) < 1e-3):
        return f"{number:.2e}"
    if abs(number) >= 1000:
        return f"{number:,.0f}"
    return f"{number:.3g}"


#: Largest denominator :func:`exact_number` looks for behind a float that is no short decimal.
SIMPLE_DENOMINATOR = 10**9
#: Largest denominator :func:`format_exact` writes as a fraction ``p/q``.
SHOWN_DENOMINATOR = 10**6
#: Largest denominator of a fraction :func:`format_exact` writes without its rounded value beside it.
READ_DENOMINATOR = 1000
#: Most decimals :func:`format_exact` writes.
SHOWN_DECIMALS = 15


def exact_number(value: Any) -> Fraction | None:
    """The exact rational a document's number stands for; None for a non-number or a non-finite one.

    A float is what JSON wrote of an exact budget (the accountant keeps fractions): the
    shortest decimal that reads back as it (``0.63175``), or, where that decimal is long
    (``0.3333333333333333``), the simplest fraction with a denominator up to
    :data:`SIMPLE_DENOMINATOR` that is the same float (``1/3``). Sums of these add up
    exactly, where sums of floats do not (``0.1 + 0.2``).

    Examples
    --------
    >>> exact_number(0.63175), exact_number(1 / 3), exact_number(2), exact_number("x")
    (Fraction(2527, 4000), Fraction(1, 3), Fraction(2, 1), None)
    >>> exact_number(0.1) + exact_number(0.2) == exact_number(0.3)
    True
    """
    if isinstance(value, Fraction):
        return value
    if _is_missing(value) or isinstance(value, bool) or type(value).__name__ == "bool_":
        return None
    if isinstance(value, int):
        return Fraction(value)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if not math.isfinite(number):
        return None
    written = Fraction(repr(number))
    if written.denominator <= SIMPLE_DENOMINATOR:
        return written
    simple = written.limit_denominator(SIMPLE_DENOMINATOR)
    return simple if float(simple) == number else written


def format_exact(value: Fraction | None) -> str:
    """An exact rational written exactly: a decimal (``0.63175``), else a fraction (``1/3``).

    A decimal where the rational has one of at most :data:`SHOWN_DECIMALS` decimals, a
    fraction ``p/q`` where ``q`` is at most :data:`SHOWN_DENOMINATOR` (followed by its
    rounded value where ``q`` is above :data:`READ_DENOMINATOR`: ``20577/280000 (≈0.0735)``),
    else the value rounded (:func:`format_value`) after ``≈``. ``None`` is an en dash. Shares
    printed this way add up to their printed sum (a ledger's budget shares and its total).

    Examples
    --------
    >>> [format_exact(Fraction(v)) for v in ("0.63175", "1", "1/3", "2/3", "-5/2", "12500")]
    ['0.63175', '1', '1/3', '2/3', '-2.5', '12500']
    >>> format_exact(Fraction(20577, 280000)), format_exact(Fraction(1, 10**7 + 19)), format_exact(None)
    ('20577/280000 (≈0.0735)', '≈1.00e-07', '–')
    """
    if value is None:
        return "–"
    q = value.denominator
    twos = fives = 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    if q == 1 and max(twos, fives) <= SHOWN_DECIMALS:
        with localcontext() as context:
            context.prec = 60  # more than any decimal written here needs
            decimal = (Decimal(value.numerator) / Decimal(value.denominator)).normalize()
        return format(decimal, "f")
    if value.denominator <= READ_DENOMINATOR:
        return f"{value.numerator}/{value.denominator}"
    if value.denominator <= SHOWN_DENOMINATOR:
        return f"{value.numerator}/{value.denominator} (≈{format_value(float(value))})"
    return "≈" + format_value(float(value))


def _sort_key(value: Any) -> str:
    """The ``data-sort`` attribute of a numeric cell (empty for missing values)."""
    if _is_missing(value) or isinstance(value, str):
        return ""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(number) else repr(number)


@dataclass(frozen=True)
class Column:
    """One column of :func:`html_table`: the frame's column, its header and its format.

    ``kind`` is passed to :func:`format_value`; ``title`` becomes the header's tooltip;
    ``raw`` columns hold ready HTML (built by the caller from escaped parts); such a
    column sorts by the row's ``sort_key`` entry when one is named.
    """

    key: str
    header: str
    kind: str = "auto"
    title: str = ""
    raw: bool = False
    sort_key: str = ""


def html_table(columns: Sequence[Column], rows: Iterable[dict], *, caption: str = "",
               table_id: str = "", sortable: bool = True) -> str:
    """An HTML table; with ``sortable`` a click on a header sorts by that column.

    Numeric cells carry their exact value in ``data-sort`` (sorted as numbers, missing
    values last); other cells sort as text.

    Examples
    --------
    >>> text = html_table([Column("a", "A"), Column("b", "B <i>", "float")], [{"a": "x<y", "b": 0.5}])
    >>> "x&lt;y" in text and "B &lt;i&gt;" in text and 'data-sort="0.5"' in text
    True
    >>> text.count("<tr>")
    2
    """
    parts = ['<div class="scroll">'
             f'<table class="{"sortable" if sortable else "plain"}"' + (f' id="{escape(table_id)}"' if table_id else "") + ">"]
    if caption:
        parts.append(f"<caption>{escape(caption)}</caption>")
    parts.append("<thead><tr>")
    for column in columns:
        tip = f' title="{escape(column.title)}"' if column.title else ""
        parts.append(f"<th{tip}>{escape(column.header)}</th>")
    parts.append("</tr></thead><tbody>")
    for row in rows:
        parts.append("<tr>")
        for column in columns:
            value = row.get(column.key)
            if column.raw:
                sort = f' data-sort="{_sort_key(row.get(column.sort_key))}"' if column.sort_key else ""
                parts.append(f"<td{sort}>{'' if value is None else value}</td>")
                continue
            numeric = column.kind in ("int", "float", "p", "share") or (
                column.kind == "auto" and not isinstance(value, (str, bool)) and _sort_key(value) != "")
            if numeric:
                parts.append(f'<td class="num" data-sort="{_sort_key(value)}">{escape(format_value(value, column.kind))}</td>')
            else:
                parts.append(f"<td>{escape(format_value(value, column.kind))}</td>")
        parts.append("</tr>")
    parts.append("</tbody></table></div>")
    return "".join(parts)


def flatten(items: Iterable[tuple[str, Any]], prefix: str = "") -> list[tuple[str, Any]]:
    """Nested mappings as dotted names (``data.left.path``); lists and scalars stay values.

    Examples
    --------
    >>> flatten({"data": {"left": {"path": "l.csv"}}, "seed": 1}.items())
    [('data.left.path', 'l.csv'), ('seed', 1)]
    """
    out: list[tuple[str, Any]] = []
    for name, value in items:
        key = f"{prefix}{name}"
        if isinstance(value, dict) and value:
            out.extend(flatten(value.items(), prefix=f"{key}."))
        else:
            out.append((key, value))
    return out


def definition_table(items: Iterable[tuple[str, Any]]) -> str:
    """A two-column table of names and values (nested mappings flattened, lists shown as JSON).

    Examples
    --------
    >>> definition_table([("depth", 4), ("ledger", [1, 2]), ("data", {"rows": 3})]).count("<tr>")
    3
    >>> "8128803253402006549" in definition_table([("seed", 8128803253402006549)])   # not 8.13e+18
    True
    """
    import json

    parts = ['<table class="plain definitions"><tbody>']
    for name, value in flatten(items):
        if isinstance(value, (dict, list)):
            shown = f"<pre>{escape(json.dumps(value, indent=1, ensure_ascii=False, default=str))}</pre>"
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
            shown = escape(str(value))  # a seed: every digit, to repeat the run
        else:
            shown = escape("–" if value is None else value if isinstance(value, str) else format_value(value))
        parts.append(f"<tr><th>{escape(name)}</th><td>{shown}</td></tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def png_image(png: bytes, alt: str, *, name: str = "") -> str:
    """An ``<img>`` holding PNG bytes as a base64 ``data:`` URL (no file needed).

    Examples
    --------
    >>> png_image(b"\\x89PNG", "a <plot>", name="scatter")
    '<img class="figure" data-figure="scatter" alt="a &lt;plot&gt;" src="data:image/png;base64,iVBORw=="/>'
    """
    data = base64.b64encode(png).decode("ascii")
    named = f' data-figure="{escape(name)}"' if name else ""
    return f'<img class="figure"{named} alt="{escape(alt)}" src="data:image/png;base64,{data}"/>'


def notes_and_figures(notes: Iterable[str], figures: Mapping[str, bytes]) -> list[str]:
    """The "Notes" and "Figures" sections of an evaluation page, as parts of its body.

    Parameters
    ----------
    notes : iterable of str
        One paragraph each.
    figures : mapping of str to bytes
        PNG bytes by file name (``"accuracy_vote.png"``); each a figure captioned with its name.

    Returns
    -------
    list of str

    Examples
    --------
    >>> notes_and_figures(["a < b"], {})
    ['<h2>Notes</h2>', '<p class="note">a &lt; b</p>', '<h2>Figures</h2>']
    >>> notes_and_figures([], {"tpr.png": b"PNG"})[-1][-41:]
    '<figcaption>tpr.png</figcaption></figure>'
    """
    parts = ["<h2>Notes</h2>"]
    parts += [f'<p class="note">{escape(note)}</p>' for note in notes]
    parts.append("<h2>Figures</h2>")
    for name, png in figures.items():
        parts.append(f"<figure>{png_image(png, name, name=name.removesuffix('.png'))}"
                     f"<figcaption>{escape(name)}</figcaption></figure>")
    return parts


#: Colours of :func:`support_bar`: left only, both, right only, neither.
BAR_COLOURS = ("#4e79a7", "#8064a2", "#e15759", "#e8e8e8")


def support_bar(left_only: int, both: int, right_only: int, neither: int | None = None,
                width: int = 420) -> str:
    """An inline SVG bar of two supports: |L only|, |L ∩ R|, |R only| (and the rest).

    The segments' widths are proportional to their counts (over all rows when
    ``neither`` is given, over the union otherwise); the counts are written under
    the bar.

    Examples
    --------
    >>> svg = support_bar(10, 30, 20, 40)
    >>> svg.startswith("<svg") and svg.count("<rect") == 8 and "L∩R 30" in svg
    True
    """
    counts = [max(int(left_only), 0), max(int(both), 0), max(int(right_only), 0)]
    labels = ["L only", "L∩R", "R only"]
    if neither is not None:
        counts.append(max(int(neither), 0))
        labels.append("neither")
    total = sum(counts)
    height, bar = 36, 14
    parts = [f'<svg class="bar" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img">']
    title = ", ".join(f"{label} {count}" for label, count in zip(labels, counts))
    parts.append(f"<title>{escape(title)}</title>")
    x = 0.0
    for count, colour in zip(counts, BAR_COLOURS):
        w = width * count / total if total else 0.0
        parts.append(f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="{bar}" fill="{colour}"/>')
        x += w
    x = 0.0
    for label, count, colour in zip(labels, counts, BAR_COLOURS):
        text = f"{label} {count:,}"
        parts.append(f'<rect x="{x:.1f}" y="{height - 12}" width="9" height="9" fill="{colour}" stroke="#999" '
                     f'stroke-width="0.5"/><text x="{x + 12:.1f}" y="{height - 4}" font-size="11">{escape(text)}</text>')
        x += 12 + 6.6 * len(text) + 12
    parts.append("</svg>")
    return "".join(parts)


STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
 margin:0;color:#1d1d1f;background:#fff;line-height:1.45}
main{max-width:1240px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:1.7em;margin:.2em 0 .1em}
h2{font-size:1.3em;margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
h3{font-size:1.08em;margin-top:1.5em}
p.lead{color:#555;margin-top:0}
nav{background:#f6f7f9;border:1px solid #e3e5e8;border-radius:6px;padding:8px 14px;margin:14px 0;
 display:flex;flex-wrap:wrap;gap:4px 18px}
nav a{white-space:nowrap}
a{color:#2559a7}
table{border-collapse:collapse;margin:10px 0 18px;font-size:.9em}
div.scroll{overflow-x:auto;max-width:100%}
div.scroll>table{margin-top:4px}
caption{text-align:left;color:#555;padding-bottom:4px;font-style:italic}
th,td{border-bottom:1px solid #e6e6e6;padding:4px 9px;text-align:left;vertical-align:top}
thead th{background:#f1f3f6;border-bottom:2px solid #ccd;position:sticky;top:0}
table.sortable thead th{cursor:pointer;user-select:none}
table.sortable thead th:after{content:" \\2195";color:#aab;font-size:.8em}
table.sortable thead th.asc:after{content:" \\2191";color:#333}
table.sortable thead th.desc:after{content:" \\2193";color:#333}
tbody tr:nth-child(even){background:#fafbfc}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.definitions th{background:none;font-weight:600;white-space:nowrap;position:static}
pre{margin:0;white-space:pre-wrap;font-size:.85em}
figure{margin:18px 0 28px}
img.figure{max-width:100%;height:auto;border:1px solid #eee}
figcaption{color:#444;font-size:.9em;margin-top:4px}
.note{background:#fff8e1;border-left:4px solid #f0b400;padding:6px 12px;margin:10px 0}
.missing{color:#777;font-style:italic}
.card{border:1px solid #e0e3e8;border-radius:6px;padding:10px 14px;margin:12px 0}
.card.pruned{background:#fafafa;border-style:dashed}
.card h3{margin:0 0 6px;font-size:1em}
.query{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em;
 overflow-wrap:anywhere}
.tag{display:inline-block;font-size:.78em;padding:0 6px;border-radius:8px;background:#eee;color:#555;
 margin-left:6px;vertical-align:middle}
.tag.pruned{background:#f3e2c7;color:#7a4b00}
.tag.kept{background:#d9ecd9;color:#24572a}
svg.bar{display:block;margin-top:6px}
details{margin:8px 0}
summary{cursor:pointer;color:#2559a7}
footer{color:#777;font-size:.85em;margin-top:40px;border-top:1px solid #eee;padding-top:8px}
"""

SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('thead th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var asc = !th.classList.contains('asc');
      table.querySelectorAll('thead th').forEach(function (h) { h.classList.remove('asc', 'desc'); });
      th.classList.add(asc ? 'asc' : 'desc');
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[col];
        if (cell.hasAttribute('data-sort')) {
          var s = cell.getAttribute('data-sort');
          return s === '' ? null : parseFloat(s);
        }
        return cell.textContent.trim().toLowerCase();
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === null || x === '') return (y === null || y === '') ? 0 : 1;
        if (y === null || y === '') return -1;
        var c = (typeof x === 'number' && typeof y === 'number') ? x - y : String(x).localeCompare(String(y));
        return asc ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
function openTarget() {
  var target = location.hash && document.getElementById(location.hash.slice(1));
  if (!target) return;
  for (var node = target.parentElement; node; node = node.parentElement) {
    if (node.tagName === 'DETAILS') node.open = true;
  }
  target.scrollIntoView();
}
window.addEventListener('hashchange', openTarget);
openTarget();
"""


def page(title: str, body: str, *, subtitle: str = "") -> str:
    """A whole HTML document: ``title`` (plain text), ``body`` (ready HTML), inline style and script.

    Examples
    --------
    >>> text = page("A & B", "<p>hi</p>")
    >>> text.startswith("<!DOCTYPE html>") and "<title>A &amp; B</title>" in text and "http" not in text.replace("http://www.w3.org", "")
    True
    """
    lead = f'<p class="lead">{escape(subtitle)}</p>' if subtitle else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n"
        f"<body><main><h1>{escape(title)}</h1>{lead}\n{body}\n</main>"
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def write_bytes_atomic(data: bytes, path: str | os.PathLike) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file in the same directory, then rename).

    Raises
    ------
    DprmError
        When the directory does not exist or the file cannot be written.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise DprmError(f"{target}: directory {directory} does not exist")
    if target.is_dir():
        raise DprmError(f"{target}: is a directory; give a file name")
    try:
        write_atomic(target, data)
    except OSError as err:
        raise DprmError(f"{target}: cannot write: {err.strerror or err}") from None
    return target


def write_text_atomic(text: str, path: str | os.PathLike) -> Path:
    """Write UTF-8 text atomically (see :func:`write_bytes_atomic`).

    A byte that is not UTF-8 in the text (a path so named, embedded without
    :func:`escape`) is written as ``\\xNN`` (:func:`dprm.errors.printable_text`): the
    report is written, not lost to ``UnicodeEncodeError``.
    """
    return write_bytes_atomic(printable_text(text).encode("utf-8"), path)


def check_output(target: Path) -> None:
    """Refuse, in one line, an output file whose directory is missing or that is a directory.

    Examples
    --------
    >>> check_output(Path("/no/such/dir/report.html"))
    Traceback (most recent call last):
    ...
    dprm.errors.DataError: /no/such/dir/report.html: directory /no/such/dir does not exist
    """
    if not target.parent.is_dir() and str(target.parent):
        raise DataError(f"{target}: directory {target.parent} does not exist")
    if target.is_dir():
        raise DataError(f"{target}: is a directory; give a file name")
