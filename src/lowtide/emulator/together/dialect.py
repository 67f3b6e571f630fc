"""What Together AI's API changes of OpenAI's, as data (`TOGETHER`): its models, its body keys, OpenAI's routes it
serves as they are (chat completions, a file's content, deleting a file), and its state file section."""

from __future__ import annotations

from lowtide.emulator.openai.dialect import Catalogue, Dialect

__all__ = ["TOGETHER"]

TOGETHER = Dialect(
    name="together",
    catalogue=Catalogue.read("lowtide.emulator.together"),
    own_keys={
        "top_k": (),
        "repetition_penalty": (),
        "min_p": (),
        "safety_model": (),
        "context_length_exceeded_behavior": ("truncate", "error"),
    },
    served=("chat.completions.create", "files.content", "files.delete"),
    batch_section="together_files",
)
