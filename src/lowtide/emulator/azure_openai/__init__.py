"""The Azure OpenAI API as the emulator serves it: OpenAI's emulation at Azure's paths, with deployments."""
