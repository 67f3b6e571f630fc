# boto3 ships no type stubs: what lowtide calls of it is typed by the protocols below.
# pyright: reportMissingTypeStubs=false
"""The boto3 clients the Bedrock providers use (S3, the Bedrock control plane, bedrock-runtime), made from one
session: an injected `boto3.session.Session`, or the usual AWS chain's (environment, profile, SSO, instance role).
Credentials stay in boto3: lowtide keeps only an in-memory digest of the access key id, for grouping calls.

boto3 is synchronous: every call runs in a worker thread (`call`), never on the event loop. botocore's own retries are
off (`total_max_attempts: 1`): lowtide's retry policy decides (and a create is never retried on doubt). The endpoint is
the actor's `base_url`, else `AWS_ENDPOINT_URL` (which boto3 reads itself), else AWS's; with an endpoint given by IP
address boto3 addresses S3 path-style (`http://127.0.0.1:port/<bucket>/<key>`), as the emulator serves it."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, cast

import boto3
import boto3.session
import botocore.session
from botocore.config import Config

from lowtide import ConfigurationError, ProviderOptions
from lowtide.providers import credential_of
from lowtide.providers.bedrock.options import options_in

__all__ = ["ENDPOINT_ENV", "AwsClients", "BedrockControl", "BedrockRuntime", "ObjectStorage", "build_clients", "call"]

ENDPOINT_ENV = "AWS_ENDPOINT_URL"
_AWS_ENDPOINT = re.compile(r"^https://bedrock\.([a-z]{2}(?:-[a-z]+)+-\d)\.amazonaws\.com/?$")
"""The endpoint the ledger records for AWS's own Bedrock in a region."""
T = TypeVar("T")

Json = Mapping[str, Any]
"""An answer of boto3's: its output shape, parsed (values of any JSON type, datetimes, streams)."""


class _Session(Protocol):
    """boto3's `Session`, as lowtide uses it."""

    @property
    def region_name(self) -> str | None: ...
    def get_credentials(self) -> object: ...
    def client(self, service_name: str, **kwargs: object) -> object: ...


class ObjectStorage(Protocol):
    """boto3's S3 client, as lowtide calls it."""

    def put_object(self, *, Bucket: str, Key: str, Body: bytes, ContentType: str) -> Json: ...
    def get_object(self, *, Bucket: str, Key: str) -> Json: ...
    def head_object(self, *, Bucket: str, Key: str) -> Json: ...
    def delete_object(self, *, Bucket: str, Key: str) -> Json: ...


class BedrockControl(Protocol):
    """boto3's Bedrock control-plane client, as lowtide calls it."""

    def create_model_invocation_job(self, **kwargs: object) -> Json: ...
    def get_model_invocation_job(self, *, jobIdentifier: str) -> Json: ...
    def list_model_invocation_jobs(self, **kwargs: object) -> Json: ...
    def stop_model_invocation_job(self, *, jobIdentifier: str) -> Json: ...
    def get_foundation_model(self, *, modelIdentifier: str) -> Json: ...
    def list_foundation_models(self, **kwargs: object) -> Json: ...
    def get_inference_profile(self, *, inferenceProfileIdentifier: str) -> Json: ...
    def list_inference_profiles(self, **kwargs: object) -> Json: ...


class BedrockRuntime(Protocol):
    """boto3's bedrock-runtime client, as lowtide calls it."""

    def converse(self, **kwargs: object) -> Json: ...
    def converse_stream(self, **kwargs: object) -> Json: ...


@dataclasses.dataclass(frozen=True)
class AwsClients:
    session: _Session
    region: str
    config: Config
    endpoint_url: str | None
    endpoint: str
    """Where the batches live, for the ledger: the endpoint given, else AWS's Bedrock endpoint of the region."""
    credential: str
    """A digest of the access key id and region (never the secret), for grouping calls."""

    @functools.cached_property
    def s3(self) -> ObjectStorage:  # boto3's clients are made at run time from its service models
        return cast("ObjectStorage", self._client("s3"))

    @functools.cached_property
    def control(self) -> BedrockControl:
        return cast("BedrockControl", self._client("bedrock"))

    @functools.cached_property
    def runtime(self) -> BedrockRuntime:
        return cast("BedrockRuntime", self._client("bedrock-runtime"))

    def _client(self, service: str) -> object:
        return self.session.client(service, region_name=self.region, endpoint_url=self.endpoint_url, config=self.config)


