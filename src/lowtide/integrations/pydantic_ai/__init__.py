"""lowtide as a pydantic-ai model: `Agent(LowtideModel(actor), ...)` (install `lowtide[pydantic-ai]`).

```python
from pydantic_ai import Agent
from lowtide import Actor
from lowtide.integrations.pydantic_ai import LowtideModel, LowtideModelSettings

agent = Agent(LowtideModel(Actor.from_file("actors.yaml", "planner")), output_type=Plan)
result = await agent.run("Plan it.", model_settings=LowtideModelSettings(lowtide_key="plan-42"))
```

`DurableAgent(agent, actor, name="planner")` makes the same agent a durable one (`lowtide.agents`): each request a
journaled batch turn, each tool call run once, a tool that needs approval a question `lowtide agents approve` answers.
"""

from lowtide.integrations.pydantic_ai.durable import DurableAgent
from lowtide.integrations.pydantic_ai.errors import to_pydantic_ai
from lowtide.integrations.pydantic_ai.model import KeyFunction, LowtideModel, LowtideModelSettings

__all__ = ["DurableAgent", "KeyFunction", "LowtideModel", "LowtideModelSettings", "to_pydantic_ai"]
