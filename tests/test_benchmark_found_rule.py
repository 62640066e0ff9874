"""The quality benchmarks' rule for a planted relation "found": what the queries say, not how they print."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from dprm.data import load_two_view
from dprm.datasets import make_planted
from dprm.queries import BooleanLiteral as B, NumericLiteral as N, Redescription, RedescriptionStats, query_from_json
from dprm.queries.normal_form import complete_attributes

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "quality_weak_signal.py"


def _relations_touched():
    spec = importlib.util.spec_from_file_location("quality_weak_signal", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.relations_touched


def test_a_split_into_both_branches_does_not_count_for_its_attribute() -> None:
    planted = make_planted(400, n_left_boolean=8, n_right_numeric=6, relations=["disjunction", "threshold-or"],
                           random_state=0)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    relations = [(query_from_json(a), query_from_json(b)) for a, b in planted.planted]
    (first,), (second,) = (sorted(right.attributes())[:1] for _, right in relations)
    x = N(first, le=60.0)
    vacuous = (x & N(second, gt=48.5)) | (x & N(second, le=48.5))  # is x, whatever `second` is
    left = B(sorted(relations[0][0].attributes())[0]) | B(sorted(relations[1][0].attributes())[0])  # names both
    found = Redescription(left, vacuous, RedescriptionStats.from_counts(100, 100, 90, 400))
    relations_touched = _relations_touched()
    assert relations_touched(found, relations, complete_attributes(*data.views)) == {0}
    assert relations_touched(found, relations, frozenset()) == {0, 1}  # unknown completeness: printed as is
