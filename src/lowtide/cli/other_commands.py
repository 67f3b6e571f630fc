"""`lowtide demo`, `lowtide emulator` and `lowtide completion`."""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.shell_completion import get_completion_class

from lowtide.cli.params import COUNT, HOST, PORT, SECONDS, json_option

_DEPLOYMENTS_ENV = "LOWTIDE_EMULATOR_AZURE_DEPLOYMENTS"
"""The variable the emulated Azure resource reads its further deployments from (`--azure-deployment` sets it)."""

if TYPE_CHECKING:
    from lowtide.emulator.core.emulation import Emulation
    from lowtide.emulator.core.ratelimits import Latency

__all__ = ["COMMANDS"]


@click.command(
    short_help="Run the main job on the built-in emulator.",
    epilog="""\b
Examples:
  lowtide demo
  lowtide demo --bulk-items 0 --processing-seconds 0.2
  lowtide demo --config my-actors.yaml""",
)
@click.option(
    "--config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="An actors file to use instead of the bundled one.",
)
@click.option(
    "--processing-seconds", type=SECONDS, default=1.0, show_default=True, help="How long each emulated batch runs."
)
@click.option(
    "--bulk-items", type=COUNT, default=200, show_default=True, help="Reviews in the demo's bulk run (0 skips it)."
)
def demo(config: Path | None, processing_seconds: float, bulk_items: int) -> int:
    """Run the main job on the built-in emulator: no key, no network.

    Plain calls, structured output, a parked call resumed, a budget, and a bulk run, all through batches of the
    offline Anthropic API that runs in this process. Exits 1 if any call failed.
    """
    import asyncio

    from lowtide.cli.demo import run_demo
    from lowtide.emulator.core.emulation import EmulationError
    from lowtide.errors import ConfigurationError

    try:
        failures = asyncio.run(
            run_demo(sys.stdout, config=config, processing_seconds=processing_seconds, bulk_items=bulk_items)
        )
    except EmulationError as error:  # an installed emulation that cannot be loaded, named
        raise ConfigurationError(str(error)) from None
    return 1 if failures else 0


