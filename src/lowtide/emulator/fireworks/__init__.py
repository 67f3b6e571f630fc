"""The Fireworks AI API as the emulator serves it (`FireworksEmulation`): Chat Completions as OpenAI's machinery serves
them, and Fireworks' own models routes, under `/fireworks/v1/`."""
