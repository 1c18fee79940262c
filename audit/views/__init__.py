"""One Streamlit-free view-model per dashboard page: what each page computes before it draws.

Each module is the twin of the page of the same name in ``app_pages/`` (as OpenMS'
streamlit-template keeps ``content/x.py`` over ``src/x.py``): it reads a
:class:`~audit.runset.RunSet` and its results (:func:`audit.evaluation.evaluate`) — whatever source
made it — and returns tables, sentences and small frozen results; the page only chooses what to draw.
A view says plainly what a run set cannot show (:func:`audit.capabilities.missing`).

Modules: :mod:`.overview`, :mod:`.strategies`, :mod:`.query_explorer`,
:mod:`.chunk_map`, :mod:`.threshold`, :mod:`.tokens`, :mod:`.citations`, :mod:`.index_health`,
:mod:`.upgrade_diff`, :mod:`.ground_truth` (fronting :mod:`audit.authoring`), :mod:`.history` (stored records,
not a run set: :mod:`audit.history`), :mod:`.record` (the decision record that Overview and Threshold download, and
``report --html``).
"""
