"""Writing a ground truth: needles picked from the documents and checked as they are written.

The Ground truth page (``app_pages/10_Ground_truth.py``) and ``python -m audit groundtruth`` stand on
these modules; nothing here imports Streamlit, and every rule is the product's own, called
(docs/definitions.md, *Writing the ground truth*):

- :mod:`.checks` — a draft needle (occurrences, heading line, length, each strategy's verdict with
  the cut that destroys it), its questions (the quotes-its-needle hint, the dense distance to the
  needle's chunk), out-of-domain questions found in the corpus, passages and candidate sentences;
- :mod:`.locate` — question/answer pairs (CSV or JSONL) read, each answer located (exact, matching
  view, rapidfuzz partial ratio ≥ 90) and proposed as a needle;
- :mod:`.draft` — the ground truth being edited: stable ids, opening with each file's hash, saving
  (refused when the file changed since it was opened, or is a shipped file), where it may be saved;
- the page's view-model (tables, messages, the document drawn with its cuts) and the one adapter from a
  built run are :mod:`audit.views.ground_truth`, beside the other pages' view-models.
"""
