"""lowtide as a LangChain chat model: `LowtideChatModel(actor=...)` (install `lowtide[langchain]`).

```python
from lowtide import Actor
from lowtide.integrations.langchain import LowtideChatModel

model = LowtideChatModel(actor=Actor.from_file("actors.yaml", "planner"))
answers = await model.abatch(["first prompt", "second prompt"])   # one batch in batch mode
```

`DurableToolAgent(actor, tools, name=...)` runs a tool-calling agent durably: each model call a batch turn of the
run's journal, each tool call run once (`lowtide.agents`).
"""

from lowtide.integrations.langchain.durable import DurableToolAgent
from lowtide.integrations.langchain.model import LowtideChatModel

__all__ = ["DurableToolAgent", "LowtideChatModel"]