@click.command(
    short_help="Serve the offline APIs on a socket.",
    epilog="""\b
Examples:
  lowtide emulator --port 8089
  lowtide emulator --port 0 --json            # a free port; read it from the JSON line
  lowtide emulator --processing-seconds 30 --state-file emu.json
Then point an SDK at it: ANTHROPIC_BASE_URL=http://127.0.0.1:8089 ANTHROPIC_API_KEY=any""",
)
@click.option("--host", type=HOST, default="127.0.0.1", show_default=True, help="The interface to listen on.")
@click.option("--port", type=PORT, default=0, show_default=True, help="The port to listen on; 0 picks a free one.")
@click.option(
    "--processing-seconds", type=SECONDS, default=2.0, show_default=True, help="How long each batch stays in progress."
)
@click.option(
    "--cancel-seconds", type=SECONDS, default=0.5, show_default=True, help="How long a canceled batch stays canceling."
)
@click.option(
    "--api-key",
    "api_keys",
    multiple=True,
    metavar="KEY",
    help="Accept only this API key (repeatable); by default any non-empty key is accepted.",
)
@click.option(
    "--state-file",
    type=click.Path(dir_okay=False),
    help="Keep the emulator's state in this file, rewritten after every change, and start from it if it exists, so"
    " that a restarted emulator still serves its batches.",
)
@click.option(
    "--models",
    multiple=True,
    metavar="NAMES",
    help="Also serve these models, beside its catalogue (comma-separated, repeatable).",
)
@click.option(
    "--azure-deployment",
    "azure_deployments",
    multiple=True,
    metavar="NAME=MODEL",
    envvar=_DEPLOYMENTS_ENV,
    help="Azure OpenAI: also a deployment NAME serving MODEL (repeatable; or $LOWTIDE_EMULATOR_AZURE_DEPLOYMENTS,"
    " comma-separated). By default every OpenAI text model has a deployment of its own name.",
)
@click.option(
    "--compatible-lacks",
    multiple=True,
    metavar="PARTS",
    help="OpenAI's wire without these parts, to stand for an OpenAI-compatible endpoint: metadata, cancel, models"
    " (comma-separated, repeatable).",
)
@click.option(
    "--webhook",
    "webhooks",
    multiple=True,
    metavar="NAME=URL",
    help="Send each batch's end of the emulated API NAME to URL, signed as that API signs its webhooks, with the"
    " secret in the variable its receivers read (openai: $OPENAI_WEBHOOK_SECRET, whsec_...); repeatable.",
)
@click.option(
    "--rpm", type=COUNT, help="Live calls: requests per minute, per provider and API key (default: no limit)."
)
@click.option("--input-tpm", type=COUNT, help="Live Messages calls: input tokens per minute, per API key.")
@click.option("--output-tpm", type=COUNT, help="Live Messages calls: output tokens per minute, per API key.")
@click.option("--tpm", type=COUNT, help="Live OpenAI calls: tokens (input and output) per minute, per API key.")
@click.option(
    "--latency",
    metavar="SECONDS[,PER_TOKEN]",
    help="How long a live answer takes: fixed seconds, plus seconds per output token (e.g. 0.5,0.01).",
)
@click.option(
    "--access-log", is_flag=True, help="Log a line per request: method, path, status, duration (never keys or bodies)."
)
@json_option
def emulator(
    host: str,
    port: int,
    processing_seconds: float,
    cancel_seconds: float,
    api_keys: tuple[str, ...],
    state_file: str | None,
    models: tuple[str, ...],
    azure_deployments: tuple[str, ...],
    compatible_lacks: tuple[str, ...],
    webhooks: tuple[str, ...],
    rpm: int | None,
    input_tpm: int | None,
    output_tpm: int | None,
    tpm: int | None,
    latency: str | None,
    access_log: bool,
    json_output: bool,
) -> int:
    """Serve offline, on one socket, the APIs of all eight built-in providers (Anthropic, OpenAI, Azure OpenAI,
    Gemini, Bedrock with its S3, Mistral, Groq and Together), for their official SDKs and any HTTP client, beside any
    other API installed in the `lowtide.emulators` entry-point group.

    Prints where it listens on stdout once it accepts connections (with --json as one JSON object: event, url,
    host, port), then serves until Ctrl-C or SIGTERM. Not part of any API: GET /_emulator/stats reads the counters
    (calls by route, batches created), POST /_emulator/faults fails a route's next calls, POST /_emulator/outcomes
    sets how a batch request by custom id ends, POST /_emulator/webhooks sends an API's batch ends to a URL
    (`{"emulation": "openai", "url": ..., "secret": "whsec_..."}`), POST /_emulator/processing sets how long the
    batches created next take (`{"seconds": 10800}`: late), POST /_emulator/reset empties it.
    """
    from lowtide.emulator.core.emulation import EmulationError
    from lowtide.emulator.core.ratelimits import RateLimits
    from lowtide.emulator.core.state import StateFileError
    from lowtide.emulator.emulator import Emulator
    from lowtide.emulator.server import run
    from lowtide.errors import ConfigurationError

    try:
        with _deployments(azure_deployments):
            served = Emulator(
                processing_seconds=processing_seconds,
                cancel_seconds=cancel_seconds,
                api_keys=list(api_keys) or None,
                state_file=state_file,
                extra_models=[name.strip() for names in models for name in names.split(",") if name.strip()],
                rate_limits=RateLimits(
                    rpm=rpm or None, input_tpm=input_tpm or None, output_tpm=output_tpm or None, tpm=tpm or None
                ),
                latency=_latency(latency),
                compatible_lacks=[
                    part.strip() for parts in compatible_lacks for part in parts.split(",") if part.strip()
                ],
            )
        for name, url, secret in _webhooks(served.emulations, webhooks):
            next(each for each in served.emulations if each.name == name).add_webhook(url, secret)
    except StateFileError as error:
        raise ConfigurationError(str(error), field="state_file") from None
    except ValueError as error:  # the settings click's types leave to the emulator: the parts OpenAI lacks, webhooks
        hint = "'--webhook'" if "webhook" in str(error) else "'--compatible-lacks'"
        raise click.BadParameter(str(error), param_hint=hint) from None
    except EmulationError as error:  # an installed emulation that cannot be loaded, named
        raise ConfigurationError(str(error)) from None
    return run(served, host=host, port=port, access_log=access_log, json_line=json_output)


