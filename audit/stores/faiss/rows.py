"""The rows of a FAISS index: what each of its row numbers (its labels) is, read from the file that says so.

A FAISS index holds vectors only; search returns row numbers (labels: positions, or the ids an ``IndexIDMap``
was given: any signed 64-bit integer, negative ones included; only -1, :data:`NO_RESULT`, means "no result").
The file beside it maps them to the team's ids and texts:

- **JSONL** (one object a line) or **Parquet** (one row a record) of the team's: ``row`` (the label; default the
  line's or record's position from 0), the id column (default ``id``), the text column (default ``text``), and
  where given the document, offsets, model stamp and flat vector columns;
- **LlamaIndex**'s persisted folder (``StorageContext.persist``): ``index_store.json`` (the vector index's
  ``nodes_dict``, label → node id), ``docstore.json`` (each node's ``text``, ``metadata`` and source document in
  ``relationships["1"]``), beside ``default__vector_store.json`` (the FAISS index itself, binary despite its
  name);
- **LangChain**'s ``index.pkl`` is refused: it is a Python pickle, and loading one runs code.

Every reader raises :class:`~audit.stores.base.StoreError` as ``FILE:LINE: reason`` (or ``FILE: reason``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..base import StoreError

__all__ = ["NO_RESULT", "FaissRow", "PICKLE_REFUSED", "llamaindex_rows", "read_rows", "refuse_pickle"]

#: The one label FAISS returns for "no result" (a search that finds fewer than k). Every other signed 64-bit
#: integer is a label an ``IndexIDMap`` can be given, negative ones included.
NO_RESULT = -1
#: The one line a LangChain pickle gets.
PICKLE_REFUSED = ("{path}: a Python pickle (LangChain's FAISS docstore); loading it would run code, so the audit "
                  "never unpickles it: give the file mapping the index's rows to ids and texts instead (JSONL or "
                  "Parquet: row, id, text)")


@dataclass(frozen=True)
class FaissRow:
    """One row of the index: its label and what the rows file says of it.

    Attributes
    ----------
    label : int
        What FAISS returns for it (its position, or its ``IndexIDMap`` id).
    id, text : str
    doc_id, model : str or None
    start, end : int or None
        Code points of the document's canonical text, end exclusive.
    vector : float32 array of shape (dims,), or None
        The flat vector, when the rows file carries it (the exact scan then uses it).
    """

    label: int
    id: str
    text: str
    doc_id: str | None = None
    start: int | None = None
    end: int | None = None
    model: str | None = None
    vector: np.ndarray | None = None


def refuse_pickle(path) -> None:
    """Raise the one-line refusal for a pickle (LangChain's ``index.pkl``); never opens the file.

    Raises
    ------
    StoreError
        Always: :data:`PICKLE_REFUSED`.
    """
    raise StoreError(PICKLE_REFUSED.format(path=Path(path).name))


def _int(v, where: str, what: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise StoreError(f"{where}: {what} must be an integer, got {v!r}")
    return int(v)


def _row(rec: dict, pos: int, where: str, cols: dict) -> FaissRow:
    label = _int(rec.get("row", pos), where, "row")
    if label is None or label == NO_RESULT or not -2**63 <= label < 2**63:
        raise StoreError(f"{where}: row must be a signed 64-bit integer other than -1 (FAISS's \"no result\"), "
                         f"got {rec.get('row')!r}")
    rid = rec.get(cols["id"])
    if isinstance(rid, bool) or not isinstance(rid, (str, int)) or not str(rid).strip():
        raise StoreError(f"{where}: no id in {cols['id']!r} (a string or an integer)")
    text = rec.get(cols["text"])
    if text is not None and not isinstance(text, str):
        raise StoreError(f"{where}: {cols['text']!r} must be a string, got {type(text).__name__}")
    doc = rec.get(cols["doc"]) if cols["doc"] else None
    start = _int(rec.get(cols["start"]), where, cols["start"]) if cols["start"] else None
    end = _int(rec.get(cols["end"]), where, cols["end"]) if cols["end"] else None
    model = rec.get(cols["model"]) if cols["model"] else None
    vec = None
    if cols["vector"]:
        raw = rec.get(cols["vector"])
        if not isinstance(raw, (list, np.ndarray)) or not len(raw):
            raise StoreError(f"{where}: {cols['vector']!r} must be a list of numbers")
        try:
            vec = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError):
            raise StoreError(f"{where}: {cols['vector']!r} must be a list of numbers") from None
    return FaissRow(label, str(rid), text or "", None if doc is None else str(doc), start, end,
                    None if model is None else str(model), vec)


def read_rows(path, *, id_column: str = "id", text_column: str = "text", doc_column: str | None = None,
              start_column: str | None = None, end_column: str | None = None, model_column: str | None = None,
              vector_column: str | None = None) -> list[FaissRow]:
    """The rows of a JSONL or Parquet rows file, in file order.

    Raises
    ------
    StoreError
        ``FILE:LINE: reason`` for a line that is not a JSON object, a row without an id, a non-integer row or
        offset, a label given twice; a ``.pkl`` file (:func:`refuse_pickle`); an unreadable file.
    """
    p = Path(path)
    if p.suffix.lower() in (".pkl", ".pickle"):
        refuse_pickle(p)
    cols = {"id": id_column or "id", "text": text_column or "text", "doc": doc_column, "start": start_column,
            "end": end_column, "model": model_column, "vector": vector_column}
    out: list[FaissRow] = []
    where_of: dict[int, str] = {}
    if p.suffix.lower() == ".parquet":
        try:
            import pyarrow.parquet as pq

            records = pq.read_table(p).to_pylist()
        except (OSError, ValueError, ImportError) as e:
            raise StoreError(f"{p.name}: cannot read the Parquet rows file ({str(e).splitlines()[0]})") from None
        items = ((f"{p.name}: record {i + 1}", i, r) for i, r in enumerate(records))
    else:
        try:
            lines = p.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            raise StoreError(f"{p.name}: rows file not found") from None
        except (OSError, UnicodeDecodeError) as e:
            raise StoreError(f"{p.name}: cannot read the rows file ({e})") from None

        def parsed():
            pos = 0
            for n, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError as e:
                    raise StoreError(f"{p.name}:{n}: not JSON ({e})") from None
                if not isinstance(rec, dict):
                    raise StoreError(f"{p.name}:{n}: not a JSON object")
                yield f"{p.name}:{n}", pos, rec
                pos += 1
        items = parsed()
    for where, pos, rec in items:
        r = _row(rec, pos, where, cols)
        if r.label in where_of:
            raise StoreError(f"{where}: row {r.label} is mapped already ({where_of[r.label]})")
        where_of[r.label] = where
        out.append(r)
    return out


def _json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{path.name}: not found (a LlamaIndex persist folder holds docstore.json and "
                         "index_store.json)") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise StoreError(f"{path.name}: not LlamaIndex's JSON store ({str(e).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise StoreError(f"{path.name}: not LlamaIndex's JSON store (not an object)")
    return data


def llamaindex_rows(folder, *, doc_column: str | None = None, start_column: str | None = None,
                    end_column: str | None = None, model_column: str | None = None) -> list[FaissRow]:
    """The rows of a LlamaIndex persist folder, by label.

    ``index_store.json`` → ``{"index_store/data": {INDEX_ID: {"__type__": "vector_store", "__data__": "<JSON of
    the IndexDict: nodes_dict {label: node id}>"}}}``; ``docstore.json`` → ``{"docstore/data": {NODE_ID:
    {"__data__": {"id_", "text", "metadata", "relationships"}}}}``. The node's document is
    ``metadata[doc_column]`` when given, else its source node (``relationships["1"]["node_id"]``); offsets and
    model stamp are metadata keys (``start_char_idx``/``end_char_idx`` index LlamaIndex's own document text,
    not the corpus's canonical one, so they are not read as offsets).

    Raises
    ------
    StoreError
        A file missing or not that shape, more than one vector index, a node the docstore does not hold.
    """
    f = Path(folder)
    store = _json(f / "index_store.json").get("index_store/data")
    if not isinstance(store, dict):
        raise StoreError("index_store.json: no \"index_store/data\" (not LlamaIndex's index store)")
    vector = [(k, v) for k, v in store.items() if isinstance(v, dict) and v.get("__type__") == "vector_store"]
    if len(vector) != 1:
        raise StoreError(f"index_store.json: {len(vector)} vector indexes; the audit reads a folder of one")
    try:
        struct = json.loads(vector[0][1]["__data__"]) if isinstance(vector[0][1]["__data__"], str) \
            else vector[0][1]["__data__"]
        nodes = struct["nodes_dict"]
    except (KeyError, TypeError, ValueError):
        raise StoreError(f"index_store.json: index {vector[0][0]!r} has no nodes_dict") from None
    docs = _json(f / "docstore.json").get("docstore/data")
    if not isinstance(docs, dict):
        raise StoreError("docstore.json: no \"docstore/data\" (not LlamaIndex's document store)")
    out = []
    for label, node_id in nodes.items():
        where = f"index_store.json: row {label}"
        try:
            lab = int(label)
        except ValueError:
            raise StoreError(f"{where}: not a row number") from None
        node = docs.get(node_id)
        if not isinstance(node, dict) or not isinstance(node.get("__data__"), dict):
            raise StoreError(f"docstore.json: node {node_id!r} (row {lab}) is not in the document store")
        d = node["__data__"]
        meta = d.get("metadata") or {}
        src = (d.get("relationships") or {}).get("1")
        doc = meta.get(doc_column) if doc_column else (src.get("node_id") if isinstance(src, dict) else None)
        start = _int(meta.get(start_column), where, start_column) if start_column else None
        end = _int(meta.get(end_column), where, end_column) if end_column else None
        model = meta.get(model_column) if model_column else None
        text = d.get("text")
        out.append(FaissRow(lab, str(d.get("id_", node_id)), text if isinstance(text, str) else "",
                            None if doc is None else str(doc), start, end, None if model is None else str(model)))
    return sorted(out, key=lambda r: r.label)

