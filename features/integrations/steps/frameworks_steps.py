"""The steps of each framework installed: a nox session installs one framework, and the steps of another would
fail to import. Their modules live in `features/integrations/frameworks/`."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frameworks"))

for framework, steps in (
    (
        "pydantic_ai",
        ("pydantic_ai_steps", "pydantic_ai_durable_steps", "pydantic_ai_stream_steps", "pydantic_ai_examples_steps"),
    ),
    ("langchain_core", ("langchain_steps", "langchain_stream_steps", "langchain_durable_steps")),
):
    if importlib.util.find_spec(framework) is not None:
        for module in steps:
            importlib.import_module(module)
