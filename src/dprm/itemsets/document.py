"""The itemsets JSON (format ``dprm.itemsets/1``) and its terminal table.

The document (``docs/itemsets-format.md`` describes it)::

    {"format": "dprm.itemsets/1",
     "parameters": {...every parameter used...},
     "privacy": {"epsilon", "neighbouring", "guarantee", "private", "reasons", "ledger"},
     "itemsets": [{"items": {"COLUMN": "VALUE", ...}, "support": 0.42}, ...]}

Supports are estimated shares of rows; values are the text written in the input file
(bin labels for binned numeric columns). The privacy block has the form of the
redescriptions format's. The non-private estimate (with or without t-closeness) says
``private: false`` with its reasons: the estimate is made of exact counts of the rows,
and t-closeness is a syntactic property of the estimate, not differential privacy.

Examples
--------
>>> from dprm.itemsets.ison import Itemset
>>> doc = itemsets_document([Itemset({"odor": "n"}, 0.434)], {"min_support": 0.3},
...                         not_private_block(t_closeness=True))
>>> doc["format"], doc["itemsets"], doc["privacy"]["private"]
('dprm.itemsets/1', [{'items': {'odor': 'n'}, 'support': 0.434}], False)
>>> [s.items for s in read_itemsets(doc)]
[{'odor': 'n'}]
>>> print(itemsets_table(read_itemsets(doc)))
support  items
0.43400  odor=n
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dprm.errors import DataError
from dprm.json_values import plain_json
from dprm.itemsets.ison import Itemset

__all__ = ["FORMAT", "COUNTS_REASON", "T_CLOSENESS_REASON", "itemsets_document", "itemsets_table",
           "not_private_block", "read_itemsets"]

FORMAT = "dprm.itemsets/1"
#: Why the Hoeffding-tree estimate is not private.
COUNTS_REASON = "the density estimate is made of exact counts of the rows (not differentially private)"
#: Why t-closeness does not make it private.
T_CLOSENESS_REASON = "t-closeness is a syntactic property of the estimate, not differential privacy"


def not_private_block(*, t_closeness: bool = False, reasons: Sequence[str] = ()) -> dict[str, Any]:
    """The privacy block of a non-private estimate (nothing spent, no ledger).

    Examples
    --------
    >>> not_private_block()["reasons"] == [COUNTS_REASON]
    True
    """
    all_reasons = [COUNTS_REASON] + ([T_CLOSENESS_REASON] if t_closeness else []) + [str(r) for r in reasons]
    from dprm.privacy.accountant import NEIGHBOURING  # dprm.privacy's import (0.1 s) only when it is needed

    return {"epsilon": 0.0, "neighbouring": NEIGHBOURING, "guarantee": "none", "private": False,
            "reasons": all_reasons, "ledger": []}


def itemsets_document(itemsets: Sequence[Itemset], parameters: Mapping[str, Any],
                      privacy: Mapping[str, Any], noise: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The ``dprm.itemsets/1`` document of mined itemsets; ``noise``: each itemset's noise fields
    (``support_sd``, ``interval``, ``by_closure`` of ``private_method="basis"``), added to its entry.

    The entries are in the format's order, by number of items, then by decreasing support
    (a stable sort: ties keep the given order), whatever order ``itemsets`` come in (a
    top-k run ranks them by support alone; the terminal's listing stays so). An itemset's items
    that are text already (ISON's are) are its entry's, not a copy: a listing of two million
    itemsets of 500 columns held each one twice (about 300 bytes an itemset more, session 57).
    """
    entries = [{"items": s.items if all(type(k) is str and type(v) is str for k, v in s.items.items())
                else {str(k): str(v) for k, v in s.items.items()}, "support": float(s.support)}
               for s in itemsets]
    for entry, extra in zip(entries, noise or []):
        entry.update(plain_json(dict(extra)))
    entries.sort(key=lambda entry: (len(entry["items"]), -entry["support"]))
    return {
        "format": FORMAT,
        "parameters": plain_json(dict(parameters)),
        "privacy": plain_json(dict(privacy)),
        "itemsets": entries,
    }


def read_itemsets(document: Mapping[str, Any] | str | Path) -> list[Itemset]:
    """The itemsets of a ``dprm.itemsets/1`` document (a mapping or a JSON file), checked.

    Raises
    ------
    DataError
        Not a ``dprm.itemsets/1`` document, or an itemset without items or with a
        support outside [0, 1].
    """
    source = "the document"
    if not isinstance(document, Mapping):
        source = str(document)
        try:
            document = json.loads(Path(document).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise DataError(f"{source}: cannot be read as JSON ({error})", file=source,
                            data_dependent=False) from None
    if not isinstance(document, Mapping) or document.get("format") != FORMAT:
        raise DataError(f"{source}: not a {FORMAT} document", file=source, data_dependent=False)
    result = []
    for i, entry in enumerate(document.get("itemsets", [])):
        items, support = entry.get("items") if isinstance(entry, Mapping) else None, None
        if isinstance(entry, Mapping):
            support = entry.get("support")
        if not isinstance(items, Mapping) or not items or not isinstance(support, int | float) \
                or not (0.0 <= float(support) <= 1.0 + 1e-9) or math.isnan(float(support)):
            raise DataError(f"{source}: itemset {i + 1} needs non-empty items and a support in [0, 1]",
                            file=source, data_dependent=False)
        result.append(Itemset({str(k): str(v) for k, v in items.items()}, float(support)))
    return result


def itemsets_table(itemsets: Sequence[Itemset], top: int | None = None) -> str:
    """A plain-text table of itemsets: support, then ``COLUMN=VALUE`` items (the first ``top``)."""
    shown = list(itemsets if top is None else itemsets[:top])
    lines = ["support  items"]
    for s in shown:
        lines.append(f"{s.support:7.5f}  " + ", ".join(f"{k}={v}" for k, v in s.items.items()))
    if top is not None and len(itemsets) > top:
        lines.append(f"... {len(itemsets) - top} more")
    return "\n".join(lines)
