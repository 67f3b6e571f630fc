"""Steps of features/documents.feature: images, documents and citations, in the emulator (through the real SDK) and
through lowtide's actors and `lowtide.bulk.outputs.citations`.

Emulator steps share the emulator scenario state of emulator_steps (`context.emulator_scenario`, made by "the
emulator runs on a manual clock"); actor steps share `_support.World`. No `from __future__ import annotations`:
behave runs step files with `exec`, where pydantic could not resolve string annotations of the models below.
"""

import base64
import json
import struct
import zlib
from typing import Any, Literal, Protocol

import anthropic
from _support import world
from anthropic.types import CitationCharLocation, CitationContentBlockLocation, CitationPageLocation
from pydantic import BaseModel, Field
from step_context import Context as StepContext
from step_context import given, then, when

from lowtide import ActorResponse
from lowtide.bulk.outputs.citations import Citation, citations_of, field_citations
from lowtide.emulator.core.pdf import read_pdf, simple_pdf
from lowtide.providers.anthropic.mapping import parse_response, to_message_params


class Context(StepContext, Protocol):
    """What this module keeps on the scenario's context."""

    asked_messages: list[dict[str, Any]]
    berth: "Berth"
    built_answer: ActorResponse[Any]
    document_text: str
    field_citations: Any
    pdfs: dict[str, bytes]


MODEL = "claude-sonnet-5-5"


class Lease(BaseModel):
    tenant: str
    rent: str
    term_years: int
    kind: Literal["residential", "commercial"]
    clauses: list[str]


class Berth(BaseModel):
    name: str
    code: str = Field(max_length=4)
    summary: str = Field(min_length=20)
    depth_m: float
    notes: list[str]


class Inspection(BaseModel):
    vessel: str
    findings: dict[str, str]
    inspector: str


ANSWER_MODELS: dict[str, type[BaseModel]] = {"Lease": Lease, "Inspection": Inspection}


# -- files -----------------------------------------------------------------------------------------------------------


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int) -> bytes:
    """A valid PNG of `width` x `height` black pixels."""
    rows = b"".join(b"\x00" + b"\x00" * 3 * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows)) + _chunk(b"IEND", b"")


