"""`lowtide run` and `lowtide retry`: bulk runs from the command line, from a file or standard input, to a file or
standard output."""

from __future__ import annotations

import sys
from collections.abc import Awaitable
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import click

from lowtide.cli.params import USD, json_option, ledger_option
from lowtide.errors import ConfigurationError

if TYPE_CHECKING:
    from lowtide.bulk.inputs.digest import InputDigest
    from lowtide.core.run_reports import RunReport

__all__ = ["COMMANDS"]

T = TypeVar("T")
_JSONL = (".jsonl", ".ndjson", ".json")
_STDIO = "-"
Format = Literal["jsonl", "csv"]


def _progress_options(function: Any) -> Any:
    function = click.option(
        "--progress",
        type=click.Choice(["auto", "rich", "plain", "none"]),
        default="auto",
        show_default=True,
        help="Progress on stderr: a live display on a terminal, plain lines elsewhere.",
    )(function)
    function = click.option(
        "--progress-interval", type=float, default=30.0, show_default=True, help="Seconds between plain lines."
    )(function)
    return json_option(function)


@click.command(
    short_help="Run a file of inputs through batches.",
    epilog="""\b
Input lines (JSONL):
  {"prompt": "Summarize: ...", "id": "doc-1"}
  {"messages": [{"role": "user", "content": "..."}], "max_tokens": 512}
  {"prompt": "What does this contract say about renewal?", "file": "contracts/a.pdf"}
  {"custom_id": "r1", "params": {"model": "...", "max_tokens": 64, "messages": [...]}}   (a provider batch file)

\b
Examples:
  lowtide run reviews.jsonl --actor actor.yaml --out results.jsonl
  lowtide run reviews.csv --actor actor.yaml --template 'Classify: {text}' --id-column id --dry-run
  cat prompts.jsonl | lowtide run - --actor actor.yaml --out - > results.jsonl
  lowtide run big.jsonl --actor actor.yaml --max-cost-usd 20 --items-per-batch 5000 --results-dir out/

\b
Run the same command again to resume: answers already in the ledger are not paid for twice.""",
)
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True))
@click.option(
    "--actor",
    "actor_file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The actor's YAML or TOML file.",
)
@click.option("--name", help="Which actor, when the file holds several.")
@click.option(
    "--input-format",
    type=click.Choice(["jsonl", "csv"]),
    help="The input's format. Default: from its name (.jsonl, .ndjson, .json or .csv); standard input is JSONL, or"
    " CSV when --template is given.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    help="Write one JSON line per input here, in input order ('-': standard output, the summary then going to stderr).",
)
@click.option("--run-id", help="The run's id. Default: derived from the actor and the inputs.")
@click.option(
    "--results-dir",
    type=click.Path(path_type=Path),
    help="Write raw and processed results here as they arrive.",
)
@click.option("--template", help="CSV: the prompt, with {column} placeholders.")
@click.option("--file-column", help="CSV: a column naming a file to send with each prompt.")
@click.option("--id-column", help="CSV: a column holding each row's own id.")
@click.option("--citations", is_flag=True, help="Ask for citations on files sent as documents.")
@click.option("--response-model", metavar="MODULE:CLASS", help="Parse answers into this pydantic model.")
@click.option("--items-per-batch", type=int, help="The most requests in one batch. Default: the provider's limit.")
@click.option("--max-parallel-batches", type=int, help="The most batches out at once. Default: 4.")
@click.option("--max-cost-usd", type=USD, help="Never send a batch whose worst case would cross this many dollars.")
@click.option(
    "--time-limit",
    type=float,
    help="Seconds; then outstanding batches are canceled (live: the run's deadline; calls in flight are canceled).",
)
@click.option(
    "--deadline",
    metavar="WHEN",
    help="Answer every item by then (06:00, 2h, 90m, an ISO time): the cheapest route expected to make it (batch,"
    " a cheaper live tier, live); a batch that will be late is canceled and its unanswered items sent live.",
)
@click.option(
    "--mode",
    type=click.Choice(["batch", "live"]),
    default="batch",
    show_default=True,
    help="batch: through the provider's batch API; live: each item a live call at the actor's live limits.",
)
@click.option(
    "--abort-on",
    metavar="CLASSES",
    help="Live: stop the run on these error classes (comma-separated: authentication, permission, not_found,"
    " invalid_request, rate_limited, overloaded, server, connection, timeout, deadline, budget, other).",
)
@click.option(
    "--abort-mode",
    type=click.Choice(["drain", "cancel"]),
    default="drain",
    show_default=True,
    help="Live: on an abort, let the calls in flight finish (drain) or cancel them.",
)
@click.option(
    "--dry-run", is_flag=True, help="Print the plan (batches or live calls, tokens, cost range, time) and send nothing."
)
@_progress_options
@ledger_option
def run(
    input_path: Path,
    actor_file: Path,
    name: str | None,
    input_format: Format | None,
    out: Path | None,
    run_id: str | None,
    results_dir: Path | None,
    template: str | None,
    file_column: str | None,
    id_column: str | None,
    citations: bool,
    response_model: str | None,
    items_per_batch: int | None,
    max_parallel_batches: int | None,
    max_cost_usd: Decimal | None,
    time_limit: float | None,
    deadline: str | None,
    mode: str,
    abort_on: str | None,
    abort_mode: str,
    dry_run: bool,
    progress: str,
    progress_interval: float,
    json_output: bool,
    ledger: str | None,
) -> int:
    """Run every input of a JSONL or CSV file (or standard input, '-') through batches, resumably.

    Every input is checked before anything is sent: the file, the model, the limits, the cost limit, and where the
    results go. Exits 0 when every item succeeded, 1 when some did not (the summary says why;
    `lowtide retry RUN` sends them again).
    """
    import asyncio

    from lowtide.actor import Actor
    from lowtide.bulk.recorded.model_paths import import_model

    kind = _format(input_path, input_format, template=template)
    if kind == "jsonl" and (template or file_column or id_column):
        raise ConfigurationError("--template, --file-column and --id-column are for CSV inputs.", field="template")
    if kind == "csv" and not template:
        raise ConfigurationError("A CSV input needs --template, the prompt with {column} placeholders.")
    from lowtide.bulk.inputs.csv_rows import CsvInput
    from lowtide.bulk.inputs.digest import InputDigest
    from lowtide.bulk.inputs.reading import JsonlLines

    digest = InputDigest() if input_path != Path(_STDIO) else None  # a file's bytes: a resume knows the run by them
    jobs = _load(input_path, kind, template=template, file_column=file_column, id_column=id_column, digest=digest)
    to_stdout = out == Path(_STDIO)
    actor = Actor.from_file(actor_file, name, ledger=ledger)
    bulk = actor.bulk(
        run_id=run_id,
        response_model=import_model(response_model) if response_model else None,
        citations=citations,
        items_per_batch=items_per_batch,
        max_parallel_batches=max_parallel_batches,
        max_cost_usd=max_cost_usd,
        time_limit=time_limit,
        deadline=deadline,
        results_dir=results_dir,
        out=None if to_stdout else out,
        sources=[(input_path, "the run's input"), (actor_file, "the actor file")],
        progress=_progress_mode(progress),
        progress_stream=sys.stderr,
        progress_interval=progress_interval,
        mode=mode,
        abort_on=abort_on or (),
        abort_mode=abort_mode,
    )
    bulk = bulk.add_input(jobs) if isinstance(jobs, JsonlLines | CsvInput) else bulk.add_jobs(jobs, digest=digest)
    del jobs  # the run holds them now (a prompt alone as its string)
    if dry_run:
        plan = asyncio.run(_closing(actor, bulk.live_plan() if bulk.mode == "live" else bulk.plan()))
        _summary(plan.as_json(), plan.lines(), json_output=json_output, to_stderr=False)
        return 0
    # The results go to their files (and standard output) from the ledger, a chunk at a time: none is held.
    report = asyncio.run(_closing(actor, bulk.run_to_files(stream=sys.stdout if to_stdout else None)))
    return _report(report, json_output=json_output, to_stdout=to_stdout)


