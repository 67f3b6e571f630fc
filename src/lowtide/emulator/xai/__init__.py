"""The xAI API as the emulator serves it (`XaiEmulation`): Chat Completions and Models as OpenAI's machinery serves
them, and xAI's own Batch API (named batches, requests added, paged results), under `/xai/v1/`."""