def jpeg(width: int, height: int) -> bytes:
    """The start of a baseline JPEG: its header and frame, which say its size (pixels are not needed to read it)."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    frame = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    # A fill byte before the frame marker, which readers must skip.
    return b"\xff\xd8" + app0 + b"\xff" + frame + b"\xff\xd9"


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00;"


def webp(width: int, height: int, flavour: str = "VP8X") -> bytes:
    if flavour == "VP8X":
        body = b"VP8X" + struct.pack("<I", 10) + b"\x00" * 4
        body += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    elif flavour == "VP8":
        frame = b"\x00\x00\x00\x9d\x01\x2a" + struct.pack("<HH", width, height)
        body = b"VP8 " + struct.pack("<I", len(frame)) + frame
    else:
        bits = (width - 1) | ((height - 1) << 14)
        frame = b"\x2f" + struct.pack("<I", bits)
        body = b"VP8L" + struct.pack("<I", len(frame)) + frame
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


IMAGES = {
    "PNG": png,
    "JPEG": jpeg,
    "GIF": gif,
    "WebP": webp,
    "WebP-VP8": lambda width, height: webp(width, height, "VP8"),
    "WebP-VP8L": lambda width, height: webp(width, height, "VP8L"),
}
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif"}
_APP0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
# Images whose kind their first bytes show, but whose size their header does not.
SIZELESS_IMAGES: dict[str, tuple[bytes, str]] = {
    "PNG cut short in its header": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00", "image/png"),
    "JPEG whose segments are broken": (b"\xff\xd8\xff\xe0\x00\x04..garbage", "image/jpeg"),
    "JPEG without a frame header": (b"\xff\xd8" + _APP0 + b"\xff\xd0\xff\xd9", "image/jpeg"),
    "WebP of an unknown kind": (b"RIFF\x0c\x00\x00\x00WEBPVP8Z\x00\x00\x00\x00", "image/webp"),
}


def pdf_with_streams(streams: list[bytes], *, filter_name: str | None = None) -> bytes:
    """A PDF with one page per content stream, given as stored (`filter_name` says how they are encoded)."""
    count = len(streams)
    kids = " ".join(f"{3 + 2 * index} 0 R" for index in range(count))
    bodies = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode()]
    for index, stream in enumerate(streams):
        bodies.append(f"<< /Type /Page /Parent 2 0 R /Contents {4 + 2 * index} 0 R >>".encode())
        encoding = f" /Filter /{filter_name}" if filter_name else ""
        bodies.append(f"<< /Length {len(stream)}{encoding} >>\nstream\n".encode() + stream + b"\nendstream")
    objects = b"".join(f"{number} 0 obj\n".encode() + body + b"\nendobj\n" for number, body in enumerate(bodies, 1))
    return b"%PDF-1.5\n" + objects + b"trailer\n<< /Root 1 0 R >>\n%%EOF\n"


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def image_block(raw: bytes, media_type: str, **extra: Any) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": b64(raw)}, **extra}


def pdf_block(raw: bytes, title: str | None = None, *, cited: bool = False, **extra: Any) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf"}}
    block["source"]["data"] = b64(raw)
    if title is not None:
        block["title"] = title
    if cited:
        block["citations"] = {"enabled": True}
    return {**block, **extra}


def text_document(data: str, title: str | None = None, *, cited: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": data}}
    if title is not None:
        block["title"] = title
    if cited:
        block["citations"] = {"enabled": True}
    return block


def content_document(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "document", "source": {"type": "content", "content": content}, **extra}


def with_source(kind: str, source: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": kind, "source": source, **extra}


def user_turn(*blocks: dict[str, Any], text: str = "Describe it") -> list[dict[str, Any]]:
    return [{"role": "user", "content": [*blocks, {"type": "text", "text": text}]}]


def in_tool_result(block: dict[str, Any]) -> list[dict[str, Any]]:
    """A conversation whose last turn returns `block` from a tool."""
    return [
        {"role": "user", "content": "Fetch the file"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "fetch", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [block]}]},
    ]


_PNG = png(2, 2)
_BMP_PNG = image_block(_PNG, "image/bmp")
_NOT_PDF = pdf_block(b"%!PS-Adobe-3.0 a PostScript file")


def _big_png() -> bytes:
    # 4 MiB of PNG: under 5 MB as bytes, over it as base64, which is what the API measures.
    return _PNG + b"\x00" * (4 * 1024 * 1024 - len(_PNG))


TURNS: dict[str, Any] = {
    "a PNG image declared as image/bmp": lambda: user_turn(_BMP_PNG),
    "an image whose data is not base64": lambda: user_turn(
        with_source("image", {"type": "base64", "media_type": "image/png", "data": "not base64!"})
    ),
    "a PNG image declared as image/jpeg": lambda: user_turn(image_block(_PNG, "image/jpeg")),
    "text bytes declared as image/png": lambda: user_turn(image_block(b"hello, world", "image/png")),
    "a PNG image 9000 pixels wide": lambda: user_turn(image_block(png(9000, 2), "image/png")),
    "a PNG image of 4 MB": lambda: user_turn(image_block(_big_png(), "image/png")),
    "an image with citations enabled": lambda: user_turn(image_block(_PNG, "image/png", citations={"enabled": True})),
    "an image without a source": lambda: user_turn({"type": "image"}),
    "an image whose source is a string": lambda: user_turn({"type": "image", "source": "chart.png"}),
    "an image whose data is a number": lambda: user_turn(
        with_source("image", {"type": "base64", "media_type": "image/png", "data": 5})
    ),
    "an image from an ftp URL": lambda: user_turn(with_source("image", {"type": "url", "url": "ftp://example.com/a"})),
    "an image whose URL is a number": lambda: user_turn(with_source("image", {"type": "url", "url": 5})),
    "an image from a file id": lambda: user_turn(with_source("image", {"type": "file", "file_id": "file_011"})),
    "an image from a video source": lambda: user_turn(with_source("image", {"type": "video"})),
    "an image inside a tool result": lambda: in_tool_result(_BMP_PNG),
    "a PDF whose bytes are not a PDF": lambda: user_turn(_NOT_PDF),
    "a PDF declared as application/msword": lambda: user_turn(
        with_source("document", {"type": "base64", "media_type": "application/msword", "data": b64(b"x")})
    ),
    "a PDF whose data is a number": lambda: user_turn(
        with_source("document", {"type": "base64", "media_type": "application/pdf", "data": 5})
    ),
    "a text document declared as text/csv": lambda: user_turn(
        with_source("document", {"type": "text", "media_type": "text/csv", "data": "a,b"})
    ),
    "a text document whose data is a list": lambda: user_turn(
        with_source("document", {"type": "text", "media_type": "text/plain", "data": ["a"]})
    ),
    "a document of empty custom content": lambda: user_turn(content_document([])),
    "a document of an empty content string": lambda: user_turn(content_document("")),
    "a document whose content is a number": lambda: user_turn(content_document(5)),
    "a document whose content holds a PDF": lambda: user_turn(content_document([_NOT_PDF])),
    "a document whose content has no text": lambda: user_turn(content_document([{"type": "text", "text": ""}])),
    "a document whose content holds a GIF declared as image/png": lambda: user_turn(
        content_document([{"type": "text", "text": "Chart:"}, image_block(gif(4, 4), "image/png")])
    ),
    "a document from a file id": lambda: user_turn(with_source("document", {"type": "file", "file_id": "file_011"})),
    "a document from a video source": lambda: user_turn(with_source("document", {"type": "video"})),
    "a document with a number for a title": lambda: user_turn(text_document("Hi.") | {"title": 7}),
    'a document with citations "yes"': lambda: user_turn(text_document("Hi.") | {"citations": {"enabled": "yes"}}),
    "a document with citations true": lambda: user_turn(text_document("Hi.") | {"citations": True}),
    "a document with a citations style": lambda: user_turn(
        text_document("Hi.") | {"citations": {"enabled": True, "style": "footnotes"}}
    ),
    "a document with a summary": lambda: user_turn(text_document("Hi.") | {"summary": "A greeting."}),
    "a document inside a tool result": lambda: in_tool_result(_NOT_PDF),
}


# -- the emulator, driven through the SDK ----------------------------------------------------------------------------


def emulator_scenario(context: Context) -> Any:
    s = getattr(context, "emulator_scenario", None)
    assert s is not None, "start the emulator first: 'Given the emulator runs on a manual clock'"
    return s


def send(context: Context, messages: list[dict[str, Any]], **params: Any) -> None:
    """Send a Messages request through the SDK's generic post (which sends any body), keeping the reply or error."""
    s = emulator_scenario(context)
    s.params = {"model": MODEL, "max_tokens": 1024, "messages": messages, **params}
    s.previous = s.reply
    s.reply = s.run(lambda: s.sdk.post("/v1/messages", cast_to=anthropic.types.Message, body=s.params))


