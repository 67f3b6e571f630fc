"""The Anthropic API's emulation: Messages, token counting, Message Batches, Files and Models, served from the same
app, port and state as every other emulation (`emulation.AnthropicEmulation`, the `anthropic` entry point of
`lowtide.emulators`). Kept free of imports: the entry point names its module."""
