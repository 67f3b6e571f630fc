Feature: The emulator serves the calls an agent workflow makes besides sending messages
  As the author of an agent that counts a prompt's tokens before sending it and turns on beta features
  I want the emulator to count tokens exactly as it bills them, and to accept a beta parameter only under its header
  So that my agent's tests pass offline as they will against the API, and fail where the API would refuse

  Rule: count_tokens counts what the same message is billed as input

    Scenario Outline: The count equals the input a message reports, cache writes and reads included
      Given the emulator runs on a manual clock
      When I count the tokens of the emulator message <request>
      And I send the emulator the message whose tokens I counted
      Then the emulator token count equals the input, cache writes and cache reads of the reply

      Examples:
        | request                                           |
        | "Hello"                                           |
        | with a system prompt and two tools                |
        | with an image, a PDF and a text document          |
        | with a 6000-character cached system prompt        |
        | with thinking and a tool result                   |

    Scenario: A cached prompt counts the same before and after the cache is warm
      Given the emulator runs on a manual clock
      When I count the tokens of the emulator message with a 6000-character cached system prompt
      And I send the emulator the message whose tokens I counted
      And I send the emulator the message whose tokens I counted
      Then the emulator token count equals the input, cache writes and cache reads of the reply
      And the emulator reply read 1500 tokens from the cache

    Scenario Outline: count_tokens checks the request as messages does, without the output settings
      Given the emulator runs on a manual clock
      When I count the tokens of an emulator request with the params changed by <change>
      Then the emulator call fails with <exception>, status <status> and error type "<type>"
      And the emulator error message mentions "<mention>"

      Examples:
        | change                                                         | exception       | status | type                  | mention                              |
        | {"max_tokens": 1024}                                           | BadRequestError | 400    | invalid_request_error | max_tokens: Extra inputs             |
        | {"stream": true}                                               | BadRequestError | 400    | invalid_request_error | stream: Extra inputs                 |
        | {"messages": []}                                               | BadRequestError | 400    | invalid_request_error | at least one message                 |
        | {"messages": null}                                             | BadRequestError | 400    | invalid_request_error | messages: Field required             |
        | {"thinking": {"type": "enabled", "budget_tokens": 500}}        | BadRequestError | 400    | invalid_request_error | greater than or equal to 1024        |
        | {"context_management": {"edits": []}}                          | BadRequestError | 400    | invalid_request_error | context_management: Extra inputs     |
        | {"model": "gpt-4o"}                                            | NotFoundError   | 404    | not_found_error       | model: gpt-4o                        |

    Scenario: Thinking needs no max_tokens to be counted
      Given the emulator runs on a manual clock
      When I count the tokens of an emulator request with the params changed by {"thinking": {"type": "enabled", "budget_tokens": 60000}}
      Then the emulator counted 2 input tokens
      And the emulator counted 1 "messages.count_tokens" call

  Rule: A beta-only parameter is accepted under its anthropic-beta header, and refused as unknown without it

    Scenario Outline: A beta parameter sent with its beta is accepted
      Given the emulator runs on a manual clock
      When I send the emulator, with the betas "<betas>", a message with the params changed by <change>
      Then the emulator reply has stop reason "end_turn"

      Examples:
        | change                                                                                                  | betas                                                    |
        | {"context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]}}                               | context-management-2025-06-27                            |
        | {"context_management": {"edits": [{"type": "clear_thinking_20251015"}, {"type": "compact_20260112"}]}}  | context-management-2025-06-27, compact-2026-01-12        |
        | {"context_management": {}}                                                                              | compact-2026-01-12                                       |
        | {"mcp_servers": [{"type": "url", "name": "tides", "url": "https://tides.example/mcp"}]}                 | mcp-client-2025-11-20                                    |
        | {"mcp_servers": [{"type": "url", "name": "a", "url": "https://a.example"}, {"type": "url", "name": "b", "url": "http://b.example", "authorization_token": "t"}]} | files-api-2025-04-14, mcp-client-2025-04-04 |
        | {"fallbacks": "default"}                                                                                | server-side-fallback-2026-07-01                          |
        | {"fallbacks": [{"model": "claude-sonnet-4-5", "max_tokens": 512}]}                                      | server-side-fallback-2026-06-01                          |

    Scenario Outline: Without its beta, a beta parameter is an unknown key
      Given the emulator runs on a manual clock
      When I send the emulator, with the betas "<betas>", a message with the params changed by <change>
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "<mention>"

      Examples:
        | change                                                                                  | betas                           | mention                              |
        | {"context_management": {"edits": []}}                                                  |                                 | context_management: Extra inputs     |
        | {"context_management": {"edits": []}}                                                  | mcp-client-2025-11-20           | context_management: Extra inputs     |
        | {"mcp_servers": [{"type": "url", "name": "tides", "url": "https://tides.example/mcp"}]} | context-management-2025-06-27   | mcp_servers: Extra inputs            |
        | {"fallbacks": "default"}                                                                |                                 | fallbacks: Extra inputs              |
        | {"compaction": {"type": "summarize"}}                                                   | compact-2026-09-04              | compaction: Extra inputs             |

    Scenario Outline: A malformed beta parameter is refused with the API's error
      Given the emulator runs on a manual clock
      When I send the emulator, with the betas "<betas>", a message with the params changed by <change>
      Then the emulator call fails with BadRequestError, status 400 and error type "invalid_request_error"
      And the emulator error message mentions "<mention>"

      Examples:
        | change                                                                                     | betas                           | mention                                                   |
        | {"context_management": "clear"}                                                            | context-management-2025-06-27   | context_management: Input should be a valid dictionary    |
        | {"context_management": {"edits": [], "keep": 1}}                                           | context-management-2025-06-27   | context_management.keep: Extra inputs                     |
        | {"context_management": {"edits": "all"}}                                                   | context-management-2025-06-27   | context_management.edits: Input should be a valid list    |
        | {"context_management": {"edits": [{"type": "shred"}]}}                                     | context-management-2025-06-27   | context_management.edits.0: Input tag 'shred'             |
        | {"context_management": {"edits": [{"type": "compact_20260112"}]}}                          | context-management-2025-06-27   | needs the anthropic-beta header 'compact-2026-01-12'      |
        | {"context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]}}                  | compact-2026-01-12              | needs the anthropic-beta header 'context-management-2025-06-27' |
        | {"mcp_servers": "tides"}                                                                   | mcp-client-2025-11-20           | mcp_servers: Input should be a valid list                 |
        | {"mcp_servers": ["tides"]}                                                                 | mcp-client-2025-11-20           | mcp_servers.0: Input should be a valid dictionary         |
        | {"mcp_servers": [{"type": "url", "name": "a", "url": "https://a.example", "port": 1}]}     | mcp-client-2025-11-20           | mcp_servers.0.port: Extra inputs                          |
        | {"mcp_servers": [{"type": "stdio", "name": "a", "url": "https://a.example"}]}              | mcp-client-2025-11-20           | mcp_servers.0.type: Input should be 'url'                 |
        | {"mcp_servers": [{"type": "url", "url": "https://a.example"}]}                             | mcp-client-2025-11-20           | mcp_servers.0.name: Field required                        |
        | {"mcp_servers": [{"type": "url", "name": "a", "url": "ftp://a.example"}]}                  | mcp-client-2025-11-20           | mcp_servers.0.url                                         |
        | {"mcp_servers": [{"type": "url", "name": "a", "url": "https://a.example"}, {"type": "url", "name": "a", "url": "https://b.example"}]} | mcp-client-2025-11-20 | MCP server names must be unique |
        | {"fallbacks": 5}                                                                           | server-side-fallback-2026-07-01 | fallbacks: Input should be 'default' or a valid list      |
        | {"fallbacks": ["claude-sonnet-4-5"]}                                                       | server-side-fallback-2026-07-01 | fallbacks.0: Input should be a valid dictionary           |
        | {"fallbacks": [{"model": "claude-sonnet-4-5", "temperature": 1}]}                          | server-side-fallback-2026-07-01 | fallbacks.0.temperature: Extra inputs                     |
        | {"fallbacks": [{}]}                                                                        | server-side-fallback-2026-07-01 | fallbacks.0.model: Field required                         |

    Scenario: A context-managed reply and token count say what context management did, through the SDK's beta client
      Given the emulator runs on a manual clock
      When I send the emulator a beta message that clears old tool uses
      Then the emulator beta reply applied no context management edit
      When I count the tokens of the emulator beta message that clears old tool uses
      Then the emulator beta count's original input tokens equal its input tokens

    Scenario: A batch created under a beta header applies it to every request
      Given the emulator runs on a manual clock
      When I create an emulator batch of 2 requests that clear old tool uses, with the betas "context-management-2025-06-27"
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result    |
        | r0        | succeeded |
        | r1        | succeeded |
      When I create an emulator batch of 2 requests that clear old tool uses, with the betas ""
      And I fetch the emulator batch results
      Then the emulator results are:
        | custom_id | result  | error_type            | message                          |
        | r0        | errored | invalid_request_error | context_management: Extra inputs |
        | r1        | errored | invalid_request_error | context_management: Extra inputs |

  Rule: A request that asks in words for JSON following a schema gets JSON valid for it

    Scenario Outline: The schema may be given inline or in a fenced block, in the system prompt or the user turn
      Given the emulator runs on a manual clock
      When I ask the emulator for a tide reading, with the instruction in the <place>: "<instruction>"
      Then the emulator reply is one text block holding a valid tide reading
      When I ask the emulator for a tide reading, with the instruction in the <place>: "<instruction>"
      Then the emulator reply has the same JSON as before

      Examples:
        | place       | instruction                                                                         |
        | system      | Answer in JSON matching this schema: SCHEMA                                         |
        | user turn   | Where is the tide highest? Reply with JSON that follows this schema: SCHEMA        |
        | user turn   | Where is the tide highest? Answer in JSON. The schema:\n```json\nSCHEMA\n```        |
        | system      | ```\nSCHEMA\n```\nYour answer must be JSON, valid against the schema above.         |
        | system      | Answer in JSON. Example: {"port": "Brest"}. Its schema: SCHEMA                      |
        | system      | Answer in JSON. Schema: {broken. The real schema: SCHEMA                            |
        | user turn   | Answer in JSON. ```json\n{broken\n```\nThe schema is: SCHEMA                        |
        | user turn   | <json_schema>SCHEMA</json_schema>                                                    |

    Scenario Outline: Without both the word JSON and a schema, the reply is prose
      Given the emulator runs on a manual clock
      When I ask the emulator for a tide reading, with the instruction in the <place>: "<instruction>"
      Then the emulator reply text starts with 'Emulated reply to'

      Examples:
        | place     | instruction                                                     |
        | user turn | Use this schema: SCHEMA                                          |
        | user turn | Tell me about JSON.                                              |
        | user turn | Answer in JSON like {"port": "Brest", "height_m": 6.1}           |
        | user turn | Answer in JSON following the schema you know.                    |
        | system    | Answer in JSON matching this schema: {"port": broken}            |
        | system    | Answer as <json_schema>{broken</json_schema> in JSON: SCHEMA     |

    Scenario: A batch request asking for JSON in words gets a valid instance in its result
      Given the emulator runs on a manual clock
      When I create an emulator batch asking for a tide reading in JSON, with the schema in a fenced block
      And I fetch the emulator batch results
      Then the emulator result "reading" holds a valid tide reading
