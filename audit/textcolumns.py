"""Whitespace-separated text files (TREC runs, TREC qrels) read as columns: pyarrow's CSV reader over the bytes.

One home for what the run reader (:mod:`audit.sources.imported.columnar`) and the qrels reader
(:func:`audit.qrels.read_trec_qrels_columns`) share: the file in blocks of whole lines, the checks that keep a
block to what the line readers read (``str.split``'s fields), the parse, and codes for the distinct ids.

A block is parsed as it is, fields split on single spaces; only when that finds an empty field or another
field count are runs of spaces and spaces at a line's ends removed and the block parsed again (a clean file
pays no byte pass). What cannot be read exactly as the line readers read it raises :class:`Refused`; the
caller then reads the file line by line, and the line reader names the line.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

__all__ = ["Dictionary", "Refused", "blocks", "table", "tables", "unified", "words"]

#: The ASCII bytes ``str.split()`` splits on besides the space and the newline, made spaces.
_SPACES = bytes.maketrans(b"\t\r\x0b\x0c\x1c\x1d\x1e\x1f", b" " * 8)
_SPLIT = tuple(bytes([c]) for c in b"\t\r\x0b\x0c\x1c\x1d\x1e\x1f")
#: A whitespace character the bytes are not split on (a Unicode space: the line reader's str.split splits there).
_OTHER_SPACE = re.compile(r"[^\S\n ]")
#: Bytes of a block Arrow's CSV reader parses as one part (the parts of a block are parsed on its threads).
PART_BYTES = 4 << 20


class Refused(Exception):
    """The fast path does not read this file as the line reader does: read it line by line."""


def words(column):
    """A column's distinct strings when dictionary-encoded (each chunk's dictionary), else the strings."""
    import pyarrow as pa

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    if chunks and pa.types.is_dictionary(chunks[0].type):
        return pa.chunked_array([c.dictionary for c in chunks], chunks[0].type.value_type)
    return column


def blocks(path: Path, size: int):
    """The file's bytes in blocks of whole lines of about ``size`` bytes (a BOM removed from the first)."""
    with open(path, "rb") as f:
        rest, first = b"", True
        while True:
            data = f.read(size)
            if not data:
                if rest:
                    yield rest
                return
            data = rest + data
            if first:
                data = data.removeprefix(b"\xef\xbb\xbf")
                first = False
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                rest = data
                continue
            yield data[:cut]
            rest = data[cut:]


