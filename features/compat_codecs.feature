Feature: The Groq and Together batch codecs: a request as a line of the input file, a result line as its outcome
  As a maintainer of lowtide's OpenAI-compatible providers
  I want each provider's codec to write OpenAI's JSONL input lines with its own body, and read every kind of result line
  So that a batch holds what the provider takes, and each request is settled by its own line, stamped and priced as its provider's

  Scenario Outline: A <provider> request is an input line for /v1/chat/completions, its own settings in the body
    Given the <provider> batch codec
    When it encodes a request for "<model>" with the system prompt "You read tide tables." and the settings:
      """
      <settings>
      """
    Then the stored request posts to "/v1/chat/completions" with these body fields:
      | field                 | value        |
      | model                 | <model>      |
      | max_completion_tokens | 256          |
      | messages.0.role       | system       |
      | <field>               | <value>      |
    And its input line starts with the custom id, then the stored request

    Examples:
      | provider | model                                   | settings                                                  | field              | value |
      | Groq     | llama-3.1-8b-instant                    | provider_options: {groq: {reasoning_format: parsed}}      | reasoning_format   | parsed |
      | Together | meta-llama/Llama-3.3-70B-Instruct-Turbo | {top_k: 40, provider_options: {together: {min_p: 0.05}}}  | top_k              | 40    |

  Scenario Outline: A <provider> key that is not a plain id travels under a digest; a plain one as itself
    Given the <provider> batch codec
    Then the key "tide-42" in the ledger "abc123" has the custom id "tide-42_abc123"
    And the key "tide table #1 (Brest)" in the ledger "abc123" has a custom id starting "h:"

    Examples:
      | provider |
      | Groq     |
      | Together |

  Scenario Outline: Every kind of <provider> result line settles its request alone
    Given the <provider> batch codec
    Then these result lines come out so:
      | line                                                                                                                                                       | outcome                                  |
      | {"custom_id": "a", "response": {"status_code": 200, "body": {"object": "chat.completion", "id": "c1", "model": "<model>", "choices": [{"message": {"content": "High at 6"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 10, "completion_tokens": 4}}}} | answer "High at 6", end_turn, <provider_name> |
      | {"custom_id": "b", "response": {"status_code": 200, "body": {"object": "chat.completion", "id": "c2", "model": "<model>", "choices": [{"message": {"content": "", "reasoning": "Tides follow the moon."}, "finish_reason": "length"}], "usage": {"prompt_tokens": 10, "completion_tokens": 4}}}} | thinking then max_tokens |
      | {"custom_id": "c", "response": {"status_code": 429, "body": {"error": {"message": "Slow down", "code": "rate_limit_exceeded"}}}}                         | BatchRequestErrored retryable RateLimitError |
      | {"custom_id": "d", "response": {"status_code": 400, "body": {"error": {"message": "Bad tide", "type": "invalid_request_error"}}}}                         | BatchRequestErrored final InvalidRequestError |
      | {"custom_id": "e", "error": {"code": "batch_expired", "message": "The batch expired."}}                                                                    | BatchRequestExpired                      |
      | {"custom_id": "f", "error": {"code": "batch_cancelled", "message": "The batch was cancelled."}}                                                            | BatchRequestCanceled                     |
      | {"custom_id": "g", "surprise": true}                                                                                                                       | BatchRequestUnreadable                   |

    Examples:
      | provider | provider_name | model                                   |
      | Groq     | groq          | llama-3.1-8b-instant                    |
      | Together | together      | meta-llama/Llama-3.3-70B-Instruct-Turbo |

  Scenario Outline: A <provider> batch answer is priced at its provider's batch prices, half the live equivalent
    Given the <provider> batch codec
    When a result line answers "<model>" with 1000 prompt tokens and 500 completion tokens
    Then its cost is genai-prices' "<genai>" price for "<model>", halved, with the live equivalent beside it

    Examples:
      | provider | genai    | model                                   |
      | Groq     | groq     | llama-3.1-8b-instant                    |
      | Together | together | meta-llama/Llama-3.3-70B-Instruct-Turbo |

  Scenario Outline: A <provider> answer in an unusual shape is kept as it came, never dropped
    Given the <provider> batch codec
    Then these answer bodies come out as these content blocks and stop reasons:
      | body                                                                                                                                                                   | blocks        | stop_reason |
      | {"choices": [{"message": {"content": "I cannot help with that."}, "finish_reason": "content_filter"}]}                                                                 | text          | refusal     |
      | {"choices": []}                                                                                                                                                        |               |             |
      | {"choices": [{"message": {"tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "record_tide", "arguments": "{\"port\": \"Brest\"}"}}]}, "finish_reason": "tool_calls"}]} | tool_use      | tool_use    |
      | {"choices": [{"message": {"tool_calls": [{"id": "call_2", "type": "function", "function": {"name": "record_tide", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}]}             | tool_use      | tool_use    |
      | {"choices": [{"message": {"tool_calls": [{"id": "call_3", "type": "function", "function": {"name": "record_tide", "arguments": "{\"port\": "}}]}, "finish_reason": "tool_calls"}]}    | function      | tool_use    |
      | {"choices": [{"message": {"tool_calls": [{"id": "call_4", "type": "function", "function": {"name": "record_tide", "arguments": "[1, 2]"}}]}, "finish_reason": "tool_calls"}]}         | function      | tool_use    |
      | {"choices": [{"message": {"tool_calls": [{"id": "call_5", "type": "code_interpreter", "code": "1 + 1"}]}, "finish_reason": "tool_calls"}]}                                          | code_interpreter | tool_use |
      | {"choices": [{"message": {"content": "High at 6"}, "finish_reason": "eos"}]}                                                                                           | text          | end_turn    |
      | {"choices": [{"message": {"content": "High at 6"}, "finish_reason": "tide_turned"}]}                                                                                   | text          | tide_turned |
      | {"choices": [{"message": {"content": "High at 6"}, "finish_reason": 7}]}                                                                                               | text          |             |

    Examples:
      | provider |
      | Groq     |
      | Together |