def reply(context: Context) -> anthropic.types.Message:
    s = emulator_scenario(context)
    assert s.error is None, s.error
    assert isinstance(s.reply, anthropic.types.Message), s.reply
    return s.reply


def pdfs(context: Context) -> dict[str, bytes]:
    if not hasattr(context, "pdfs"):
        context.pdfs = {}
    return context.pdfs


@given('a PDF "{name}" with the pages:')
def step_pdf(context: Context, name: str) -> None:
    pdfs(context)[name] = simple_pdf([row["text"] for row in context.table])


@given('a Flate-compressed PDF "{name}" saying "{text}"')
def step_compressed_pdf(context: Context, name: str, text: str) -> None:
    # Kerned words in a TJ array, as many PDF writers set text.
    words = b" ".join(b"(" + word.encode() + b")" for word in text.split())
    stream = b"BT /F1 11 Tf 50 700 Td [" + words.replace(b") (", b") -400 (") + b"] TJ ET"
    pdfs(context)[name] = pdf_with_streams([zlib.compress(stream)], filter_name="FlateDecode")


@given('a PDF "{name}" of {count:d} pages whose text the emulator cannot read')
def step_unreadable_pdf(context: Context, name: str, count: int) -> None:
    pdfs(context)[name] = pdf_with_streams([b"\xff\xd8\xff\xe0 scanned page"] * count, filter_name="DCTDecode")