class _Loader(Protocol):
    """botocore's data loader, as lowtide shares it."""

    @property
    def search_paths(self) -> list[str]: ...


class _CoreSession(Protocol):
    """botocore's `Session`, as lowtide shares its loader."""

    def get_config_variable(self, logical_name: str) -> object: ...
    def get_component(self, name: str) -> object: ...
    def register_component(self, name: str, component: object) -> None: ...


_LOADERS: dict[str | None, _Loader] = {}
_LOADERS_LOCK = threading.Lock()


def _new_session() -> boto3.session.Session:
    """A session of the usual AWS chain, as `boto3.session.Session()` makes it, but whose data loader (the service
    models and endpoint rules botocore parses from its JSON files: 0.2 s of CPU for each new session's three
    clients, 0.03 s with the files already read) is shared by every session lowtide makes, one per `AWS_DATA_PATH`.
    Credentials, region and configuration stay each session's own; a session the caller passes is left alone."""
    core = cast("_CoreSession", botocore.session.Session())
    data_path = cast("str | None", core.get_config_variable("data_path"))
    with _LOADERS_LOCK:
        loader = _LOADERS.get(data_path)
        if loader is None:
            _LOADERS[data_path] = cast("_Loader", core.get_component("data_loader"))
        else:
            core.register_component("data_loader", loader)
        session = boto3.session.Session(botocore_session=core)
        # boto3 adds its own data folder to the loader's search paths at every session: once is enough.
        paths = _LOADERS[data_path].search_paths
        paths[:] = dict.fromkeys(paths)
    return session


def build_clients(options: ProviderOptions) -> AwsClients:
    """The clients to use. No region or no credentials is a `ConfigurationError` saying what to set, before anything
    is sent."""
    given = options.client
    if given is not None and not isinstance(given, boto3.session.Session):
        raise ConfigurationError(
            f"client must be a boto3.session.Session for provider bedrock, not {type(given).__name__}", field="client"
        )
    session = cast("_Session", given if given is not None else _new_session())
    settings = options_in(options.provider_options)
    endpoint_url = options.base_url_from(ENDPOINT_ENV)
    aws = _AWS_ENDPOINT.match(endpoint_url or "")
    if aws is not None:
        # The ledger's record of AWS's own Bedrock (`lowtide collect` gives it back): each service's own endpoint.
        endpoint_url = None
    region = settings.region or (aws.group(1) if aws else None) or session.region_name or os.environ.get("AWS_REGION")
    if not region:
        raise ConfigurationError(
            "No AWS region for Bedrock: set AWS_DEFAULT_REGION or AWS_REGION (or a profile's region), or "
            "provider_options.bedrock.region.",
            field="provider_options.bedrock.region",
        )
    credentials = session.get_credentials()
    if credentials is None:
        raise ConfigurationError(
            "No AWS credentials for Bedrock: the usual AWS chain found none (AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, SSO, or an instance role).",
            field="client",
        )
    key_id = str(getattr(credentials, "access_key", "") or "")
    config = Config(
        region_name=region,
        retries={"total_max_attempts": 1, "mode": "standard"},
        connect_timeout=min(60.0, options.timeout),
        read_timeout=options.timeout,
        max_pool_connections=32,
        user_agent_extra="lowtide",
    )
    endpoint = (endpoint_url or f"https://bedrock.{region}.amazonaws.com").rstrip("/")
    if given is not None:
        endpoint = f"{endpoint}#session-{id(given)}"
    return AwsClients(
        session=session,
        region=region,
        config=config,
        endpoint_url=endpoint_url,
        endpoint=endpoint,
        credential=credential_of(f"{key_id}:{region}", owned=given is None, client=given),
    )


async def call(method: Callable[..., T], /, **kwargs: object) -> T:
    """A boto3 call in a worker thread: the event loop never waits on it."""
    return await asyncio.to_thread(functools.partial(method, **kwargs))
