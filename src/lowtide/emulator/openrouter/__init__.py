"""The OpenRouter API as the emulator serves it (`OpenRouterEmulation`): Chat Completions and its models list as
OpenAI's machinery serves them, under `/openrouter/api/v1/`."""