def raw_pdf(objects: list[bytes], *, root: int | None = None) -> bytes:
    """A PDF of these objects (numbered from 1), as other tools write them; no cross-reference table."""
    body = b"".join(f"{number} 0 obj\n".encode() + item + b"\nendobj\n" for number, item in enumerate(objects, 1))
    trailer = f"trailer\n<< /Root {root} 0 R >>\n".encode() if root is not None else b""
    return b"%PDF-1.6\n" + body + trailer + b"%%EOF\n"


def stream(data: bytes, extra: str = "") -> bytes:
    return f"<< /Length {len(data)}{extra} >>\nstream\n".encode() + data + b"\nendstream"


MINUTES_PAGE = (
    b"% minutes, page 1\n/Span <</ActualText (ignored)>> BDC\nBT /F1 12 Tf 72 700 Td\n"
    b"(Escaped \\(parens\\) and \\101\\102C octa\\l.) Tj T*\n"
    b"<48657820746578742069732072656164> Tj < 20746f6f2e > Tj T*\n"
    b"(Continued \\\nline.) ' T*\n"
    b"<FEFF0055006E00690063006F006400650020006900730020006B006E006F0077006E002E> Tj T*\n"
    b'(Tabs\\tand\\nbreaks.) Tj\n0 0 (Spaced \\\r\nwords.) " T*\n'
    b"(Odd hex (really) ends this) Tj <2E2> Tj <zz> Tj T*\nET EMC\n"
    b"BI /W 1 /H 1 /BPC 8 /CS /G ID \x00\xff EI\n"
)


@given('a PDF "{name}" written without a catalog, with escapes, hex strings and inline images')
def step_messy_pdf(context: Context, name: str) -> None:
    pdfs(context)[name] = raw_pdf(
        [
            b"<< /Type /Page /Contents 2 0 R >>",
            stream(MINUTES_PAGE),
            b"<< /Type /Page /Contents [99 0 R 4 0 R 5 0 R] >>",
            b"<< /Producer (not a stream) >>",
            stream(b"not zlib!", " /Filter /FlateDecode"),
            b"<< /Type /Page /Contents [7 0 R 8 0 R 9 0 R] >>",
            stream(zlib.compress(b"BT (Last page, compressed.) Tj ET"), " /Filter [/FlateDecode]"),
            stream(b"BT (Stop.) Tj ET (Unclosed"),
            stream(b"(trailing\\"),
        ]
    )


@given('a PDF "{name}" whose page tree names a missing page, a page twice and a page without content')
def step_tree_pdf(context: Context, name: str) -> None:
    pdfs(context)[name] = raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R 99 0 R 3 0 R 5 0 R 6 0 R] /Count 3 >>",
            b"<< /Type /Page /Contents 4 0 R >>",
            stream(b"BT (First item.) Tj ET"),
            b"<< /Type /Page >>",
            b"<< /Type /Page /Contents 7 0 R >>",
            stream(b"BT (Third item.) Tj ET"),
        ],
        root=1,
    )


@when("I send the emulator a user turn holding {block}")
def step_send_turn(context: Context, block: str) -> None:
    send(context, TURNS[block]())


@when("I send the emulator two text documents, citations enabled on the second only")
def step_send_mixed_citations(context: Context) -> None:
    send(context, user_turn(text_document("One."), text_document("Two.", cited=True)))


@when("I send the emulator a cited text document together with an output format")
def step_send_citations_and_format(context: Context) -> None:
    output_format = {"type": "json_schema", "schema": Berth.model_json_schema()}
    send(context, user_turn(text_document("Berth 7 is deep.", cited=True)), output_config={"format": output_format})


