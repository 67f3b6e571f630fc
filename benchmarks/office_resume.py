"""A resumed bulk run of N Word documents (default 200), every one sent before the run stopped: the CPU its checks
take (`BulkRun.record`: every job checked, the run found in the ledger) when each file's converted text is read back
from the request the ledger holds, against the same resume converting every file again (lowtide before issue 64's
resume fix: `recall_conversions` replaced by a no-op, in the same process). markitdown is imported first (its import,
seconds of CPU, is paid once by either); each go starts with nothing converted kept, as a new process would.

    python benchmarks/office_resume.py [--files 200] [--rounds 3]

Reported: CPU and wall seconds of each (median of the rounds, taken in turn), their ratio, the conversions each made,
the load average, the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import statistics
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
from anthropic import AsyncAnthropic

from harness import machine
from lowtide import Actor, BulkRun
from lowtide.bulk.inputs import converted
from lowtide.bulk.running import recording
from lowtide.core.clock import ManualClock
from lowtide.emulator import Emulator

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_RUN_ID = "office-resume"


def _docx(number: int) -> bytes:
    """A Word document of a heading, ten paragraphs and a table of twenty rows, its text its own."""
    paragraph = '<w:p><w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p>'
    cell = "<w:tc><w:p><w:r><w:t>{}</w:t></w:r></w:p></w:tc>"
    rows = "".join(
        f"<w:tr>{cell.format(f'Port {number}-{row}')}{cell.format(f'0{row % 10}:{row + 10}')}</w:tr>"
        for row in range(20)
    )
    body = (
        f'<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Harbour report {number}</w:t></w:r></w:p>'
        + "".join(
            paragraph.format(f"Paragraph {n} of report {number}: the quay reopens on {n} May.") for n in range(10)
        )
        + f"<w:tbl>{rows}</w:tbl>"
    )
    parts = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/'
            'document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main'
            '+xml"/></Types>'
        ),
        "_rels/.rels": (
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
        ),
        "word/document.xml": f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W}"><w:body>{body}'
        "</w:body></w:document>",
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def _actor(folder: Path, clock: ManualClock, emulator: Emulator) -> Actor:
    client = AsyncAnthropic(
        api_key="sk-ant-benchmark",
        base_url=emulator.base_url,
        http_client=httpx2.AsyncClient(transport=emulator.transport(), base_url=emulator.base_url),
        max_retries=0,
    )
    configuration: dict[str, Any] = {
        "name": "bench",
        "model": "claude-sonnet-5-5",
        "max_tokens": 64,
        "batch_processing": "batch",
        "ledger": str(folder / "ledger.sqlite3"),
        "batch": {"poll_interval": 10},
    }
    return Actor(configuration, client=client, clock=clock)


async def _first_go(actor: Actor, jobs: list[dict[str, str]]) -> None:
    """The run's first go, stopped once its one batch (every file) is out."""
    run = BulkRun(actor, run_id=_RUN_ID, items_per_batch=len(jobs), progress="none")
    run.add_jobs(jobs)
    task = asyncio.ensure_future(run.run())
    while not any(api_id is not None for _, api_id, *_ in actor.ledger.run_store.batches(_RUN_ID)):
        await asyncio.sleep(0.01)
        assert not task.done(), task
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def _resume(actor: Actor, jobs: list[dict[str, str]]) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, conversions) of a resume's checks, nothing converted kept beforehand."""
    counted = [0]
    real = converted._convert  # pyright: ignore[reportPrivateUsage]

    def counting(suffix: str, data: bytes) -> str:
        counted[0] += 1
        return real(suffix, data)

    converted._cache = converted._Cache()  # pyright: ignore[reportPrivateUsage]
    converted._convert = counting  # pyright: ignore[reportPrivateUsage]
    try:
        run = BulkRun(actor, run_id=_RUN_ID, items_per_batch=len(jobs), progress="none")
        cpu, wall = time.process_time(), time.perf_counter()
        run.add_jobs(jobs)
        assert run.record() == _RUN_ID
        return time.process_time() - cpu, time.perf_counter() - wall, counted[0]
    finally:
        converted._convert = real  # pyright: ignore[reportPrivateUsage]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        for number in range(args.files):
            (folder / f"report-{number}.docx").write_bytes(_docx(number))
        jobs = [{"prompt": "Summarise it", "file": str(folder / f"report-{n}.docx")} for n in range(args.files)]
        converted.converted_text(".docx", _docx(-1))  # markitdown imported: neither contender pays it
        clock = ManualClock()
        emulator = Emulator(clock=clock, processing_seconds=3600.0)
        loop = asyncio.new_event_loop()
        actor = _actor(folder, clock, emulator)
        loop.run_until_complete(_first_go(actor, jobs))
        recall = recording.recall_conversions
        no_recall: Callable[..., int] = lambda *_args, **_kwargs: 0  # noqa: E731  # lowtide before the fix
        results: dict[str, list[tuple[float, float, int]]] = {"recalled": [], "converted again": []}
        load_before = os.getloadavg()
        for _ in range(args.rounds):
            results["recalled"].append(_resume(actor, jobs))
            recording.recall_conversions = no_recall  # pyright: ignore[reportAttributeAccessIssue]
            try:
                results["converted again"].append(_resume(actor, jobs))
            finally:
                recording.recall_conversions = recall
        load_after = os.getloadavg()
        loop.run_until_complete(actor.aclose())
        loop.close()
    print(f"A resume's checks of {args.files} Word documents, all sent before the stop ({args.rounds} rounds, median)")
    median: dict[str, tuple[float, float]] = {}
    for name, rounds in results.items():
        cpu = statistics.median(r[0] for r in rounds)
        wall = statistics.median(r[1] for r in rounds)
        median[name] = (cpu, wall)
        print(f"  {name:16} CPU {cpu:7.3f} s  wall {wall:7.3f} s  conversions {rounds[0][2]}")
    ratio_cpu = median["recalled"][0] / median["converted again"][0]
    ratio_wall = median["recalled"][1] / median["converted again"][1]
    print(f"  recalled / converted again: CPU {ratio_cpu:.3f}, wall {ratio_wall:.3f}")
    print(f"  load average before {load_before[0]:.1f}, after {load_after[0]:.1f}")
    for line in machine():
        print(f"  {line}")


if __name__ == "__main__":
    main()
