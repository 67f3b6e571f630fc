"""The OpenAI API's emulation: Files, Batches, Responses, Chat Completions, Embeddings and Models, served from the
same app, port and state as every other emulation (`emulation.OpenAIEmulation`, the `openai` entry point of
`lowtide.emulators`). Kept free of imports: the entry point names its module."""