@when(
    'I create an emulator batch where "{both}" asks for citations and an output format, and "{plain}" asks for '
    "citations alone"
)
def step_batch_citations(context: Context, both: str, plain: str) -> None:
    s = emulator_scenario(context)
    messages = user_turn(text_document("Berth 7 is deep.", cited=True), text="How deep is berth 7?")
    params = {"model": MODEL, "max_tokens": 1024, "messages": messages}
    output_config = {"format": {"type": "json_schema", "schema": Berth.model_json_schema()}}
    requests = [
        {"custom_id": both, "params": {**params, "output_config": output_config}},
        {"custom_id": plain, "params": params},
    ]

    async def run() -> dict[str, Any]:
        batch = await s.sdk.messages.batches.create(requests=requests)
        return {line.custom_id: line.result async for line in await s.sdk.messages.batches.results(batch.id)}

    s.results = s.run(run)
    assert s.error is None, s.error


@when('I send the emulator a {kind} image of {width:d}x{height:d} pixels, saying "{text}"')
def step_send_image(context: Context, kind: str, width: int, height: int, text: str) -> None:
    media_type = MEDIA_TYPES.get(kind, "image/webp")
    send(context, user_turn(image_block(IMAGES[kind](width, height), media_type), text=text))


@when('I send the emulator an image that is a {kind}, saying "{text}"')
def step_send_sizeless_image(context: Context, kind: str, text: str) -> None:
    raw, media_type = SIZELESS_IMAGES[kind]
    send(context, user_turn(image_block(raw, media_type), text=text))


@when('I send the emulator an image from the URL "{url}", saying "{text}"')
def step_send_image_url(context: Context, url: str, text: str) -> None:
    send(context, user_turn(with_source("image", {"type": "url", "url": url}), text=text))


@when('I send the emulator the text document "{title}" {cited:w} citations, saying "{question}":')
def step_send_text_document(context: Context, title: str, cited: str, question: str) -> None:
    context.document_text = context.text
    send(context, user_turn(text_document(context.text, title, cited=cited == "with"), text=question))


@when('I send the emulator "{name}" with citations, saying "{question}"')
def step_send_pdf(context: Context, name: str, question: str) -> None:
    send(context, user_turn(pdf_block(pdfs(context)[name], name, cited=True), text=question))


@when('I send the emulator custom content with citations, saying "{question}":')
def step_send_custom_content(context: Context, question: str) -> None:
    blocks = [{"type": "text", "text": row["text"]} for row in context.table]
    send(context, user_turn(content_document(blocks, citations={"enabled": True}), text=question))


@when('I send the emulator the custom content "{content}" with citations, saying "{question}"')
def step_send_content_string(context: Context, content: str, question: str) -> None:
    send(context, user_turn(content_document(content, citations={"enabled": True}), text=question))


@when('I send the emulator a tool result holding the cited text document "{title}", saying "{question}":')
def step_send_tool_document(context: Context, title: str, question: str) -> None:
    context.document_text = context.text
    messages = in_tool_result(text_document(context.text, title, cited=True))
    messages[-1]["content"].append({"type": "text", "text": question})
    send(context, messages)


@when('I send the emulator the PDFs "{first}" and "{second}" with citations, saying "{question}"')
def step_send_two_pdfs(context: Context, first: str, second: str, question: str) -> None:
    blocks = [pdf_block(pdfs(context)[name], name, cited=True) for name in (first, second)]
    send(context, user_turn(*blocks, text=question))


@when('I send the emulator a URL document and the text document "{title}" with citations, saying "{question}":')
def step_send_url_and_text(context: Context, title: str, question: str) -> None:
    url_document = with_source(
        "document", {"type": "url", "url": "https://example.com/rules.pdf"}, citations={"enabled": True}
    )
    send(context, user_turn(url_document, text_document(context.text, title, cited=True), text=question))


def _json_system(model: type[BaseModel]) -> str:
    return f"Answer with JSON only.\n<json_schema>\n{json.dumps(model.model_json_schema())}\n</json_schema>"


@when('I send the emulator a system prompt asking for a Berth as JSON, saying "{question}"')
def step_send_json_system(context: Context, question: str) -> None:
    send(context, [{"role": "user", "content": question}], system=_json_system(Berth))


