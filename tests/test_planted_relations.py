"""make_planted's relations of several kinds (issue 13): the returned queries are the true ones."""

from __future__ import annotations

import numpy as np
import pytest

from dprm.data import load_two_view
from dprm.datasets import RELATION_KINDS, make_planted
from dprm.errors import ParameterError
from dprm.queries import query_from_json

KINDS = ["disjunction", "interval", "thresholds", "threshold-or"]


def _supports(planted, data):
    out = []
    for left, right in planted.planted:
        out.append((query_from_json(left).support(data.left), query_from_json(right).support(data.right)))
    return out


@pytest.mark.parametrize("left_boolean, left_numeric", [(60, 0), (0, 30)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planted_queries_describe_their_group(left_boolean: int, left_numeric: int, seed: int) -> None:
    planted = make_planted(3000, n_left_boolean=left_boolean, n_left_numeric=left_numeric, n_right_numeric=20,
                           relations=KINDS, noise=0.05, random_state=seed)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    for left, right in _supports(planted, data):
        jaccard = (left & right).sum() / (left | right).sum()
        # Groups of 15-35 % of the rows, 5 % of all rows broken on one side: J about 0.75-0.9.
        assert 0.65 < jaccard < 0.95
        assert 0.1 * len(left) < left.sum() < 0.45 * len(left)


def test_no_noise_gives_exact_relations_and_the_written_shapes() -> None:
    planted = make_planted(2000, n_left_boolean=20, n_right_numeric=10, relations=KINDS, noise=0.0, random_state=3)
    data = load_two_view(planted.left, planted.right, types=planted.types)
    for left, right in _supports(planted, data):
        assert np.array_equal(left, right)
    (dis_l, dis_r), (int_l, int_r), (thr_l, thr_r), (or_l, or_r) = planted.planted
    assert dis_l == {"or": [{"and": [{"attr": "l_bool_0", "eq": True}, {"attr": "l_bool_1", "eq": True}]},
                            {"attr": "l_bool_2", "eq": True}]}
    assert dis_r == {"attr": "r_num_0", "gt": 60.0}
    assert int_l == {"and": [{"attr": "l_bool_3", "eq": True}, {"not": {"attr": "l_bool_4", "eq": True}}]}
    assert int_r == {"attr": "r_num_1", "gt": 40.0, "le": 70.0}
    assert thr_l == {"attr": "l_bool_5", "eq": True}
    assert thr_r == {"and": [{"attr": "r_num_2", "gt": 60.0}, {"attr": "r_num_3", "gt": 60.0}]}
    assert or_l == {"or": [{"attr": "l_bool_6", "eq": True}, {"attr": "l_bool_7", "eq": True}]}
    # every literal of a formula matters: each attribute takes both values inside the group's complement
    for name in ("l_bool_0", "l_bool_1", "l_bool_2", "l_bool_3", "l_bool_4"):
        assert 0 < planted.left[name].mean() < 1


def test_both_views_numeric() -> None:
    planted = make_planted(1000, n_left_boolean=0, n_left_numeric=12, n_right_numeric=10, relations=KINDS,
                           noise=0.0, random_state=0)
    assert planted.planted[0][0]["or"][1] == {"attr": "l_num_2", "gt": 60.0}
    assert planted.planted[1][0]["and"][1] == {"not": {"attr": "l_num_4", "gt": 60.0}}
    data = load_two_view(planted.left, planted.right, types=planted.types)
    for left, right in _supports(planted, data):
        assert np.array_equal(left, right)


def test_default_behaviour_is_unchanged() -> None:
    # The old generator (no relations) is untouched: same values for the same seed.
    a = make_planted(300, n_planted=2, random_state=5)
    b = make_planted(300, n_planted=2, random_state=5)
    assert a.left.equals(b.left) and a.planted == [({"and": [{"attr": "l_bool_0", "eq": True},
                                                               {"attr": "l_bool_1", "eq": True}]},
                                                     {"attr": "r_num_0", "gt": 60.0}),
                                                    ({"and": [{"attr": "l_bool_2", "eq": True},
                                                              {"attr": "l_bool_3", "eq": True}]},
                                                     {"attr": "r_num_1", "gt": 60.0})]
    assert set(KINDS) | {"conjunction"} == set(RELATION_KINDS)


def test_bad_relations_are_refused() -> None:
    with pytest.raises(ParameterError, match="unknown planted relation 'nope'"):
        make_planted(100, relations=["nope"])
    with pytest.raises(ParameterError, match="left view needs at least 6 Boolean"):
        make_planted(100, n_left_boolean=5, relations=["disjunction", "disjunction"])
    with pytest.raises(ParameterError, match="relations must be a list"):
        make_planted(100, relations="interval")



def test_columns_are_declared_complete_exactly_when_nothing_is_missing() -> None:
    """Without missing values every column is declared complete (the loader checks it), so private runs
    print the shortest forms, ``([a ≤ t] ∧ x) ∨ ([a > t] ∧ x)`` as ``x``; with missing values none is."""
    from dprm.queries import NumericLiteral as N
    from dprm.queries.normal_form import normalize

    whole = make_planted(500, n_left_boolean=6, n_right_numeric=4, relations=["disjunction"], random_state=0)
    data = load_two_view(whole.left, whole.right, types=whole.types)
    complete = {a.name for view in data.views for a in view if a.domain.complete}
    assert complete == set(whole.left.columns[1:]) | set(whole.right.columns[1:])
    x = N("r_num_0", gt=60.0)
    split = (N("r_num_3", le=50.0) & x) | (N("r_num_3", gt=50.0) & x)
    assert normalize(split, complete=complete) == x
    assert normalize(split) != x  # undeclared: a row missing r_num_3 is in neither branch
    holed = make_planted(500, n_left_boolean=6, n_right_numeric=4, relations=["disjunction"], missing=0.05,
                         random_state=0)
    loaded = load_two_view(holed.left, holed.right, types=holed.types)  # nothing declared that the rows break
    assert not any(a.domain.complete for view in loaded.views for a in view)
