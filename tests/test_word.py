"""Word files (audit/ingest/word.py): real .docx files written by python-docx."""

from __future__ import annotations

import io

import pytest

from audit.chunking import PRESETS, chunk_corpus
from audit.evaluation.citations import build_context, verify_citation
from audit.groundtruth import Needle, validate
from audit.ingest import Corpus, document_from_bytes


def _docx(build) -> bytes:
    import docx

    d = docx.Document()
    build(d)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _runbook(d) -> None:
    d.add_paragraph("Relay runbook", style="Title")
    d.add_paragraph("How the relay is run.")
    d.add_heading("Keys", level=1)
    d.add_paragraph("Rotate the relay keys every ninety days.")
    d.add_paragraph("Generate the key pair", style="List Number")
    d.add_paragraph("Deploy it", style="List Number")
    d.add_paragraph("Keep the old key for a week", style="List Bullet")
    d.add_paragraph("")  # empty paragraphs are dropped
    d.add_heading("Contacts", level=1)
    t = d.add_table(rows=3, cols=3)
    for r, row in enumerate([["Role", "Team", "Phone"], ["Owner", "Messaging", "x100"], ["Custodian", "Security", ""]]):
        for c, v in enumerate(row):
            t.cell(r, c).text = v
    t.cell(1, 1).merge(t.cell(1, 2))  # python-docx joins the merged cells' text
    d.add_heading("Notes", level=2)
    d.add_paragraph("# not a heading: a paragraph that starts with a hash")


RUNBOOK_TEXT = ("# Relay runbook\n\n"
                "How the relay is run.\n\n"
                "## Keys\n\n"
                "Rotate the relay keys every ninety days.\n\n"
                "1. Generate the key pair\n2. Deploy it\n- Keep the old key for a week\n\n"
                "## Contacts\n\n"
                "Role | Team | Phone\n\n"
                "Role: Owner | Team: Messaging\nx100\n\n"
                "Role: Custodian | Team: Security\n\n"
                "### Notes\n\n"
                "# not a heading: a paragraph that starts with a hash")


def test_docx_canonical_text_headings_lists_tables():
    doc = document_from_bytes("runbook.docx", _docx(_runbook))
    assert doc.text == RUNBOOK_TEXT
    assert doc.title == "Relay runbook" and doc.extractor == "docx" and doc.extractor_version == "3"
    assert [s.title for s in doc.sections] == ["Keys", "Contacts"]
    # the headings are the lines the conversion wrote, never a paragraph that looks like one
    assert [doc.text[s:e] for s, e in doc.headings] == ["# Relay runbook", "## Keys", "## Contacts", "### Notes"]
    # located by #char=, with the heading path the styles give (Notes is a Heading 2 under Contacts)
    assert doc.locators.outline == ((40, 1, "Keys"), (160, 1, "Contacts"), (264, 2, "Notes"))
    assert doc.locators.notes == ()


def test_needle_in_a_word_file_is_cited_by_its_offsets():
    doc = document_from_bytes("runbook.docx", _docx(_runbook))
    corpus = Corpus("t", (doc,))
    needle = Needle("n1", "Rotate the relay keys every ninety days.", ("How often are keys rotated?",))
    _, where, rejected = validate([needle], corpus)
    assert rejected == []
    start = RUNBOOK_TEXT.index("Rotate")
    assert (where["n1"].start, where["n1"].end) == (start, start + len(needle.needle))
    chunks = chunk_corpus(corpus, PRESETS["E"])
    (chunk,) = [c for c in chunks.chunks if c.start <= start < c.end]
    assert chunk.section == "Keys" and chunk.header == "[Relay runbook > Keys]"
    (cit,) = build_context("q", [(chunk, 0.2)], corpus).citations
    assert cit.fragment == f"#char={chunk.start},{chunk.end}" and cit.where.fragment == "" and cit.page == ""
    assert verify_citation(doc.doc_id, cit.start, cit.end, cit.quote, corpus).ok


def test_title_falls_back_to_core_properties_then_stem():
    def titled(d):
        d.core_properties.title = "Ops guide"
        d.add_paragraph("Body.")

    assert document_from_bytes("a.docx", _docx(titled)).text == "# Ops guide\n\nBody."
    assert document_from_bytes("plain-notes.docx", _docx(lambda d: d.add_paragraph("Body."))).title == "plain-notes"


