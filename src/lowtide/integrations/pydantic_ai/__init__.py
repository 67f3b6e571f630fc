"""lowtide as a pydantic-ai model: `Agent(LowtideModel(actor), ...)` (install `lowtide[pydantic-ai]`).

```python
from pydantic_ai import Agent
from lowtide import Actor
from lowtide.integrations.pydantic_ai import LowtideModel, LowtideModelSettings

agent = Agent(LowtideModel(Actor.from_file("actors.yaml", "planner")), output_type=Plan)
result = await agent.run("Plan it.", model_settings=LowtideModelSettings(lowtide_key="plan-42"))
```
"""

from lowtide.integrations.pydantic_ai.errors import to_pydantic_ai
from lowtide.integrations.pydantic_ai.model import KeyFunction, LowtideModel, LowtideModelSettings

__all__ = ["KeyFunction", "LowtideModel", "LowtideModelSettings", "to_pydantic_ai"]
