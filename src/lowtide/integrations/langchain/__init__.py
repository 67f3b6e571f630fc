"""lowtide as a LangChain chat model: `LowtideChatModel(actor=...)` (install `lowtide[langchain]`).

```python
from lowtide import Actor
from lowtide.integrations.langchain import LowtideChatModel

model = LowtideChatModel(actor=Actor.from_file("actors.yaml", "planner"))
answers = await model.abatch(["first prompt", "second prompt"])   # one batch in batch mode
```
"""

from lowtide.integrations.langchain.model import LowtideChatModel

__all__ = ["LowtideChatModel"]
