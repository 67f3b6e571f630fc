"""A third-party provider, as a plugin package would ship it: "echo" answers live only, by repeating the prompt.

Its entry point is `lowtide_echo_plugin:register`; `register_nightly` registers a batch-only provider instead.
"""

from __future__ import annotations

from typing import Any, ClassVar

from lowtide import (
    ActorRequest,
    ActorResponse,
    BatchProcessingMode,
    InvalidRequestError,
    Provider,
    ProviderIds,
    ProviderOptions,
    ProviderRegistry,
    TextContent,
    Usage,
)

REFUSE = "[[echo:refuse]]"


class EchoProvider(Provider):
    """Repeats the last user message; refuses a prompt holding the REFUSE marker."""

    name: ClassVar[str] = "echo"
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.LIVE

    def __init__(self, options: ProviderOptions) -> None:
        self.options = options

    async def complete(self, request: ActorRequest) -> ActorResponse[Any]:
        said = request.messages[-1].content
        text = said if isinstance(said, str) else " ".join(str(block.get("text", "")) for block in said)
        if REFUSE in text:
            raise InvalidRequestError("echo refuses this prompt", status_code=400, error_type="invalid_request_error")
        answer = f"echo: {text}"
        return ActorResponse[Any](
            text=answer,
            content=[TextContent(text=answer)],
            stop_reason="end_turn",
            usage=Usage(input_tokens=len(text.split()), output_tokens=len(answer.split())),
            cost=None,
            model=request.model,
            provider=self.name,
            mode=self.mode,
            ids=ProviderIds(custom_id=request.custom_id),
        )


class NightlyProvider(EchoProvider):
    name: ClassVar[str] = "nightly"
    mode: ClassVar[BatchProcessingMode] = BatchProcessingMode.BATCH


def register(registry: ProviderRegistry) -> None:
    registry.register("echo", BatchProcessingMode.LIVE, EchoProvider)


def register_nightly(registry: ProviderRegistry) -> None:
    registry.register("nightly", BatchProcessingMode.BATCH, NightlyProvider)


def register_echo_again(registry: ProviderRegistry) -> None:
    """Claims the "echo" live slot without `replace=True`."""
    registry.register("echo", BatchProcessingMode.LIVE, NightlyProvider)


def register_exploding(registry: ProviderRegistry) -> None:
    raise RuntimeError("licence server unreachable")
