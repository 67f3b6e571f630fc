"""The Gemini API's emulation: Models, generateContent and its streaming form, countTokens, Files (the resumable
upload) and Batches (`batchGenerateContent` and its jobs, on the emulator's clock), under both API
versions the google-genai SDK uses (`v1`, `v1beta`), served from the same app, port and state as every other
emulation (`emulation.GeminiEmulation`, the `gemini` entry point of `lowtide.emulators`). Kept free of imports: the
entry point names its module."""
