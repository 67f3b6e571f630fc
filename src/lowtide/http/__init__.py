"""HTTP plumbing that any lowtide server uses (`lowtide serve`, and the emulator): an ASGI app served on a socket
(`server`), the access log (`access_log`), the framing of server-sent events (`sse`), and the exception an app raises
to drop a connection on purpose (`dropped`). Neutral: nothing here knows a provider, nor the emulator. Kept free of
imports, so that the SSE framing does not bring uvicorn with it."""