@when('I send the emulator the text document "{title}" with citations and a system prompt asking for a Berth as JSON:')
def step_send_json_system_document(context: Context, title: str) -> None:
    system = [{"type": "text", "text": "You describe berths."}, {"type": "text", "text": _json_system(Berth)}]
    send(context, user_turn(text_document(context.text, title, cited=True), text="Describe berth 7"), system=system)


@when('I send the emulator the system prompt "{system}", saying "{question}"')
def step_send_system(context: Context, system: str, question: str) -> None:
    send(context, [{"role": "user", "content": question}], system=system)


@then('the emulator batch result "{custom_id}" is errored saying "{text}"')
def step_batch_errored(context: Context, custom_id: str, text: str) -> None:
    result = emulator_scenario(context).results[custom_id]
    assert result.type == "errored", result
    assert result.error.error.type == "invalid_request_error", result
    assert text in result.error.error.message, result.error.error.message


@then('the emulator batch result "{custom_id}" succeeded with citations')
def step_batch_cited(context: Context, custom_id: str) -> None:
    result = emulator_scenario(context).results[custom_id]
    assert result.type == "succeeded", result
    assert any(block.citations for block in result.message.content if block.type == "text"), result.message


@then("the emulator reply used {count:d} input tokens")
def step_input_tokens(context: Context, count: int) -> None:
    usage = reply(context).usage
    assert usage.input_tokens == count, usage


@then("the emulator reply has no citations")
def step_no_citations(context: Context) -> None:
    cited = [block for block in reply(context).content if block.type == "text" and block.citations]
    assert not cited, cited


def _location(citation: Any) -> tuple[int, int]:
    if citation.type == "char_location":
        return citation.start_char_index, citation.end_char_index
    if citation.type == "page_location":
        return citation.start_page_number, citation.end_page_number
    return citation.start_block_index, citation.end_block_index


@then("the emulator reply's cited blocks are:")
def step_cited_blocks(context: Context) -> None:
    cited = [block for block in reply(context).content if block.type == "text" and block.citations]
    assert len(cited) == len(context.table.rows), [block.model_dump() for block in cited]
    for block, row in zip(cited, context.table, strict=True):
        assert block.citations is not None, block
        assert len(block.citations) == 1, block
        citation = block.citations[0]
        assert isinstance(citation, CitationCharLocation | CitationPageLocation | CitationContentBlockLocation), (
            citation
        )
        assert " ".join(block.text.split()) == row["text"], (block.text, row["text"])
        assert citation.type == row["type"], citation
        assert " ".join(citation.cited_text.split()) == row["cited text"], citation
        assert citation.document_index == int(row["document"]), citation
        assert citation.document_title == (row["title"] or None), citation
        assert _location(citation) == (int(row["start"]), int(row["end"])), citation


@then("every citation of the emulator reply quotes the text document at the characters it names")
def step_citations_quote(context: Context) -> None:
    document: str = context.document_text
    citations = [
        citation for block in reply(context).content if block.type == "text" for citation in block.citations or []
    ]
    assert citations
    for citation in citations:
        assert isinstance(citation, CitationCharLocation), citation
        assert document[citation.start_char_index : citation.end_char_index] == citation.cited_text, citation


@then("the emulator reads the pages of the PDFs as:")
def step_pdf_pages(context: Context) -> None:
    for row in context.table:
        pages = read_pdf(pdfs(context)[row["document"]]).pages
        shown = " ".join(pages[int(row["page"]) - 1].split())
        assert shown == row["text"], (row["document"], row["page"], shown)


@then("the emulator reply is one text block of JSON, a valid Berth")
def step_reply_berth(context: Context) -> None:
    content = reply(context).content
    assert len(content) == 1, content
    assert content[0].type == "text", content
    Berth.model_validate_json(content[0].text)


