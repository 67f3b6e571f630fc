"""The Gemini API as an emulation (the `gemini` entry point of `lowtide.emulators`): Models, generateContent,
streamGenerateContent and countTokens, answered in Gemini's shapes and errors (`{"error": {"code", "message",
"status", "details"}}`; a 429 with its `RetryInfo`). Its callers are claimed by the header the google-genai SDK sends
its key in (`x-goog-api-key`), so `/v1/models`, which Anthropic's and OpenAI's clients call too, reaches it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from lowtide.emulator.core.emulation import Emulation, ErrorHandler, RouteRow
from lowtide.emulator.core.errors import ApiError
from lowtide.emulator.gemini.errors import GeminiError, from_api_error, gemini_error_response
from lowtide.emulator.gemini.http import authenticate, is_gemini_caller
from lowtide.emulator.gemini.routes import gemini_routes

__all__ = ["GeminiEmulation"]


class GeminiEmulation(Emulation):
    """The emulated Gemini API account (`emulator.emulation(GeminiEmulation)`)."""

    name = "gemini"
    route_names = (
        "gemini.models.list",
        "gemini.models.get",
        "gemini.generate_content",
        "gemini.stream_generate_content",
        "gemini.count_tokens",
    )

    def routes(self) -> Sequence[RouteRow]:
        return gemini_routes(self.shared)

    def begin(self, request: Request) -> None:
        authenticate(request, self.shared.settings.api_keys)

    def claims(self, headers: Headers) -> bool:
        return is_gemini_caller(headers)

    def translate(self, error: ApiError) -> Exception:
        return from_api_error(error)

    def error_response(self, request: Request, error: Exception) -> Response:
        return gemini_error_response(request, error)

    def exception_handlers(self) -> Mapping[type[Exception], ErrorHandler]:
        return {GeminiError: gemini_error_response}
