"""How a dataset's registrations are named where analysts and owners read them.

A dataset removed (``dprm admin dataset remove``) and registered again under its name
is a new registration with budgets of its own; ledgers, budget lists and job lists
label the old one's rows ``NAME (removed)``.
"""

from __future__ import annotations

__all__ = ["shown_name"]


def shown_name(name: str, active_name: str | None) -> str:
    """A registration's name as ledgers, budgets and jobs show it: a removed one says so.

    A name removed and registered again is a new registration with budgets of its
    own; labelling the old one's rows apart keeps every label's rows adding up to one
    registration's spent budget. (Names hold no space or parenthesis, so no dataset
    is named like a removed one.)

    Examples
    --------
    >>> shown_name("mammals", "mammals"), shown_name("mammals", None)
    ('mammals', 'mammals (removed)')
    """
    return name if active_name is not None else f"{name} (removed)"