@then(
    "the emulator reply is JSON for a valid Berth whose every free-text string is a block of its own, citing a "
    "sentence that holds it"
)
def step_reply_cited_berth(context: Context) -> None:
    blocks = [block for block in reply(context).content if block.type == "text"]
    berth = Berth.model_validate_json("".join(block.text for block in blocks))
    context.berth = berth
    strings = [berth.name, berth.summary, *berth.notes]
    cited = {json.loads(block.text): block.citations for block in blocks if block.citations}
    assert sorted(cited) == sorted(set(strings)), (cited, strings)
    for value, citations in cited.items():
        assert len(citations) == 1, (value, citations)
        assert value in citations[0].cited_text, (value, citations)
    assert berth.name == "Berth 7 is twelve metres deep.", berth


@then("the Berth's strings too short or too long for a sentence are:")
def step_berth_strings(context: Context) -> None:
    for row in context.table:
        assert getattr(context.berth, row["field"]) == row["value"], (row["field"], context.berth)


# -- lowtide: actors and bulk.citations ------------------------------------------------------------------------------


def document_turn(context: Context, name: str, prompt: str, *, cited: bool) -> list[dict[str, Any]]:
    return user_turn(pdf_block(pdfs(context)[name], name, cited=cited), text=prompt)


@when('the actor is asked "{prompt:Q}" about "{name}" {cited:w} citations, for a Lease')
def step_ask_lease(context: Context, prompt: str, name: str, cited: str) -> None:
    w = world(context)
    context.asked_messages = document_turn(context, name, prompt, cited=cited == "with")
    w.response = w.attempt_async(lambda: w.current_actor().run(messages=context.asked_messages, response_model=Lease))


@when('the actor is asked "{prompt:Q}" about "{name}" with citations')
def step_ask_document(context: Context, prompt: str, name: str) -> None:
    w = world(context)
    messages = document_turn(context, name, prompt, cited=True)
    w.response = w.attempt_async(lambda: w.current_actor().run(messages=messages))


@then("the parsed Lease is:")
def step_parsed_lease(context: Context) -> None:
    parsed = world(context).answer().parsed
    assert isinstance(parsed, Lease), parsed
    for row in context.table:
        assert str(getattr(parsed, row["field"])) == row["value"], (row["field"], getattr(parsed, row["field"]))


def _check_field_citations(context: Context, found: dict[str, list[Citation]]) -> None:
    expected: dict[str, list[tuple[str, str]]] = {}
    for row in context.table:
        expected.setdefault(row["field"], []).append((row["cited text"], row["pages"]))
    assert sorted(found) == sorted(expected), (found, expected)
    for field, rows in expected.items():
        citations = found[field]
        assert len(citations) == len(rows), (field, citations)
        for citation, (text, pages) in zip(citations, rows, strict=True):
            assert citation.cited_text.strip() == text, (field, citation)
            if pages:
                shown = f"{citation.start_page_number}-{citation.end_page_number}"
                assert shown == pages, (field, citation)


@then("the field citations are:")
def step_field_citations(context: Context) -> None:
    found = getattr(context, "field_citations", None)
    if found is None:
        response = world(context).answer()
        assert isinstance(response.parsed, BaseModel), response.parsed
        found = field_citations(response, response.parsed)
    _check_field_citations(context, found)
    context.field_citations = found


@then('the fields "{names}" have no citations')
def step_fields_uncited(context: Context, names: str) -> None:
    found: dict[str, list[Citation]] = context.field_citations
    for name in (part.strip() for part in names.split(",")):
        assert name not in found, (name, found[name])


@then("the answer's citations are those of its fields, in the order of its text")
def step_answer_citations(context: Context) -> None:
    found: dict[str, list[Citation]] = context.field_citations
    expected = [*found["tenant"], *found["rent"], *found["clauses"]]
    assert citations_of(world(context).answer()) == expected, citations_of(world(context).answer())


@then("the answer has no citations and no field citations")
def step_answer_uncited(context: Context) -> None:
    response = world(context).answer()
    assert isinstance(response.parsed, Lease), response.parsed
    assert citations_of(response) == []
    assert field_citations(response, response.parsed) == {}


def _lease_params(context: Context, **extra: Any) -> dict[str, Any]:
    """The params lowtide builds for the Lease asked for last, or for one about a cited text document."""
    actor = world(context).current_actor()
    messages = getattr(context, "asked_messages", None)
    if messages is None:
        messages = user_turn(text_document("The tenant is Ann Smith.", "lease", cited=True), text="Read it")
    return to_message_params(actor.request(messages=messages, response_model=Lease, **extra))


