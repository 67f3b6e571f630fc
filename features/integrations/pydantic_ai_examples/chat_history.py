"""pydantic-ai's multi-turn conversation ("Messages and chat history"): a second run given the first's messages."""

from _example_model import model
from pydantic_ai import Agent

agent = Agent(model, instructions="Be a helpful assistant.")


async def main() -> None:
    result1 = await agent.run("Tell me a joke.")
    print(result1.output)

    result2 = await agent.run("Explain?", message_history=result1.new_messages())
    print(result2.output)
    print(len(result2.all_messages()), [message.kind for message in result2.all_messages()])
