"""What ``dprm mine`` prints: the privacy status line and the table of redescriptions.

The status line comes first, on every run, so nobody reads a table without knowing
what it is worth::

    private: ε = 1 spent (pure-dp on MCMC convergence), ledger in out.json
    NOT private: seeded noise source: ...; split points ... come from undeclared types

The table's title follows the status: "differentially private" only on a run that is.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from rich.text import Text

from dprm.cli.console import console, plural

if TYPE_CHECKING:
    from dprm.queries import Redescription

__all__ = ["privacy_status", "describe_guarantee", "print_status", "displayed", "print_redescriptions", "wrap_query",
           "field_lines"]


def describe_guarantee(guarantee: str) -> str:
    """The spec's guarantee label in words.

    Examples
    --------
    >>> describe_guarantee("pure-dp-on-mcmc-convergence; data-dependent stop")
    'pure-dp on MCMC convergence; data-dependent stop'
    >>> describe_guarantee("pure-dp")
    'pure-dp'
    """
    return guarantee.replace("pure-dp-on-mcmc-convergence", "pure-dp on MCMC convergence")


def _epsilon(value: float) -> str:
    return f"{value:.6g}"


def privacy_status(privacy: Mapping[str, Any], output: Path | None,
                   budget: float | None = None) -> tuple[bool, str]:
    """Whether the run is private, and its one status line.

    ``budget`` is the ε the run was given; a run that stopped early spent less, and
    the line says so. ``output`` is the JSON the run wrote, which holds the ledger;
    without one the ledger is written nowhere, and the line says how to keep it.

    Examples
    --------
    >>> block = {"epsilon": 1.0, "guarantee": "pure-dp", "private": True, "ledger": [{"epsilon": 1.0}]}
    >>> privacy_status(block, Path("out.json"), 1.0)
    (True, 'private: ε = 1 spent (pure-dp), ledger in out.json')
    >>> privacy_status({**block, "epsilon": 0.75}, None, 1.0)[1]
    'private: ε = 0.75 spent of 1 (pure-dp), ledger of 1 release not written (pass --output FILE to keep it)'
    >>> privacy_status({**block, "guarantee": "approx-dp", "delta": 1e-9}, None, 1.0)[1]
    'private: ε = 1 spent, δ = 1e-09 (approx-dp), ledger of 1 release not written (pass --output FILE to keep it)'
    >>> privacy_status({"guarantee": "none", "private": False, "reasons": ["a seed was given"]}, None)
    (False, 'NOT private: a seed was given')
    """
    guarantee = str(privacy.get("guarantee", "none"))
    private = bool(privacy.get("private", guarantee != "none")) and guarantee != "none"
    if not private:
        reasons = [str(r) for r in privacy.get("reasons") or []] or ["not a private algorithm"]
        return False, "NOT private: " + "; ".join(reasons)
    ledger = privacy.get("ledger") or []
    where = f"ledger in {output}" if output is not None else \
        f"ledger of {plural(len(ledger), 'release')} not written (pass --output FILE to keep it)"
    spent = float(privacy.get("epsilon", 0.0))
    of = f" of {_epsilon(budget)}" if budget is not None and _epsilon(budget) != _epsilon(spent) else ""
    delta = privacy.get("delta")  # an (ε, δ) guarantee states its δ
    delta_text = f", δ = {float(delta):g}" if delta else ""
    return True, f"private: ε = {_epsilon(spent)} spent{of}{delta_text} ({describe_guarantee(guarantee)}), {where}"


def print_status(privacy: Mapping[str, Any], output: Path | None, budget: float | None = None) -> bool:
    """Print the status line (green when private, bold red when not); return whether private."""
    private, line = privacy_status(privacy, output, budget)
    console.print(Text(line, style="green" if private else "bold red"), soft_wrap=True)
    return private


def _query_tokens(text: str) -> list[str] | None:
    """``text`` cut at the spaces outside brackets (a literal stays whole); None if unbalanced."""
    tokens, depth, start = [], 0, 0
    for position, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                return None
        elif char == " " and depth == 0:
            if position > start:
                tokens.append(text[start:position])
            start = position + 1
    if depth != 0:
        return None
    if start < len(text):
        tokens.append(text[start:])
    return tokens


def wrap_query(text: str, width: int, first: str) -> list[str]:
    """Lines of at most ``width`` characters holding ``first`` + ``text``, cut between literals.

    A line breaks only at a space outside a literal's brackets (rich would cut
    ``[city = New York]`` in two) and continues under the query's start; a literal
    longer than a line stands alone on its line.

    Examples
    --------
    >>> for line in wrap_query("([age > 40] ∧ [city = New York]) ∨ smoker", 30, "  L: "):
    ...     print(line)
      L: ([age > 40] ∧
         [city = New York]) ∨
         smoker
    """
    tokens = _query_tokens(text)
    if tokens is None or len(first) + len(text) <= width:
        return [first + text]
    indent = " " * len(first)
    lines, current = [], first
    for token in tokens:
        if current.strip() and len(current) + 1 + len(token) > width:
            lines.append(current)
            current = indent + token
        else:
            current += ("" if current == first else " ") + token
    lines.append(current)
    return lines


def field_lines(fields: Sequence[tuple[str, str]], width: int, *, gap: int = 3, indent: int = 5) -> list[Text]:
    """``(text, style)`` fields joined by ``gap`` spaces, wrapped between fields (never inside one) at ``width``.

    Examples
    --------
    >>> [line.plain for line in field_lines([("1. J = 0.5", "bold"), ("|L| 10", ""), ("p 0.01", "")], 20)]
    ['1. J = 0.5   |L| 10', '     p 0.01']
    """
    lines: list[Text] = []
    current = Text()
    for text, style in fields:
        if current.plain and len(current.plain) + gap + len(text) > width:
            lines.append(current)
            current = Text(" " * indent)
        elif current.plain:
            current.append(" " * gap)
        current.append(text, style=style or None)
    lines.append(current)
    return lines


def displayed(redescriptions: Sequence["Redescription"], top: int) -> list["Redescription"]:
    """The redescriptions :func:`print_redescriptions` shows, in its order: kept before pruned, ``top`` at most."""
    return sorted(redescriptions, key=lambda r: r.pruned)[:top]


def complements(shown: Sequence["Redescription"], complete: AbstractSet[str] = frozenset()) -> dict[int, int]:
    """Position → the earlier position whose redescription it negates on both sides (``¬L ↔ ¬R`` of ``L ↔ R``).

    Both describe the same finding: their counts determine each other (``|¬L ∩ ¬R| =
    n − |L ∪ R|``). Found from the queries' normal forms (``complete``: the attributes
    known to have no missing value, as for :func:`~dprm.queries.normal_form.normalize`),
    so a pair is named only where the negation holds on exactly the complement's rows.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral as B, NumericLiteral as N, Redescription, RedescriptionStats
    >>> stats = RedescriptionStats.from_counts(5, 5, 4)
    >>> one = Redescription(B("a") & B("b"), N("x", le=3), stats)
    >>> other = Redescription(B("a", False) | B("b", False), N("x", gt=3), stats)
    >>> complements([one, other], {"a", "b", "x"}), complements([one, other])   # needs a, b, x complete
    ({1: 0}, {})
    """
    from dprm.queries import Not
    from dprm.queries.normal_form import canonical_key

    seen: dict[tuple[str, str], int] = {}
    found: dict[int, int] = {}
    for position, r in enumerate(shown):
        negated = (canonical_key(Not(r.left), complete), canonical_key(Not(r.right), complete))
        if negated in seen:
            found[position] = seen[negated]
        seen.setdefault((canonical_key(r.left, complete), canonical_key(r.right, complete)), position)
    return found


def print_redescriptions(redescriptions: Sequence["Redescription"], top: int, *, noisy: bool, private: bool,
                         hidden: int = 0, complete: AbstractSet[str] = frozenset()) -> None:
    """One block per redescription: its statistics on a line, then both queries.

    ``noisy``: the statistics are noisy releases (a private algorithm, with or without
    a secure noise source); ``private``: the run's guarantee holds. ``hidden``: the
    number of redescriptions the redundancy filter left out of the table.
    ``complete``: the attributes known to have no missing value (declared, in a
    private run), with which a redescription that negates an earlier one on both sides
    is marked as its complement (:func:`complements`).
    """
    kept = sum(not r.pruned for r in redescriptions)
    title = plural(len(redescriptions) + hidden, "redescription")
    if hidden:
        title += f" ({hidden:,} redundant not shown)"
    if noisy:
        title += f", {kept:,} kept after pruning"
        title += (", differentially private statistics" if private
                  else ", noisy statistics (NOT private)")
    else:
        title += ", exact statistics (not private)"
    console.print(Text(title, style="bold"), soft_wrap=True)
    shown = displayed(redescriptions, top)
    complement_of = complements(shown, complete)
    for number, r in enumerate(shown, start=1):
        s = r.stats
        head = f"{number:>3}. J = {s.jaccard:.3f}"
        interval = r.extra.get("interval", {}).get("jaccard") if noisy else None
        if interval:
            head += f" [{interval[0]:.2f}, {interval[1]:.2f}]"
        fields = [(head, "bold")]
        independence = r.extra.get("independence")
        if isinstance(independence, dict) and "excess" in independence:
            # over independent queries' J (docs/mining.md), with the interval shifted from J's
            excess = f"excess {independence['excess']:.2f}"
            band = independence.get("excess_interval") if noisy else None
            if band:
                excess += f" [{band[0]:.2f}, {band[1]:.2f}]"
            fields.append((excess, ""))
        fields += [(f"|L| {s.support_left:,.0f}", ""), (f"|R| {s.support_right:,.0f}", ""),
                   (f"|L∩R| {s.intersection:,.0f}", "")]
        p_band = r.extra.get("interval", {}).get("p_value") if noisy else None
        if p_band:  # a p-value of noisy counts alone can look decisive where the counts are noise
            fields.append((f"p ≤ {p_band[1]:.2g}", ""))
            sure = r.extra.get("interval", {}).get("significance")
            if sure:  # what the significance rule of pruning reads (dprm.mining.pruning)
                fields.append((f"P(p ≤ {sure['max_pvalue']:g}) {sure['probability']:.2f}", ""))
        elif s.p_value is not None:
            fields.append((f"p {s.p_value:.2g}", ""))
        if r.pruned:
            fields.append(("pruned", "yellow"))
        if number - 1 in complement_of:  # the same finding, negated on both sides
            fields.append((f"complement of {complement_of[number - 1] + 1}", "dim"))
        for line in field_lines(fields, max(console.width, 40)):
            console.print(line, soft_wrap=True)
        for side, query in (("L", r.left), ("R", r.right)):
            for text in wrap_query(str(query), max(console.width, 40), f"     {side}: "):
                console.print(Text(text), soft_wrap=True)
    if len(redescriptions) > len(shown):
        console.print(f"... {len(redescriptions) - len(shown):,} more (--top N shows more; --output writes all)")