def _instruction_schema(text: str) -> Any:
    opening, closing = "<json_schema>\n", "\n</json_schema>"
    assert text.count(opening) == 1, text
    assert text.endswith(closing), text
    return json.loads(text[text.index(opening) + len(opening) : -len(closing)])


@then("lowtide asked for the Lease in the system prompt, between json_schema tags, with no output format")
def step_asked_by_prompt(context: Context) -> None:
    params = _lease_params(context)
    assert "format" not in params.get("output_config", {}), params.get("output_config")
    assert _instruction_schema(params["system"]) == Lease.model_json_schema(), params["system"]
    assert params["system"].startswith("Answer only with one JSON value"), params["system"]


@then("lowtide asked for the Lease through the output format, leaving the system prompt alone")
def step_asked_by_format(context: Context) -> None:
    params = _lease_params(context)
    assert params["output_config"]["format"]["type"] == "json_schema", params["output_config"]
    assert "system" not in params, params["system"]


@then(
    'lowtide\'s params for a Lease about a cited text document have the system prompt "{system}" followed by the '
    "schema instruction"
)
def step_params_system_text(context: Context, system: str) -> None:
    text = _lease_params(context)["system"]
    assert text.startswith(f"{system}\n\nAnswer only with one JSON value"), text
    assert _instruction_schema(text) == Lease.model_json_schema()


@then(
    "lowtide's params for a Lease about a cited text document, with system blocks, end with a block holding the "
    "schema instruction"
)
def step_params_system_blocks(context: Context) -> None:
    blocks = _lease_params(context, system=[{"type": "text", "text": "You read leases."}])["system"]
    assert blocks[0] == {"type": "text", "text": "You read leases."}, blocks
    assert len(blocks) == 2, blocks
    assert _instruction_schema(blocks[1]["text"]) == Lease.model_json_schema(), blocks


@given("an answer made of these text blocks:")
def step_answer_blocks(context: Context) -> None:
    content: list[dict[str, Any]] = []
    for row in context.table:
        block: dict[str, Any] = {"type": "text", "text": row["text"].replace("\\n", "\n")}
        if row["cites"]:
            citation = {"type": "char_location", "cited_text": row["cites"], "document_index": 0}
            block["citations"] = [{**citation, "document_title": None, "start_char_index": 0, "end_char_index": 9}]
        content.append(block)
    context.built_answer = ActorResponse[Any].model_validate(
        {
            "text": "".join(block["text"] for block in content),
            "content": content,
            "stop_reason": "end_turn",
            "usage": {},
            "cost": None,
            "model": MODEL,
            "provider": "anthropic",
            "mode": "live",
            "ids": {},
        }
    )


@when("lowtide parses it as a {model:w} and maps its citations onto the fields")
@when("lowtide parses it as an {model:w} and maps its citations onto the fields")
def step_parse_and_map(context: Context, model: str) -> None:
    parsed = parse_response(context.built_answer, ANSWER_MODELS[model]).parsed
    assert isinstance(parsed, ANSWER_MODELS[model]), parsed
    context.field_citations = field_citations(context.built_answer, parsed)


@then("the response opens with a thinking block, before the text blocks of the answer")
def step_thinking_first(context: Context) -> None:
    kinds = [block.type for block in world(context).answer().content]
    assert kinds[0] == "thinking", kinds
    assert set(kinds[1:]) == {"text"}, kinds


@when("lowtide maps its citations onto the fields of a Lease")
def step_map_only(context: Context) -> None:
    lease = Lease(tenant="Ann Smith", rent="900 euros", term_years=2, kind="residential", clauses=[])
    context.field_citations = field_citations(context.built_answer, lease)


@then("the answer has {count:d} citation and no field citations")
def step_built_citations(context: Context, count: int) -> None:
    assert len(citations_of(context.built_answer)) == count, citations_of(context.built_answer)
    assert context.field_citations == {}, context.field_citations
