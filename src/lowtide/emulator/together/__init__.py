"""Together AI's API as the emulator serves it (`TogetherEmulation`): its files (the three-step upload), its batch
jobs and its chat completions, on OpenAI's emulated account, told apart from OpenAI's callers on the paths they share
by what the together SDK sends."""
