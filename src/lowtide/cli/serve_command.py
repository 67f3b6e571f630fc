"""`lowtide serve`: the actor's provider's APIs (Anthropic's Messages; OpenAI's Chat Completions and Responses) on a
socket, answered through the actor's batch mode."""

from __future__ import annotations

import os
from pathlib import Path

import click

from lowtide.cli.params import PORT, json_option, ledger_option

__all__ = ["COMMANDS"]


@click.command(
    short_help="Serve the Messages or OpenAI APIs, answered through batches.",
    epilog="""\b
Examples:
  LOWTIDE_SERVE_KEY=local-secret lowtide serve --actor actor.yaml --port 8787
  lowtide serve --actor actors.yaml --name reviewer --port 0 --json --client-key local-secret
Then point any SDK at it: ANTHROPIC_BASE_URL=http://127.0.0.1:8787 ANTHROPIC_API_KEY=local-secret
(an OpenAI actor: OPENAI_BASE_URL=http://127.0.0.1:8787/v1 OPENAI_API_KEY=local-secret)""",
)
@click.option(
    "--actor",
    "actor_file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The actor's YAML or TOML file; its api_key_env names the upstream key.",
)
@click.option("--name", help="Which actor, when the file holds several.")
@click.option("--host", default="127.0.0.1", show_default=True, help="The interface to listen on.")
@click.option("--port", type=PORT, default=8787, show_default=True, help="The port to listen on; 0 picks a free one.")
@click.option(
    "--client-key",
    "client_keys",
    multiple=True,
    metavar="KEY",
    help="The key clients must send (x-api-key or Authorization: Bearer), repeatable. Default: $LOWTIDE_SERVE_KEY.",
)
@ledger_option
@click.option("--access-log", is_flag=True, help="Log every request (never its headers or keys).")
@json_option
def serve(
    actor_file: Path,
    name: str | None,
    host: str,
    port: int,
    client_keys: tuple[str, ...],
    ledger: str | None,
    access_log: bool,
    json_output: bool,
) -> int:
    """Serve the API of the actor's provider (Anthropic: POST /v1/messages; OpenAI: POST /v1/chat/completions and
    POST /v1/responses; streamed or not) and answer every request through the actor's batch mode: concurrent
    requests from any client coalesce into batches at half the live price, and a request sent again (the same body,
    or the same Idempotency-Key header) is answered from the ledger.

    Prints where it listens on stdout once it accepts connections (with --json as one JSON object), then serves until
    Ctrl-C or SIGTERM. Streamed requests get their answer replayed as server-sent events once its batch has ended.
    """
    from lowtide.actor import Actor
    from lowtide.emulator.server import run_app
    from lowtide.errors import ConfigurationError
    from lowtide.serve import CLIENT_KEY_ENV, build_app

    keys = [key for key in client_keys if key] or [key for key in [os.environ.get(CLIENT_KEY_ENV, "")] if key]
    if not keys:
        raise ConfigurationError(
            f"lowtide serve needs a key for its clients: give --client-key KEY or set {CLIENT_KEY_ENV}.",
            field="client_key",
        )
    actor = Actor.from_file(actor_file, name, ledger=ledger)
    app = build_app(actor, client_keys=keys)
    return run_app(app, "lowtide serve", host=host, port=port, access_log=access_log, json_line=json_output)


COMMANDS = [serve]
