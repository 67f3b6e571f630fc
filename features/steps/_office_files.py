"""Office files made at test time, as their programs save them: a Word document written part by part (a heading, a
table and a footnote), an Excel workbook of two sheets (openpyxl), a PowerPoint presentation with speaker notes
(python-pptx), an HTML page, and a copy protected by a password (msoffcrypto-tool encrypts it as Office does)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path

from lowtide.bulk.inputs import converted

__all__ = ["MAKERS", "count_conversions", "encrypted_copy"]

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types"
_DOC = "application/vnd.openxmlformats-officedocument.wordprocessingml"


def _docx(path: Path) -> None:
    """A Word document: a heading, a paragraph carrying a footnote, and a table of two rows."""
    paragraph = '<w:p><w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p>'
    cell = "<w:tc><w:p><w:r><w:t>{}</w:t></w:r></w:p></w:tc>"
    row = "<w:tr>{}</w:tr>"
    body = (
        '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Harbour report</w:t></w:r></w:p>'
        '<w:p><w:r><w:t xml:space="preserve">The quay at Brest reopens on 3 May. </w:t></w:r>'
        '<w:r><w:footnoteReference w:id="1"/></w:r></w:p>'
        + paragraph.format("Spring tides peak at 7.1 metres.")
        + "<w:tbl>"
        + row.format(cell.format("Port") + cell.format("High water"))
        + row.format(cell.format("Brest") + cell.format("06:12"))
        + "</w:tbl>"
    )
    document = (
        f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W}" xmlns:r="{_R}">'
        f"<w:body>{body}</w:body></w:document>"
    )
    footnotes = (
        f'<?xml version="1.0" encoding="UTF-8"?><w:footnotes xmlns:w="{_W}">'
        '<w:footnote w:id="1"><w:p><w:r><w:t>Per the harbour master, 2026.</w:t></w:r></w:p></w:footnote>'
        "</w:footnotes>"
    )
    styles = (
        f'<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="{_W}"><w:style w:type="paragraph" '
        'w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>'
    )
    types = (
        f'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="{_TYPES}">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/word/document.xml" ContentType="{_DOC}.document.main+xml"/>'
        f'<Override PartName="/word/footnotes.xml" ContentType="{_DOC}.footnotes+xml"/>'
        f'<Override PartName="/word/styles.xml" ContentType="{_DOC}.styles+xml"/></Types>'
    )
    package = (
        f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_PKG}"><Relationship Id="rId1" '
        f'Type="{_R}/officeDocument" Target="word/document.xml"/></Relationships>'
    )
    parts = (
        f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{_PKG}">'
        f'<Relationship Id="rId1" Type="{_R}/footnotes" Target="footnotes.xml"/>'
        f'<Relationship Id="rId2" Type="{_R}/styles" Target="styles.xml"/></Relationships>'
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", types)
        archive.writestr("_rels/.rels", package)
        archive.writestr("word/document.xml", document)
        archive.writestr("word/footnotes.xml", footnotes)
        archive.writestr("word/styles.xml", styles)
        archive.writestr("word/_rels/document.xml.rels", parts)


def _xlsx(path: Path) -> None:
    """An Excel workbook of two sheets, "Brest" and "Cherbourg", each a table of tide times."""
    import openpyxl

    workbook = openpyxl.Workbook()
    first = workbook.active
    assert first is not None
    first.title = "Brest"
    first.append(["Day", "High water", "Metres"])
    first.append(["Monday", "06:12", 7.1])
    second = workbook.create_sheet("Cherbourg")
    second.append(["Day", "High water", "Metres"])
    second.append(["Monday", "07:40", 6.3])
    workbook.save(path)


def _pptx(path: Path) -> None:
    """A PowerPoint presentation of one slide, its title, its text and its speaker notes."""
    from pptx import Presentation

    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    title = slide.shapes.title
    assert title is not None
    title.text = "Tide briefing"
    slide.placeholders[1].text = "Neap tides this week"  # pyright: ignore[reportAttributeAccessIssue]
    slide.notes_slide.notes_text_frame.text = "Mention the Brest quay closure."  # pyright: ignore[reportOptionalMemberAccess]
    presentation.save(str(path))


def _html(path: Path) -> None:
    path.write_text(
        "<!doctype html><html><head><title>Tides</title><style>p { color: navy }</style></head><body>"
        "<h1>Tide tables</h1><p>High water at <b>Brest</b>: 06:12 &amp; 18:40.</p>"
        "<table><tr><th>Port</th><th>Metres</th></tr><tr><td>Brest</td><td>7.1</td></tr></table>"
        "<script>alert('not text')</script></body></html>",
        encoding="utf-8",
    )


MAKERS = {
    "a Word document": _docx,
    "an Excel workbook": _xlsx,
    "a PowerPoint presentation": _pptx,
    "an HTML page": _html,
}
"""How each kind of file a scenario names is made."""


def encrypted_copy(source: Path, target: Path, password: str) -> None:
    """`source` saved again under a password, as Office saves it (an OLE compound file holding the encrypted zip)."""
    from msoffcrypto.format.ooxml import OOXMLFile  # pyright: ignore[reportMissingTypeStubs]

    out = io.BytesIO()
    with source.open("rb") as handle:
        OOXMLFile(handle).encrypt(password, out)  # pyright: ignore[reportUnknownMemberType]
    target.write_bytes(out.getvalue())


def count_conversions(counted: dict[str, int]) -> Callable[[], None]:
    """Count each conversion made from now by its file's extension, with nothing converted before kept (as in a
    process of its own); the returned function stops counting."""
    real = converted._convert  # pyright: ignore[reportPrivateUsage]

    def counting(suffix: str, data: bytes) -> str:
        counted[suffix] = counted.get(suffix, 0) + 1
        return real(suffix, data)

    converted._cache = converted._Cache()  # pyright: ignore[reportPrivateUsage]
    converted._convert = counting  # pyright: ignore[reportPrivateUsage]

    def stop() -> None:
        converted._convert = real  # pyright: ignore[reportPrivateUsage]

    return stop