@click.command(
    short_help="Send a run's failed items again.",
    epilog="""\b
Examples:
  lowtide retry reviews-2f9c1e
  lowtide retry reviews-2f9c1e --actor actor-bigger-model.yaml --out -""",
)
@click.argument("run_id", metavar="RUN")
@click.option(
    "--actor",
    "actor_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="An actor file to use. Default: the settings the run recorded.",
)
@click.option("--name", help="Which actor, when the file holds several.")
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    help="Write the whole run's results here ('-': standard output). Default: the run's own --out.",
)
@_progress_options
@ledger_option
def retry(
    run_id: str,
    actor_file: Path | None,
    name: str | None,
    out: Path | None,
    progress: str,
    progress_interval: float,
    json_output: bool,
    ledger: str | None,
) -> int:
    """Send a run's failed and expired items again, as a new attempt of the same run.

    Items already answered are kept as they are; `lowtide status RUN` shows the run afterwards.
    """
    import asyncio

    from lowtide.actor import Actor
    from lowtide.bulk.recorded.resume import prepare_retry
    from lowtide.cli.ledger_commands import existing_ledger

    store = existing_ledger(ledger)
    if actor_file is not None:
        actor = Actor.from_file(actor_file, name, ledger=store)
    else:
        record = store.run_store.run(run_id)
        if record is None:
            raise ConfigurationError(
                f"The ledger {store.location} has no run {run_id!r}; see lowtide runs.", field="run"
            )
        actor = Actor(record.configuration, ledger=store)
    to_stdout = out == Path(_STDIO)
    options: dict[str, Any] = {"progress": _progress_mode(progress), "progress_interval": progress_interval}
    if out is not None and not to_stdout:
        options["out"] = out
    if actor_file is not None:
        options["sources"] = [(actor_file, "the actor file")]

    async def again() -> RunReport:
        run, indexes = prepare_retry(actor, run_id, **options)
        return await run.run_to_files(only=indexes, stream=sys.stdout if to_stdout else None)

    report = asyncio.run(_closing(actor, again()))
    return _report(report, json_output=json_output, to_stdout=to_stdout)


