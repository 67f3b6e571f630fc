"""The OpenAI half of the emulator: Files, Batches, Responses, Chat Completions and Embeddings, served from the
same app, port and state as the Anthropic API. Kept free of imports, so that `lowtide.emulator.backend` can import
its modules without importing the routes, which import the backend."""
