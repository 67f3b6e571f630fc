"""A program that knows nothing of lowtide: the official SDK, configured only by its environment
(`ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`), asks one question and prints the message id and the answer."""

import anthropic

client = anthropic.Anthropic()
message = client.messages.create(
    model="claude-haiku-4-5",
    max_tokens=100,
    messages=[{"role": "user", "content": "Say hello to the robot."}],
)
print(message.id)
print(message.stop_reason)
print(message.usage.input_tokens, message.usage.output_tokens)
print("".join(block.text for block in message.content if block.type == "text"))