def _progress_mode(given: str) -> str:
    """The progress display asked for; with -q, none unless asked for by name."""
    from lowtide.cli.logs import Verbosity

    verbosity = click.get_current_context().find_object(Verbosity)
    return "none" if given == "auto" and verbosity is not None and verbosity.quiet else given


def _format(path: Path, given: Format | None, *, template: str | None) -> Format:
    if given is not None:
        return given
    if path == Path(_STDIO):
        return "csv" if template else "jsonl"
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in _JSONL:
        return "jsonl"
    raise ConfigurationError(
        f"{path}: unknown input kind {suffix or '(no extension)'!r}; use .jsonl or .csv, or say which with"
        " --input-format.",
        field="input_format",
    )


def _load(
    path: Path,
    kind: Format,
    *,
    template: str | None,
    file_column: str | None,
    id_column: str | None,
    digest: InputDigest | None,
) -> Any:
    from lowtide.bulk.inputs.csv_rows import CsvInput, load_csv, load_csv_stream
    from lowtide.bulk.inputs.jsonl import jsonl_inputs, load_jsonl_stream
    from lowtide.bulk.inputs.reading import JsonlLines
    from lowtide.config.actors import DEFAULT_PROVIDER

    if path == Path(_STDIO):
        if sys.stdin.isatty():
            raise ConfigurationError(
                "INPUT is '-' (standard input) but nothing is piped in; pipe the inputs, as in"
                " `cat inputs.jsonl | lowtide run - ...`.",
                field="input",
            )
        stream = sys.stdin.buffer
        if kind == "csv":
            assert template is not None
            return load_csv_stream(stream, template, file_column=file_column, id_column=id_column)
        return load_jsonl_stream(stream)
    if kind == "csv":
        assert template is not None
        if digest is None:
            return load_csv(path, template, file_column=file_column, id_column=id_column)
        # Read as bytes, its files checked by the run: a run the ledger knows reads its converted texts back first.
        return CsvInput(path, template, file_column=file_column, id_column=id_column, digest=digest)
    if digest is None:
        return jsonl_inputs(path)  # a line at a time, a prompt alone as its string: never a million `Job`s
    # Read as bytes, parsed by the run: a run the ledger knows by these bytes parses only the lines it sends.
    return JsonlLines(path, provider=DEFAULT_PROVIDER, digest=digest)


async def _closing(actor: Any, work: Awaitable[T]) -> T:
    try:
        return await work
    finally:
        await actor.aclose()


def _summary(value: Any, lines: list[str], *, json_output: bool, to_stderr: bool) -> None:
    from lowtide.bulk.outputs.results import exact_json

    if json_output:
        click.echo(exact_json(value, indent=True), err=to_stderr)
    else:
        for line in lines:
            click.echo(line, err=to_stderr)


def _report(report: RunReport, *, json_output: bool, to_stdout: bool) -> int:
    """The run's summary (on stderr when the results themselves went to stdout), and its exit status."""
    lines = [report.summary()]
    reasons = sorted(report.reasons.items(), key=lambda pair: -pair[1])[:10]
    lines.extend(f"  {count} item(s): {why}" for why, count in reasons)
    failure = report.api_failure
    if report.to_retry and (failure is None or report.mode == "live"):
        what = "failed, expired and not attempted" if report.mode == "live" else "failed and expired"
        lines.append(f"send the {what} items again with: lowtide retry {report.run_id}")
    waiting = waiting_line(report)
    if waiting is not None:
        lines.append(waiting)
    if report.interrupted is not None:
        from lowtide.bulk.running.interrupts import exit_status

        lines.append(
            f"interrupted by {report.interrupted}: the calls in flight were answered and their answers stored; run the"
            " same command again to resume without paying twice"
        )
        _summary(report.as_json(), lines, json_output=json_output, to_stderr=to_stdout)
        return exit_status(report.interrupted)
    _summary(report.as_json(), lines, json_output=json_output, to_stderr=to_stdout)
    if failure is not None:
        if report.mode == "live":
            then = f"every answer already paid for is stored; send the rest with lowtide retry {report.run_id}"
        else:
            then = (
                "batches already created keep running at the API and their requests wait in the ledger; run the"
                " same command again to resume"
            )
        click.echo(
            f"lowtide: the API refused or failed a call: {failure}. Nothing is lost: {then} once the cause is fixed.",
            err=True,
        )
        return 3
    return 0 if report.ok else 1


def waiting_line(report: RunReport) -> str | None:
    """What to do about a run's items waiting on batches the API has (None when none waits)."""
    if not report.waiting:
        return None
    return (
        f"{report.waiting} item(s) are in batches whose answers were not collected: run the same command again"
        f" (or lowtide retry {report.run_id}) to collect them; nothing is sent or paid for twice"
    )


COMMANDS = [run, retry]