def test_bad_word_files_give_one_reason():
    with pytest.raises(ValueError, match=r"^corrupt Word file \("):
        document_from_bytes("x.docx", b"PK\x03\x04 broken")
    with pytest.raises(ValueError, match=r"^Word 97-2003 \(\.doc\) content, not Word file"):
        document_from_bytes("old.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 64)
    with pytest.raises(ValueError, match="^no text in the Word file$"):
        document_from_bytes("blank.docx", _docx(lambda d: d.add_paragraph("   ")))


# --------------------------------------------------------------------------- what Word holds beside the body (issue 53)

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _el(tag, *children, **attrs):
    from lxml import etree

    el = etree.Element(f"{{{W}}}{tag}", {f"{{{W}}}{k}": v for k, v in attrs.items()})
    el.extend(children)
    return el


def _t(text):
    t = _el("t")
    t.text = text
    t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
    return t


def add_notes(d, kind: str, notes: dict) -> None:
    """Give the python-docx document ``d`` a footnotes or endnotes part (``kind`` ``footnote``/``endnote``) holding
    ``notes`` (id → text) after Word's two separators: python-docx writes no notes of its own."""
    from docx.opc.constants import CONTENT_TYPE as CT
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from lxml import etree

    root = _el(kind + "s")
    root.append(_el(kind, _el("p", _el("r", _el("separator"))), type="separator", id="-1"))
    root.append(_el(kind, _el("p", _el("r", _el("continuationSeparator"))), type="continuationSeparator", id="0"))
    for i, text in notes.items():
        root.append(_el(kind, _el("p", _el("r", _el(kind + "Ref")), _el("r", _t(" " + text))), id=str(i)))
    ct = CT.WML_FOOTNOTES if kind == "footnote" else CT.WML_ENDNOTES
    part = Part(PackURI(f"/word/{kind}s.xml"), ct, etree.tostring(root), d.part.package)
    d.part.relate_to(part, RT.FOOTNOTES if kind == "footnote" else RT.ENDNOTES)


def note_ref(paragraph, kind: str, note_id: int) -> None:
    """Append a footnote or endnote reference run to a python-docx paragraph."""
    paragraph._p.append(_el("r", _el(kind + "Reference", id=str(note_id))))


def sym(paragraph, font: str, char: str) -> None:
    """Append a symbol run (``<w:sym w:font=… w:char=…/>``) to a python-docx paragraph."""
    paragraph._p.append(_el("r", _el("sym", font=font, char=char)))


def _handbook(d) -> None:
    d.add_paragraph("Relay handbook", style="Title")
    d.add_heading("Replicas", level=1)
    p = d.add_paragraph("Keep ")
    sym(p, "Symbol", "F0B3")  # ≥
    p.add_run(" 3 replicas")
    note_ref(p, "footnote", 2)
    p.add_run(", and ")
    sym(p, "Symbol", "F0A3")  # ≤
    p.add_run(" 5 in one zone.")
    p = d.add_paragraph("Primary ")
    sym(p, "Wingdings", "F0E0")  # → (Word's AutoCorrect of "-->")
    p.add_run(" standby")
    sym(p, "Wingdings", "F0E8")  # a heavy arrow: no mapping here, named
    p.add_run(".")
    note_ref(p, "endnote", 1)
    p = d.add_paragraph("Zones are listed in the appendix.")
    note_ref(p, "footnote", 3)
    add_notes(d, "footnote", {2: "Three is the quorum for five voters.", 3: "Appendix B, zone map.",
                              4: "A note whose mark sits in a text box."})
    add_notes(d, "endnote", {1: "Failover takes under a minute."})
    d.sections[0].header.paragraphs[0].text = "Relay handbook - Internal"
    d.sections[0].footer.paragraphs[0].text = "Printed copies are not controlled"
    d.add_comment(d.paragraphs[-1].runs, text="Which appendix?", author="Reviewer")


HANDBOOK_TEXT = ("# Relay handbook\n\n## Replicas\n\n"
                 "Keep ≥ 3 replicas[^1], and ≤ 5 in one zone.\n\n"
                 "Primary → standby.[^i]\n\n"
                 "Zones are listed in the appendix.[^2]\n\n"
                 "## Footnotes\n\n[^1]: Three is the quorum for five voters.\n\n[^2]: Appendix B, zone map.\n\n"
                 "## Endnotes\n\n[^i]: Failover takes under a minute.")


def _lxml_reading(raw: bytes) -> dict:
    """The independent reading: lxml straight over the parts of the zip (never the product's reader)."""
    import zipfile

    from lxml import etree

    z = zipfile.ZipFile(io.BytesIO(raw))
    ns = {"w": W}

    def part(name):
        return etree.fromstring(z.read(name)) if name in z.namelist() else None

    out = {}
    for kind in ("footnote", "endnote"):
        root = part(f"word/{kind}s.xml")
        out[kind] = {} if root is None else {
            n.get(f"{{{W}}}id"): "".join(n.xpath(".//w:t/text()", namespaces=ns)).strip()
            for n in root.xpath(f"w:{kind}[not(@w:type) or @w:type='normal']", namespaces=ns)}
    body = part("word/document.xml")
    out["refs"] = [(r.tag.split("}")[1], r.get(f"{{{W}}}id"))
                   for r in body.xpath("//w:footnoteReference | //w:endnoteReference", namespaces=ns)]
    out["syms"] = [(s.get(f"{{{W}}}font"), s.get(f"{{{W}}}char")) for s in body.xpath("//w:sym", namespaces=ns)]
    out["header"] = "".join(part("word/header1.xml").xpath("//w:t/text()", namespaces=ns))
    out["comments"] = part("word/comments.xml").xpath("//w:comment", namespaces=ns)
    return out


def test_footnotes_endnotes_and_symbols_are_read_and_the_rest_named():
    raw = _docx(_handbook)
    ref = _lxml_reading(raw)
    doc = document_from_bytes("handbook.docx", raw)
    assert doc.text == HANDBOOK_TEXT and doc.extractor_version == "3"
    # every note referenced in the body is read, in the order of its references (the lxml reading), after its mark
    body, notes = doc.text.split("## Footnotes")
    labels = {"footnoteReference": iter(["1", "2"]), "endnoteReference": iter(["i"])}
    for tag, note_id in ref["refs"]:
        label = next(labels[tag])
        kind = tag.replace("Reference", "")
        assert f"[^{label}]" in body and f"[^{label}]: {ref[kind][note_id]}" in notes
    # Symbol F0B3 and F0A3 are ≥ and ≤ in Adobe's Symbol encoding, Wingdings F0E0 is →
    assert [s for s in ref["syms"]] == [("Symbol", "F0B3"), ("Symbol", "F0A3"), ("Wingdings", "F0E0"),
                                        ("Wingdings", "F0E8")]
    assert "Keep ≥ 3 replicas" in doc.text and "≤ 5 in one zone" in doc.text and "Primary → standby" in doc.text
    said = "\n".join(doc.locators.notes)
    assert "1 footnote whose reference mark is not in the text read (in a text box or a deletion): not read " \
           f"({len(ref['footnote']['4'])} characters)" in said
    assert f"1 page header not read ({len(ref['header'])} characters: 'Relay handbook - Internal')" in said
    assert "1 page footer not read" in said
    assert len(ref["comments"]) == 1 and "1 comment not read (15 characters)" in said
    assert "1 symbol character without a Unicode mapping left out (Wingdings F0E8)" in said
    # the notes are headings of the outline: a quote from a footnote is located under "Footnotes"
    from audit.ingest.locators import locator

    at = doc.text.index("Three is the quorum")
    assert locator(doc, at, at + 10).headings == ("Footnotes",)


def test_a_needle_with_a_symbol_or_in_a_footnote_is_found_and_cited():
    doc = document_from_bytes("handbook.docx", _docx(_handbook))
    corpus = Corpus("t", (doc,))
    needles = [Needle("n1", "Keep ≥ 3 replicas", ("How many replicas?",)),
               Needle("n2", "Three is the quorum for five voters.", ("Why three?",))]
    _, where, rejected = validate(needles, corpus)
    assert rejected == []
    assert doc.text[where["n1"].start:where["n1"].end] == "Keep ≥ 3 replicas"


def test_symbol_character_maps_symbol_and_wingdings_codes():
    from audit.ingest.word import symbol_character

    # the font's code given with Word's 0xF000 offset or alone; a text font's code is a code point
    assert [symbol_character("Symbol", c) for c in ("F0B3", "B3", "f0a3", "F0AE", "F061")] == ["≥", "≥", "≤", "→", "α"]
    assert [symbol_character("Wingdings", c) for c in ("F0E0", "F0FC", "F04A")] == ["→", "✓", "☺"]
    assert symbol_character("Calibri", "2265") == "≥"
    assert symbol_character("Wingdings", "F0E8") is None and symbol_character("Symbol", "F0F0") is None
    assert symbol_character("Webdings", "F0E0") is None and symbol_character("Symbol", "zz") is None


def _outline_levels(d) -> None:
    from docx.enum.style import WD_STYLE_TYPE

    d.add_paragraph("Onboarding", style="Title")
    d.add_heading("Your first week", level=1)
    d.add_paragraph("Welcome aboard; the week is planned for you.")
    sub = d.styles.add_style("Sub heading", WD_STYLE_TYPE.PARAGRAPH)  # a house style: outline level 2, no Heading name
    sub.element.get_or_add_pPr().append(_el("outlineLvl", val="1"))
    d.add_paragraph("Day one", style=sub)
    d.add_paragraph("Collect your badge at the front desk before nine.")
    p = d.add_paragraph("Day two")  # a Normal paragraph given an outline level of its own
    p._p.get_or_add_pPr().append(_el("outlineLvl", val="1"))
    d.add_paragraph("Meet your buddy for lunch.")


def test_the_innermost_heading_is_in_a_quotes_locator_when_the_chunk_starts_under_the_parent():
    from audit.evaluation.citations import build_context
    from audit.ingest.locators import quote_locator
    from lxml import etree
    import zipfile

    raw = _docx(_outline_levels)
    # the independent reading: lxml over the styles and the body, the outline level each heading paragraph has
    z = zipfile.ZipFile(io.BytesIO(raw))
    styles = etree.fromstring(z.read("word/styles.xml"))
    levels = {s.get(f"{{{W}}}styleId"): s.xpath("w:pPr/w:outlineLvl/@w:val", namespaces={"w": W})
              for s in styles.iter(f"{{{W}}}style")}
    body = etree.fromstring(z.read("word/document.xml"))
    outline = []
    for p in body.iter(f"{{{W}}}p"):
        text = "".join(p.xpath(".//w:t/text()", namespaces={"w": W}))
        own = p.xpath("w:pPr/w:outlineLvl/@w:val", namespaces={"w": W})
        style = p.xpath("w:pPr/w:pStyle/@w:val", namespaces={"w": W})
        lvl = own or (levels.get(style[0]) if style else None)
        if lvl:
            outline.append((int(lvl[0]) + 1, text))
    assert outline == [(1, "Your first week"), (2, "Day one"), (2, "Day two")]
    doc = document_from_bytes("onboarding.docx", raw)
    assert [(lv, t) for _, lv, t in doc.locators.outline] == outline
    corpus = Corpus("t", (doc,))
    chunks = chunk_corpus(corpus, PRESETS["E"])
    needle = "Collect your badge at the front desk before nine."
    (chunk,) = [c for c in chunks.chunks if needle in c.text]
    assert doc.text[chunk.start:].startswith("Welcome aboard")  # the chunk starts under the parent
    loc = quote_locator(doc, chunk.start, chunk.end, needle)
    assert loc.headings == ("Your first week", "Day one") and loc.fields()["heading"] == "Day one"
    loc = quote_locator(doc, chunk.start, chunk.end, "Meet your buddy for lunch.")
    assert loc.headings == ("Your first week", "Day two")
    # the chunk's own locator is its start's: the parent
    assert build_context("q", [(chunk, 0.2)], corpus).citations[0].locator_label == "Your first week"


def test_a_symbol_without_a_mapping_in_a_footnote_is_named():
    def build(d):
        p = d.add_paragraph("Failover is automatic.")
        note_ref(p, "footnote", 1)
        add_notes(d, "footnote", {1: "See the diagram"})
        from lxml import etree

        add = etree.SubElement  # a heavy arrow (Wingdings F0E8, no mapping) at the end of the note's paragraph
        part = next(r.target_part for r in d.part.rels.values() if r.reltype.endswith("/footnotes"))
        root = etree.fromstring(part.blob)
        para = root.xpath("//w:footnote[@w:id='1']/w:p", namespaces={"w": W})[0]
        run = add(para, f"{{{W}}}r")
        add(run, f"{{{W}}}sym", {f"{{{W}}}font": "Wingdings", f"{{{W}}}char": "F0E8"})
        part._blob = etree.tostring(root)

    doc = document_from_bytes("f.docx", _docx(build))
    assert doc.text.endswith("## Footnotes\n\n[^1]: See the diagram")
    assert doc.locators.notes == ("1 symbol character without a Unicode mapping left out (Wingdings F0E8)",)


def test_an_outline_level_makes_headings_never_unmakes_them():
    def build(d):
        toc = d.styles["TOC Heading"]  # python-docx's template defines it as Word does: based on Heading 1, outline
        assert toc.base_style.name == "Heading 1"  # level 9 ("body text") so the contents list leaves it out
        ppr = toc.element.get_or_add_pPr()
        if ppr.find(f"{{{W}}}outlineLvl") is None:
            ppr.append(_el("outlineLvl", val="9"))
        d.add_paragraph("Contents", style=toc)
        d.add_paragraph("Body.")

    doc = document_from_bytes("f.docx", _docx(build))
    assert doc.text == "# f\n\n## Contents\n\nBody."  # as before outline levels were read
