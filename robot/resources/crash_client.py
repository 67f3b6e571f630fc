"""A client process for the crash suites: N concurrent keyed calls of one batch-mode actor, through one ledger.

    python crash_client.py --base-url URL --ledger L --requests N --prefix P --out results.jsonl

Request i (1..N) asks `question i` under the key `P-i`. Once every call has its outcome, one JSON line per request
(in key order) is written to `--out`: key, provider, prompt, text, batch id, custom id; or, for a call that failed, its
error. `--provider anthropic,mistral` runs an actor of each provider in this one process, at the same base URL with
the same key and batch settings (as against `lowtide emulator`, or a gateway serving several APIs at one address):
each asks keys of its own, `P-PROVIDER-i`, with `question i to PROVIDER`.
With `--barrier DIR --parties K`, K clients wait for each other before their first call (which opens the ledger).
Exits 0 when every call was answered, 1 otherwise. `LOWTIDE_CRASHPOINT` in the environment makes lowtide kill this
process with SIGKILL at that stage; nothing here tries to survive that: the next run with the same keys must.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import faulthandler
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from lowtide import Actor, ActorResponse

DEFAULT_API_KEY_ENV = "LOWTIDE_CRASH_API_KEY"
MODELS = {
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-5.4-mini",
    "gemini": "gemini-2.5-flash",
    "bedrock": "amazon.nova-micro-v1:0",
    "mistral": "mistral-small-latest",
    # A deployment named after its model, as the emulator's Azure resource has one for each.
    "azure_openai": "gpt-4o-mini",
    "groq": "llama-3.1-8b-instant",
    "together": "meta-llama/Llama-3.3-70B-Instruct-Turbo",
    # An OpenAI-compatible endpoint configured by data: the emulator's OpenAI wire, through the openai SDK.
    "openai_compatible": "gpt-4o-mini",
    "xai": "grok-3-mini",
    "fireworks": "accounts/fireworks/models/gpt-oss-20b",
    "vertex": "gemini-2.5-flash",
    "openrouter": "openai/gpt-4o-mini",
}
"""Each provider's default model (Azure's: a deployment), and (its keys) the providers a client can use."""
BEDROCK = {"s3_bucket": "lowtide-batch", "role_arn": "arn:aws:iam::123456789012:role/crash-suite", "min_records": 1}
"""Where a Bedrock client's records go, and the emulator's account takes jobs of any size."""
VERTEX = {"project": "crash-project", "location": "us-central1", "bucket": "crash-batches"}
"""A Vertex client's project and bucket: anonymous against the emulator on this machine."""
AWS_ENV = {"AWS_ACCESS_KEY_ID": "AKIDCRASH", "AWS_SECRET_ACCESS_KEY": "crash-suite", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_EC2_METADATA_DISABLED": "true"}  # fmt: skip
"""Credentials of no meaning for boto3's usual chain: the emulator checks no signature."""


_BASE_PATHS = {
    "openai": "/v1",
    "openai_compatible": "/v1",
    "xai": "/xai/v1",
    "fireworks": "/fireworks",
    "openrouter": "/openrouter/api/v1",
}
"""What a provider's base URL holds after the emulator's address: the openai SDK's `/v1` (xAI's under `/xai`,
OpenRouter's under `/openrouter/api`)."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True, help="the API (emulator) base URL")
    parser.add_argument(
        "--ledger", required=True, help="the ledger: a file, or a PostgreSQL URL, shared with other runs"
    )
    parser.add_argument("--requests", required=True, type=int, help="how many concurrent calls")
    parser.add_argument("--prefix", required=True, help="keys are PREFIX-1 .. PREFIX-N")
    parser.add_argument("--out", required=True, type=Path, help="where to write one JSON line per request")
    parser.add_argument(
        "--provider",
        default="anthropic",
        type=_providers,
        help="whose batch API to use; several, comma-separated: an actor of each, asking keys of its own",
    )
    parser.add_argument("--model", default=None, help="the model (by default, one of the provider's)")
    parser.add_argument(
        "--barrier",
        type=Path,
        default=None,
        help="a directory shared with the other clients of a test: start only once --parties of them are ready",
    )
    parser.add_argument("--parties", type=int, default=1, help="how many clients meet at --barrier")
    parser.add_argument(
        "--api-key-env", default=DEFAULT_API_KEY_ENV, help="the environment variable holding the API key"
    )
    parser.add_argument("--max-batch-requests", type=int, default=None, help="most requests in one batch")
    parser.add_argument("--reconcile-grace", type=float, default=1.5, help="seconds an unknown create is looked for")
    parser.add_argument("--lease-seconds", type=float, default=None, help="how long others leave this one's work")
    parser.add_argument("--coalesce-window", type=float, default=0.3, help="seconds calls are gathered for")
    parser.add_argument("--shared-prefix", default=None, help="also ask SHARED_PREFIX-1 .. -M, as other clients do")
    parser.add_argument("--shared", type=int, default=0, help="how many shared keys (M)")
    parser.add_argument(
        "--provider-options", type=json.loads, default=None, help="the actor's provider_options, as JSON"
    )
    return parser.parse_args(argv)


def _providers(text: str) -> list[str]:
    providers = text.split(",")
    unknown = [p for p in providers if p not in MODELS]
    if unknown or len(set(providers)) != len(providers):
        raise argparse.ArgumentTypeError(f"providers among {', '.join(sorted(MODELS))}, each once: not {text!r}")
    return providers


def build_actor(args: argparse.Namespace, provider: str) -> Actor:
    """The actor of `provider`: every provider's actor of a client has the same base URL, key and batch settings,
    and differs only in its provider, model and name."""
    options = dict(args.provider_options or {})
    if provider == "openai_compatible":
        endpoint = {"base_url": f"{args.base_url}/v1", "api_key_env": args.api_key_env}
        options["openai_compatible"] = {**endpoint, **options.get("openai_compatible", {})}
    if provider == "fireworks":
        options["fireworks"] = {"account_id": "crash-suite", **options.get("fireworks", {})}
    if provider == "vertex":
        options["vertex"] = {**VERTEX, **options.get("vertex", {})}
    if provider == "bedrock":
        options["bedrock"] = {**BEDROCK, **options.get("bedrock", {})}
        for variable, value in AWS_ENV.items():
            os.environ.setdefault(variable, value)
    return Actor(
        {
            "name": "crash-client" if len(args.provider) == 1 else f"crash-client-{provider}",
            "provider": provider,
            "model": args.model or MODELS[provider],
            "max_tokens": 64,
            "batch_processing": "batch",
            # The emulator serves every API on one socket; the OpenAI SDK's base URL holds the `/v1`, google-genai
            # adds its API version itself, Azure's client its `/openai`.
            "base_url": args.base_url + _BASE_PATHS.get(provider, ""),
            "api_key_env": args.api_key_env,
            **({"provider_options": options} if options else {}),
            "batch": {
                "poll_interval": 0.2,
                "coalesce_window": args.coalesce_window,
                "reconcile_grace": args.reconcile_grace,
                "max_wait": 120,
                **({"max_batch_requests": args.max_batch_requests} if args.max_batch_requests else {}),
                **({"lease_seconds": args.lease_seconds} if args.lease_seconds else {}),
            },
        },
        ledger=args.ledger,
    )


def line_for(key: str, provider: str, prompt: str, outcome: ActorResponse[Any] | BaseException) -> dict[str, Any]:
    if isinstance(outcome, ActorResponse):
        return {
            "key": key,
            "provider": provider,
            "prompt": prompt,
            "text": outcome.text,
            "batch_id": outcome.ids.batch_id,
            "custom_id": outcome.ids.custom_id,
        }
    return {
        "key": key,
        "provider": provider,
        "prompt": prompt,
        "error": type(outcome).__name__,
        "message": str(outcome),
    }


def meet(barrier: Path, parties: int, timeout: float = 60.0) -> None:
    """Wait until `parties` clients (this one included) have checked in at `barrier`: they then start together,
    rather than one process's interpreter start-up ahead of the other's."""
    barrier.mkdir(parents=True, exist_ok=True)
    (barrier / f"ready-{os.getpid()}").touch()
    deadline = time.monotonic() + timeout
    while len(list(barrier.glob("ready-*"))) < parties:
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(list(barrier.glob('ready-*')))} of {parties} clients met at {barrier}")
        time.sleep(0.002)


def _print_tasks() -> None:
    """`kill -USR2 PID`: where every asyncio task of this client is waiting (what a hang is waiting for)."""
    for task in asyncio.all_tasks():
        task.print_stack(limit=8, file=sys.stderr)
    sys.stderr.flush()


def calls_of(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(key, provider, prompt) of every call: with one provider `P-i` asks `question i`; with several, each
    provider's keys and questions are its own (`P-PROVIDER-i`, `question i to PROVIDER`)."""
    several = len(args.provider) > 1
    groups = [(args.prefix, args.requests)] + ([(args.shared_prefix, args.shared)] if args.shared_prefix else [])
    return [
        (f"{prefix}-{provider}-{i}", provider, f"question {i} to {provider}")
        if several
        else (f"{prefix}-{i}", provider, f"question {i}")
        for provider in args.provider
        for prefix, count in groups
        for i in range(1, count + 1)
    ]


async def run(args: argparse.Namespace) -> int:
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR2, _print_tasks)
    calls = calls_of(args)
    started = time.monotonic()
    async with contextlib.AsyncExitStack() as stack:
        actors = {provider: await stack.enter_async_context(build_actor(args, provider)) for provider in args.provider}

        async def call(key: str, provider: str, prompt: str) -> ActorResponse[Any]:
            try:
                return await actors[provider].run(prompt, key=key)
            except Exception as exc:
                # Said at once, not only at the end: a client that hangs afterwards still shows why.
                logging.getLogger("crash_client").error("%s failed: %s: %s", key, type(exc).__name__, exc)
                raise

        outcomes = await asyncio.gather(*(call(*spec) for spec in calls), return_exceptions=True)
    lines = [line_for(*spec, outcome) for spec, outcome in zip(calls, outcomes, strict=True)]
    failed = [line for line in lines if "error" in line]
    # Written whole and renamed into place: a reader never sees half a file.
    partial = args.out.with_name(args.out.name + ".partial")
    partial.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines), encoding="utf-8")
    partial.replace(args.out)
    print(
        f"pid {os.getpid()}: {len(lines) - len(failed)} of {len(lines)} answered in {time.monotonic() - started:.2f} s",
        flush=True,
    )
    for line in failed[:10]:
        print(f"{line['key']}: {line['error']}: {line['message']}", file=sys.stderr, flush=True)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # `kill -USR1 PID` prints every thread's stack to stderr: what a hung client is waiting for.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    return run_here(args)


def run_here(args: argparse.Namespace) -> int:
    """The client's work without `main`'s set-up of the process: what a Robot library runs in its own process
    (CrashLibrary's `Run Client In This Process`, whose caller puts the loggers back and writes their records)."""
    logging.getLogger("lowtide").setLevel(logging.INFO)
    if args.barrier is not None:
        meet(args.barrier, args.parties)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
