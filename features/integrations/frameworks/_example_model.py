"""The model pydantic-ai's documented examples import (`features/integrations/pydantic_ai_examples/`): a
`LowtideModel` the scenario sets before it runs an example, over an actor of its mode."""

from __future__ import annotations

from lowtide.integrations.pydantic_ai import LowtideModel

model: LowtideModel
"""Set by `pydantic_ai_examples_steps.py` before an example is loaded."""
