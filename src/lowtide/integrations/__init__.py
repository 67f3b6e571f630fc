"""lowtide underneath agent frameworks: `lowtide.integrations.pydantic_ai` (extra `lowtide[pydantic-ai]`) and
`lowtide.integrations.langchain` (extra `lowtide[langchain]`). Each speaks only lowtide's neutral `Actor`,
`ActorRequest`, `ActorResponse` and error tree, never a provider's shapes."""
