"""The differentially private decision-tree classifier (Bai et al. 2017), a scikit-learn estimator.

* :class:`DPDecisionTreeClassifier` — the estimator (:mod:`~dprm.classifier.estimator`),
  its parameters in one table (:mod:`~dprm.classifier.parameters`);
* :class:`FeatureEncoding`, :func:`learn_domains`, :func:`encode` — the features' public
  domains and integer codes (:mod:`~dprm.classifier.encoding`);
* the private subtree releases of each computation (:mod:`~dprm.classifier.subtree_search`);
* :class:`FittedTree` — the released tree (:mod:`~dprm.classifier.fitted_tree`);
* :func:`export_text` — the tree as text (:mod:`~dprm.classifier.export`).
* the small-budget release, a noisy row count and a chosen root split
  (:mod:`~dprm.classifier.small_budget`); a private ensemble of trees on disjoint
  row parts, measured and kept as an option (:mod:`~dprm.classifier.ensemble`).

Importing this package imports scikit-learn (the miners in :mod:`dprm.trees` do not).
"""

from dprm.classifier.encoding import FeatureEncoding, encode, learn_domains
from dprm.classifier.estimator import DPDecisionTreeClassifier
from dprm.classifier.export import export_text
from dprm.classifier.fitted_tree import FittedTree

__all__ = ["DPDecisionTreeClassifier", "FeatureEncoding", "FittedTree", "encode", "export_text", "learn_domains"]
