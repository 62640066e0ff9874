"""Text form of a fitted :class:`~dprm.classifier.DPDecisionTreeClassifier`.

Only what the fit released is shown: the splits, and per node the noisy class
counts and the label it gives (nothing exact).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dprm.classifier.encoding import CATEGORICAL

__all__ = ["export_text"]


def export_text(clf: Any, *, decimals: int = 0, show_counts: bool = True) -> str:
    """The tree as indented text, one line per branch and leaf.

    Parameters
    ----------
    clf : DPDecisionTreeClassifier
        A fitted classifier.
    decimals : int, default 0
        Decimals of the noisy counts.
    show_counts : bool, default True
        Show each leaf's noisy class counts (released with ``leaf_labels="noisy-counts"``).

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.classifier import DPDecisionTreeClassifier
    >>> X = np.array([["a"], ["b"]] * 200, dtype=object)
    >>> y = np.array(["yes", "no"] * 200)
    >>> clf = DPDecisionTreeClassifier(epsilon=2.0, max_depth=1, random_state=1,
    ...     categories=[["a", "b"]], classes=["no", "yes"]).fit(X, y)
    >>> print(export_text(clf, show_counts=False))
    x0 = 'a'
    |   class: yes
    x0 != 'a'
    |   class: no
    x0 missing
    |   class: yes
    """
    tree = clf.tree_
    domains = clf.domains_
    classes = clf.classes_
    lines: list[str] = []

    def label(node: int) -> str:
        text = f"class: {classes[int(np.argmax(tree.proba[node]))]}"
        if show_counts and tree.noisy_counts.shape[1]:
            own = tree.noisy_counts[node]
            shown = ", ".join(f"{c}: {v:.{decimals}f}" for c, v in zip(classes, own))
            text += f" (noisy counts {shown})"
        return text

    def walk(node: int, indent: str) -> None:
        f = int(tree.feature[node])
        if f < 0:
            lines.append(f"{indent}{label(node)}")
            return
        domain = domains[f]
        start, n = int(tree.child_start[node]), int(tree.n_children[node])
        for c in range(n):
            child = int(tree.children[start + c])
            if c == n - 1:
                condition = f"{domain.name} missing"
            elif domain.kind == CATEGORICAL and tree.threshold[node] < 0:
                condition = f"{domain.name} = {domain.describe(c)}"
            elif domain.kind == CATEGORICAL:
                value = domain.describe(int(tree.threshold[node]))
                condition = f"{domain.name} = {value}" if c == 0 else f"{domain.name} != {value}"
            else:
                t = float(domain.thresholds[int(tree.threshold[node])])
                condition = f"{domain.name} <= {t:g}" if c == 0 else f"{domain.name} > {t:g}"
            lines.append(f"{indent}{condition}")
            walk(child, indent + "|   ")

    walk(0, "")
    return "\n".join(lines)
