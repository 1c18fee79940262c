"""Production traffic through the gate: what a chosen cut does to the questions people actually ask.

Modules, one concept each:

- :mod:`audit.traffic.records` one real question, its results, its time; a line that could not be read
- :mod:`audit.traffic.otlp` OpenInference retrieval spans in an OTLP JSON export (one request a line)
- :mod:`audit.traffic.traces` whole traces of the same exports: retriever, reranker, LLM prompt, linked by ids
- :mod:`audit.traffic.querylog` the plain JSONL query log
- :mod:`audit.traffic.kind` which score kind the scores are: what the file says, else the run's
- :mod:`audit.traffic.read` files, folders and patterns read streamed, each record's place to read it again
- :mod:`audit.traffic.shards` many files (a day's shards) read one task a file on Ray Data, merged as one process
- :mod:`audit.traffic.table` the traffic as numbers (gate values, times), the one gate applied to it
- :mod:`audit.traffic.content` returned contents checked against the corpus as citations are
- :mod:`audit.traffic.labelled` the same system's labelled questions (a team's run, a built-in pipeline)
- :mod:`audit.traffic.mixture` the share out of domain: maximum-likelihood mixing weight, bootstrap, fit
- :mod:`audit.traffic.drift` Kolmogorov–Smirnov tests against the labelled questions and between windows
- :mod:`audit.traffic.review` the questions nearest the cut, for a person to read
- :mod:`audit.traffic.settings` ``[traffic]`` in audit.toml (``show_questions``, named sources)

The report that renders it all is :mod:`audit.report.traffic`.
"""
