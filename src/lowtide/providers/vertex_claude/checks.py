"""What Claude on Vertex AI would refuse, refused before a request is recorded or sent: Anthropic's checks of the
Messages parameters and tools (`providers/anthropic`, as functions), the model looked up as Vertex AI's publisher
model (`GET /v1/publishers/anthropic/models/{model}`, asked once per model and endpoint in a process: a 404 is a
`ConfigurationError` naming the model; an endpoint that cannot say is logged once and the call goes on), its output
and input limits from lowtide's table of Claude models, and the input counted by Vertex's `count-tokens` only when the
byte bound does not settle it."""

from __future__ import annotations

import logging

import anthropic
import httpx2
from anthropic.lib.vertex import AsyncAnthropicVertex

from lowtide import ActorRequest, ConfigurationError
from lowtide.messages.limits import body_json, byte_size
from lowtide.providers import InputLimits, check_input
from lowtide.providers.anthropic.checks import ModelDirectory, check_tools
from lowtide.providers.anthropic.inputs import TOOL_USE_TOKENS, count_input_tokens
from lowtide.providers.anthropic.mapping import to_message_params, translate_errors
from lowtide.providers.anthropic.models import context_window, max_output_tokens, undated
from lowtide.providers.asked import AskedOnce
from lowtide.providers.vertex_claude.mapping import VERTEX_CLAUDE

__all__ = ["MAX_REQUEST_BYTES", "VertexClaudeChecks", "base_model"]

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 30 * 1024 * 1024
"""The largest request body Vertex AI takes (30 MB)."""
_LOOKUP_TIMEOUT = 30.0


def base_model(model: str) -> str:
    """A Vertex AI Claude model's name without its version (`claude-sonnet-4-5@20250929`: `claude-sonnet-4-5`)."""
    return undated(model.partition("@")[0])


class VertexClaudeChecks:
    """The pre-send checks of one client's requests: what its endpoint said of models, and the tokens it counted."""

    def __init__(self, client: AsyncAnthropicVertex, *, max_bytes: int = MAX_REQUEST_BYTES, where: str) -> None:
        self._client = client
        self._max_bytes = max_bytes
        self._where = where
        self._directory = ModelDirectory(str(client.base_url).rstrip("/"))
        """Only its `said_once` and its token counts are used: Vertex AI has no Anthropic models endpoint."""
        self._models: AskedOnce[str, bool | None] = AskedOnce()

    async def preflight(self, request: ActorRequest) -> dict[str, object]:
        """Refuse `request` if Vertex AI would; the Messages parameters it is sent as when it passes."""
        params = to_message_params(request)
        check_tools(request.tools)
        if await self._served(request.model) is False:
            raise ConfigurationError(
                f"model: Vertex AI at {self._directory.endpoint} serves no Claude model {request.model!r} (its "
                "models are named as in Vertex AI's Model Garden, such as claude-sonnet-4-5@20250929).",
                field="model",
            )
        limit = max_output_tokens(base_model(request.model))
        if limit is not None and request.max_tokens > limit:
            raise ConfigurationError(
                f"max_tokens: {request.max_tokens} is more than {request.model!r} may write (at most {limit} output "
                "tokens).",
                field="max_tokens",
            )
        body = body_json(params, ascii_json=False)
        limits = self.limits_of(request, byte_size(body))
        await check_input(
            request,
            size=byte_size(body),
            limits=limits,
            count=lambda: count_input_tokens(self._client, self._directory, params, body),
        )
        return params

    def limits_of(self, request: ActorRequest, body_bytes: int) -> InputLimits:
        """The limits of requests like `request`, its body `body_bytes` long."""
        return InputLimits(
            max_bytes=self._max_bytes,
            window=context_window(base_model(request.model)),
            fixed_tokens=TOOL_USE_TOKENS if request.tools else 0,
            body_bytes=body_bytes,
            model=request.model,
            where=self._where,
        )

    async def _served(self, model: str) -> bool | None:
        """Whether Vertex AI serves `model` as a publisher model; None when it cannot say."""

        async def ask() -> bool | None:
            path = f"/publishers/anthropic/models/{model.partition('@')[0]}"
            try:
                await self._client.get(path, cast_to=httpx2.Response, options={"timeout": _LOOKUP_TIMEOUT})
            except anthropic.NotFoundError:
                return False
            except anthropic.APIConnectionError as exc:
                self._directory.said_once(f"cannot be reached ({type(exc).__name__})", what="models endpoint")
                return None
            except anthropic.APIStatusError as exc:
                if exc.status_code == 401:
                    with translate_errors(VERTEX_CLAUDE):
                        raise
                self._directory.said_once(f"answered {exc.status_code}", what="models endpoint")
                return None
            return True

        return await self._models.ask(model, ask, kept=lambda served: served is not None)