def tables(path: Path, size: int, names: list[str], types: dict, keep: list[str] | None = None):
    """:func:`table` of each block of the file (:func:`blocks`), the next block read and parsed while the
    caller works on this one (one worker thread: Arrow's parse and the file's reads release the GIL).

    Yields the tables, None for a block of blank lines only; :class:`Refused` as :func:`table` raises it.
    Memory: two blocks' text and tables at most.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="textcolumns") as pool:
        parts = blocks(path, size)
        ahead = pool.submit(_next_table, parts, names, types, keep)
        while True:
            t, more = ahead.result()
            if not more:
                return
            ahead = pool.submit(_next_table, parts, names, types, keep)
            yield t


def _next_table(parts, names, types, keep):
    """(the next block's table, True), or (None, False) when ``parts`` is exhausted."""
    block = next(parts, None)
    return (None, False) if block is None else (table(block, names, types, keep), True)


def _checked(block: bytes) -> bytes:
    """The block with the ASCII bytes ``str.split`` splits on turned into spaces; refused when not read here.

    Refused: not UTF-8, or a Unicode space (the line reader's ``str.split`` splits there; the bytes are not).
    The translation is a pass over the block only when a byte it changes is in it (a clean file has none).
    """
    if not block.isascii():
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused from None
        if _OTHER_SPACE.search(text.translate({9: 32, 13: 32, 11: 32, 12: 32, 28: 32, 29: 32, 30: 32, 31: 32})):
            raise Refused
    if any(b in block for b in _SPLIT):  # a memchr each: far cheaper than a translation that changes nothing
        block = block.translate(_SPACES)
    return block


def _normalised(block: bytes) -> bytes:
    """Fields separated by one space, no space at either end of a line (a block after :func:`_checked`).

    Only for a block whose plain parse found an empty field or another field count: runs of spaces and spaces
    at a line's ends are what make those in a file the line reader reads.
    """
    while b"  " in block:
        block = block.replace(b"    ", b" ").replace(b"  ", b" ")
    return block.replace(b"\n ", b"\n").replace(b" \n", b"\n").strip(b" ")


def _parsed(block: bytes, names: list[str], types: dict):
    """The block's table (``names`` as columns), or None when a line has another field count or an empty field.

    Fields are split on single spaces: a run of spaces, or a space at a line's end, shows as an empty field
    or a line of more fields, so a block that reads here without either has exactly the line reader's fields.
    Arrow parses the block's parts (:data:`PART_BYTES`) on its own threads; a dictionary-coded column is
    checked for an empty field through its dictionaries. The block is UTF-8 (:func:`_checked`
    decoded it unless it is ASCII): Arrow does not check it again.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv

    try:
        t = csv.read_csv(
            pa.BufferReader(block),
            read_options=csv.ReadOptions(column_names=names, block_size=PART_BYTES),
            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, escape_char=False,
                                           newlines_in_values=False, ignore_empty_lines=True),
            convert_options=csv.ConvertOptions(column_types=types, null_values=[], strings_can_be_null=False,
                                               quoted_strings_can_be_null=False, check_utf8=False))
    except pa.ArrowInvalid:
        return None  # another field count on a line, or a value its type refuses
    if t.num_rows and any(pc.min(pc.binary_length(words(c))).as_py() == 0 for c in t.columns):
        return None
    return t


def table(block: bytes, names: list[str], types: dict, keep: list[str] | None = None):
    """The block's table, None for blank lines only; refused when the line reader would read it otherwise.

    ``names``: every field of a line; ``keep``: the columns returned (default all). Shared by the run and the
    qrels readers (:func:`audit.qrels.read_trec_qrels_columns`).
    """
    block = _checked(block)
    t = _parsed(block, names, types)
    if t is None:  # runs of spaces, spaces at a line's ends, or a line the line reader refuses too
        block = _normalised(block)
        if not block.strip(b"\n"):
            return None  # blank lines only
        t = _parsed(block, names, types)
        if t is None:
            raise Refused  # another field count on a line: the line reader names it
    return t if keep is None else t.select(keep)


def unified(column):
    """A dictionary-coded column's indices (int32, one array) and its one dictionary (the parts' unified).

    Arrow's dictionary unifier (C++) merges the parts' dictionaries in order of first appearance and
    transposes each part's indices: a part's few distinct values are hashed, not its lines.
    """
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks > 1:
            column = column.unify_dictionaries()
        parts = column.chunks
    else:
        parts = [column]
    indices = [c.indices.to_numpy(zero_copy_only=False) for c in parts]
    index = np.concatenate(indices) if len(indices) != 1 else indices[0]
    return index.astype(np.int32, copy=False), parts[0].dictionary


class Dictionary:
    """Distinct strings in order of first appearance, and the code of each value of a column.

    A block's distinct values (its one unified dictionary) are looked up in a dict of the values seen so far:
    as many lookups as the block has distinct values, not lines, and each line's code is final at once.
    """

    def __init__(self):
        self._code: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._code)

    @property
    def values(self) -> list[str]:
        """The distinct values, first appearance first (a value's code is its position)."""
        return list(self._code)

    def codes(self, column) -> np.ndarray:
        """Each value's code (int32), new values added in order of first appearance.

        ``column``: dictionary-coded (the CSV reader's own codes).
        """
        index, words = unified(column)
        code = self._code
        add = code.setdefault
        mapping = np.array([add(w, len(code)) for w in words.to_pylist()], dtype=np.int32)
        return mapping[index]
