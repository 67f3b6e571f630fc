"""What a rebuild reads of a backend whose batches are files of OpenAI's shape (OpenAI's, Azure's, Groq's, Together's):
a batch's requests from its input file while it is there, and the custom id of the first line of its results files.
A mixin: each backend says how it reads a file, a file's first line, and a batch as its SDK gives it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from lowtide.batching.backend import BatchCodec, RemoteBatch
from lowtide.batching.lines import FileReader
from lowtide.batching.rebuild_reads import FirstLine, first_custom_id_in, read_input

__all__ = ["BatchFiles", "InputFiles"]


class BatchFiles(Protocol):
    """The files a batch of OpenAI's shape names (`Batch`, Groq's batch, Together's `BatchJob`)."""

    @property
    def input_file_id(self) -> str | None: ...

    @property
    def output_file_id(self) -> str | None: ...

    @property
    def error_file_id(self) -> str | None: ...


class InputFiles:
    """`BatchBackend.inputs` and `first_custom_id` over a batch's files."""

    codec: BatchCodec
    _read_file: FileReader
    _first_line: FirstLine

    async def _known(self, batch: RemoteBatch) -> BatchFiles:
        """The batch as the SDK gives it (its `handle`, else retrieved)."""
        raise NotImplementedError

    async def _ended(self, batch: RemoteBatch) -> BatchFiles:
        """The ended batch as the SDK gives it, its results files named."""
        raise NotImplementedError

    async def inputs(self, batch: RemoteBatch, handle: Callable[[str, Mapping[str, Any]], None]) -> bool:
        """The input file's lines, while the file is there (lowtide deletes it once the answers are stored)."""
        return await read_input(self._read_file, self.codec, (await self._known(batch)).input_file_id, handle)

    async def first_custom_id(self, batch: RemoteBatch) -> str | None:
        """The custom id of the output file's first line, else the error file's."""
        known = await self._ended(batch)
        return await first_custom_id_in(self._first_line, self.codec, (known.output_file_id, known.error_file_id))
