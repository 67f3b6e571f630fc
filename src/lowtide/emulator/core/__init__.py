"""The emulator's core, which names no provider: the app composed of emulations (`emulation.Emulation`, found
through the `lowtide.emulators` entry points), the endpoints every API's routes are served by, the shared state
(clock, settings, faults, call counts, rate limits, prompt cache, state file), the admin routes, and the generic
model that answers a Messages-shaped request (`answers`, `prompt`, `documents`, `schema`, ...), which each
emulation reads its API's requests into. Kept free of imports."""
