"""The Groq API as the emulator serves it (`GroqEmulation`): OpenAI's machinery under Groq's `/openai/v1/` paths."""
