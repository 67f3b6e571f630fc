"""`lowtide serve`: the actor's provider's APIs (Anthropic's Messages; OpenAI's Chat Completions and Responses) on a
socket, answered through the actor's batch mode."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import click

from lowtide.cli.params import HOST, PORT, SECONDS, json_option, ledger_option

__all__ = ["COMMANDS"]

_ACCESS_LOG = click.option(
    "--access-log", is_flag=True, help="Log a line per request: method, path, status, duration (never keys or bodies)."
)


def _listening(actor_help: str, port: int) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """The options both servers take: the actor (its file and name) and where to listen."""

    def decorate(command: Callable[..., int]) -> Callable[..., int]:
        for option in reversed(
            (
                click.option(
                    "--actor",
                    "actor_file",
                    required=True,
                    type=click.Path(path_type=Path, dir_okay=False),
                    help=actor_help,
                ),
                click.option("--name", help="Which actor, when the file holds several."),
                click.option(
                    "--host", type=HOST, default="127.0.0.1", show_default=True, help="The interface to listen on."
                ),
                click.option(
                    "--port",
                    type=PORT,
                    default=port,
                    show_default=True,
                    help="The port to listen on; 0 picks a free one.",
                ),
            )
        ):
            command = option(command)
        return command

    return decorate


@click.command(
    short_help="Serve the Messages or OpenAI APIs, answered through batches.",
    epilog="""\b
Examples:
  LOWTIDE_SERVE_KEY=local-secret lowtide serve --actor actor.yaml --port 8787
  lowtide serve --actor actors.yaml --name reviewer --port 0 --json --client-key local-secret
Then point any SDK at it: ANTHROPIC_BASE_URL=http://127.0.0.1:8787 ANTHROPIC_API_KEY=local-secret
(an OpenAI actor: OPENAI_BASE_URL=http://127.0.0.1:8787/v1 OPENAI_API_KEY=local-secret)""",
)
@_listening("The actor's YAML or TOML file; its api_key_env names the upstream key.", 8787)
@click.option(
    "--client-key",
    "client_keys",
    multiple=True,
    metavar="KEY",
    help="The key clients must send (x-api-key or Authorization: Bearer), repeatable. Default: $LOWTIDE_SERVE_KEY.",
)
@click.option(
    "--client-key-env",
    "owned_keys",
    multiple=True,
    metavar="VAR:team=T,project=P",
    help="A client key read from the environment variable VAR (never from the command line), its clients' calls"
    " charged to team T and project P (and tag.NAME=VALUE tags) in the ledger and held by their caps; repeatable.",
)
@click.option(
    "--allow-model",
    "allow_models",
    multiple=True,
    metavar="NAME",
    help="Also answer requests for this model, repeatable. Default: only the actor's model (by its dated or undated"
    " name); any other is refused as the API refuses a model the key cannot use.",
)
@click.option(
    "--max-body-bytes",
    type=click.IntRange(min=1),
    default=None,
    metavar="BYTES",
    help="Refuse (413) a request body larger than this. Default: the API's own limit (Messages 32 MB, OpenAI 50 MB).",
)
@click.option(
    "--idempotency-ttl",
    type=SECONDS,
    default=24 * 3600.0,
    show_default=True,
    help="Seconds an Idempotency-Key names the same request; sent again later, it is a new request.",
)
@click.option(
    "--body-timeout",
    type=SECONDS,
    default=30.0,
    show_default=True,
    help="Refuse (408) a request whose body goes this many seconds without a byte arriving.",
)
@click.option(
    "--webhooks",
    is_flag=True,
    help="Also receive the provider's batch webhooks on POST /webhooks/<provider> (OpenAI: its secret in"
    " $OPENAI_WEBHOOK_SECRET): a batch's answers are collected as soon as it ends.",
)
@click.option(
    "--mode",
    type=click.Choice(["batch", "live"]),
    default="batch",
    show_default=True,
    help="batch: every request through a batch and the ledger, a streamed one replayed once its batch has ended;"
    " live: every request a live call at the live price (its answer not in the ledger; its spend is, when its key or"
    " the actor has a team or project), a streamed one relayed piece by piece"
    " as the provider streams it.",
)
@ledger_option
@_ACCESS_LOG
@json_option
def serve(
    actor_file: Path,
    name: str | None,
    host: str,
    port: int,
    client_keys: tuple[str, ...],
    owned_keys: tuple[str, ...],
    allow_models: tuple[str, ...],
    max_body_bytes: int | None,
    idempotency_ttl: float,
    body_timeout: float,
    webhooks: bool,
    mode: str,
    ledger: str | None,
    access_log: bool,
    json_output: bool,
) -> int:
    """Serve the API of the actor's provider (Anthropic: POST /v1/messages; OpenAI: POST /v1/chat/completions and
    POST /v1/responses; streamed or not) and answer every request through the actor's batch mode: concurrent
    requests from any client coalesce into batches at half the live price, and a request sent again by the same
    client key (the same body, or the same Idempotency-Key header) is answered from the ledger.

    Clients are not trusted: a request for another model than the actor's (unless --allow-model names it), a body
    over the size limit, not JSON, nested too deep or not Unicode, and whatever the API would refuse, are refused
    before anything is sent, in the API's error shape. The same Idempotency-Key from two client keys names two
    requests; one used again after --idempotency-ttl is a new request.

    Prints where it listens on stdout once it accepts connections (with --json as one JSON object), then serves until
    Ctrl-C or SIGTERM. Streamed requests get their answer replayed as server-sent events once its batch has ended;
    with --mode live, relayed as the provider writes it (a client that goes away cancels the call).
    """
    from lowtide.actor import Actor
    from lowtide.errors import ConfigurationError
    from lowtide.http.server import run_app
    from lowtide.serve.app import CLIENT_KEY_ENV, build_app, error_body
    from lowtide.serve.keys import ClientKey, owned_key

    owned = [owned_key(spec, os.environ) for spec in owned_keys]
    plain = [key for key in client_keys if key] or (
        [] if owned else [key for key in [os.environ.get(CLIENT_KEY_ENV, "")] if key]
    )
    keys: list[str | ClientKey] = [*plain, *owned]
    if not keys:
        raise ConfigurationError(
            f"lowtide serve needs a key for its clients: give --client-key KEY, --client-key-env VAR or set"
            f" {CLIENT_KEY_ENV}.",
            field="client_key",
        )
    if not idempotency_ttl > 0:
        raise ConfigurationError("--idempotency-ttl must be more than 0 seconds.", field="idempotency_ttl")
    if not body_timeout > 0:
        raise ConfigurationError("--body-timeout must be more than 0 seconds.", field="body_timeout")
    actor = Actor.from_file(actor_file, name, ledger=ledger)
    app = build_app(
        actor,
        client_keys=keys,
        allow_models=allow_models,
        max_body_bytes=max_body_bytes,
        idempotency_ttl=idempotency_ttl,
        body_timeout=body_timeout,
        webhooks=webhooks,
        mode=mode,
    )
    return run_app(
        app,
        "lowtide serve",
        host=host,
        port=port,
        access_log=access_log,
        json_line=json_output,
        error_body=error_body(actor),
    )


