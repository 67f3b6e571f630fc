"""Reading an input file or stream as text: its lines or its bytes, a file that cannot be read as the `InputError`
that says why, an input whose first bytes say it is not text refused, a job's file path resolved against the input's
folder. What the JSONL loader (`loaders`) and the CSV loader (`csv_loader`) share."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path

from lowtide.bulk.files import binary_kind
from lowtide.bulk.input_digest import InputDigest
from lowtide.bulk.problems import InputError, InputProblem

__all__ = [
    "input_lines",
    "read_input",
    "refuse_binary",
    "resolve",
    "undecodable",
    "unreadable_as_input_error",
]

# Enough of an input file to tell a PDF, an image or a workbook from text.
_HEAD_BYTES = 64


def resolve(name: str, base: Path) -> Path:
    """A job's file named in an input: absolute, or relative to the input's folder (not the working directory)."""
    return (base / Path(name).expanduser()).absolute()


def input_lines(source: Path, digest: InputDigest | None = None) -> Iterator[bytes]:
    """The lines of an input file, read a line at a time, as `bytes.splitlines` splits the whole (at LF, CRLF or CR),
    without their ends (`digest` fed each as read, with its end); a file that cannot be opened is an `InputError`,
    as `read_input` says it."""
    with unreadable_as_input_error(source):
        handle = source.open("rb")
    with handle:
        for chunk in handle:  # (a chunk ends at LF: a CR inside it splits it as the whole file's splitlines would)
            if digest is not None:
                digest.update(chunk)
            yield from chunk.splitlines()


def read_input(source: Path) -> bytes:
    with unreadable_as_input_error(source):
        return source.read_bytes()


@contextmanager
def unreadable_as_input_error(source: Path) -> Generator[None]:
    """An input file that is missing, a folder or unreadable, as the `InputError` that says so."""
    try:
        yield
    except FileNotFoundError:
        raise InputError(source, [InputProblem(None, "does not exist")]) from None
    except IsADirectoryError:
        raise InputError(source, [InputProblem(None, "is a folder; name the input file itself")]) from None
    except OSError as exc:
        raise InputError(source, [InputProblem(None, f"cannot be read: {exc.strerror or exc}")]) from None


def refuse_binary(head: bytes, source: str | Path, kind: str) -> None:
    """Refuse an input whose first bytes say it is not text (a PDF, an image, a workbook)."""
    binary = binary_kind(head[:_HEAD_BYTES])
    if binary is not None:
        problem = f"is {binary}, not {kind} text; export the data as {kind} (UTF-8) and load that"
        raise InputError(source, [InputProblem(None, problem)])


def undecodable(exc: UnicodeDecodeError, *, after: int) -> str:
    where = f" after line {after}" if after else ""
    return (
        f"cannot be read as UTF-8{where}: the byte 0x{exc.object[exc.start]:02x} is not valid UTF-8; save the input"
        " as UTF-8 (or read it as bytes, so that the line is named)"
    )