@contextmanager
def _deployments(given: tuple[str, ...]) -> Generator[None]:
    """`--azure-deployment NAME=MODEL` values (each may hold several, comma-separated) handed to the emulation that
    reads them, through the variable it reads (`_DEPLOYMENTS_ENV`), for as long as the emulator is being made."""
    if not given:
        yield
        return
    for pair in (part.strip() for value in given for part in value.split(",") if part.strip()):
        name, equals, model = pair.partition("=")
        if not equals or not name.strip() or not model.strip():
            raise click.BadParameter(f"expected NAME=MODEL, not {pair!r}", param_hint="'--azure-deployment'")
    before = os.environ.get(_DEPLOYMENTS_ENV)
    os.environ[_DEPLOYMENTS_ENV] = ",".join(given)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(_DEPLOYMENTS_ENV, None)
        else:
            os.environ[_DEPLOYMENTS_ENV] = before


def _latency(given: str | None) -> Latency:
    from lowtide.emulator.core.ratelimits import Latency

    if not given:
        return Latency()
    parts = given.split(",")
    try:
        numbers = [float(part) for part in parts]
        if len(numbers) > 2:
            raise ValueError(given)
        return Latency(*numbers)
    except ValueError:
        raise click.BadParameter(
            f"expected SECONDS or SECONDS,PER_TOKEN (two numbers of 0 or more), not {given!r}", param_hint="'--latency'"
        ) from None


@click.command(
    short_help="Print shell completion code.",
    epilog="""\b
Examples:
  eval "$(lowtide completion bash)"             # in ~/.bashrc
  lowtide completion zsh > ~/.zfunc/_lowtide
  lowtide completion fish > ~/.config/fish/completions/lowtide.fish""",
)
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> int:
    """Print the shell code that completes lowtide's commands and options."""
    root = ctx.find_root().command
    completer = get_completion_class(shell)
    assert completer is not None  # every shell offered is one click completes
    click.echo(completer(root, {}, "lowtide", "_LOWTIDE_COMPLETE").source())
    return 0


COMMANDS = [demo, emulator, completion]


def _webhooks(emulations: Sequence[Emulation], given: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """Each `--webhook NAME=URL` as (name, url, secret), the secret read from the variable the API's receivers read
    it from (`Emulation.webhook_secret_env`); a name no emulation has, one that sends no webhooks, or a secret not
    set, refused by name."""
    found: list[tuple[str, str, str]] = []
    for each in given:
        name, equals, url = each.partition("=")
        emulation = next((e for e in emulations if e.name == name), None)
        if not equals or not url:
            raise click.BadParameter(f"{each!r}: expected NAME=URL", param_hint="'--webhook'")
        if emulation is None or emulation.webhook_secret_env is None:
            sends = ", ".join(e.name for e in emulations if e.webhook_secret_env is not None) or "none"
            raise click.BadParameter(
                f"no emulated API {name!r} sends webhooks (those that do: {sends})", param_hint="'--webhook'"
            )
        secret = os.environ.get(emulation.webhook_secret_env)
        if not secret:
            raise click.BadParameter(
                f"set ${emulation.webhook_secret_env} to the secret to sign them with", param_hint="'--webhook'"
            )
        found.append((name, url, secret))
    return found