@click.command(
    short_help="Receive the provider's batch webhooks: answers collected as soon as a batch ends.",
    epilog="""\b
Examples:
  OPENAI_WEBHOOK_SECRET=whsec_... lowtide webhooks --actor actor.yaml --port 8788
Then point the provider's webhook endpoint at https://<this host>/webhooks/openai (through a proxy that ends TLS),
and set the actor's batch.webhook_poll_interval (say 900): its pollers check slowly and wake on each webhook.""",
)
@_listening("The actor's YAML or TOML file: its provider verifies the webhooks, its ledger records them.", 8788)
@click.option(
    "--tolerance",
    type=SECONDS,
    default=300.0,
    show_default=True,
    help="Refuse (401) a webhook signed this many seconds or more before (or after) now.",
)
@ledger_option
@_ACCESS_LOG
@json_option
def webhooks(
    actor_file: Path,
    name: str | None,
    host: str,
    port: int,
    tolerance: float,
    ledger: str | None,
    access_log: bool,
    json_output: bool,
) -> int:
    """Receive the actor's provider's batch webhooks (OpenAI: batch.completed, batch.failed, batch.expired,
    batch.cancelled) on POST /webhooks/<provider>, for a host that only collects. Each is verified as the provider
    specifies (OpenAI: by its SDK, with the secret in $OPENAI_WEBHOOK_SECRET), recorded once in the actor's ledger by
    its event id, and its batch collected at once: the process polling it (here, or on any host of a PostgreSQL
    ledger) is woken, or, when none does, it is collected here.

    An unsigned, wrongly signed or stale webhook is refused with 401, a replayed one or one over 64 KiB with 400; it is
    logged without its body and changes nothing. An event delivered again is acknowledged and nothing is done twice.
    """
    from starlette.applications import Starlette

    from lowtide.actor import Actor
    from lowtide.errors import ConfigurationError
    from lowtide.http.server import run_app
    from lowtide.webhooks.receiver import webhook_route

    if not tolerance > 0:
        raise ConfigurationError("--tolerance must be more than 0 seconds.", field="tolerance")
    actor = Actor.from_file(actor_file, name, ledger=ledger)
    app = Starlette(routes=[webhook_route(actor, tolerance=tolerance)])
    return run_app(app, "lowtide webhooks", host=host, port=port, access_log=access_log, json_line=json_output)


COMMANDS = [serve, webhooks]
