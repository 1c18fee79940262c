"""The judging queue: QA's judgments become the ground truth, with their agreement and their versions.

- :mod:`~audit.judging.labels`: a set of graded labels (:class:`~audit.judging.labels.Judgments`) with its
  content digest, and :func:`~audit.judging.labels.diff` of two sets;
- :mod:`~audit.judging.store`: the versions and the reviewers' labels in the audit's own SQLite;
- :mod:`~audit.judging.versions`: a version applied to a run set, what it changes in every run's figures, and
  the reviewers' labels settled into a new version;
- :mod:`~audit.judging.queues`: the pool of unjudged top chunks and who is asked what;
- :mod:`~audit.judging.agreement`: Cohen's κ and Krippendorff's α with bootstrap intervals.

Nothing here imports Streamlit or writes to a team's store (docs/judging.md).
"""

from .labels import Judgments, diff, judgments_version

__all__ = ["Judgments", "diff", "judgments_version"]
