Feature: lowtide serve refuses what it cannot trust, before anything is sent
  As the operator of a lowtide serve that programs I do not control send requests to
  I want a body too large, unreadable, for another model, or that the API would refuse, turned away at once
  So that no client can fill my server's memory, crash it, or run up a bill the actor was not made for

  Each refusal is the API's own: its status, its error shape (the Messages API's {"type": "error", "error": {...}},
  OpenAI's {"error": {message, type, param, code}}) and its headers, with nothing sent upstream.

  Background:
    Given an emulator behind lowtide serve, on a socket, that also serves "claude-haiku-5-5-20261007"
    And lowtide serve runs an Anthropic and an OpenAI actor, with
      | option         | value        |
      | client keys    | key-a, key-b |
      | body limit     | 250000       |

  Scenario Outline: A body over the limit is refused with 413, in the API's shape
    When a body of 250001 bytes is posted to lowtide serve at "<path>"
    Then lowtide serve answers 413 in the API's error shape, type "<type>", code "<code>"
    And its message says "at most 250000 bytes"
    And nothing was sent upstream

    Examples:
      | path                 | type                  | code              |
      | /v1/messages         | request_too_large     | -                 |
      | /v1/chat/completions | invalid_request_error | request_too_large |
      | /v1/responses        | invalid_request_error | request_too_large |

  Scenario Outline: A Content-Length over the limit is refused before the body is sent
    When a body declaring 50000000 bytes is sent to lowtide serve at "<path>", its headers only
    Then lowtide serve answers 413 in the API's error shape, type "<type>", code "<code>"
    And nothing was sent upstream

    Examples:
      | path                 | type                  | code              |
      | /v1/messages         | request_too_large     | -                 |
      | /v1/responses        | invalid_request_error | request_too_large |

  Scenario Outline: A body that stops arriving is refused with 408 once the body timeout passes, in the API's shape
    Given lowtide serve runs an Anthropic and an OpenAI actor, with
      | option       | value |
      | client keys  | key-a |
      | body timeout | 0.3   |
    When a body declaring 500 bytes is sent to lowtide serve at "<path>", then only its first 20 bytes
    Then lowtide serve answers 408 in the API's error shape, type "invalid_request_error", code "-"
    And its message says "20 bytes of the 500 its Content-Length declared came, then nothing for 0.3 seconds"
    And nothing was sent upstream

    Examples:
      | path                 |
      | /v1/messages         |
      | /v1/chat/completions |

  Scenario Outline: Headers too large, or that never end, are refused with 431 and 408 in the API's shape
    Given lowtide serve runs an Anthropic and an OpenAI actor, each on a server of its own whose headers must arrive within 0.3 seconds
    When a request whose headers hold 200000 bytes is sent to lowtide serve at "<path>", its body after them
    Then lowtide serve answers 431 in the API's error shape, type "invalid_request_error", code "-"
    And its message says "headers are larger than this server reads: 65,536 bytes at most"
    When a request whose headers never end is sent to lowtide serve at "<path>"
    Then lowtide serve answers 408 in the API's error shape, type "invalid_request_error", code "-"
    And its message says "headers did not arrive whole within 0.3 seconds"
    And nothing was sent upstream

    Examples:
      | path                 |
      | /v1/messages         |
      | /v1/chat/completions |

  Scenario Outline: A body lowtide serve cannot read is refused with 400, without a traceback
    When a request body <what> is posted to lowtide serve at "<path>"
    Then lowtide serve answers 400 in the API's error shape, type "invalid_request_error", code "-"
    And its message says "<words>"
    And nothing was sent upstream
    And lowtide serve logged no error and no traceback

    Examples:
      | path                 | what                                   | words                           |
      | /v1/messages         | nested 100000 levels deep              | more than 128 levels deep       |
      | /v1/chat/completions | nested 100000 levels deep              | more than 128 levels deep       |
      | /v1/responses        | nested 129 levels deep                 | more than 128 levels deep       |
      | /v1/messages         | not UTF-8                              | not valid UTF-8                 |
      | /v1/chat/completions | not UTF-8                              | not valid UTF-8                 |
      | /v1/messages         | holding a lone surrogate               | messages[0].content: the text holds a lone surrogate |
      | /v1/chat/completions | holding a lone surrogate               | messages[0].content: the text holds a lone surrogate |
      | /v1/responses        | holding a lone surrogate               | input: the text holds a lone surrogate |
      | /v1/messages         | holding NaN                            | NaN is not a number JSON allows |
      | /v1/responses        | holding a number too large for a float | 1e999 is too large a number     |
      | /v1/chat/completions | not JSON                               | Expecting value (line 1, column 1) |

  Scenario Outline: A surrogate pair (a character beyond the first plane, written as two escapes) is text, and answered
    When a request body holding an emoji written as a surrogate pair is posted to lowtide serve at "<path>"
    Then lowtide serve answers 200 with the API's answer
    And the emulator behind lowtide serve was sent 1 request(s) in batches, none live

    Examples:
      | path                 |
      | /v1/messages         |
      | /v1/chat/completions |

  Scenario: A body nested 128 levels deep is read, and refused only for what it says
    When a request body nested 125 levels deep is posted to lowtide serve at "/v1/messages"
    Then lowtide serve answers 400 in the API's error shape, type "invalid_request_error", code "-"
    And its message says "messages.0.content"
    And its message does not say "levels deep"
    And nothing was sent upstream

  Scenario Outline: A model other than the actor's is refused as the API refuses a model the key cannot use
    When a request for the model "<model>" is posted to lowtide serve at "<path>"
    Then lowtide serve answers 404 in the API's error shape, type "<type>", code "<code>"
    And its message says "<model>"
    And its error names the param "model"
    And nothing was sent upstream

    Examples:
      | path                 | model             | type                  | code            |
      | /v1/messages         | claude-sonnet-5-5 | not_found_error       | -               |
      | /v1/chat/completions | gpt-nope-9        | invalid_request_error | model_not_found |
      | /v1/responses        | gpt-5.4           | invalid_request_error | model_not_found |

  Scenario Outline: The actor's model is answered by its dated name too
    When a request for the model "<model>" is posted to lowtide serve at "<path>"
    Then lowtide serve answers 200 with the API's answer
    And the emulator behind lowtide serve was sent 1 request(s) in batches, none live

    Examples:
      | path                 | model                     |
      | /v1/messages         | claude-haiku-5-5-20261007 |
      | /v1/chat/completions | gpt-5.4-mini-2026-03-17   |

  Scenario: A model --allow-model names is answered, and no other
    Given lowtide serve runs an Anthropic and an OpenAI actor, with
      | option         | value                      |
      | client keys    | key-a                      |
      | allowed models | claude-sonnet-5-5, gpt-5.4 |
    When a request for the model "claude-sonnet-5-5" is posted to lowtide serve at "/v1/messages"
    Then lowtide serve answers 200 with the API's answer
    When a request for the model "gpt-5.4" is posted to lowtide serve at "/v1/responses"
    Then lowtide serve answers 200 with the API's answer
    When a request for the model "claude-opus-5-5" is posted to lowtide serve at "/v1/messages"
    Then lowtide serve answers 404 in the API's error shape, type "not_found_error", code "-"
    And the emulator behind lowtide serve was sent 2 request(s) in batches, none live

  Scenario Outline: What the API would refuse is refused before a batch, naming the field in the API's words
    When a request with <name> set to <value> is posted to lowtide serve at "<path>"
    Then lowtide serve answers 400 in the API's error shape, type "invalid_request_error", code "<code>"
    And its message is "<message>"
    And its error names the param "<name>"
    And nothing was sent upstream

    Examples:
      | path                 | name              | value  | code                    | message |
      | /v1/messages         | max_tokens        | -1     | -                       | max_tokens: Input should be greater than or equal to 1 |
      | /v1/messages         | max_tokens        | "many" | -                       | max_tokens: Input should be a valid integer |
      | /v1/messages         | max_tokens        | null   | -                       | max_tokens: Input should be a valid integer |
      | /v1/messages         | temperature       | 1.5    | -                       | temperature: Input should be less than or equal to 1 |
      | /v1/messages         | top_k             | -1     | -                       | top_k: Input should be greater than or equal to 0 |
      | /v1/chat/completions | max_tokens        | -1     | integer_below_min_value | Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got -1 instead. |
      | /v1/chat/completions | temperature       | 2.5    | decimal_above_max_value | Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead. |
      | /v1/chat/completions | presence_penalty  | -3     | decimal_below_min_value | Invalid 'presence_penalty': decimal below minimum value. Expected a value >= -2, but got -3 instead. |
      | /v1/responses        | max_output_tokens | 0      | integer_below_min_value | Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead. |
      | /v1/responses        | top_p             | "high" | invalid_type            | Invalid type for 'top_p': expected a decimal, but got a string instead. |
      | /v1/chat/completions | max_tokens        | 1.5    | invalid_type            | Invalid type for 'max_tokens': expected an integer, but got a decimal instead. |
      | /v1/chat/completions | temperature       | [1]    | invalid_type            | Invalid type for 'temperature': expected a decimal, but got an array instead. |
      | /v1/responses        | top_p             | true   | invalid_type            | Invalid type for 'top_p': expected a decimal, but got a boolean instead. |
      | /v1/responses        | temperature       | {}     | invalid_type            | Invalid type for 'temperature': expected a decimal, but got an object instead. |
      | /v1/messages         | tools             | 5      | -                       | tools: Input should be a valid list |
      | /v1/messages         | tool_choice       | "auto" | -                       | tool_choice: Input should be a valid dictionary |
      | /v1/chat/completions | stop              | 5      | invalid_type            | Invalid type for 'stop': expected a string or an array of strings, but got an integer instead. |
      | /v1/responses        | text              | 5      | invalid_type            | Invalid type for 'text': expected an object, but got an integer instead. |

  Scenario Outline: An answer's format OpenAI would refuse is refused before a batch, naming the part of it in OpenAI's words
    When a request with <name> set to <value> is posted to lowtide serve at "<path>"
    Then lowtide serve answers 400 in the API's error shape, type "invalid_request_error", code "<code>"
    And its message is "<message>"
    And its error names the param "<param>"
    And nothing was sent upstream

    Examples:
      | path                 | name            | value                                       | code                       | param                            | message |
      | /v1/chat/completions | response_format | {"type": "json_schema"}                     | missing_required_parameter | response_format.json_schema      | Missing required parameter: 'response_format.json_schema'. |
      | /v1/chat/completions | response_format | {"type": "json_schema", "json_schema": {}}  | missing_required_parameter | response_format.json_schema.name | Missing required parameter: 'response_format.json_schema.name'. |
      | /v1/chat/completions | response_format | {"type": "yaml"}                            | invalid_value              | response_format.type             | Invalid value: "yaml". Supported values are: 'text', 'json_object', and 'json_schema'. |
      | /v1/responses        | text            | {"format": {"type": "json_schema"}}         | missing_required_parameter | text.format.name                 | Missing required parameter: 'text.format.name'. |

  Scenario Outline: A streamed request the provider would refuse gets a 400, not a stream that ends in an error
    When a streamed request with <name> set to <value> is posted to lowtide serve at "<path>"
    Then lowtide serve answers 400 in the API's error shape, type "invalid_request_error", code "-"
    And its message says "<words>"
    And nothing but a look-up of the model was sent upstream

    Examples:
      | path                 | name       | value                     | words                                         |
      | /v1/messages         | max_tokens | 10000000                  | is more than 'claude-haiku-5-5' may write     |
      | /v1/chat/completions | stop       | ["a", "b", "c", "d", "e"] | stop_sequences                                |

  Scenario Outline: Another method on a served path is refused with 405 and Allow, in the API's shape
    When "<method>" is sent to lowtide serve at "<path>"
    Then lowtide serve answers 405 in the API's error shape, type "invalid_request_error", code "-"
    And its "Allow" header is "POST"
    And its message says "<method> <path> is not allowed"
    And nothing was sent upstream

    Examples:
      | method | path                 |
      | GET    | /v1/messages         |
      | PUT    | /v1/messages         |
      | DELETE | /v1/chat/completions |
      | GET    | /v1/responses        |
      | PATCH  | /v1/responses        |

  Scenario: A path lowtide serve does not serve is 404, whatever the method
    When "OPTIONS" is sent to lowtide serve at "/v1/messages/batches"
    Then lowtide serve answers 404 in the API's error shape, type "not_found_error", code "-"
    And nothing was sent upstream

  Scenario Outline: A Messages body the API would refuse is refused naming what is wrong
    When the raw body <body> is posted to lowtide serve at "/v1/messages"
    Then lowtide serve answers 400 in the API's error shape, type "invalid_request_error", code "-"
    And its message is "<message>"
    And nothing was sent upstream

    Examples:
      | body                                                                                                  | message |
      | [1]                                                                                                   | The request body must be a JSON object. |
      | {"model": "claude-haiku-5-5", "max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}], "n": 2} | n: Extra inputs are not permitted (not supported by lowtide serve). |
      | {"model": 7, "max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}]}                        | model: Input should be a non-empty string |
      | {"model": "claude-haiku-5-5", "max_tokens": 5, "messages": {}}                                        | messages: Input should be a non-empty list of messages |
      | {"model": "claude-haiku-5-5", "max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}], "stream": "yes"} | stream: Input should be a valid boolean |

  Scenario Outline: A field the API requires is refused as "Field required"
    When a request without <name> is posted to lowtide serve at "/v1/messages"
    Then lowtide serve answers 400 in the API's error shape, type "invalid_request_error", code "-"
    And its message is "<name>: Field required"

    Examples:
      | name       |
      | model      |
      | messages   |
      | max_tokens |

  Scenario Outline: A request with no client key is refused with 401 before its body is read
    When a request with no client key is posted to lowtide serve at "<path>"
    Then lowtide serve answers 401 in the API's error shape, type "<type>", code "<code>"
    And nothing was sent upstream

    Examples:
      | path          | type                  | code            |
      | /v1/messages  | authentication_error  | -               |
      | /v1/responses | invalid_request_error | invalid_api_key |

  Scenario: A large body is read off the event loop, and refused like a small one
    Given lowtide serve runs an Anthropic and an OpenAI actor, with
      | option      | value   |
      | client keys | key-a   |
      | body limit  | 3000000 |
    When a request of 2000000 bytes with a lone surrogate in its last key is posted to lowtide serve at "/v1/messages"
    Then lowtide serve answers 400 in the API's error shape, type "invalid_request_error", code "-"
    And its message says "metadata.\ud800: the text holds a lone surrogate"
    And nothing was sent upstream

  Scenario: A client that leaves in the middle of its body leaves no error behind
    When a client sends lowtide serve a part of a body at "/v1/messages", then disconnects
    Then lowtide serve's access log shows "POST /v1/messages 400"
    And lowtide serve logged no error and no traceback
    And nothing was sent upstream

  Scenario: A check that fails in a way lowtide does not expect is a 400, logged in one line
    Given lowtide serve runs an Anthropic actor behind a wire whose checks fail in a way lowtide does not expect
    When a request asking its checks to fail is posted to lowtide serve at "/v1/messages"
    Then lowtide serve answers 400 in the API's error shape, type "invalid_request_error", code "-"
    And its message says "could not read this request (TypeError: a check failed on this body)"
    And lowtide serve logged "could not read a request to /v1/messages (TypeError)" at warning level, in one line, and no traceback
    And nothing was sent upstream

  Scenario Outline: A call that fails in a way lowtide does not expect is a 500 in the API's shape, streamed or not
    Given lowtide serve runs an Anthropic and an OpenAI actor that fail in a way lowtide does not expect
    When a request for the model "<model>" is posted to lowtide serve at "<path>"
    Then lowtide serve answers 500 in the API's error shape, type "<type>", code "-"
    And its message says "RuntimeError: an error lowtide does not expect"
    And lowtide serve logged "request failed" at warning level, in one line, and no traceback
    When a streamed request is posted to lowtide serve at "<path>"
    Then the stream ends with an error event of type "<type>"

    Examples:
      | path                 | model            | type         |
      | /v1/messages         | claude-haiku-5-5 | api_error    |
      | /v1/chat/completions | gpt-5.4-mini     | server_error |

  Scenario: A ledger lowtide serve cannot read is a 500 in the API's shape
    Given lowtide serve runs an Anthropic and an OpenAI actor whose ledger cannot be read
    When client "key-a" asks "What is a tide?" at "/v1/responses" with Idempotency-Key "tide-12"
    Then lowtide serve answers 500 in the API's error shape, type "server_error", code "-"
    And its message says "reading the ledger"
    And the emulator behind lowtide serve was sent 0 request(s) in batches, none live

  Scenario Outline: lowtide serve is not built with a limit or a retention it cannot keep
    When lowtide serve is built with <option> <value>
    Then building it fails saying "<words>"

    Examples:
      | option          | value | words                                        |
      | max_body_bytes  | 0     | max_body_bytes must be 1 or more             |
      | idempotency_ttl | 0     | idempotency_ttl must be more than 0 seconds  |
      | body_timeout    | 0     | body_timeout must be more than 0 seconds     |

  Scenario: The command refuses a retention of 0 seconds before it starts
    When "lowtide serve --actor actor.yaml --client-key key-a --idempotency-ttl 0" runs without a ledger
    Then on stderr, the last line is "lowtide: --idempotency-ttl must be more than 0 seconds."
    And the command exits with 2

  Scenario Outline: A document block by path, which names a file of the server's machine, is refused at <path>
    When a request with messages set to [{"role": "user", "content": [{"type": "document", "path": "/etc/hostname"}, {"type": "text", "text": "Read it"}]}] is posted to lowtide serve at "<path>"
    Then lowtide serve answers 400 in the API's error shape, type "invalid_request_error", code "-"
    And its message says "messages.0.content.0: a document block by path names a file of lowtide serve's machine"
    And nothing was sent upstream

    Examples:
      | path         |
      | /v1/messages |
